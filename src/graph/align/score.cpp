// Alignment metrics against a ground truth (see score.hpp).
#include "birkhoff/graph/align/score.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "graph/align/pairs.hpp"

namespace birkhoff::align {
namespace {

// The metrics from the rank of each truth pair's partner (0 = unknown, beyond `known`).
template <class Rank>
AlignMetrics from_ranks(std::span<const std::int64_t> perm, MatrixView<const std::int64_t> truth,
                        MatrixView<const std::int64_t> seeds, std::int64_t known,
                        const Rank& rank_of) {
  std::vector<char> seeded(perm.size(), 0);
  for (std::int64_t k = 0; k < seeds.rows; ++k) seeded[seeds(k, 0)] = 1;
  AlignMetrics mt;
  mt.pairs = truth.rows;
  if (truth.rows == 0) return mt;
  std::int64_t correct = 0, unseeded = 0, correct_unseeded = 0;
  double h1 = 0, h5 = 0, h10 = 0, rr = 0;
  for (std::int64_t q = 0; q < truth.rows; ++q) {
    const std::int64_t i = truth(q, 0), j = truth(q, 1);
    const bool ok = perm[i] == j;
    correct += ok;
    if (!seeded[i]) {
      ++unseeded;
      correct_unseeded += ok;
    }
    const std::int64_t rank = rank_of(i, j);
    if (rank == 0) continue;
    h1 += rank <= 1;
    h5 += rank <= 5;
    h10 += rank <= 10;
    rr += 1.0 / static_cast<double>(rank);
  }
  const auto t = static_cast<double>(truth.rows);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  mt.overlap = static_cast<double>(correct) / t;
  mt.overlap_unseeded = unseeded > 0
                            ? static_cast<double>(correct_unseeded) / static_cast<double>(unseeded)
                            : mt.overlap;
  mt.exact = correct == truth.rows;
  mt.hits1 = known >= 1 ? h1 / t : nan;
  mt.hits5 = known >= 5 ? h5 / t : nan;
  mt.hits10 = known >= 10 ? h10 / t : nan;
  mt.mrr = rr / t;
  return mt;
}

// One past the largest G2 id of `pairs` (at least 1), so that check_pairs accepts every id >= 0.
std::int64_t g2_bound(MatrixView<const std::int64_t> pairs) {
  std::int64_t bound = 1;
  if (pairs.cols == 2) {
    for (std::int64_t k = 0; k < pairs.rows; ++k) bound = std::max(bound, pairs(k, 1) + 1);
  }
  return bound;
}

}  // namespace

AlignMetrics score(std::span<const std::int64_t> perm, MatrixView<const double> soft,
                   MatrixView<const std::int64_t> truth, MatrixView<const std::int64_t> seeds) {
  const auto n1 = static_cast<std::int64_t>(perm.size());
  const std::int64_t n2 = soft.cols;
  require(soft.rows == n1, "soft",
          "expected " + std::to_string(n1) + " rows (one per node of G1), got " +
              std::to_string(soft.rows));
  detail::check_pairs(truth, "truth", n1, n2);
  detail::check_pairs(seeds, "seeds", n1, n2);
  // Rank = 1 + the candidates scored above the partner: ties rank first.
  return from_ranks(perm, truth, seeds, std::numeric_limits<std::int64_t>::max(),
                    [&](std::int64_t i, std::int64_t j) {
                      const double* row = soft.row(i);
                      const double target = row[j];
                      std::int64_t rank = 1;
                      for (std::int64_t c = 0; c < n2; ++c) rank += row[c] > target;
                      return rank;
                    });
}

AlignMetrics score(std::span<const std::int64_t> perm, MatrixView<const std::int64_t> topk,
                   MatrixView<const std::int64_t> truth, MatrixView<const std::int64_t> seeds) {
  const auto n1 = static_cast<std::int64_t>(perm.size());
  require(topk.rows == n1, "topk",
          "expected " + std::to_string(n1) + " rows (one per node of G1), got " +
              std::to_string(topk.rows));
  // G2's size is not known here: ids only need to be >= 0.
  detail::check_pairs(truth, "truth", n1, g2_bound(truth));
  detail::check_pairs(seeds, "seeds", n1, g2_bound(seeds));
  return from_ranks(perm, truth, seeds, topk.cols, [&](std::int64_t i, std::int64_t j) {
    for (std::int64_t q = 0; q < topk.cols; ++q) {
      if (topk(i, q) == j) return q + 1;
    }
    return std::int64_t{0};
  });
}

}  // namespace birkhoff::align
