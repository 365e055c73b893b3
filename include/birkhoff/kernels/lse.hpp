#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace birkhoff::kernels {

/// Arguments of the streaming row log-sum-exp kernel (FlashSinkhorn's core reduction).
///
/// For every row i < n it computes, in base 2, the online LogSumExp of the logits
///     z_ij = scale * <x_i, y_j> + bias_j,   j < m,
/// returning row_max[i] = M_i = max_j z_ij and row_sum[i] = S_i = sum_j 2^(z_ij - M_i), so that
/// log2 sum_j 2^z_ij = M_i + log2 S_i. With `values` (m, dv) it also returns
///     row_values[i, :] = sum_j 2^(z_ij - M_i) * values[j, :].
/// The n x m matrix of logits is never stored: columns are streamed in tiles (source:
/// FlashSinkhorn, arXiv 2602.03067, and the online softmax of FlashAttention).
///
/// Layout: x (n, d) and y (m, d) row-major with row strides x_stride, y_stride (elements);
/// values (m, dv) row-major with stride dv; outputs row_max, row_sum (n), row_values (n, dv).
/// A bias of -inf masks a column (zero weight); a row whose every bias is -inf gets
/// M_i = -inf, S_i = 0. Rows are split across `num_threads` OpenMP threads (0 = default) by
/// fixed blocks, so the results do not depend on the thread count.
///
/// Two optional extensions, each free when unused (the plain path is a separate instantiation):
/// - Label bias (the label-augmented cost of dataset distances, [alvarezmelis2020] eq. (4)):
///   z_ij += label_bias[row_labels[i] * num_labels + col_labels[j]], with labels in
///   [0, num_labels) and label_bias (num_labels, num_labels) row-major, in the logits' units.
/// - Modulated values (the second-order products of the Hessian-vector product,
///   [flashsinkhorn2026] §7.2): with dm > 0 and values, each value weight is multiplied by a
///   second dot product, row_values[i, :] = sum_j 2^(z_ij - M_i) <mod_x_i, mod_y_j> values[j, :],
///   mod_x (n, dm), mod_y (m, dm) row-major with the given strides. row_sum is unchanged.
/// - Distance-power logits (power > 0, the CostForm::DistancePower costs such as |x - y|^p):
///   z_ij = scale * (s_ij)^(power / 2) + bias_j (+ the label bias) with the squared distance
///   s_ij = sum_k (x_ik - y_jk)^2 summed from the differences (no cancellation: a point's
///   distance to itself is exactly 0). With values and value_exponent != 0, each value weight
///   is also multiplied by max(s_ij, tiny)^value_exponent (the gradient and the <P, C> of such
///   a cost; tiny the smallest normal T), 0 for s_ij = 0 when the exponent is negative.
///   Modulated values by dot products (dm) are not combined with this form.
/// - Block-sparse passes (row_block > 0 with range_ptr and ranges): rows come in groups of
///   `row_block` consecutive rows (the last may be shorter); group r reads only the columns of
///   the half-open ranges [ranges[2k], ranges[2k + 1]) for k in [range_ptr[r], range_ptr[r + 1]),
///   sorted, disjoint and within [0, m); the other columns count as masked. range_ptr has
///   ceil(n / row_block) + 1 entries. A group with no range gets M_i = -inf, S_i = 0.
template <class T>
struct LseArgs {
  const T* x = nullptr;
  std::int64_t n = 0;
  std::int64_t x_stride = 0;
  const T* y = nullptr;
  std::int64_t m = 0;
  std::int64_t y_stride = 0;
  std::int64_t d = 0;
  const T* bias = nullptr;
  T scale = 1;
  const T* values = nullptr;
  std::int64_t dv = 0;
  T* row_max = nullptr;
  T* row_sum = nullptr;
  T* row_values = nullptr;
  const std::int32_t* row_labels = nullptr;
  const std::int32_t* col_labels = nullptr;
  const T* label_bias = nullptr;
  std::int64_t num_labels = 0;
  const T* mod_x = nullptr;
  std::int64_t mod_x_stride = 0;
  const T* mod_y = nullptr;
  std::int64_t mod_y_stride = 0;
  std::int64_t dm = 0;
  T power = 0;
  T value_exponent = 0;
  int num_threads = 0;
  std::int64_t row_block = 0;
  const std::int64_t* range_ptr = nullptr;
  const std::int64_t* ranges = nullptr;
};

/// Arguments of the streaming row minimum (the hard c-transform, [flashsinkhorn2026] §8):
/// for every row i < n, row_min[i] = min_j (scale * <x_i, y_j> + bias_j) and row_argmin[i] the
/// smallest j attaining it. Same layout, tiling and threading as LseArgs; a bias of +inf
/// excludes a column; a row whose every bias is +inf gets +inf and index -1. With power > 0 the
/// values are scale * s_ij^(power / 2) + bias_j, s_ij the squared distance as in LseArgs.
template <class T>
struct MinArgs {
  const T* x = nullptr;
  std::int64_t n = 0;
  std::int64_t x_stride = 0;
  const T* y = nullptr;
  std::int64_t m = 0;
  std::int64_t y_stride = 0;
  std::int64_t d = 0;
  const T* bias = nullptr;
  T scale = 1;
  T* row_min = nullptr;
  std::int64_t* row_argmin = nullptr;
  T power = 0;
  int num_threads = 0;
};

/// Runs the kernel on the best SIMD target of this CPU (Highway dynamic dispatch).
void row_lse(const LseArgs<float>& args);
void row_lse(const LseArgs<double>& args);

/// Scalar twin of row_lse, accumulating in double; for tests only.
void row_lse_reference(const LseArgs<float>& args);
void row_lse_reference(const LseArgs<double>& args);

/// Runs the row minimum on the best SIMD target of this CPU.
void row_min(const MinArgs<float>& args);
void row_min(const MinArgs<double>& args);

/// Scalar twin of row_min (dot products in double); for tests only.
void row_min_reference(const MinArgs<float>& args);
void row_min_reference(const MinArgs<double>& args);

/// 2^x for x <= 0 on the dispatched SIMD target, elementwise (for tests of the polynomial).
void exp2_nonpositive(const float* x, float* out, std::int64_t count);
void exp2_nonpositive(const double* x, double* out, std::int64_t count);

/// FP32 FMA peak probe for benchmarks: runs `iterations` rounds of independent vector FMA
/// chains on each of `num_threads` threads (0 = default) and returns the flops performed.
double fma_probe(std::int64_t iterations, int num_threads);

/// The Highway targets compiled into this build that this CPU supports, best first.
std::vector<std::int64_t> available_targets();
/// Restricts dynamic dispatch to one target (from available_targets); 0 restores the default.
void restrict_target(std::int64_t target);
/// Highway's name of a target ("AVX2", "SSE4", "EMU128", ...).
std::string target_name(std::int64_t target);

}  // namespace birkhoff::kernels
