#pragma once

#include <array>
#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "birkhoff/graph/align/qpalign.hpp"

namespace birkhoff::align {

/// The hyper-parameters that one of the authors' scripts sets [R] (run_gaussian.sh,
/// run_douban.sh, run_acmdblp.sh); the other options keep their defaults.
struct PresetSettings {
  Preset preset;
  double lambda_edge, lambda_feature, gamma;
  std::int64_t max_iter, sinkhorn_sweeps;
  double step;
  Init init;
};

inline constexpr std::array<PresetSettings, 3> kPresets = {{
    {Preset::Gaussian, 0.1, 0.9, 0.1, 400, 80, 1e-4, Init::Similarity},
    {Preset::Douban, 0.2, 0.8, 0.0, 1000, 200, 5e-3, Init::Random},
    {Preset::AcmDblp, 0.4, 0.6, 0.01, 1000, 200, 1e-5, Init::Random},
}};

/// The described option names a preset sets (the keywords and flags it fills in).
inline constexpr std::array<std::string_view, 7> kPresetFields = {
    "lambda_edge", "lambda_feature", "gamma", "max_iter", "sinkhorn_sweeps", "step", "init"};

/// One qpalign() run to try: the preset it came from (Preset::None for `base` unchanged).
struct Candidate {
  Preset preset = Preset::None;
  QpAlignOptions options;
};

/// The runs that `preset` asks for: "none" is `base` alone; a preset's name is `base` with that
/// preset's settings; "auto" is one candidate per preset. A setting named in `given` (the
/// described names of the options the caller set) keeps `base`'s value in every candidate, and
/// candidates left identical by that are dropped.
/// @throws birkhoff::InvalidInput naming `preset` for an unknown name.
std::vector<Candidate> preset_candidates(const QpAlignOptions& base, std::string_view preset,
                                         const std::set<std::string, std::less<>>& given = {});

/// Profile log-likelihood of a matching under the planted Gaussian model of docs/align.md §2
/// (A = P B P^T + noise of variance s_e, x1 = P x2 + noise of variance s_f, both variances at
/// their maximum-likelihood values): -(N_e / 2) log(e / N_e) - (N_f / 2) log(f / N_f), with e
/// the squared residual over the n1^2 entries of A (an unmatched node's partner row is 0) and f
/// over the d features of the matched nodes; each mean floored at 1e-12 of the data's. Larger
/// is more likely; it compares matchings of the same pair found with different settings.
/// @param perm (n1) int64: node i of G1 -> perm[i] of G2, or -1.
/// Time O(nnz(A) log max-degree(B) + nnz(B) + n1 d).
double matching_likelihood(const graph::AttributedGraph& g1, const graph::AttributedGraph& g2,
                           std::span<const std::int64_t> perm);

/// The outcome of qpalign_select(): the most likely run and every candidate's likelihood.
struct Selection {
  Alignment alignment;              ///< the chosen run; its `preset` says which candidate it was
  std::size_t chosen = 0;           ///< its index among the candidates
  std::vector<Preset> presets;      ///< the candidates run (a prefix of those given)
  std::vector<double> likelihoods;  ///< matching_likelihood of each run's matching
};

/// Runs qpalign() once per candidate, in order, until a run converges (a stopping rule fired
/// before max_iter), and keeps the run whose matching is the most likely so far
/// (matching_likelihood; the first on ties), so that one default serves the authors' synthetic
/// pairs (the first preset converges: one run) and real ones (docs/align.md, "Presets").
/// @throws as qpalign(); birkhoff::InvalidInput naming `preset` for no candidate.
Selection qpalign_select(const graph::AttributedGraph& g1, const graph::AttributedGraph& g2,
                         std::span<const Candidate> candidates);

/// A line for the user when `r` stopped by max_iter (the matching may still change): what to
/// try. Empty otherwise.
std::string stop_hint(const Alignment& r);

}  // namespace birkhoff::align
