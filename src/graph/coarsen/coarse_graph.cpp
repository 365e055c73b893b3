// Graph contraction (the coarse graph of a fine-to-coarse mapping), lifting and pooling.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "birkhoff/core/system.hpp"
#include "graph/coarsen/contract.hpp"

namespace birkhoff::coarsen {
namespace detail {

namespace {

/// The coarse graph's edges from the assignment: bucket the mapped original edges (a, b),
/// a < b, by a; sort and count each bucket; then write both orientations row by row (rows come
/// out sorted, see below). Its buffers are freed on return, before the caller allocates the
/// features (peak memory).
void build_coarse_edges(const graph::AttributedGraph& graph, std::int64_t kc, bool edge_weights,
                        int threads, CoarseGraph& out) {
  const std::int64_t n = graph.num_nodes;
  std::vector<std::int64_t> start(static_cast<std::size_t>(kc) + 1, 0);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t ai = out.assignment[i];
    for (const std::int32_t j : graph.neighbors(i)) {
      if (j <= i) continue;
      const std::int64_t aj = out.assignment[j];
      if (ai != aj) ++start[std::min(ai, aj) + 1];
    }
  }
  for (std::int64_t c = 0; c < kc; ++c) start[c + 1] += start[c];
  std::vector<std::int32_t> other(static_cast<std::size_t>(start[kc]));
  {
    std::vector<std::int64_t> pos(start.begin(), start.end() - 1);
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t ai = out.assignment[i];
      for (const std::int32_t j : graph.neighbors(i)) {
        if (j <= i) continue;
        const std::int64_t aj = out.assignment[j];
        if (ai == aj) continue;
        other[pos[std::min(ai, aj)]++] = static_cast<std::int32_t>(std::max(ai, aj));
      }
    }
  }
  // Unique (a, b) per bucket with multiplicities, compacted in place.
  std::vector<std::int64_t> unique_end(static_cast<std::size_t>(kc));
  std::vector<std::int64_t> count(static_cast<std::size_t>(start[kc]));
#pragma omp parallel for schedule(dynamic, 256) num_threads(threads) if (start[kc] > (1 << 16))
  for (std::int64_t c = 0; c < kc; ++c) {
    auto first = other.begin() + start[c];
    auto last = other.begin() + start[c + 1];
    std::sort(first, last);
    std::int64_t w = start[c];
    for (std::int64_t t = start[c]; t < start[c + 1]; ++t) {
      if (t > start[c] && other[t] == other[t - 1]) {
        ++count[w - 1];
      } else {
        other[w] = other[t];
        count[w] = 1;
        ++w;
      }
    }
    unique_end[c] = w;
  }
  // Row r of the symmetric list holds first the a < r (from buckets a, visited in ascending a),
  // then its own bucket (all > r): sorted without a further sort.
  std::vector<std::int64_t> row_len(static_cast<std::size_t>(kc) + 1, 0);
  for (std::int64_t c = 0; c < kc; ++c) {
    for (std::int64_t t = start[c]; t < unique_end[c]; ++t) {
      ++row_len[c + 1];
      ++row_len[other[t] + 1];
    }
  }
  for (std::int64_t c = 0; c < kc; ++c) row_len[c + 1] += row_len[c];
  const std::int64_t ec = row_len[kc];
  out.edge_index.assign(static_cast<std::size_t>(2 * ec), 0);
  if (edge_weights) {
    out.edge_weight.assign(static_cast<std::size_t>(ec), 0);
  } else {
    out.edge_weight.clear();
  }
  std::vector<std::int64_t> fill(row_len.begin(), row_len.end() - 1);
  auto put = [&](std::int64_t a, std::int64_t b, std::int64_t w) {
    const std::int64_t at = fill[a]++;
    out.edge_index[at] = a;
    out.edge_index[ec + at] = b;
    if (edge_weights) out.edge_weight[at] = w;
  };
  for (std::int64_t c = 0; c < kc; ++c) {
    for (std::int64_t t = start[c]; t < unique_end[c]; ++t) {
      put(other[t], c, count[t]);
    }
    for (std::int64_t t = start[c]; t < unique_end[c]; ++t) {
      put(c, other[t], count[t]);
    }
  }
}

}  // namespace

