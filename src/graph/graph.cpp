// The graph builders: CSR from an edge list or a dense adjacency, with the input checks.
#include "birkhoff/graph/graph.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "birkhoff/core/error.hpp"
#include "birkhoff/core/system.hpp"

namespace birkhoff::graph {
namespace {

constexpr std::int64_t kMaxNodes = std::numeric_limits<std::int32_t>::max();

std::string shape(std::int64_t rows, std::int64_t cols) {
  std::string out = "(";
  out += std::to_string(rows);
  out += ", ";
  out += std::to_string(cols);
  out += ")";
  return out;
}

void check_features(MatrixView<const float> x, std::int64_t n, const std::string& name,
                    int num_threads) {
  if (x.empty()) return;
  require(x.rows == n, name,
          "expected " + std::to_string(n) + " rows (one per node), got " + std::to_string(x.rows));
  require_finite(x, name.c_str(), num_threads);
}

// Row i of `raw` (between fill[i] and fill[i + 1]) sorted and its repeats dropped in place;
// returns the unique length. With weights, the row is sorted by (column, weight) and a column
// repeated with another weight sets `conflict`.
std::int64_t sort_unique(std::int32_t* first, std::int32_t* last) {
  std::sort(first, last);
  return std::unique(first, last) - first;
}

std::int64_t sort_unique(std::pair<std::int32_t, double>* first,
                         std::pair<std::int32_t, double>* last, bool& conflict) {
  std::sort(first, last);
  std::int64_t w = 0;
  for (auto* p = first; p != last; ++p) {
    if (w > 0 && first[w - 1].first == p->first) {
      conflict = conflict || first[w - 1].second != p->second;
      continue;
    }
    first[w++] = *p;
  }
  return w;
}

// Counts the pairs {i, j}, i != j, of the undirected graph `g` that the columns of `edge_index`
// list in one orientation only and in both: one bit per CSR entry (i, j), set when a column
// (i, j) is given; every pair has at least one of its two bits set.
void count_orientations(const std::int64_t* src, const std::int64_t* dst, std::int64_t cols,
                        int num_threads, AttributedGraph& g) {
  const auto entry = [&g](std::int64_t i, std::int64_t j) {
    const std::int32_t* first = g.indices.data() + g.indptr[i];
    const std::int32_t* last = g.indices.data() + g.indptr[i + 1];
    return std::lower_bound(first, last, static_cast<std::int32_t>(j)) - g.indices.data();
  };
  std::vector<std::uint64_t> given((g.indices.size() + 63) / 64, 0);
  const bool parallel = cols > (1 << 16);
#pragma omp parallel for schedule(static) num_threads(resolve_threads(num_threads)) if (parallel)
  for (std::int64_t e = 0; e < cols; ++e) {
    if (src[e] == dst[e]) continue;
    const std::int64_t k = entry(src[e], dst[e]);
    std::atomic_ref<std::uint64_t>(given[static_cast<std::size_t>(k >> 6)])
        .fetch_or(std::uint64_t{1} << (k & 63), std::memory_order_relaxed);
  }
  const auto is_given = [&given](std::int64_t k) {
    return (given[static_cast<std::size_t>(k >> 6)] >> (k & 63)) & 1;
  };
  std::int64_t one_way = 0, two_way = 0;
#pragma omp parallel for schedule(dynamic, 1024) num_threads(resolve_threads(num_threads)) \
    reduction(+ : one_way, two_way) if (parallel)
  for (std::int64_t i = 0; i < g.num_nodes; ++i) {
    for (std::int64_t k = g.indptr[i]; k < g.indptr[i + 1]; ++k) {
      const std::int64_t j = g.indices[k];
      if (j <= i) continue;
      const bool forward = is_given(k), backward = is_given(entry(j, i));
      one_way += forward != backward;
      two_way += forward && backward;
    }
  }
  g.one_way_pairs = one_way;
  g.two_way_pairs = two_way;
}

}  // namespace

void require_finite(MatrixView<const float> x, const char* argument, int num_threads) {
  const std::int64_t rows = x.rows;
  std::int64_t first_bad = rows;
  const bool parallel = rows * x.cols > (1 << 16);
#pragma omp parallel for schedule(static) num_threads(resolve_threads(num_threads)) \
    reduction(min                                                                   \
              : first_bad) if (parallel)
  for (std::int64_t i = 0; i < rows; ++i) {
    const float* row = x.row(i);
    bool ok = true;
    for (std::int64_t j = 0; j < x.cols; ++j) ok &= std::isfinite(row[j]);
    if (!ok && i < first_bad) first_bad = i;
  }
  require(first_bad == rows, argument,
          "holds NaN or inf (first in row " + std::to_string(first_bad) + ")");
}

AttributedGraph from_edge_index(MatrixView<const std::int64_t> edge_index, std::int64_t num_nodes,
                                std::span<const double> edge_weight, MatrixView<const float> x,
                                const BuildOptions& options) {
  const std::string& sfx = options.suffix;
  const std::string ei = "edge_index" + sfx, ew = "edge_weight" + sfx;
  const std::int64_t n = num_nodes;
  require(n >= 0 && n < kMaxNodes, "num_nodes" + sfx,
          "must lie in [0, 2^31 - 1); got " + std::to_string(n));
  require(edge_index.rows == 2 || (edge_index.rows == 0 && edge_index.cols == 0), ei,
          "expected shape (2, E), got " + shape(edge_index.rows, edge_index.cols));
  const std::int64_t cols = edge_index.rows == 2 ? edge_index.cols : 0;
  const bool weighted = !edge_weight.empty();
  require(!weighted || static_cast<std::int64_t>(edge_weight.size()) == cols, ew,
          "expected " + std::to_string(cols) + " weights (one per column of " + ei + "), got " +
              std::to_string(edge_weight.size()));
  check_features(x, n, "x" + sfx, options.num_threads);

  const std::int64_t* src = cols > 0 ? edge_index.row(0) : nullptr;
  const std::int64_t* dst = cols > 0 ? edge_index.row(1) : nullptr;
  for (std::int64_t e = 0; e < cols; ++e) {
    const std::int64_t a = src[e];
    const std::int64_t b = dst[e];
    if (a < 0 || a >= n || b < 0 || b >= n) {
      const std::int64_t bad = (a < 0 || a >= n) ? a : b;
      throw InvalidInput(ei + ": node id " + std::to_string(bad) + " in column " +
                         std::to_string(e) + " is outside [0, " + std::to_string(n) + ")");
    }
    if (weighted) {
      require(std::isfinite(edge_weight[e]), ew,
              "holds NaN or inf (edge " + std::to_string(e) + ")");
    }
  }

  AttributedGraph g;
  g.num_nodes = n;
  g.directed = options.directed;
  g.x = x.empty() ? MatrixView<const float>{} : x;
  // Each column gives the entry (a, b), and (b, a) when undirected and a != b.
  const bool mirror = !options.directed;
  std::vector<std::int64_t> fill(static_cast<std::size_t>(n) + 1, 0);
  for (std::int64_t e = 0; e < cols; ++e) {
    if (src[e] == dst[e]) {
      ++g.self_loops;
      ++fill[src[e] + 1];
      continue;
    }
    ++fill[src[e] + 1];
    if (mirror) ++fill[dst[e] + 1];
  }
  for (std::int64_t i = 0; i < n; ++i) fill[i + 1] += fill[i];
  const std::int64_t raw_size = fill[n];
  std::vector<std::int32_t> raw;
  std::vector<std::pair<std::int32_t, double>> raw_weighted;
  if (weighted) {
    raw_weighted.resize(static_cast<std::size_t>(raw_size));
  } else {
    raw.resize(static_cast<std::size_t>(raw_size));
  }
  {
    std::vector<std::int64_t> pos(fill.begin(), fill.end() - 1);
    const auto put = [&](std::int64_t row, std::int64_t col, std::int64_t e) {
      if (weighted) {
        raw_weighted[pos[row]++] = {static_cast<std::int32_t>(col), edge_weight[e]};
      } else {
        raw[pos[row]++] = static_cast<std::int32_t>(col);
      }
    };
    for (std::int64_t e = 0; e < cols; ++e) {
      const std::int64_t a = src[e];
      const std::int64_t b = dst[e];
      put(a, b, e);
      if (mirror && a != b) put(b, a, e);
    }
  }
  // Sort and deduplicate each row in place; unique lengths go to `kept`.
  std::vector<std::int64_t> kept(static_cast<std::size_t>(n), 0);
  bool conflict = false;
#pragma omp parallel for schedule(dynamic, 1024) num_threads(resolve_threads(options.num_threads)) \
    reduction(||                                                                                   \
              : conflict) if (cols > (1 << 16))
  for (std::int64_t i = 0; i < n; ++i) {
    if (weighted) {
      kept[i] =
          sort_unique(raw_weighted.data() + fill[i], raw_weighted.data() + fill[i + 1], conflict);
    } else {
      kept[i] = sort_unique(raw.data() + fill[i], raw.data() + fill[i + 1]);
    }
  }
  require(!conflict, ew, "an edge is listed more than once with different weights");
  g.indptr.assign(static_cast<std::size_t>(n) + 1, 0);
  for (std::int64_t i = 0; i < n; ++i) g.indptr[i + 1] = g.indptr[i] + kept[i];
  const std::int64_t nnz = g.indptr[n];
  std::int64_t loops = 0;
  if (weighted) {
    g.indices.resize(static_cast<std::size_t>(nnz));
    g.weights.resize(static_cast<std::size_t>(nnz));
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t k = 0; k < kept[i]; ++k) {
        const auto& [col, w] = raw_weighted[fill[i] + k];
        g.indices[g.indptr[i] + k] = col;
        g.weights[g.indptr[i] + k] = w;
        loops += col == i;
      }
    }
  } else {
    std::int64_t out = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t k = 0; k < kept[i]; ++k) {
        const std::int32_t col = raw[fill[i] + k];
        raw[out++] = col;
        loops += col == i;
      }
    }
    raw.resize(static_cast<std::size_t>(out));
    raw.shrink_to_fit();
    g.indices = std::move(raw);
  }
  // Entries between distinct nodes, before and after the merging of repeats.
  const std::int64_t repeats = (raw_size - g.self_loops) - (nnz - loops);
  g.duplicates_merged = mirror ? repeats / 2 : repeats;
  if (mirror) count_orientations(src, dst, cols, options.num_threads, g);
  return g;
}

