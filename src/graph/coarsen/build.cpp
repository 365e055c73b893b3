#include "graph/coarsen/build.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "birkhoff/core/system.hpp"

namespace birkhoff::coarsen {
namespace detail {

namespace {

/// The coarse graph's edges from the assignment: bucket the mapped original edges (a, b),
/// a < b, by a; sort and count each bucket; then write both orientations row by row (rows come
/// out sorted, see below). Its buffers are freed on return, before the caller allocates the
/// features (peak memory).
void build_coarse_edges(const graph::AttributedGraph& graph, std::int64_t kc, bool edge_weights,
                        int threads, Coarsening& out) {
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

void build_coarse_graph(const graph::AttributedGraph& graph, std::int64_t k, bool edge_weights,
                        int num_threads, Coarsening& out) {
  const std::int64_t n = graph.num_nodes;
  const std::int64_t d = graph.dim();
  const int threads = resolve_threads(num_threads);
  out.merges.resize(static_cast<std::size_t>(3 * k));
  out.keys.resize(static_cast<std::size_t>(k));

  // Each id's root: parents are younger than their children, so one descending sweep suffices.
  const std::int64_t ids = n + k;
  std::vector<std::int64_t> root(static_cast<std::size_t>(ids), -1);
  for (std::int64_t t = 0; t < k; ++t) {
    root[out.merges[3 * t + 1]] = out.merges[3 * t];
    root[out.merges[3 * t + 2]] = out.merges[3 * t];
  }
  out.roots.clear();
  for (std::int64_t id = ids - 1; id >= 0; --id) {
    if (root[id] < 0) {
      root[id] = id;
    } else {
      root[id] = root[root[id]];
    }
  }
  std::vector<std::int64_t> index(static_cast<std::size_t>(ids), -1);
  for (std::int64_t id = 0; id < ids; ++id) {
    if (root[id] == id) {
      index[id] = static_cast<std::int64_t>(out.roots.size());
      out.roots.push_back(id);
    }
  }
  const std::int64_t kc = static_cast<std::int64_t>(out.roots.size());
  out.assignment.resize(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) out.assignment[i] = index[root[i]];
  std::vector<std::int64_t>().swap(root);
  std::vector<std::int64_t>().swap(index);

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
  build_coarse_edges(graph, kc, edge_weights, threads, out);

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
}

}  // namespace detail

Coarsening cut_to(const Coarsening& run, const graph::AttributedGraph& graph, std::int64_t n_coarse,
                  bool edge_weights, int num_threads) {
  const std::int64_t n = run.num_nodes;
  require(graph.num_nodes == n && graph.dim() == run.dim, "graph",
          "is not the graph this coarsening was computed on (N or D differ)");
  require(n == 0 || (n_coarse >= 1 && n_coarse <= n), "n_coarse",
          "must lie in [1, N]; got " + std::to_string(n_coarse));
  const std::int64_t wanted = n == 0 ? 0 : n - n_coarse;
  std::int64_t k = wanted;
  bool reached = true;
  if (wanted > run.num_merges()) {
    require(!run.reached_target, "ratio",
            "asks for " + std::to_string(wanted) + " merges but the run holds only " +
                std::to_string(run.num_merges()) +
                "; cut() can only keep more nodes than the run did (run nope() with the "
                "smallest ratio you need)");
    k = run.num_merges();
    reached = false;
  }
  Coarsening out;
  out.num_nodes = n;
  out.dim = run.dim;
  out.target = n == 0 ? 0 : n_coarse;
  out.merges.assign(run.merges.begin(), run.merges.begin() + 3 * k);
  out.keys.assign(run.keys.begin(), run.keys.begin() + k);
  out.reached_target = reached;
  out.self_loops_dropped = run.self_loops_dropped;
  out.duplicates_merged = run.duplicates_merged;
  detail::build_coarse_graph(graph, k, edge_weights, num_threads, out);
  return out;
}

Coarsening cut(const Coarsening& run, const graph::AttributedGraph& graph, double ratio,
               bool edge_weights, int num_threads) {
  return cut_to(run, graph, target_for_ratio(run.num_nodes, ratio), edge_weights, num_threads);
}

void lift(const Coarsening& c, MatrixView<const float> coarse, MatrixView<float> out) {
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

void pool(const Coarsening& c, MatrixView<const float> values, MatrixView<float> out, bool mean) {
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