CoarseGraph contract_valid(const graph::AttributedGraph& graph,
                           std::vector<std::int64_t> assignment, std::int64_t num_super_nodes,
                           const CutOptions& options) {
  const std::int64_t n = graph.num_nodes;
  const std::int64_t d = graph.dim();
  const std::int64_t kc = num_super_nodes;
  const int threads = resolve_threads(options.num_threads);
  CoarseGraph out;
  out.num_nodes = n;
  out.dim = d;
  out.assignment = std::move(assignment);

  // Members as CSR (counting sort keeps them ascending) and sizes.
  out.members_indptr.assign(static_cast<std::size_t>(kc) + 1, 0);
  for (std::int64_t i = 0; i < n; ++i) ++out.members_indptr[out.assignment[i] + 1];
  out.sizes.resize(static_cast<std::size_t>(kc));
  for (std::int64_t c = 0; c < kc; ++c) {
    out.sizes[c] = out.members_indptr[c + 1];
    out.members_indptr[c + 1] += out.members_indptr[c];
  }
  out.members.resize(static_cast<std::size_t>(n));
  {
    std::vector<std::int64_t> pos(out.members_indptr.begin(), out.members_indptr.end() - 1);
    for (std::int64_t i = 0; i < n; ++i) out.members[pos[out.assignment[i]]++] = i;
  }
  // The edges first: their buffers are gone when the features are allocated.
  build_coarse_edges(graph, kc, options.edge_weights, threads, out);

  out.features.assign(static_cast<std::size_t>(kc * d), 0.0f);
#pragma omp parallel num_threads(threads) if (n * d > (1 << 16))
  {
    std::vector<double> acc(static_cast<std::size_t>(d));
#pragma omp for schedule(dynamic, 64)
    for (std::int64_t c = 0; c < kc; ++c) {
      std::fill(acc.begin(), acc.end(), 0.0);
      for (std::int64_t t = out.members_indptr[c]; t < out.members_indptr[c + 1]; ++t) {
        const float* row = graph.x.row(out.members[t]);
        for (std::int64_t j = 0; j < d; ++j) acc[j] += row[j];
      }
      const double inv = 1.0 / static_cast<double>(out.sizes[c]);
      float* dst = out.features.data() + c * d;
      for (std::int64_t j = 0; j < d; ++j) dst[j] = static_cast<float>(acc[j] * inv);
    }
  }
  return out;
}

}  // namespace detail

CoarseGraph contract(const graph::AttributedGraph& graph, std::vector<std::int64_t> assignment,
                     std::int64_t num_super_nodes, const CutOptions& options) {
  const std::int64_t n = graph.num_nodes;
  require(static_cast<std::int64_t>(assignment.size()) == n, "assignment",
          "expected " + std::to_string(n) + " entries (one per node), got " +
              std::to_string(assignment.size()));
  require(num_super_nodes >= 0, "num_super_nodes", "must be >= 0");
  std::vector<char> taken(static_cast<std::size_t>(num_super_nodes), 0);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t c = assignment[i];
    require(c >= 0 && c < num_super_nodes, "assignment",
            "super-node " + std::to_string(c) + " of node " + std::to_string(i) +
                " is outside [0, " + std::to_string(num_super_nodes) + ")");
    taken[c] = 1;
  }
  const auto empty = std::find(taken.begin(), taken.end(), 0);
  require(empty == taken.end(), "assignment",
          "super-node " + std::to_string(empty - taken.begin()) + " has no node");
  return detail::contract_valid(graph, std::move(assignment), num_super_nodes, options);
}

void lift(const CoarseGraph& c, MatrixView<const float> coarse, MatrixView<float> out) {
  require(coarse.rows == c.num_super_nodes(), "coarse",
          "expected " + std::to_string(c.num_super_nodes()) + " rows (one per super-node), got " +
              std::to_string(coarse.rows));
  require(out.rows == c.num_nodes && out.cols == coarse.cols, "out",
          "expected shape (N, C) = (" + std::to_string(c.num_nodes) + ", " +
              std::to_string(coarse.cols) + ")");
  for (std::int64_t i = 0; i < c.num_nodes; ++i) {
    std::copy_n(coarse.row(c.assignment[i]), coarse.cols, out.row(i));
  }
}

void pool(const CoarseGraph& c, MatrixView<const float> values, MatrixView<float> out, bool mean) {
  require(values.rows == c.num_nodes, "values",
          "expected " + std::to_string(c.num_nodes) + " rows (one per original node), got " +
              std::to_string(values.rows));
  require(out.rows == c.num_super_nodes() && out.cols == values.cols, "out",
          "expected shape (K, C) = (" + std::to_string(c.num_super_nodes()) + ", " +
              std::to_string(values.cols) + ")");
  std::vector<double> acc(static_cast<std::size_t>(values.cols));
  for (std::int64_t s = 0; s < c.num_super_nodes(); ++s) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (std::int64_t t = c.members_indptr[s]; t < c.members_indptr[s + 1]; ++t) {
      const float* row = values.row(c.members[t]);
      for (std::int64_t j = 0; j < values.cols; ++j) acc[j] += row[j];
    }
    const double scale = mean ? 1.0 / static_cast<double>(c.sizes[s]) : 1.0;
    float* dst = out.row(s);
    for (std::int64_t j = 0; j < values.cols; ++j) dst[j] = static_cast<float>(acc[j] * scale);
  }
}

}  // namespace birkhoff::coarsen
