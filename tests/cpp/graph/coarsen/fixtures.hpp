// Small graphs shared by the coarsening tests.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "birkhoff/graph/coarsen/nope.hpp"
#include "birkhoff/graph/graph.hpp"

namespace birkhoff::coarsen::testing {

struct Toy {
  std::vector<float> x;
  std::vector<std::int64_t> e;
  graph::AttributedGraph g;
};

/// A toy case worked by hand: edges 0-1, 0-2, 1-2, 2-3; x0 = x1 = (1, 0), x2 = x3 = (0, 1).
inline Toy toy() {
  Toy t;
  t.x = {1, 0, 1, 0, 0, 1, 0, 1};
  t.e = {0, 0, 1, 2, 1, 2, 2, 3};
  t.g = graph::from_edge_index({t.e.data(), 2, 4}, {t.x.data(), 4, 2});
  return t;
}

inline NopeOptions opts(Method v, double ratio) {
  NopeOptions o;
  o.method = v;
  o.ratio = ratio;
  return o;
}

struct Random {
  std::vector<float> x;
  std::vector<std::int64_t> e;
  graph::AttributedGraph g;
};

inline Random random_graph(int n, int d, const std::vector<std::pair<int, int>>& pairs,
                           const std::vector<int>& values) {
  Random r;
  r.x.resize(static_cast<std::size_t>(n * d));
  for (std::size_t i = 0; i < r.x.size(); ++i) {
    r.x[i] = static_cast<float>(values.empty() ? 0 : values[i % values.size()] % 5);
  }
  r.e.resize(2 * pairs.size());
  for (std::size_t t = 0; t < pairs.size(); ++t) {
    r.e[t] = pairs[t].first % n;
    r.e[pairs.size() + t] = pairs[t].second % n;
  }
  r.g = graph::from_edge_index({r.e.data(), 2, static_cast<std::int64_t>(pairs.size())},
                               {r.x.data(), n, d});
  return r;
}

}  // namespace birkhoff::coarsen::testing
