#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "birkhoff/core/progress.hpp"
#include "birkhoff/core/view.hpp"
#include "birkhoff/transport/sinkhorn.hpp"

namespace birkhoff::transport {

/// The arithmetic of the inner Sinkhorn solves.
enum class InnerDtype { Float64, Float32 };

/// Settings of entropic (fused) Gromov-Wasserstein.
struct GromovOptions {
  /// Fused GW: the weight of the structure term, in [0, 1]; the objective is
  /// (1 - alpha) <T, M_features> + alpha GW(T) (POT's convention). Ignored without features.
  double alpha = 0.5;
  /// Outer iterations (each one streamed Sinkhorn solve) at the most, per initial plan.
  int max_iter = 100;
  /// The outer loop stops when the linearisation K = Psi^T T Omega (which fixes the next plan)
  /// changes by less than this, relative to its Frobenius norm (above the inner solves'
  /// marginal_tol, whose rounding K carries).
  double tol = 1e-4;
  /// Initial plans: the product plan a b^T first, then n_init - 1 monotone couplings along
  /// random directions (from `seed`); the plan with the lowest objective is kept.
  int n_init = 1;
  std::int64_t seed = 0;
  /// Each inner Sinkhorn solve stops at this relative marginal error.
  double marginal_tol = 1e-5;
  /// Iterations of each inner solve at the final epsilon at the most.
  int inner_max_iter = 20000;
  /// The inner solves' backend: auto (multiscale for large low-dimensional problems, as
  /// sinkhorn()), dense or multiscale.
  Backend backend = Backend::Auto;
  /// The inner solves' arithmetic: float64, or float32 (twice the pairs per second; a solve
  /// whose float32 logits cannot reach marginal_tol is finished in float64, as sinkhorn() does
  /// with float32 points). The outer loop, the objective and the gradients stay in float64.
  InnerDtype dtype = InnerDtype::Float64;
  /// OpenMP threads; 0 = default. Results do not depend on it.
  int num_threads = 0;
  /// Called once per outer iteration with stage "gromov"; return false to cancel.
  ProgressCallback progress;
};

/// The outcome of gromov_wasserstein().
struct GromovResult {
  std::int64_t n = 0, m = 0, dx = 0, dy = 0, df = 0;
  /// The objective at the final plan T, without the entropy: alpha GW(T) + (1 - alpha) F(T)
  /// for fused GW, GW(T) otherwise (POT's gw_dist / fgw_dist).
  double loss = 0;
  /// GW(T) = sum_ijkl (|x_i - x_k|^2 - |y_j - y_l|^2)^2 T_ij T_kl, with the marginal terms
  /// taken at a and b (POT's square-loss gwloss).
  double gw_loss = 0;
  /// F(T) = sum_ij T_ij |features_x_i - features_y_j|^2 (0 without features).
  double feature_loss = 0;
  double epsilon = 0;
  /// Outer iterations of the kept initial plan, and inner Sinkhorn iterations of all of them.
  int iterations = 0;
  int inner_iterations = 0;
  /// The outer tol was met and the last inner solve converged.
  bool converged = false;
  /// Relative marginal error of the final plan.
  double marginal_error = 0;
  /// The backend of the last inner solve ("dense" or "multiscale").
  std::string backend;
  /// The last inner solve's arithmetic ("float64", "float32", or "float64 (why)" when a
  /// float32 solve was finished in float64).
  std::string working_dtype;
  /// Which initial plan was kept (0: the product plan), and each one's final loss.
  int best_init = 0;
  std::vector<double> losses;
  /// (n, dx), (m, dy): gradients of `loss` in the points at the final plan held fixed (the
  /// envelope theorem for the entropic objective; POT's convention); empty unless asked for.
  std::vector<double> grad_x, grad_y;
  /// (n, df), (m, df): the same for the features (fused GW only).
  std::vector<double> grad_features_x, grad_features_y;
  /// (n, m) the final plan, row-major; empty unless asked for.
  std::vector<double> plan;
};

/// Entropic Gromov-Wasserstein between two point clouds with squared Euclidean inner costs,
/// in linear memory: min_T GW(T) + epsilon KL(T | a b^T) over plans with marginals a, b, by
/// projected gradient (POT's PGD, [peyre2016]): T_{k+1} is the entropic OT plan for the
/// linearised cost 2 M(T_k), M_ij = alpha_i + beta_j - 2 phi_i^T K chi_j, where phi, chi are
/// the points' (d + 2)-dimensional lifted features and K = Psi^T T_k Omega is a
/// (dx + 2) x (dy + 2) matrix formed by one streamed plan product ([scetbon2022] use the same
/// factorisation). Each outer step is one streamed Sinkhorn solve with a dot-product cost: no
/// n x m matrix is formed. Fused GW [vayer2019] adds the squared Euclidean feature cost with
/// weight 1 - alpha.
///
/// @param x (n, dx), y (m, dy) finite points; the dimensions may differ.
/// @param a (n), b (m) non-negative weights of equal total mass; empty means uniform.
/// @param epsilon > 0, the entropic regularisation (cost units of the linearised cost, as
///        POT's epsilon).
/// @param features_x (n, df), features_y (m, df): fused GW when given (both or neither).
/// @param init (n, m) an initial plan (POT's G0) replacing the product plan; empty for none.
/// @param gradients fill grad_x, grad_y (and the features' gradients).
/// @param plan fill the dense plan (n m entries).
/// @throws InvalidInput naming `x`, `y`, `a`, `b`, `epsilon`, `features_x`, `features_y`,
///         `init`, `alpha`, `max_iter`, `tol`, `n_init`, `marginal_tol`, `inner_max_iter` or
///         `num_threads`; Cancelled when the progress callback returns false.
GromovResult gromov_wasserstein(MatrixView<const double> x, MatrixView<const double> y,
                                std::span<const double> a, std::span<const double> b,
                                double epsilon, const GromovOptions& options = {},
                                MatrixView<const double> features_x = {},
                                MatrixView<const double> features_y = {},
                                MatrixView<const double> init = {}, bool gradients = false,
                                bool plan = false);

}  // namespace birkhoff::transport
