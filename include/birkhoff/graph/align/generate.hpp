#pragma once

#include <cstdint>
#include <vector>

namespace birkhoff::align {

/// A planted alignment instance: two graphs on n nodes given as dense adjacency, node features,
/// and the hidden permutation (node i of G1 <-> node perm[i] of G2).
///
/// The model couples A[i, j] with B[perm[i], perm[j]] and X[i] with Y[perm[i]]
/// [huang2026qpalign].
struct PlantedInstance {
  std::int64_t n = 0;              ///< number of nodes of each graph
  std::int64_t d = 0;              ///< feature dimension (0 = no features)
  std::vector<double> a;           ///< (n, n) row-major float64, symmetric, zero diagonal
  std::vector<double> b;           ///< (n, n) row-major float64, symmetric, zero diagonal
  std::vector<float> x1;           ///< (n, d) row-major float32 features of G1
  std::vector<float> x2;           ///< (n, d) row-major float32 features of G2
  std::vector<std::int64_t> perm;  ///< (n) the hidden bijection G1 -> G2
};

/// Featured correlated Gaussian Wigner model [huang2026qpalign] (the authors' sim_gaussian.py).
///
/// A[i,j] = A[j,i] ~ N(0,1) for i < j; B°[i,j] = rho A[i,j] + sqrt(1 - rho^2) Z[i,j];
/// X[i,k] ~ N(0,1); Y°[i,k] = r X[i,k] + sqrt(1 - r^2) W[i,k]; with `standardize_features` both
/// X and Y° are standardised column-wise (mean 0, unbiased std + 1e-8) as the repo does; then
/// B[perm[i], perm[j]] = B°[i,j] and Y[perm[i]] = Y°[i] with perm uniform over S_n.
///
/// Draw order (fixed, so a seed gives the same instance in every version): the upper triangle of
/// A row-major (i < j), then Z in the same order, then X row-major, then W row-major, then perm
/// by Fisher-Yates (i = n-1 .. 1, swap i with a uniform j in [0, i], starting from the
/// identity). The generator is xoshiro256** seeded by SplitMix64(seed); normals are Box-Muller
/// pairs (both values used, in order); uniform integers by 128-bit multiply-shift. The bits are
/// the same on every platform up to the last-bit rounding of libm's log/cos/sin.
///
/// @param n nodes (>= 1); d feature dimension (>= 0); rho, r correlations in [0, 1].
/// @throws birkhoff::InvalidInput naming `n`, `d`, `rho` or `r` when out of range.
/// Memory 2 n^2 doubles + 2 n d floats.
PlantedInstance correlated_wigner(std::int64_t n, std::int64_t d, double rho, double r,
                                  std::uint64_t seed, bool standardize_features = true);

/// Correlated Erdős–Rényi edges with the same features (the authors' sim_er.py):
/// per unordered pair i < j (upper triangle row-major, one uniform u each) the pair
/// (A[i,j], B°[i,j]) is (1,1) with probability p^2 + rho p (1-p), (1,0) and (0,1) with
/// (1-rho) p (1-p) each, (0,0) otherwise. Then X, W and perm are drawn as in correlated_wigner.
/// @throws birkhoff::InvalidInput naming `p` outside (0, 1) or the others as correlated_wigner.
PlantedInstance correlated_erdos_renyi(std::int64_t n, std::int64_t d, double rho, double r,
                                       double p, std::uint64_t seed,
                                       bool standardize_features = true);

/// Conjectured exact-recovery margin (our reading of the thresholds of [huang2026qpalign]):
/// n rho^2 + d log(1/(1-r^2)) - 4 log n (positive = above the conjectured threshold).
double exact_margin(std::int64_t n, std::int64_t d, double rho, double r);
/// Conjectured almost-exact margin (likewise):
/// n rho^2 + 2 d log(1/(1-r^2)) - 4 log n.
double partial_margin(std::int64_t n, std::int64_t d, double rho, double r);

/// The portable generator used above: xoshiro256** seeded by SplitMix64.
class Rng {
 public:
  explicit Rng(std::uint64_t seed);
  std::uint64_t next();
  /// Uniform double in [0, 1) with 53 random bits.
  double uniform();
  /// Standard normal (Box-Muller, both values of each pair used in order).
  double normal();
  /// Uniform integer in [0, bound), bound >= 1 (multiply-shift, bias < bound / 2^64).
  std::uint64_t below(std::uint64_t bound);

 private:
  std::uint64_t s_[4];
  double spare_ = 0.0;
  bool has_spare_ = false;
};

}  // namespace birkhoff::align
