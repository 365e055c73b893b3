// Multilevel QPAlign (multilevel.hpp): coarsen both graphs with NOPE*, align the coarse graphs
// densely, read candidates from the coarse matching and refine the fine matching by sparse
// linearised assignments that are kept only when they lower QPAlign's objective.
#include "birkhoff/graph/align/multilevel.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "birkhoff/graph/align/lap.hpp"
#include "birkhoff/graph/coarsen/nope.hpp"
#include "graph/align/pairs.hpp"

namespace birkhoff::align {
namespace {

using graph::AttributedGraph;

double weight(const AttributedGraph& g, std::int64_t k) {
  return g.weights.empty() ? 1.0 : g.weights[static_cast<std::size_t>(k)];
}

double squared_distance(const AttributedGraph& g1, std::int64_t i, const AttributedGraph& g2,
                        std::int64_t j) {
  double s = 0;
  for (std::int64_t c = 0; c < g1.dim(); ++c) {
    const double t = static_cast<double>(g1.x(i, c)) - static_cast<double>(g2.x(j, c));
    s += t * t;
  }
  return s;
}

int threads(int requested) { return requested > 0 ? requested : omp_get_max_threads(); }

// One coarsened side: the coarse graph of NOPE* and the attributed graph QPAlign reads, whose
// features point into `coarse.features`.
struct CoarseSide {
  coarsen::CoarseGraph coarse;
  std::vector<double> weights;
  AttributedGraph graph;
};

void coarsen_side(CoarseSide& side, const AttributedGraph& g, std::int64_t k, int num_threads,
                  const ProgressCallback& progress, const char* suffix) {
  coarsen::NopeOptions o;
  o.method = coarsen::Method::NopeStar;
  o.n_coarse = k;
  o.num_threads = num_threads;
  o.progress = progress;
  coarsen::CutOptions cut;
  cut.num_threads = num_threads;
  if (g.weights.empty()) {
    side.coarse = coarsen::cut(coarsen::nope(g, o), g, cut);
  } else {
    // NOPE reads the edges, not their weights.
    AttributedGraph edges;
    edges.num_nodes = g.num_nodes;
    edges.indptr = g.indptr;
    edges.indices = g.indices;
    edges.x = g.x;
    side.coarse = coarsen::cut(coarsen::nope(edges, o), edges, cut);
  }
  const coarsen::CoarseGraph& c = side.coarse;
  const std::int64_t e = c.num_coarse_edges();
  side.weights.resize(static_cast<std::size_t>(e));
  double total = 0;
  for (std::int64_t q = 0; q < e; ++q) {
    const std::int64_t u = c.edge_index[q], v = c.edge_index[e + q];
    const double density = static_cast<double>(c.edge_weight[q]) /
                           (static_cast<double>(c.sizes[u]) * static_cast<double>(c.sizes[v]));
    side.weights[q] = density;
    total += density;
  }
  if (total > 0)
    for (double& w : side.weights) w *= static_cast<double>(e) / total;
  graph::BuildOptions b;
  b.num_threads = num_threads;
  b.suffix = suffix;
  side.graph = graph::from_edge_index(
      MatrixView<const std::int64_t>(c.edge_index.data(), 2, e), c.num_super_nodes(), side.weights,
      MatrixView<const float>(c.features.data(), c.num_super_nodes(), c.dim), b);
}

// Fine seeds as coarse ones: the first seed of each pair of super-nodes whose ends are both
// still free.
std::vector<std::int64_t> coarse_seeds(MatrixView<const std::int64_t> seeds, const CoarseSide& s1,
                                       const CoarseSide& s2) {
  std::vector<std::int64_t> out;
  std::vector<char> used1(static_cast<std::size_t>(s1.coarse.num_super_nodes())),
      used2(static_cast<std::size_t>(s2.coarse.num_super_nodes()));
  for (std::int64_t k = 0; k < seeds.rows; ++k) {
    const std::int64_t u = s1.coarse.assignment[seeds(k, 0)];
    const std::int64_t v = s2.coarse.assignment[seeds(k, 1)];
    if (used1[u] || used2[v]) continue;
    used1[u] = used2[v] = 1;
    out.push_back(u);
    out.push_back(v);
  }
  return out;
}

// The pair (G1, G2) with n1 <= n2 as the refinement sees it: rows are nodes of G1.
struct Fine {
  const AttributedGraph& g1;
  const AttributedGraph& g2;
  double lambda_edge, lambda_feature;
  std::vector<double> row_norm2;      // ||B_j||^2 per node of G2
  std::vector<std::int64_t> seed_of;  // G1 node -> its seeded partner, or -1
  std::vector<char> seeded_column;    // G2 node taken by a seed
};

// Rows of candidate columns (CSR).
struct Lists {
  std::vector<std::int64_t> indptr{0};
  std::vector<std::int32_t> cols;
};

// Step 3's lists: for node i, the `count` members of the coarse partners of i's super-node
// nearest in features (a seeded node: its partner only).
Lists coarse_candidates(const Fine& f, const CoarseSide& s1, const CoarseSide& s2,
                        const Alignment& coarse, std::int64_t count, int num_threads) {
  const std::int64_t n1 = f.g1.num_nodes, k2 = s2.coarse.num_super_nodes();
  std::vector<std::vector<std::int32_t>> rows(static_cast<std::size_t>(n1));
#pragma omp parallel num_threads(num_threads)
  {
    std::vector<std::pair<double, std::int32_t>> pool;
#pragma omp for schedule(dynamic, 64)
    for (std::int64_t i = 0; i < n1; ++i) {
      auto& row = rows[static_cast<std::size_t>(i)];
      if (f.seed_of[i] >= 0) {
        row.push_back(static_cast<std::int32_t>(f.seed_of[i]));
        continue;
      }
      pool.clear();
      const std::int64_t c = s1.coarse.assignment[i];
      for (std::int64_t q = 0; q < coarse.top_k; ++q) {
        const std::int64_t t = coarse.topk[c * coarse.top_k + q];
        if (t < 0 || t >= k2) continue;
        for (std::int64_t p = s2.coarse.members_indptr[t]; p < s2.coarse.members_indptr[t + 1];
             ++p) {
          const std::int64_t j = s2.coarse.members[p];
          if (!f.seeded_column[j])
            pool.emplace_back(squared_distance(f.g1, i, f.g2, j), static_cast<std::int32_t>(j));
        }
      }
      const auto keep = std::min<std::size_t>(pool.size(), static_cast<std::size_t>(count));
      std::partial_sort(pool.begin(), pool.begin() + keep, pool.end());
      for (std::size_t q = 0; q < keep; ++q) row.push_back(pool[q].second);
      std::sort(row.begin(), row.end());
    }
  }
  Lists out;
  for (auto& row : rows) {
    out.cols.insert(out.cols.end(), row.begin(), row.end());
    out.indptr.push_back(static_cast<std::int64_t>(out.cols.size()));
  }
  return out;
}

// A matching of every row: each row's nearest free candidate in row order, then the rows left
// over take the free columns nearest in features (in column order when that scan would be
// too long). Makes the candidate graph feasible for the first assignment.
std::vector<std::int64_t> greedy_matching(const Fine& f, const Lists& lists) {
  const std::int64_t n1 = f.g1.num_nodes, n2 = f.g2.num_nodes;
  std::vector<std::int64_t> perm(static_cast<std::size_t>(n1), -1);
  std::vector<char> taken(static_cast<std::size_t>(n2), 0);
  for (std::int64_t i = 0; i < n1; ++i) {
    if (f.seed_of[i] >= 0) perm[i] = f.seed_of[i], taken[f.seed_of[i]] = 1;
  }
  std::vector<std::int64_t> left;
  for (std::int64_t i = 0; i < n1; ++i) {
    if (perm[i] >= 0) continue;
    double best = std::numeric_limits<double>::infinity();
    for (std::int64_t k = lists.indptr[i]; k < lists.indptr[i + 1]; ++k) {
      const std::int64_t j = lists.cols[k];
      if (taken[j]) continue;
      const double d = squared_distance(f.g1, i, f.g2, j);
      if (d < best) best = d, perm[i] = j;
    }
    if (perm[i] >= 0)
      taken[perm[i]] = 1;
    else
      left.push_back(i);
  }
  std::vector<std::int64_t> free;
  for (std::int64_t j = 0; j < n2; ++j) {
    if (!taken[j]) free.push_back(j);
  }
  const bool scan = static_cast<double>(left.size()) * static_cast<double>(free.size()) < 2e8;
  std::size_t next = 0;
  for (const std::int64_t i : left) {
    std::size_t pick = next;
    if (scan) {
      double best = std::numeric_limits<double>::infinity();
      for (std::size_t q = 0; q < free.size(); ++q) {
        if (free[q] < 0) continue;
        const double d = squared_distance(f.g1, i, f.g2, free[q]);
        if (d < best) best = d, pick = q;
      }
    } else {
      while (free[next] < 0) ++next;
      pick = next;
    }
    perm[i] = free[pick];
    free[pick] = -1;
  }
  return perm;
}

// The sparse weights of one assignment: `base` lists, plus each row's `extra` column (when
// >= 0), plus, with `perm`, the `propagated` best columns of the neighbours' partners'
// neighbourhoods; weight = the linearised gain of F at `perm` (feature term only without it).
SparseWeights gains(const Fine& f, const Lists& base, std::span<const std::int64_t> extra,
                    std::span<const std::int64_t> perm, std::int64_t propagated, int num_threads) {
  const std::int64_t n1 = f.g1.num_nodes, n2 = f.g2.num_nodes;
  std::vector<std::vector<std::pair<std::int32_t, double>>> rows(static_cast<std::size_t>(n1));
#pragma omp parallel num_threads(num_threads)
  {
    std::vector<double> acc(perm.empty() ? 0 : static_cast<std::size_t>(n2), 0.0);
    std::vector<std::int32_t> touched;
    std::vector<std::pair<double, std::int32_t>> ranked;
#pragma omp for schedule(dynamic, 64)
    for (std::int64_t i = 0; i < n1; ++i) {
      auto& row = rows[static_cast<std::size_t>(i)];
      const auto add = [&](std::int64_t j) {
        const double edge = perm.empty() ? 0.0 : 4 * f.lambda_edge * acc[j];
        row.emplace_back(static_cast<std::int32_t>(j),
                         edge - f.lambda_edge * f.row_norm2[j] -
                             f.lambda_feature * squared_distance(f.g1, i, f.g2, j));
      };
      if (f.seed_of[i] >= 0) {
        row.emplace_back(static_cast<std::int32_t>(f.seed_of[i]), 0.0);
        continue;
      }
      touched.clear();
      if (!perm.empty()) {
        for (std::int64_t k = f.g1.indptr[i]; k < f.g1.indptr[i + 1]; ++k) {
          const std::int64_t u = perm[f.g1.indices[k]];
          const double a = weight(f.g1, k);
          for (std::int64_t q = f.g2.indptr[u]; q < f.g2.indptr[u + 1]; ++q) {
            const std::int32_t j = f.g2.indices[q];
            if (acc[j] == 0.0) touched.push_back(j);
            acc[j] += a * weight(f.g2, q);
          }
        }
      }
      for (std::int64_t k = base.indptr[i]; k < base.indptr[i + 1]; ++k) add(base.cols[k]);
      if (!extra.empty() && extra[i] >= 0) add(extra[i]);
      ranked.clear();
      for (const std::int32_t j : touched) {
        if (!f.seeded_column[j]) ranked.emplace_back(-acc[j], j);
      }
      const auto keep = std::min<std::size_t>(ranked.size(), static_cast<std::size_t>(propagated));
      std::partial_sort(ranked.begin(), ranked.begin() + keep, ranked.end());
      for (std::size_t q = 0; q < keep; ++q) add(ranked[q].second);
      for (const std::int32_t j : touched) acc[j] = 0.0;
      std::sort(row.begin(), row.end());
      row.erase(std::unique(row.begin(), row.end(),
                            [](const auto& a, const auto& b) { return a.first == b.first; }),
                row.end());
    }
  }
  SparseWeights w;
  w.n_rows = n1;
  w.n_cols = n2;
  w.indptr.reserve(static_cast<std::size_t>(n1) + 1);
  w.indptr.push_back(0);
  for (const auto& row : rows) {
    for (const auto& [j, v] : row) {
      w.cols.push_back(j);
      w.weights.push_back(v);
    }
    w.indptr.push_back(static_cast<std::int64_t>(w.cols.size()));
  }
  return w;
}

// Every row assigned.
bool complete(std::span<const std::int64_t> perm) {
  return std::none_of(perm.begin(), perm.end(), [](std::int64_t j) { return j < 0; });
}

// topk / topk_scores of `w`'s rows: perm[i] first, then the others by gain.
void read_topk(const SparseWeights& w, std::span<const std::int64_t> perm, std::int64_t k,
               std::vector<std::int64_t>& topk, std::vector<double>& scores) {
  const std::int64_t n = w.n_rows;
  topk.assign(static_cast<std::size_t>(n * k), -1);
  scores.assign(topk.size(), std::numeric_limits<double>::quiet_NaN());
  std::vector<std::pair<double, std::int64_t>> row;
  for (std::int64_t i = 0; i < n; ++i) {
    row.clear();
    for (std::int64_t q = w.indptr[i]; q < w.indptr[i + 1]; ++q) {
      const double first = w.cols[q] == perm[i] ? std::numeric_limits<double>::infinity() : 0.0;
      row.emplace_back(first, q);
    }
    std::sort(row.begin(), row.end(), [&](const auto& a, const auto& b) {
      if (a.first != b.first) return a.first > b.first;
      return w.weights[a.second] > w.weights[b.second];
    });
    for (std::size_t q = 0; q < row.size() && static_cast<std::int64_t>(q) < k; ++q) {
      topk[i * k + q] = w.cols[row[q].second];
      scores[i * k + q] = w.weights[row[q].second];
    }
  }
}

// The transposed weights (rows = columns of `w`), for a pair aligned with its graphs swapped.
SparseWeights transpose(const SparseWeights& w) {
  SparseWeights t;
  t.n_rows = w.n_cols;
  t.n_cols = w.n_rows;
  t.indptr.assign(static_cast<std::size_t>(t.n_rows) + 1, 0);
  for (const std::int32_t j : w.cols) ++t.indptr[j + 1];
  std::partial_sum(t.indptr.begin(), t.indptr.end(), t.indptr.begin());
  t.cols.resize(w.cols.size());
  t.weights.resize(w.cols.size());
  std::vector<std::int64_t> next(t.indptr.begin(), t.indptr.end() - 1);
  for (std::int64_t i = 0; i < w.n_rows; ++i) {
    for (std::int64_t q = w.indptr[i]; q < w.indptr[i + 1]; ++q) {
      const std::int64_t p = next[w.cols[q]]++;
      t.cols[p] = static_cast<std::int32_t>(i);
      t.weights[p] = w.weights[q];
    }
  }
  return t;
}

void check_options(const MultilevelOptions& o) {
  require(o.dense_max_nodes >= 0, "dense_max_nodes", "must be >= 0");
  require(o.coarse_nodes >= 1, "coarse_nodes", "must be >= 1");
  require(o.coarse_top_k >= 1, "coarse_top_k", "must be >= 1");
  require(o.fine_candidates >= 1, "fine_candidates", "must be >= 1");
  require(o.propagated >= 0, "propagated", "must be >= 0");
  require(o.refine_rounds >= 0, "refine_rounds", "must be >= 0");
}

// Steps 3 and 4 for one coarse alignment: the refined fine matching and its final gains.
struct Refined {
  std::vector<std::int64_t> perm;
  std::vector<double> objective;
  SparseWeights gains;
};

Refined refine(const Fine& f, const CoarseSide& s1, const CoarseSide& s2, const Alignment& coarse,
               const MultilevelOptions& o, const ProgressCallback& progress, int nt) {
  const Lists lists = coarse_candidates(f, s1, s2, coarse, o.fine_candidates, nt);
  // Step 3: the first matching, on the coarse lists made feasible by a greedy matching.
  const std::vector<std::int64_t> greedy = greedy_matching(f, lists);
  Refined out;
  out.perm = sparse_assignment(gains(f, lists, greedy, {}, 0, nt));
  if (!complete(out.perm)) out.perm = greedy;
  double value = matching_objective(f.g1, f.g2, out.perm, f.lambda_edge, f.lambda_feature);
  out.objective = {value};
  // Step 4: linearised rounds, each kept only when it lowers F.
  out.gains = gains(f, lists, out.perm, out.perm, o.propagated, nt);
  for (std::int64_t round = 0; round < o.refine_rounds; ++round) {
    report_progress(progress, "refine", round, o.refine_rounds);
    std::vector<std::int64_t> next = sparse_assignment(out.gains);
    if (!complete(next) || next == out.perm) break;
    const double v = matching_objective(f.g1, f.g2, next, f.lambda_edge, f.lambda_feature);
    if (!(v < value)) break;
    out.perm = std::move(next);
    value = v;
    out.objective.push_back(value);
    out.gains = gains(f, lists, out.perm, out.perm, o.propagated, nt);
  }
  report_progress(progress, "refine", o.refine_rounds, o.refine_rounds);
  return out;
}

// The multilevel run with n1 <= n2 and seeds / truth given as [G1 node, G2 node] rows: each
// candidate's coarse run refined, in order until a coarse run converges, the most likely fine
// matching kept (as qpalign_select()).
Selection multilevel_rows(const AttributedGraph& g1, const AttributedGraph& g2,
                          std::span<const Candidate> candidates, const MultilevelOptions& o,
                          SparseWeights& final_gains) {
  const QpAlignOptions& base = candidates.front().options;
  const int nt = threads(base.num_threads);
  const std::int64_t n1 = g1.num_nodes, n2 = g2.num_nodes;
  const std::int64_t k = std::min(o.coarse_nodes, n1);
  CoarseSide s1, s2;
  coarsen_side(s1, g1, k, base.num_threads, base.progress, "1");
  coarsen_side(s2, g2, k, base.num_threads, base.progress, "2");
  const std::vector<std::int64_t> seeds = coarse_seeds(base.seeds, s1, s2);

  Fine f{g1, g2, 0.0, 0.0, {}, {}, {}};
  f.row_norm2.assign(static_cast<std::size_t>(n2), 0.0);
  for (std::int64_t j = 0; j < n2; ++j) {
    for (std::int64_t q = g2.indptr[j]; q < g2.indptr[j + 1]; ++q)
      f.row_norm2[j] += weight(g2, q) * weight(g2, q);
  }
  f.seed_of.assign(static_cast<std::size_t>(n1), -1);
  f.seeded_column.assign(static_cast<std::size_t>(n2), 0);
  for (std::int64_t q = 0; q < base.seeds.rows; ++q) {
    f.seed_of[base.seeds(q, 0)] = base.seeds(q, 1);
    f.seeded_column[base.seeds(q, 1)] = 1;
  }

  Selection s;
  Refined kept;
  for (const Candidate& c : candidates) {
    QpAlignOptions co = c.options;
    co.seeds = MatrixView<const std::int64_t>(seeds.data(),
                                              static_cast<std::int64_t>(seeds.size()) / 2, 2);
    co.truth = {};
    co.top_k = o.coarse_top_k;
    co.return_soft = false;
    Alignment r = qpalign(s1.graph, s2.graph, co);
    r.preset = c.preset;
    f.lambda_edge = r.lambda_edge;
    f.lambda_feature = r.lambda_feature;
    Refined fine = refine(f, s1, s2, r, o, base.progress, nt);
    const double likelihood = matching_likelihood(g1, g2, fine.perm);
    s.presets.push_back(c.preset);
    s.likelihoods.push_back(likelihood);
    const bool converged = r.converged;
    if (s.likelihoods.size() == 1 || likelihood > s.alignment.likelihood) {
      s.alignment = std::move(r);
      s.alignment.likelihood = likelihood;
      s.chosen = s.likelihoods.size() - 1;
      kept = std::move(fine);
    }
    if (converged) break;
  }
  Alignment& r = s.alignment;
  r.method = Method::Multilevel;
  r.coarse_nodes = std::max(s1.coarse.num_super_nodes(), s2.coarse.num_super_nodes());
  r.n1 = n1;
  r.n2 = n2;
  r.perm = std::move(kept.perm);
  r.refine_objective = std::move(kept.objective);
  final_gains = std::move(kept.gains);
  return s;
}

}  // namespace

Method choose_method(const AttributedGraph& g1, const AttributedGraph& g2,
                     const MultilevelOptions& options) {
  if (options.method != Method::Auto) return options.method;
  const bool fits = g1.dim() > 0 && !g1.directed && !g2.directed;
  return fits && std::max(g1.num_nodes, g2.num_nodes) > options.dense_max_nodes ? Method::Multilevel
                                                                                : Method::Dense;
}

double matching_objective(const AttributedGraph& g1, const AttributedGraph& g2,
                          std::span<const std::int64_t> perm, double lambda_edge,
                          double lambda_feature) {
  const std::int64_t n1 = g1.num_nodes, n2 = g2.num_nodes;
  require(static_cast<std::int64_t>(perm.size()) == n1, "perm",
          "has " + std::to_string(perm.size()) + " entries for " + std::to_string(n1) + " nodes");
  std::vector<char> used(static_cast<std::size_t>(n2), 0);
  for (const std::int64_t j : perm) {
    require(j >= 0 && j < n2 && !used[j], "perm",
            "must map every node of G1 to a distinct node of G2; got " + std::to_string(j));
    used[j] = 1;
  }
  double a2 = 0, image = 0, cross = 0, features = 0;
  for (std::int64_t i = 0; i < n1; ++i) {
    const std::int64_t u = perm[i];
    const auto row = g2.neighbors(u);
    for (std::int64_t k = g1.indptr[i]; k < g1.indptr[i + 1]; ++k) {
      a2 += weight(g1, k) * weight(g1, k);
      const std::int64_t v = perm[g1.indices[k]];
      const auto it = std::lower_bound(row.begin(), row.end(), v);
      if (it != row.end() && *it == v)
        cross += weight(g1, k) * weight(g2, g2.indptr[u] + (it - row.begin()));
    }
    for (std::int64_t q = g2.indptr[u]; q < g2.indptr[u + 1]; ++q)
      image += weight(g2, q) * weight(g2, q);
    if (g1.dim() > 0) features += squared_distance(g1, i, g2, u);
  }
  return lambda_edge * (a2 + image - 2 * cross) + lambda_feature * features;
}

Selection multilevel_select(const AttributedGraph& g1, const AttributedGraph& g2,
                            std::span<const Candidate> candidates,
                            const MultilevelOptions& options) {
  check_options(options);
  require(!candidates.empty(), "preset", "no candidate run to select from");
  const QpAlignOptions& base = candidates.front().options;
  require(g1.dim() > 0 && g2.dim() > 0, "method",
          "multilevel coarsens attributed graphs with NOPE*: both graphs need node features "
          "(use method dense)");
  require(g1.dim() == g2.dim(), "x2",
          "has " + std::to_string(g2.dim()) + " features per node, x1 " + std::to_string(g1.dim()));
  require(!g1.directed && !g2.directed, "method",
          "multilevel coarsens undirected graphs only (use method dense for directed ones)");
  require(!base.return_soft, "return_soft",
          "multilevel forms no dense Pi (use method dense for the soft matrix)");
  require(g1.num_nodes > 0 && g2.num_nodes > 0, "edge_index1", "a graph has no nodes");
  detail::check_pairs(base.seeds, "seeds", g1.num_nodes, g2.num_nodes);
  detail::check_pairs(base.truth, "truth", g1.num_nodes, g2.num_nodes);

  const bool swap = g1.num_nodes > g2.num_nodes;
  std::vector<std::int64_t> swapped_seeds;
  std::vector<Candidate> runs(candidates.begin(), candidates.end());
  if (swap) {
    for (std::int64_t q = 0; q < base.seeds.rows; ++q) {
      swapped_seeds.push_back(base.seeds(q, 1));
      swapped_seeds.push_back(base.seeds(q, 0));
    }
    for (Candidate& c : runs)
      c.options.seeds = MatrixView<const std::int64_t>(swapped_seeds.data(), base.seeds.rows, 2);
  }
  SparseWeights w;
  Selection s =
      swap ? multilevel_rows(g2, g1, runs, options, w) : multilevel_rows(g1, g2, runs, options, w);
  Alignment& r = s.alignment;
  std::vector<std::int64_t> perm = std::move(r.perm);
  if (swap) {
    std::vector<std::int64_t> inverse(static_cast<std::size_t>(g1.num_nodes), -1);
    for (std::size_t j = 0; j < perm.size(); ++j) inverse[perm[j]] = static_cast<std::int64_t>(j);
    perm = std::move(inverse);
    w = transpose(w);
  }
  r.n1 = g1.num_nodes;
  r.n2 = g2.num_nodes;
  r.top_k = std::min(base.top_k, g2.num_nodes);
  read_topk(w, perm, r.top_k, r.topk, r.topk_scores);
  r.perm = std::move(perm);
  r.likelihood = matching_likelihood(g1, g2, r.perm);
  r.has_metrics = base.truth.rows > 0;
  if (r.has_metrics)
    r.metrics = score(r.perm, MatrixView<const std::int64_t>(r.topk.data(), r.n1, r.top_k),
                      base.truth, base.seeds);
  return s;
}

Selection align_select(const AttributedGraph& g1, const AttributedGraph& g2,
                       std::span<const Candidate> candidates, const MultilevelOptions& options) {
  check_options(options);
  if (choose_method(g1, g2, options) == Method::Multilevel)
    return multilevel_select(g1, g2, candidates, options);
  return qpalign_select(g1, g2, candidates);
}

}  // namespace birkhoff::align
