#include "birkhoff/graph/graph.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "birkhoff/core/error.hpp"
#include "birkhoff/core/system.hpp"

namespace birkhoff::graph {

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

AttributedGraph from_edge_index(MatrixView<const std::int64_t> edge_index,
                                MatrixView<const float> x, int num_threads) {
  const std::int64_t n = x.rows;
  require(edge_index.rows == 2 || (edge_index.rows == 0 && edge_index.cols == 0), "edge_index",
          "expected shape (2, E), got (" + std::to_string(edge_index.rows) + ", " +
              std::to_string(edge_index.cols) + ")");
  require(n < std::numeric_limits<std::int32_t>::max(), "x",
          "too many rows (node ids must fit in 31 bits)");
  require(n == 0 || x.cols >= 1, "x", "expected shape (N, D) with D >= 1");
  require_finite(x, "x", num_threads);

  const std::int64_t cols = edge_index.rows == 2 ? edge_index.cols : 0;
  const std::int64_t* src = cols > 0 ? edge_index.row(0) : nullptr;
  const std::int64_t* dst = cols > 0 ? edge_index.row(1) : nullptr;
  for (std::int64_t e = 0; e < cols; ++e) {
    const std::int64_t a = src[e];
    const std::int64_t b = dst[e];
    if (a < 0 || a >= n || b < 0 || b >= n) {
      const std::int64_t bad = (a < 0 || a >= n) ? a : b;
      throw InvalidInput("edge_index: node id " + std::to_string(bad) + " in column " +
                         std::to_string(e) + " is outside [0, " + std::to_string(n) +
                         ") (N = number of rows of x)");
    }
  }

  AttributedGraph g;
  g.num_nodes = n;
  g.x = x;
  std::vector<std::int64_t> fill(static_cast<std::size_t>(n) + 1, 0);
  for (std::int64_t e = 0; e < cols; ++e) {
    if (src[e] == dst[e]) {
      ++g.self_loops_dropped;
      continue;
    }
    ++fill[src[e] + 1];
    ++fill[dst[e] + 1];
  }
  for (std::int64_t i = 0; i < n; ++i) fill[i + 1] += fill[i];
  std::vector<std::int32_t> raw(static_cast<std::size_t>(fill[n]));
  {
    std::vector<std::int64_t> pos(fill.begin(), fill.end() - 1);
    for (std::int64_t e = 0; e < cols; ++e) {
      const std::int64_t a = src[e];
      const std::int64_t b = dst[e];
      if (a == b) continue;
      raw[pos[a]++] = static_cast<std::int32_t>(b);
      raw[pos[b]++] = static_cast<std::int32_t>(a);
    }
  }
  // Sort and deduplicate each row in place; unique lengths go to `kept`.
  std::vector<std::int64_t> kept(static_cast<std::size_t>(n), 0);
#pragma omp parallel for schedule(dynamic, 1024) \
    num_threads(resolve_threads(num_threads)) if (cols > (1 << 16))
  for (std::int64_t i = 0; i < n; ++i) {
    auto first = raw.begin() + fill[i];
    auto last = raw.begin() + fill[i + 1];
    std::sort(first, last);
    kept[i] = std::unique(first, last) - first;
  }
  g.indptr.assign(static_cast<std::size_t>(n) + 1, 0);
  for (std::int64_t i = 0; i < n; ++i) g.indptr[i + 1] = g.indptr[i] + kept[i];
  std::int64_t out = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t k = 0; k < kept[i]; ++k) raw[out++] = raw[fill[i] + k];
  }
  raw.resize(static_cast<std::size_t>(out));
  raw.shrink_to_fit();
  g.indices = std::move(raw);
  g.duplicates_merged = (fill[n] - out) / 2;
  return g;
}

}  // namespace birkhoff::graph
