// PRIVATE: per-target body of the distance-power tiles of the row log-sum-exp and row-minimum
// kernels (LseArgs::power), included by kernels/lse-inl.hpp once per Highway target after its
// dot-product tiles. No include guard on purpose (Highway's foreach_target re-includes it).
#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include <cstdint>
#include <limits>

HWY_BEFORE_NAMESPACE();
namespace birkhoff::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// sqrt(s), 0 where s is 0. In float the reciprocal square-root estimate with one Newton step
// (relative error about 2^-22, below the logits' own rounding) is a few times cheaper than the
// square root; double keeps the square root.
template <class D, class V = hn::Vec<D>>
HWY_INLINE V Sqrt(D d, V s) {
  using T = hn::TFromD<D>;
  if constexpr (sizeof(T) == 4) {
    const V r = hn::ApproximateReciprocalSqrt(s);
    // r (3 - s r^2) / 2, then sqrt(s) = s r.
    const V refined =
        hn::Mul(hn::Mul(r, hn::Set(d, T(0.5))), hn::NegMulAdd(hn::Mul(s, r), r, hn::Set(d, T(3))));
    return hn::IfThenElseZero(hn::Gt(s, hn::Zero(d)), hn::Mul(s, refined));
  } else {
    return hn::Sqrt(s);
  }
}

// s^(p/2) = 2^((p/2) log2 s) for any p (its exponent stays below T's range since the cost
// does), 0 at s = 0. Not inlined: the logarithm is large, and the micro-kernels are many.
template <class D, class V = hn::Vec<D>>
HWY_NOINLINE V GeneralPower(D d, V s, V half_p) {
  using T = hn::TFromD<D>;
  const V tiny = hn::Set(d, std::numeric_limits<T>::min());
  return hn::IfThenElseZero(hn::Gt(s, hn::Zero(d)),
                            Exp2NonPositive(d, hn::Mul(half_p, hn::Log2(d, hn::Max(s, tiny)))));
}

// The value factor s^q (0 at s = 0 when q < 0), not inlined for the same reason.
template <class D, class V = hn::Vec<D>>
HWY_NOINLINE V ValueFactor(D d, V s, V q, bool negative) {
  using T = hn::TFromD<D>;
  const V f =
      hn::Exp(d, hn::Mul(q, hn::Log(d, hn::Max(s, hn::Set(d, std::numeric_limits<T>::min())))));
  return negative ? hn::IfThenElseZero(hn::Gt(s, hn::Zero(d)), f) : f;
}

// s^(p/2) for the power kind kPow (1: p = 1, 2: p = 2, 0: any p).
template <int kPow, class D, class V = hn::Vec<D>>
HWY_INLINE V PowerOf(D d, V s, V half_p) {
  if constexpr (kPow == 1) {
    return Sqrt(d, s);
  } else if constexpr (kPow == 2) {
    return s;
  } else {
    return GeneralPower(d, s, half_p);
  }
}

// The distance-power logits of NR columns for the P rows of one packed panel: the squared
// distances s = |x_r - y_c|^2 are summed from the coordinates' differences (no cancellation:
// two points closer than float32's resolution of |x|^2 still get their distance, and a point's
// distance to itself is exactly 0), then out[c * P + r] = scale * s^(p/2) + bias_c (+ the label
// bias). With `mod`, also the value factors mod[c * P + r] = s^value_exponent, 0 at s = 0 when
// the exponent is negative (the subgradient of least norm).
template <int NR, int kPow, bool kLabels, class D>
HWY_INLINE void MicroKernelPower(D d, const hn::TFromD<D>* HWY_RESTRICT panel,
                                 const hn::TFromD<D>* HWY_RESTRICT y, std::int64_t y_stride,
                                 std::int64_t dim, const hn::TFromD<D>* HWY_RESTRICT bias,
                                 hn::TFromD<D> scale, hn::TFromD<D> power,
                                 const hn::TFromD<D>* HWY_RESTRICT panel_labels,
                                 const std::int32_t* HWY_RESTRICT col_labels,
                                 hn::TFromD<D> value_exponent, hn::TFromD<D>* HWY_RESTRICT mod,
                                 hn::TFromD<D>* HWY_RESTRICT out) {
  using T = hn::TFromD<D>;
  using V = hn::Vec<D>;
  const std::int64_t N = static_cast<std::int64_t>(hn::Lanes(d));
  V acc0[NR], acc1[NR];
  for (int c = 0; c < NR; ++c) {
    acc0[c] = hn::Zero(d);
    acc1[c] = hn::Zero(d);
  }
  const T* yc[NR];
  for (int c = 0; c < NR; ++c) yc[c] = y + c * y_stride;
  for (std::int64_t k = 0; k < dim; ++k) {
    const V x0 = hn::Load(d, panel + k * 2 * N);
    const V x1 = hn::Load(d, panel + k * 2 * N + N);
    for (int c = 0; c < NR; ++c) {
      const V yb = hn::Set(d, yc[c][k]);
      const V e0 = hn::Sub(x0, yb), e1 = hn::Sub(x1, yb);
      acc0[c] = hn::MulAdd(e0, e0, acc0[c]);
      acc1[c] = hn::MulAdd(e1, e1, acc1[c]);
    }
  }
  const V s_scale = hn::Set(d, scale), half_p = hn::Set(d, power / 2);
  const V q = hn::Set(d, value_exponent);
  for (int c = 0; c < NR; ++c) {
    const V b = hn::Set(d, bias[c]);
    for (int h = 0; h < 2; ++h) {
      const V s = h == 0 ? acc0[c] : acc1[c];
      V bb = b;
      if constexpr (kLabels)
        bb = hn::Add(bb, hn::Load(d, panel_labels +
                                         static_cast<std::int64_t>(col_labels[c]) * 2 * N + h * N));
      hn::Store(hn::MulAdd(PowerOf<kPow>(d, s, half_p), s_scale, bb), d, out + c * 2 * N + h * N);
      if (mod) hn::Store(ValueFactor(d, s, q, value_exponent < 0), d, mod + c * 2 * N + h * N);
    }
  }
}

