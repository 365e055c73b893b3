// The authors' presets, the profile likelihood that compares matchings, and the selection
// among preset runs (see presets.hpp).
#include "birkhoff/graph/align/presets.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "birkhoff/graph/align/describe.hpp"

namespace birkhoff::align {
namespace {

bool same_settings(const QpAlignOptions& a, const QpAlignOptions& b) {
  return a.lambda_edge == b.lambda_edge && a.lambda_feature == b.lambda_feature &&
         a.gamma == b.gamma && a.max_iter == b.max_iter && a.sinkhorn_sweeps == b.sinkhorn_sweeps &&
         a.step == b.step && a.init == b.init;
}

QpAlignOptions with_preset(const QpAlignOptions& base, const PresetSettings& p,
                           const std::set<std::string, std::less<>>& given) {
  QpAlignOptions o = base;
  const auto fill = [&](std::string_view name, auto& field, auto value) {
    if (!given.contains(name)) field = value;
  };
  fill("lambda_edge", o.lambda_edge, p.lambda_edge);
  fill("lambda_feature", o.lambda_feature, p.lambda_feature);
  fill("gamma", o.gamma, p.gamma);
  fill("max_iter", o.max_iter, p.max_iter);
  fill("sinkhorn_sweeps", o.sinkhorn_sweeps, p.sinkhorn_sweeps);
  fill("step", o.step, p.step);
  fill("init", o.init, p.init);
  return o;
}

double squared_weights(const graph::AttributedGraph& g) {
  if (g.weights.empty()) return static_cast<double>(g.num_entries());
  double s = 0;
  for (double w : g.weights) s += w * w;
  return s;
}

double weight(const graph::AttributedGraph& g, std::int64_t k) {
  return g.weights.empty() ? 1.0 : g.weights[static_cast<std::size_t>(k)];
}

}  // namespace

std::vector<Candidate> preset_candidates(const QpAlignOptions& base, std::string_view preset,
                                         const std::set<std::string, std::less<>>& given) {
  std::vector<Candidate> out;
  if (preset == "none") return {Candidate{Preset::None, base}};
  for (const PresetSettings& p : kPresets) {
    if (preset != "auto" && preset != enum_name(kPresetNames, p.preset)) continue;
    Candidate c{p.preset, with_preset(base, p, given)};
    const bool repeated = std::any_of(out.begin(), out.end(), [&](const Candidate& o) {
      return same_settings(o.options, c.options);
    });
    if (!repeated) out.push_back(c);
  }
  require(!out.empty(), "preset",
          "must be auto, none, gaussian, douban or acmdblp; got " + std::string(preset));
  return out;
}

double matching_likelihood(const graph::AttributedGraph& g1, const graph::AttributedGraph& g2,
                           std::span<const std::int64_t> perm) {
  const std::int64_t n1 = g1.num_nodes, n2 = g2.num_nodes;
  require(static_cast<std::int64_t>(perm.size()) == n1, "perm",
          "has " + std::to_string(perm.size()) + " entries for " + std::to_string(n1) + " nodes");
  std::vector<char> used(static_cast<std::size_t>(n2), 0);
  std::int64_t matched = 0;
  for (std::int64_t j : perm) {
    require(j >= -1 && j < n2, "perm", "holds " + std::to_string(j) + ", out of range");
    if (j >= 0) used[static_cast<std::size_t>(j)] = 1, ++matched;
  }
  // e = ||A||^2 + ||B restricted to the image||^2 - 2 sum_{A_ij} A_ij B[perm i, perm j].
  double cross = 0, image = 0;
  for (std::int64_t i = 0; i < n1; ++i) {
    const std::int64_t u = perm[static_cast<std::size_t>(i)];
    if (u < 0) continue;
    const auto row = g2.neighbors(u);
    for (std::int64_t k = g1.indptr[i]; k < g1.indptr[i + 1]; ++k) {
      const std::int64_t v = perm[static_cast<std::size_t>(g1.indices[k])];
      if (v < 0) continue;
      const auto it = std::lower_bound(row.begin(), row.end(), v);
      if (it != row.end() && *it == v)
        cross += weight(g1, k) * weight(g2, g2.indptr[u] + (it - row.begin()));
    }
  }
  for (std::int64_t u = 0; u < n2; ++u) {
    if (!used[static_cast<std::size_t>(u)]) continue;
    for (std::int64_t k = g2.indptr[u]; k < g2.indptr[u + 1]; ++k)
      if (used[static_cast<std::size_t>(g2.indices[k])]) image += weight(g2, k) * weight(g2, k);
  }
  const double a2 = squared_weights(g1), b2 = squared_weights(g2);
  const double cells = static_cast<double>(n1) * static_cast<double>(n1);
  const double edges = std::max(a2 + image - 2 * cross, 0.0) / cells;
  double ll = -0.5 * cells * std::log(std::max(edges, 1e-12 * (a2 + b2) / cells + 1e-300));
  const std::int64_t d = g1.dim();
  require(g2.dim() == d, "x2",
          "has " + std::to_string(g2.dim()) + " features per node, x1 " + std::to_string(d));
  if (d > 0 && matched > 0) {
    double f = 0, scale = 0;
    for (std::int64_t i = 0; i < n1; ++i) {
      const std::int64_t u = perm[static_cast<std::size_t>(i)];
      if (u < 0) continue;
      for (std::int64_t c = 0; c < d; ++c) {
        const double x = g1.x(i, c), y = g2.x(u, c);
        f += (x - y) * (x - y);
        scale += x * x + y * y;
      }
    }
    const double entries = static_cast<double>(matched) * static_cast<double>(d);
    ll -= 0.5 * entries * std::log(std::max(f / entries, 1e-12 * scale / entries + 1e-300));
  }
  return ll;
}

Selection qpalign_select(const graph::AttributedGraph& g1, const graph::AttributedGraph& g2,
                         std::span<const Candidate> candidates) {
  require(!candidates.empty(), "preset", "no candidate run to select from");
  Selection s;
  for (const Candidate& c : candidates) {
    Alignment r = qpalign(g1, g2, c.options);
    r.preset = c.preset;
    s.presets.push_back(c.preset);
    s.likelihoods.push_back(r.likelihood);
    const bool converged = r.converged;
    if (s.likelihoods.size() == 1 || r.likelihood > s.alignment.likelihood) {
      s.alignment = std::move(r);
      s.chosen = s.likelihoods.size() - 1;
    }
    if (converged) break;
  }
  return s;
}

std::string stop_hint(const Alignment& r) {
  if (r.stopped_by != StopReason::MaxIter) return {};
  std::string s = "qpalign stopped by max_iter after ";
  s += std::to_string(r.iterations);
  s += " iterations, before tol or patience fired: the matching may still change. Try a larger";
  s += " max_iter";
  if (r.preset == Preset::None)
    s += ", or preset auto (the authors' presets in turn, the most likely matching kept)";
  else
    s += " (the run kept is the most likely of the preset runs made; real pairs such as Douban "
         "never settle, docs/align.md \"Presets\")";
  s += "; with a ground truth, compare the overlap of a few settings";
  return s;
}

}  // namespace birkhoff::align
