#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "birkhoff/graph/align/generate.hpp"
#include "birkhoff/graph/align/lap.hpp"

namespace birkhoff::align {
namespace {

// A random sparse candidate graph on n rows and m >= n columns holding a planted injection
// (so that a matching covering every row exists), with weights from `rng`.
SparseWeights random_candidates(Rng& rng, std::int64_t n, std::int64_t m, int per_row, bool ties) {
  std::vector<std::int64_t> planted(static_cast<std::size_t>(m));
  for (std::int64_t j = 0; j < m; ++j) planted[j] = j;
  for (std::int64_t j = m - 1; j > 0; --j)
    std::swap(planted[j], planted[static_cast<std::int64_t>(rng.below(j + 1))]);
  SparseWeights w;
  w.n_rows = n;
  w.n_cols = m;
  w.indptr.push_back(0);
  for (std::int64_t i = 0; i < n; ++i) {
    std::vector<std::int32_t> cols = {static_cast<std::int32_t>(planted[i])};
    for (int q = 1; q < per_row; ++q) cols.push_back(static_cast<std::int32_t>(rng.below(m)));
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    for (const std::int32_t j : cols) {
      w.cols.push_back(j);
      w.weights.push_back(ties ? std::floor(rng.uniform() * 5) : rng.normal());
    }
    w.indptr.push_back(static_cast<std::int64_t>(w.cols.size()));
  }
  return w;
}

double value(const SparseWeights& w, const std::vector<std::int64_t>& a) {
  double s = 0;
  for (std::int64_t i = 0; i < w.n_rows; ++i) {
    for (std::int64_t q = w.indptr[i]; q < w.indptr[i + 1]; ++q)
      if (w.cols[q] == a[i]) s += w.weights[q];
  }
  return s;
}

TEST(SparseAssignment, MatchesTheDenseAssignmentOnCandidateGraphs) {
  Rng rng(7);
  for (const bool ties : {false, true}) {
    for (const std::int64_t size : {1, 2, 5, 40, 200, -40, -200}) {
      // Negative: square (all columns assigned, epsilon-scaling); positive: more columns.
      const std::int64_t n = std::abs(size), m = size < 0 ? n : n + n / 4;
      const SparseWeights w = random_candidates(rng, n, m, 4, ties);
      const std::vector<std::int64_t> a = sparse_assignment(w, 1e-9);
      // Dense reference: non-candidates cost more than any candidate matching can gain.
      std::vector<double> dense(static_cast<std::size_t>(n * m), -1e6);
      double lo = 0, hi = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        for (std::int64_t q = w.indptr[i]; q < w.indptr[i + 1]; ++q) {
          dense[i * m + w.cols[q]] = w.weights[q];
          lo = std::min(lo, w.weights[q]);
          hi = std::max(hi, w.weights[q]);
        }
      }
      const std::vector<std::int64_t> b = linear_assignment({dense.data(), n, m}, true);
      std::vector<char> used(static_cast<std::size_t>(m), 0);
      for (std::int64_t i = 0; i < n; ++i) {
        ASSERT_GE(a[i], 0) << "row " << i << " unassigned, n=" << n;
        ASSERT_FALSE(used[a[i]]) << "column " << a[i] << " taken twice";
        used[a[i]] = 1;
        const auto row = std::span(w.cols).subspan(w.indptr[i], w.indptr[i + 1] - w.indptr[i]);
        EXPECT_NE(std::find(row.begin(), row.end(), a[i]), row.end()) << "not a candidate";
      }
      EXPECT_NEAR(value(w, a), value(w, b), static_cast<double>(n) * 1e-9 * (hi - lo) + 1e-9)
          << "n=" << n << " ties=" << ties;
    }
  }
}

TEST(SparseAssignment, LeavesRowsOutOnlyWhereNoColumnIsLeft) {
  // Three rows compete for two columns; one must stay unassigned.
  SparseWeights w;
  w.n_rows = 3;
  w.n_cols = 2;
  w.indptr = {0, 2, 4, 6};
  w.cols = {0, 1, 0, 1, 0, 1};
  w.weights = {1.0, 0.5, 0.2, 0.9, 0.3, 0.1};
  const auto a = sparse_assignment(w);
  EXPECT_EQ(a, (std::vector<std::int64_t>{0, 1, -1}));
}

TEST(SparseAssignment, EmptyAndBadInput) {
  SparseWeights empty;
  empty.indptr = {0};
  EXPECT_TRUE(sparse_assignment(empty).empty());
  SparseWeights w;
  w.n_rows = 1;
  w.n_cols = 2;
  w.indptr = {0, 1};
  w.cols = {2};
  w.weights = {1.0};
  EXPECT_THROW(sparse_assignment(w), InvalidInput);
  w.cols = {1};
  w.weights = {std::nan("")};
  EXPECT_THROW(sparse_assignment(w), InvalidInput);
  w.weights = {1.0};
  EXPECT_THROW(sparse_assignment(w, 0.0), InvalidInput);
  EXPECT_EQ(sparse_assignment(w), (std::vector<std::int64_t>{1}));
}

}  // namespace
}  // namespace birkhoff::align