template <int kPow, bool kLabels, class D>
HWY_INLINE void TileLogitsPowerOf(D d, const hn::TFromD<D>* panel, const hn::TFromD<D>* y,
                                  std::int64_t y_stride, std::int64_t dim,
                                  const hn::TFromD<D>* bias, hn::TFromD<D> scale,
                                  hn::TFromD<D> power, const hn::TFromD<D>* panel_labels,
                                  const std::int32_t* col_labels, hn::TFromD<D> value_exponent,
                                  hn::TFromD<D>* mod, std::int64_t cols, hn::TFromD<D>* out) {
  const std::int64_t P = 2 * static_cast<std::int64_t>(hn::Lanes(d));
  auto lab = [&](std::int64_t c) { return kLabels ? col_labels + c : nullptr; };
  auto at = [&](std::int64_t c) { return mod ? mod + c * P : nullptr; };
  std::int64_t c = 0;
  for (; c + kNR <= cols; c += kNR)
    MicroKernelPower<kNR, kPow, kLabels>(d, panel, y + c * y_stride, y_stride, dim, bias + c, scale,
                                         power, panel_labels, lab(c), value_exponent, at(c),
                                         out + c * P);
  for (; c + 4 <= cols; c += 4)
    MicroKernelPower<4, kPow, kLabels>(d, panel, y + c * y_stride, y_stride, dim, bias + c, scale,
                                       power, panel_labels, lab(c), value_exponent, at(c),
                                       out + c * P);
  for (; c < cols; ++c)
    MicroKernelPower<1, kPow, kLabels>(d, panel, y + c * y_stride, y_stride, dim, bias + c, scale,
                                       power, panel_labels, lab(c), value_exponent, at(c),
                                       out + c * P);
}

// The distance-power logits of a tile (and, with `mod`, its value factors), the power's
// special cases chosen once a tile.
template <bool kLabels, class D>
HWY_INLINE void TileLogitsPower(D d, const hn::TFromD<D>* panel, const hn::TFromD<D>* y,
                                std::int64_t y_stride, std::int64_t dim, const hn::TFromD<D>* bias,
                                hn::TFromD<D> scale, hn::TFromD<D> power,
                                const hn::TFromD<D>* panel_labels, const std::int32_t* col_labels,
                                hn::TFromD<D> value_exponent, hn::TFromD<D>* mod, std::int64_t cols,
                                hn::TFromD<D>* out) {
  using T = hn::TFromD<D>;
  if (power == T(1)) {
    TileLogitsPowerOf<1, kLabels>(d, panel, y, y_stride, dim, bias, scale, power, panel_labels,
                                  col_labels, value_exponent, mod, cols, out);
  } else if (power == T(2)) {
    TileLogitsPowerOf<2, kLabels>(d, panel, y, y_stride, dim, bias, scale, power, panel_labels,
                                  col_labels, value_exponent, mod, cols, out);
  } else {
    TileLogitsPowerOf<0, kLabels>(d, panel, y, y_stride, dim, bias, scale, power, panel_labels,
                                  col_labels, value_exponent, mod, cols, out);
  }
}

}  // namespace birkhoff::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();