AttributedGraph from_edge_index(MatrixView<const std::int64_t> edge_index,
                                MatrixView<const float> x, int num_threads) {
  require(x.rows < kMaxNodes, "x", "too many rows (node ids must fit in 31 bits)");
  require(x.rows == 0 || x.cols >= 1, "x", "expected shape (N, D) with D >= 1");
  BuildOptions options;
  options.num_threads = num_threads;
  AttributedGraph g = from_edge_index(edge_index, x.rows, {}, x, options);
  g.x = x;
  return g;
}

AttributedGraph from_adjacency(MatrixView<const double> adjacency, MatrixView<const float> x,
                               const BuildOptions& options) {
  const std::string adj = "adjacency" + options.suffix;
  const std::int64_t n = adjacency.rows;
  require(adjacency.cols == n, adj,
          "expected a square shape (n, n), got " + shape(adjacency.rows, adjacency.cols));
  require(n < kMaxNodes, adj, "too many rows (node ids must fit in 31 bits)");
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      const double a = adjacency(i, j);
      require(std::isfinite(a), adj, "holds NaN or inf (row " + std::to_string(i) + ")");
      if (!options.directed && j > i) {
        const double b = adjacency(j, i);
        require(std::abs(a - b) <= 1e-12 * (std::abs(a) + std::abs(b)), adj,
                "is not symmetric (entry " + std::to_string(i) + ", " + std::to_string(j) +
                    "); pass directed=True for a directed graph");
      }
    }
  }
  check_features(x, n, "x" + options.suffix, options.num_threads);
  AttributedGraph g;
  g.num_nodes = n;
  g.directed = options.directed;
  g.x = x.empty() ? MatrixView<const float>{} : x;
  g.indptr.assign(static_cast<std::size_t>(n) + 1, 0);
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      const double a = adjacency(i, j);
      if (a == 0.0) continue;
      g.indices.push_back(static_cast<std::int32_t>(j));
      g.weights.push_back(a);
      g.self_loops += i == j;
    }
    g.indptr[i + 1] = static_cast<std::int64_t>(g.indices.size());
  }
  return g;
}

}  // namespace birkhoff::graph
