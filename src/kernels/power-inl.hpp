// PRIVATE: per-target body of the distance-power tiles of the row log-sum-exp and row-minimum
// kernels (LseArgs::power), included by kernels/lse-inl.hpp once per Highway target after its
// dot-product tiles. No include guard on purpose (Highway's foreach_target re-includes it).
#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include <cstdint>
#include <limits>
#include <tuple>

HWY_BEFORE_NAMESPACE();
namespace birkhoff::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// A squared distance within this many ulps of |x|^2 + |y|^2 is rounding: the pair coincides.
constexpr double kCoincident = 8;

// sqrt(s) where `positive`, else 0. In float the reciprocal square-root estimate with one
// Newton step (relative error about 2^-22, below the logits' own rounding) is a few times
// cheaper than the square root; double keeps the square root.
template <class D, class V = hn::Vec<D>, class M>
HWY_INLINE V Sqrt(D d, V s, M positive) {
  using T = hn::TFromD<D>;
  if constexpr (sizeof(T) == 4) {
    const V r = hn::ApproximateReciprocalSqrt(s);
    // r (3 - s r^2) / 2, then sqrt(s) = s r.
    const V refined =
        hn::Mul(hn::Mul(r, hn::Set(d, T(0.5))), hn::NegMulAdd(hn::Mul(s, r), r, hn::Set(d, T(3))));
    return hn::IfThenElseZero(positive, hn::Mul(s, refined));
  } else {
    return hn::IfThenElseZero(positive, hn::Sqrt(s));
  }
}

// The distance-power form of one tile (LseArgs::power): `tile` holds yn_c - 2 <x_r, y_c> from
// TileLogits; adds the panel's row norms to give s = |x_r - y_c|^2, then writes the logits
// scale * s^(power / 2) + bias_c (+ the label bias) in place and, with `mod`, the value factors
// s^value_exponent. An s within the rounding of xn + yn (kCoincident ulps) is a coincident pair:
// s = 0, and a factor of 0 when the exponent is negative (the subgradient of least norm).
template <int kPow, bool kLabels, class D>
HWY_INLINE void PowerTileOf(D d, hn::TFromD<D>* HWY_RESTRICT tile, std::int64_t cols,
                            const hn::TFromD<D>* HWY_RESTRICT panel_norm2,
                            const hn::TFromD<D>* HWY_RESTRICT col_norm2,
                            const hn::TFromD<D>* HWY_RESTRICT bias, hn::TFromD<D> scale,
                            hn::TFromD<D> power, const hn::TFromD<D>* panel_labels,
                            const std::int32_t* col_labels, hn::TFromD<D> value_exponent,
                            hn::TFromD<D>* HWY_RESTRICT mod) {
  using T = hn::TFromD<D>;
  using V = hn::Vec<D>;
  const std::int64_t N = static_cast<std::int64_t>(hn::Lanes(d));
  const std::int64_t P = 2 * N;
  const V s_scale = hn::Set(d, scale);
  const V half_p = hn::Set(d, power / 2), q = hn::Set(d, value_exponent);
  const V tiny = hn::Set(d, std::numeric_limits<T>::min());
  const V ulps = hn::Set(d, kCoincident * std::numeric_limits<T>::epsilon());
  for (std::int64_t c = 0; c < cols; ++c)
    for (std::int64_t h = 0; h < 2; ++h) {
      T* z = tile + c * P + h * N;
      const V xn = hn::Load(d, panel_norm2 + h * N);
      const V raw = hn::Add(hn::Load(d, z), xn);
      const auto apart = hn::Gt(raw, hn::Mul(ulps, hn::Add(xn, hn::Set(d, col_norm2[c]))));
      const V s = hn::IfThenElseZero(apart, raw);
      V phi;
      if constexpr (kPow == 1) {
        phi = Sqrt(d, s, apart);
      } else if constexpr (kPow == 2) {
        phi = s;
      } else {
        // s^(p/2) = 2^((p/2) log2 s); the exponent stays below T's range since the cost does.
        phi = hn::IfThenElseZero(
            apart, Exp2NonPositive(d, hn::Mul(half_p, hn::Log2(d, hn::Max(s, tiny)))));
      }
      V b = hn::Set(d, bias[c]);
      if constexpr (kLabels)
        b = hn::Add(
            b, hn::Load(d, panel_labels + static_cast<std::int64_t>(col_labels[c]) * P + h * N));
      if (mod) {
        V f = hn::Exp(d, hn::Mul(q, hn::Log(d, hn::Max(s, tiny))));
        if (value_exponent < 0) f = hn::IfThenElseZero(apart, f);
        hn::Store(f, d, mod + c * P + h * N);
      }
      hn::Store(hn::MulAdd(phi, s_scale, b), d, z);
    }
}

// PowerTileOf with the power's special cases (1: a square root, 2: none) chosen once a tile.
template <bool kLabels, class D, class... Args>
HWY_INLINE void PowerTile(D d, hn::TFromD<D>* tile, std::int64_t cols,
                          const hn::TFromD<D>* panel_norm2, const hn::TFromD<D>* col_norm2,
                          const hn::TFromD<D>* bias, hn::TFromD<D> scale, hn::TFromD<D> power,
                          Args... rest) {
  using T = hn::TFromD<D>;
  if (power == T(1)) {
    PowerTileOf<1, kLabels>(d, tile, cols, panel_norm2, col_norm2, bias, scale, power, rest...);
  } else if (power == T(2)) {
    PowerTileOf<2, kLabels>(d, tile, cols, panel_norm2, col_norm2, bias, scale, power, rest...);
  } else {
    PowerTileOf<0, kLabels>(d, tile, cols, panel_norm2, col_norm2, bias, scale, power, rest...);
  }
}

