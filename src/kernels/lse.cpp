// Dispatch unit of the row log-sum-exp kernel: compiled once per Highway target.
#include "birkhoff/kernels/lse.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "birkhoff/core/error.hpp"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/lse.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h
#include <hwy/highway.h>

#include "kernels/lse-inl.hpp"

#if HWY_ONCE
#include <hwy/targets.h>

namespace birkhoff::kernels {

HWY_EXPORT(RowLseF32);
HWY_EXPORT(RowLseF64);
HWY_EXPORT(RowMinF32);
HWY_EXPORT(RowMinF64);
HWY_EXPORT(Exp2F32);
HWY_EXPORT(Exp2F64);
HWY_EXPORT(FmaProbe);

namespace {
template <class T>
void check(const LseArgs<T>& a) {
  require(a.n >= 0 && a.m >= 0 && a.d >= 0, "lse", "negative size");
  require(a.n == 0 || (a.x && a.x_stride >= a.d), "lse.x", "missing or bad stride");
  require(a.m == 0 || (a.y && a.y_stride >= a.d && a.bias), "lse.y", "missing or bad stride");
  require(a.n == 0 || (a.row_max && a.row_sum), "lse.row_max", "missing output");
  require(a.dv == 0 || (a.values && a.row_values), "lse.values", "missing values or output");
  require(a.row_block >= 0, "lse.row_block", "negative");
  require(a.row_block == 0 || (a.range_ptr && a.ranges), "lse.ranges", "missing block ranges");
  require(a.dm == 0 || (a.mod_x && a.mod_y && a.mod_x_stride >= a.dm && a.mod_y_stride >= a.dm),
          "lse.mod_x", "missing modulation operands or bad stride");
  require(a.num_labels == 0 ||
              (a.label_bias && (a.n == 0 || a.row_labels) && (a.m == 0 || a.col_labels)),
          "lse.label_bias", "missing label table or labels");
  require(a.power == 0 || a.dm == 0, "lse.power", "combined with a dot-product modulation");
}

template <class T>
void check(const MinArgs<T>& a) {
  require(a.n >= 0 && a.m >= 0 && a.d >= 0, "min", "negative size");
  require(a.n == 0 || (a.x && a.x_stride >= a.d), "min.x", "missing or bad stride");
  require(a.m == 0 || (a.y && a.y_stride >= a.d && a.bias), "min.y", "missing or bad stride");
  require(a.n == 0 || (a.row_min && a.row_argmin), "min.row_min", "missing output");
  require(sizeof(T) == 8 || a.m < (std::int64_t{1} << 31), "min.y", "too many columns");
}
}  // namespace

void row_lse(const LseArgs<float>& args) {
  check(args);
  HWY_DYNAMIC_DISPATCH(RowLseF32)(args);
}
void row_lse(const LseArgs<double>& args) {
  check(args);
  HWY_DYNAMIC_DISPATCH(RowLseF64)(args);
}
void row_min(const MinArgs<float>& args) {
  check(args);
  HWY_DYNAMIC_DISPATCH(RowMinF32)(args);
}
void row_min(const MinArgs<double>& args) {
  check(args);
  HWY_DYNAMIC_DISPATCH(RowMinF64)(args);
}
void exp2_nonpositive(const float* x, float* out, std::int64_t count) {
  HWY_DYNAMIC_DISPATCH(Exp2F32)(x, out, count);
}
void exp2_nonpositive(const double* x, double* out, std::int64_t count) {
  HWY_DYNAMIC_DISPATCH(Exp2F64)(x, out, count);
}

double fma_probe(std::int64_t iterations, int num_threads) {
  return HWY_DYNAMIC_DISPATCH(FmaProbe)(iterations, num_threads);
}

std::vector<std::int64_t> available_targets() {
  std::vector<std::int64_t> out;
  for (std::int64_t t : hwy::SupportedAndGeneratedTargets()) out.push_back(t);
  return out;
}

void restrict_target(std::int64_t target) {
  hwy::SetSupportedTargetsForTest(static_cast<uint32_t>(target));
}

std::string target_name(std::int64_t target) {
  return hwy::TargetName(static_cast<uint32_t>(target));
}

}  // namespace birkhoff::kernels
#endif  // HWY_ONCE
