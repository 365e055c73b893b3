#include "gromov_inner.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <utility>

#include "birkhoff/core/system.hpp"

namespace birkhoff::graph {
namespace detail {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<double> shortest_paths(const AttributedGraph& g, int threads) {
  const std::int64_t n = g.num_nodes;
  std::vector<double> d(static_cast<std::size_t>(n * n), kInf);
#pragma omp parallel num_threads(threads)
  {
    using Item = std::pair<double, std::int32_t>;
    std::vector<Item> heap;
#pragma omp for schedule(dynamic, 16)
    for (std::int64_t s = 0; s < n; ++s) {
      double* row = &d[static_cast<std::size_t>(s * n)];
      row[s] = 0;
      heap.assign(1, {0.0, static_cast<std::int32_t>(s)});
      while (!heap.empty()) {
        std::pop_heap(heap.begin(), heap.end(), std::greater<>());
        const auto [dist, u] = heap.back();
        heap.pop_back();
        if (dist > row[u]) continue;
        const auto nb = g.neighbors(u);
        const auto w = g.neighbor_weights(u);
        for (std::size_t q = 0; q < nb.size(); ++q) {
          const double next = dist + (w.empty() ? 1.0 : w[q]);
          if (next < row[nb[q]]) {
            row[nb[q]] = next;
            heap.push_back({next, nb[q]});
            std::push_heap(heap.begin(), heap.end(), std::greater<>());
          }
        }
      }
    }
  }
  double longest = 0;
  for (double v : d)
    if (v != kInf) longest = std::max(longest, v);
  for (double& v : d)
    if (v == kInf) v = longest + 1;
  return d;
}

Inner::Inner(const AttributedGraph& graph, Structure s, int threads)
    : g(graph), n(graph.num_nodes) {
  if (s == Structure::ShortestPath) {
    dense = shortest_paths(g, threads);
  } else if (g.weights.empty()) {
    values.assign(static_cast<std::size_t>(g.num_entries()), 1.0);
  } else {
    values = g.weights;
  }
}

std::vector<double> Inner::squared_times(const std::vector<double>& w) const {
  std::vector<double> out(static_cast<std::size_t>(n), 0.0);
  for (std::int64_t i = 0; i < n; ++i) {
    double s = 0;
    if (sparse()) {
      for (std::int64_t q = g.indptr[i]; q < g.indptr[i + 1]; ++q) {
        const double c = values[static_cast<std::size_t>(q)];
        s += c * c * w[static_cast<std::size_t>(g.indices[static_cast<std::size_t>(q)])];
      }
    } else {
      const double* row = &dense[static_cast<std::size_t>(i * n)];
      for (std::int64_t k = 0; k < n; ++k) s += row[k] * row[k] * w[static_cast<std::size_t>(k)];
    }
    out[static_cast<std::size_t>(i)] = s;
  }
  return out;
}

}  // namespace detail

std::vector<double> structure_matrix(const AttributedGraph& g, Structure structure,
                                     int num_threads) {
  if (structure == Structure::ShortestPath)
    return detail::shortest_paths(g, resolve_threads(num_threads));
  const std::int64_t n = g.num_nodes;
  std::vector<double> out(static_cast<std::size_t>(n * n), 0.0);
  for (std::int64_t i = 0; i < n; ++i) {
    const auto nb = g.neighbors(i);
    const auto w = g.neighbor_weights(i);
    for (std::size_t q = 0; q < nb.size(); ++q)
      out[static_cast<std::size_t>(i * n + nb[q])] = w.empty() ? 1.0 : w[q];
  }
  return out;
}

}  // namespace birkhoff::graph