// The distance-power logits of NR columns, fused: the accumulators of the dot products give
// s = xn_r + yn_c - 2 <x_r, y_c> in registers, and out[c * P + r] = scale * s^(p/2) + bias_c
// (+ the label bias) is stored once (PowerTileOf's arithmetic without its second pass).
template <int NR, int kPow, bool kLabels, class D>
HWY_INLINE void MicroKernelPower(
    D d, const hn::TFromD<D>* HWY_RESTRICT panel, const hn::TFromD<D>* HWY_RESTRICT y,
    std::int64_t y_stride, std::int64_t dim, const hn::TFromD<D>* HWY_RESTRICT panel_norm2,
    const hn::TFromD<D>* HWY_RESTRICT col_norm2, const hn::TFromD<D>* HWY_RESTRICT bias,
    hn::TFromD<D> scale, hn::TFromD<D> power, const hn::TFromD<D>* HWY_RESTRICT panel_labels,
    const std::int32_t* HWY_RESTRICT col_labels, hn::TFromD<D>* HWY_RESTRICT out) {
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
      acc0[c] = hn::MulAdd(x0, yb, acc0[c]);
      acc1[c] = hn::MulAdd(x1, yb, acc1[c]);
    }
  }
  const V s_scale = hn::Set(d, scale), minus2 = hn::Set(d, T(-2));
  const V ulps = hn::Set(d, kCoincident * std::numeric_limits<T>::epsilon());
  const V half_p = hn::Set(d, power / 2), tiny = hn::Set(d, std::numeric_limits<T>::min());
  const V xn[2] = {hn::Load(d, panel_norm2), hn::Load(d, panel_norm2 + N)};
  for (int c = 0; c < NR; ++c) {
    const V yn = hn::Set(d, col_norm2[c]);
    const V b = hn::Set(d, bias[c]);
    for (int h = 0; h < 2; ++h) {
      const V norms = hn::Add(xn[h], yn);
      const V raw = hn::MulAdd(h == 0 ? acc0[c] : acc1[c], minus2, norms);
      const auto apart = hn::Gt(raw, hn::Mul(ulps, norms));
      V phi;
      if constexpr (kPow == 1) {
        phi = Sqrt(d, raw, apart);
      } else if constexpr (kPow == 2) {
        phi = hn::IfThenElseZero(apart, raw);
      } else {
        phi = hn::IfThenElseZero(
            apart, Exp2NonPositive(d, hn::Mul(half_p, hn::Log2(d, hn::Max(raw, tiny)))));
      }
      V bb = b;
      if constexpr (kLabels)
        bb = hn::Add(bb, hn::Load(d, panel_labels +
                                         static_cast<std::int64_t>(col_labels[c]) * 2 * N + h * N));
      hn::Store(hn::MulAdd(phi, s_scale, bb), d, out + c * 2 * N + h * N);
    }
  }
}

template <int kPow, bool kLabels, class D>
HWY_INLINE void TileLogitsPowerOf(D d, const hn::TFromD<D>* panel, const hn::TFromD<D>* y,
                                  std::int64_t y_stride, std::int64_t dim,
                                  const hn::TFromD<D>* panel_norm2, const hn::TFromD<D>* col_norm2,
                                  const hn::TFromD<D>* bias, hn::TFromD<D> scale,
                                  hn::TFromD<D> power, const hn::TFromD<D>* panel_labels,
                                  const std::int32_t* col_labels, std::int64_t cols,
                                  hn::TFromD<D>* out) {
  const std::int64_t P = 2 * static_cast<std::int64_t>(hn::Lanes(d));
  auto lab = [&](std::int64_t c) { return kLabels ? col_labels + c : nullptr; };
  std::int64_t c = 0;
  for (; c + kNR <= cols; c += kNR)
    MicroKernelPower<kNR, kPow, kLabels>(d, panel, y + c * y_stride, y_stride, dim, panel_norm2,
                                         col_norm2 + c, bias + c, scale, power, panel_labels,
                                         lab(c), out + c * P);
  for (; c + 4 <= cols; c += 4)
    MicroKernelPower<4, kPow, kLabels>(d, panel, y + c * y_stride, y_stride, dim, panel_norm2,
                                       col_norm2 + c, bias + c, scale, power, panel_labels, lab(c),
                                       out + c * P);
  for (; c < cols; ++c)
    MicroKernelPower<1, kPow, kLabels>(d, panel, y + c * y_stride, y_stride, dim, panel_norm2,
                                       col_norm2 + c, bias + c, scale, power, panel_labels, lab(c),
                                       out + c * P);
}

// The fused distance-power logits of a tile, the power's special cases chosen once a tile.
template <bool kLabels, class D, class... Args>
HWY_INLINE void TileLogitsPower(D d, const hn::TFromD<D>* panel, const hn::TFromD<D>* y,
                                std::int64_t y_stride, std::int64_t dim, Args... rest) {
  using T = hn::TFromD<D>;
  const T power = std::get<4>(std::tuple<Args...>(rest...));
  if (power == T(1)) {
    TileLogitsPowerOf<1, kLabels>(d, panel, y, y_stride, dim, rest...);
  } else if (power == T(2)) {
    TileLogitsPowerOf<2, kLabels>(d, panel, y, y_stride, dim, rest...);
  } else {
    TileLogitsPowerOf<0, kLabels>(d, panel, y, y_stride, dim, rest...);
  }
}

}  // namespace birkhoff::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();
