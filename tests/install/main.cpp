// Uses the installed birkhoff as an outside project would: the README's C++ example (a Sinkhorn
// solve between two small point clouds, then its barycentric map) and a NOPE* coarsening (its
// merge tree, cut whole and at a prefix).
// Exits non-zero, saying why, when a result is not what the problem implies.
#include <birkhoff/graph/coarsen/nope.hpp>
#include <birkhoff/graph/graph.hpp>
#include <birkhoff/transport/sinkhorn.hpp>
#include <birkhoff/version.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "install test: FAILED: %s\n", what);
    ++failures;
  }
}

// README "C++": four points of the unit square to three points, uniform weights.
void transport() {
  const std::int64_t n = 4, m = 3, d = 2;
  const std::vector<float> xs = {0, 0, 1, 0, 0, 1, 1, 1};
  const std::vector<float> ys = {0.5f, 0.5f, 2, 0, 0, 2};
  const float* x = xs.data();
  const float* y = ys.data();

  using namespace birkhoff::transport;
  const PointCloud<float> geometry({x, n, d}, {y, m, d});  // prepared once: centred copies
  const OtProblem<float> p{.geometry = geometry, .epsilon = 0.05 * 0.05};  // a, b uniform
  const auto r = sinkhorn(p);
  const auto map = r.barycentric_map();

  check(r.loss() > 0 && std::isfinite(r.loss()), "sinkhorn loss is positive and finite");
  check(map.size() == static_cast<std::size_t>(n * d), "barycentric map has shape (n, d)");
  // Every image is a convex combination of the y's, so it lies in their bounding box.
  for (std::int64_t i = 0; i < n; ++i) {
    check(map[i * d] >= 0 && map[i * d] <= 2 && map[i * d + 1] >= 0 && map[i * d + 1] <= 2,
          "barycentric image inside the target's bounding box");
  }
  std::printf("sinkhorn: loss %.6f, %d iterations, marginal error %.2e\n", r.loss(),
              r.report().iterations, r.report().marginal_error);
  const auto rows = r.row_marginal();
  for (const float v : rows) check(std::abs(v - 0.25f) < 1e-3f, "plan's row sums are 1/n");
}

// Two triangles {0, 1, 2} and {3, 4, 5} joined by the edge 2-3, coarsened to half the nodes.
void coarsen() {
  // (2, E) row-major: the sources, then the targets; edge k is (edges[k], edges[E + k]).
  const std::vector<std::int64_t> edges = {0, 0, 1, 2, 3, 3, 4, 1, 2, 2, 3, 4, 5, 5};
  const std::vector<float> features = {0, 0, 0, 1, 1, 0, 5, 5, 5, 6, 6, 5};
  const std::int64_t e = static_cast<std::int64_t>(edges.size()) / 2;
  const auto g = birkhoff::graph::from_edge_index({edges.data(), 2, e}, {features.data(), 6, 2});
  birkhoff::coarsen::NopeOptions o;
  o.method = birkhoff::coarsen::Method::NopeStar;
  o.ratio = 0.5;
  const birkhoff::coarsen::MergeTree tree = birkhoff::coarsen::nope(g, o);
  const birkhoff::coarsen::CoarseGraph c = birkhoff::coarsen::cut(tree, g);

  check(tree.reached_target && tree.num_merges() == 3, "the run merges 6 - 3 = 3 times");
  check(c.num_super_nodes() == 3, "coarsening keeps round(6 * 0.5) = 3");
  std::int64_t members = 0;
  for (const auto s : c.sizes) members += s;
  check(members == 6, "super-node sizes add up to the 6 nodes");
  check(c.assignment.size() == 6, "assignment has one entry per node");
  for (const auto a : c.assignment) check(a >= 0 && a < 3, "assignment is a super-node index");
  // A prefix of the tree is the run to a larger kept fraction: 4 super-nodes after 2 merges.
  const auto c4 = birkhoff::coarsen::cut(birkhoff::coarsen::prefix(tree, 4), g);
  check(c4.num_super_nodes() == 4, "a cut of the tree's prefix keeps 4 super-nodes");
  std::printf("nope*: %lld super-nodes, %lld coarse edges\n",
              static_cast<long long>(c.num_super_nodes()),
              static_cast<long long>(c.num_coarse_edges()));
}

}  // namespace

int main() {
  std::printf("birkhoff %s\n", birkhoff::kVersion);
  check(std::strcmp(birkhoff::kVersion, EXPECTED_VERSION) == 0,
        "version.hpp agrees with birkhoffConfigVersion.cmake");
  transport();
  coarsen();
  if (failures == 0) std::printf("install test: passed\n");
  return failures == 0 ? 0 : 1;
}
