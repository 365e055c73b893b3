// PRIVATE: per-target body of the row log-sum-exp kernel, included once per Highway target by
// kernels/lse.cpp. No include guard on purpose (Highway's foreach_target re-includes it).
#include <hwy/aligned_allocator.h>
#include <hwy/highway.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "birkhoff/kernels/lse.hpp"

HWY_BEFORE_NAMESPACE();
namespace birkhoff::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// 2^x for x <= 0 (and x = -inf): x = n + f with n = round(x), f in [-1/2, 1/2]; 2^f by its
// Taylor polynomial (degree 6 for float: relative error below 2e-7; degree 12 for double:
// below 2e-16), 2^n by writing n into the exponent bits. Inputs below the smallest normal
// exponent return 0. There is no overflow branch: the LSE passes give z - max <= 0, and the
// distance-power tiles exponents below T's largest (their costs are finite in T).
template <class D, class V = hn::Vec<D>>
HWY_INLINE V Exp2NonPositive(D d, V x) {
  using T = hn::TFromD<D>;
  constexpr bool kFloat = sizeof(T) == 4;
  const V lowest = hn::Set(d, static_cast<T>(kFloat ? -126.0 : -1022.0));
  const auto underflow = hn::Lt(x, lowest);
  x = hn::Max(x, lowest);
  const V n = hn::Round(x);
  const V f = hn::Sub(x, n);
  // Coefficients ln(2)^k / k!.
  constexpr double c[13] = {1.0,
                            0.6931471805599453,
                            0.2402265069591007,
                            0.05550410866482158,
                            0.009618129107628477,
                            0.0013333558146428443,
                            1.5403530393381608e-4,
                            1.525273380405984e-5,
                            1.3215486790144307e-6,
                            1.0178086009239699e-7,
                            7.054911620801123e-9,
                            4.445538271870811e-10,
                            2.567843599348821e-11};
  constexpr int kDegree = kFloat ? 6 : 12;
  V p = hn::Set(d, static_cast<T>(c[kDegree]));
  for (int k = kDegree - 1; k >= 0; --k) p = hn::MulAdd(p, f, hn::Set(d, static_cast<T>(c[k])));
  const hn::RebindToSigned<D> di;
  constexpr int kMantissa = kFloat ? 23 : 52;
  constexpr int kBias = kFloat ? 127 : 1023;
  // n is an exact integer in [-1022, 0]; the magic-number add puts it in the low bits.
  const V magic = hn::Set(d, static_cast<T>(kFloat ? 12582912.0 : 6755399441055744.0));
  const auto bits = hn::BitCast(di, hn::Add(n, magic));
  const auto magic_bits = hn::BitCast(di, magic);
  const auto e = hn::Add(hn::Sub(bits, magic_bits), hn::Set(di, kBias));
  const V scale = hn::BitCast(d, hn::ShiftLeft<kMantissa>(e));
  return hn::IfThenZeroElse(underflow, hn::Mul(p, scale));
}

template <class T>
void Exp2Array(const T* x, T* out, std::int64_t count) {
  const hn::ScalableTag<T> d;
  const std::int64_t N = static_cast<std::int64_t>(hn::Lanes(d));
  std::int64_t i = 0;
  for (; i + N <= count; i += N) hn::StoreU(Exp2NonPositive(d, hn::LoadU(d, x + i)), d, out + i);
  if (i < count) {
    HWY_ALIGN T buf[hn::MaxLanes(d)] = {};
    std::copy(x + i, x + count, buf);
    hn::Store(Exp2NonPositive(d, hn::Load(d, buf)), d, buf);
    std::copy(buf, buf + (count - i), out + i);
  }
}

// The block structure: a thread takes a block of kPanels panels of P = 2 * lanes rows. Each
// panel is packed k-major (P values of coordinate k are contiguous) so that one coordinate of
// P rows is two vector loads. Columns are streamed in L2 chunks of kChunk columns; inside a
// chunk each panel runs over tiles of kTile columns: a register micro-kernel of 2 x NR
// accumulators (NR = 6 or 12 columns) writes the tile's logits to an L1 scratch, then the epilogue
// updates the running (max, sum[, values]) of the panel's rows once per tile.
constexpr std::int64_t kPanels = 8;
constexpr std::int64_t kTile = 128;
// 2 x kNR accumulators: 24 of AVX-512's 32 registers, 12 of AVX2's 16.
constexpr std::int64_t kNR = HWY_MAX_BYTES >= 64 ? 12 : 6;

// Logits of NR columns starting at column j for the P rows of one packed panel:
// out[c * P + r] = scale * <x_r, y_{j+c}> + bias_{j+c} (+ the label bias of row r and column
// j+c when kLabels: one vector load from the panel's label table, no gather). Two row vectors
// times NR broadcast columns gives 2 * NR independent FMA chains, enough to cover the FMA
// latency on AVX2.
template <int NR, bool kLabels, class D>
HWY_INLINE void MicroKernel(D d, const hn::TFromD<D>* HWY_RESTRICT panel,
                            const hn::TFromD<D>* HWY_RESTRICT y, std::int64_t y_stride,
                            std::int64_t dim, const hn::TFromD<D>* HWY_RESTRICT bias,
                            hn::TFromD<D> scale, const hn::TFromD<D>* HWY_RESTRICT panel_labels,
                            const std::int32_t* HWY_RESTRICT col_labels,
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
      acc0[c] = hn::MulAdd(x0, yb, acc0[c]);
      acc1[c] = hn::MulAdd(x1, yb, acc1[c]);
    }
  }
  const V s = hn::Set(d, scale);
  for (int c = 0; c < NR; ++c) {
    V b0 = hn::Set(d, bias[c]);
    V b1 = b0;
    if constexpr (kLabels) {
      const T* row = panel_labels + static_cast<std::int64_t>(col_labels[c]) * 2 * N;
      b0 = hn::Add(b0, hn::Load(d, row));
      b1 = hn::Add(b1, hn::Load(d, row + N));
    }
    hn::Store(hn::MulAdd(acc0[c], s, b0), d, out + c * 2 * N);
    hn::Store(hn::MulAdd(acc1[c], s, b1), d, out + c * 2 * N + N);
  }
}

template <bool kLabels, class D>
HWY_INLINE void TileLogits(D d, const hn::TFromD<D>* panel, const hn::TFromD<D>* y,
                           std::int64_t y_stride, std::int64_t dim, const hn::TFromD<D>* bias,
                           hn::TFromD<D> scale, const hn::TFromD<D>* panel_labels,
                           const std::int32_t* col_labels, std::int64_t cols, hn::TFromD<D>* out) {
  const std::int64_t P = 2 * static_cast<std::int64_t>(hn::Lanes(d));
  std::int64_t c = 0;
  for (; c + kNR <= cols; c += kNR)
    MicroKernel<kNR, kLabels>(d, panel, y + c * y_stride, y_stride, dim, bias + c, scale,
                              panel_labels, kLabels ? col_labels + c : nullptr, out + c * P);
  for (; c + 4 <= cols; c += 4)
    MicroKernel<4, kLabels>(d, panel, y + c * y_stride, y_stride, dim, bias + c, scale,
                            panel_labels, kLabels ? col_labels + c : nullptr, out + c * P);
  for (; c < cols; ++c)
    MicroKernel<1, kLabels>(d, panel, y + c * y_stride, y_stride, dim, bias + c, scale,
                            panel_labels, kLabels ? col_labels + c : nullptr, out + c * P);
}

}  // namespace birkhoff::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

// The distance-power tiles (LseArgs::power), in this target's namespace.
#include "kernels/power-inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace birkhoff::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Online LogSumExp update of one panel's state with one tile of logits (kernels doc, §2.4).
template <class D>
HWY_INLINE void Epilogue(D d, const hn::TFromD<D>* HWY_RESTRICT logits, std::int64_t cols,
                         hn::TFromD<D>* HWY_RESTRICT max, hn::TFromD<D>* HWY_RESTRICT sum,
                         const hn::TFromD<D>* HWY_RESTRICT values, std::int64_t dv,
                         const hn::TFromD<D>* HWY_RESTRICT mod, hn::TFromD<D>* HWY_RESTRICT acc) {
  using T = hn::TFromD<D>;
  using V = hn::Vec<D>;
  const std::int64_t N = static_cast<std::int64_t>(hn::Lanes(d));
  const std::int64_t P = 2 * N;
  for (std::int64_t h = 0; h < 2; ++h) {
    const T* z = logits + h * N;
    V tile_max = hn::Load(d, z);
    for (std::int64_t c = 1; c < cols; ++c) tile_max = hn::Max(tile_max, hn::Load(d, z + c * P));
    const V old_max = hn::Load(d, max + h * N);
    const V new_max = hn::Max(old_max, tile_max);
    // A row that has only seen masked (-inf) columns keeps max = -inf; subtracting the lowest
    // finite value instead keeps -inf - -inf (NaN) out and sends every weight to 0.
    const V safe_max = hn::Max(new_max, hn::Set(d, std::numeric_limits<T>::lowest()));
    const V rescale = Exp2NonPositive(d, hn::Sub(old_max, safe_max));
    V tile_sum = hn::Zero(d);
    if (dv == 0) {
      for (std::int64_t c = 0; c < cols; ++c)
        tile_sum = hn::Add(tile_sum, Exp2NonPositive(d, hn::Sub(hn::Load(d, z + c * P), safe_max)));
    } else {
      T* o = acc + h * N;
      for (std::int64_t k = 0; k < dv; ++k)
        hn::Store(hn::Mul(hn::Load(d, o + k * P), rescale), d, o + k * P);
      for (std::int64_t c = 0; c < cols; ++c) {
        const V w = Exp2NonPositive(d, hn::Sub(hn::Load(d, z + c * P), safe_max));
        tile_sum = hn::Add(tile_sum, w);
        // Modulated values: the weight times the second dot product of this row and column.
        const V wv = mod ? hn::Mul(w, hn::Load(d, mod + h * N + c * P)) : w;
        const T* vc = values + c * dv;
        for (std::int64_t k = 0; k < dv; ++k)
          hn::Store(hn::MulAdd(wv, hn::Set(d, vc[k]), hn::Load(d, o + k * P)), d, o + k * P);
      }
    }
    hn::Store(hn::MulAdd(hn::Load(d, sum + h * N), rescale, tile_sum), d, sum + h * N);
    hn::Store(new_max, d, max + h * N);
  }
}

// Packs rows [row0, row0 + rows) of src (stride `stride`, `dim` coordinates) into panels of P
// rows, k-major: panel p, coordinate k, row r -> dst[(p * dim + k) * P + r]; pads rows with 0.
template <class T>
void PackPanels(const T* src, std::int64_t stride, std::int64_t dim, std::int64_t row0,
                std::int64_t rows, std::int64_t P, T* dst) {
  const std::int64_t panels = (rows + P - 1) / P;
  for (std::int64_t p = 0; p < panels; ++p) {
    T* out = dst + p * dim * P;
    for (std::int64_t r = 0; r < P; ++r) {
      const std::int64_t i = p * P + r;
      if (i < rows) {
        const T* row = src + (row0 + i) * stride;
        for (std::int64_t k = 0; k < dim; ++k) out[k * P + r] = row[k];
      } else {
        for (std::int64_t k = 0; k < dim; ++k) out[k * P + r] = T(0);
      }
    }
  }
}

template <class T>
hwy::AlignedFreeUniquePtr<T[]> Allocate(std::int64_t count) {
  return hwy::AllocateAligned<T>(static_cast<std::size_t>(std::max<std::int64_t>(count, 1)));
}

// Threads for a pass: no more than row blocks, and at least ~2^24 units of work (a few ms) per
// thread: below that the fork/join costs more than it saves, badly so on a loaded machine where
// a descheduled thread holds the barrier. Results do not depend on the thread count.
inline int PassThreads(int requested, std::int64_t blocks, std::int64_t work) {
  const std::int64_t useful = std::max<std::int64_t>(1, std::min(blocks, work >> 24));
  return static_cast<int>(
      std::min<std::int64_t>(requested > 0 ? requested : omp_get_max_threads(), useful));
}

template <class T, bool kLabels>
void RowLseImpl(const LseArgs<T>& a) {
  const hn::ScalableTag<T> d;
  const std::int64_t N = static_cast<std::int64_t>(hn::Lanes(d));
  const std::int64_t P = 2 * N;
  const std::int64_t dim = a.d;
  const std::int64_t dv = a.values ? a.dv : 0;
  const std::int64_t dm = dv && a.mod_x ? a.dm : 0;
  const std::int64_t labels = kLabels ? a.num_labels : 0;
  const bool power = a.power > 0;
  const bool power_mod = power && dv && a.value_exponent != 0;
  // Dense: blocks of kPanels panels, every column. Block-sparse: the caller's row groups, each
  // with its own column ranges.
  const bool sparse = a.row_block > 0;
  const std::int64_t block_rows = sparse ? a.row_block : kPanels * P;
  const std::int64_t max_panels = (block_rows + P - 1) / P;
  const std::int64_t blocks = (a.n + block_rows - 1) / block_rows;
  // L2 chunk: about 128 KiB of y rows (and values), at least one tile.
  const std::int64_t row_bytes = static_cast<std::int64_t>(sizeof(T)) * (dim + dv + dm);
  const std::int64_t chunk = std::max<std::int64_t>(
      kTile, (131072 / std::max<std::int64_t>(row_bytes, 1)) / kTile * kTile);
  // The columns a row reads on average, for the thread count.
  std::int64_t cols_read = a.m;
  if (sparse) {
    std::int64_t total = 0;
    for (std::int64_t b = 0; b < blocks; ++b)
      for (std::int64_t k = a.range_ptr[b]; k < a.range_ptr[b + 1]; ++k)
        total += a.ranges[2 * k + 1] - a.ranges[2 * k];
    cols_read = blocks > 0 ? total / blocks : 0;
  }
  const int threads = PassThreads(a.num_threads, blocks, a.n * cols_read * (dim + dv + dm + 8));
  const std::int64_t dense_range[2] = {0, a.m};

#pragma omp parallel num_threads(threads)
  {
    auto packed = Allocate<T>(max_panels * P * dim);
    auto logits = Allocate<T>(kTile * P);
    auto max = Allocate<T>(max_panels * P);
    auto sum = Allocate<T>(max_panels * P);
    auto values = Allocate<T>(max_panels * dv * P);
    // Per panel, the label bias of its rows against every label: a column's bias is then one
    // vector load (row r, label v -> panel_labels[(p * labels + v) * P + r]).
    auto panel_labels = Allocate<T>(max_panels * labels * P);
    auto packed_mod = Allocate<T>(max_panels * P * dm);
    auto mod = Allocate<T>(dm || power_mod ? kTile * P : 0);
    auto zeros = Allocate<T>(dm ? kTile : 0);
    if (dm) std::fill_n(zeros.get(), kTile, T(0));

#pragma omp for schedule(dynamic, 1)
    for (std::int64_t b = 0; b < blocks; ++b) {
      const std::int64_t row0 = b * block_rows;
      const std::int64_t rows = std::min(block_rows, a.n - row0);
      const std::int64_t panels = (rows + P - 1) / P;
      PackPanels(a.x, a.x_stride, dim, row0, rows, P, packed.get());
      if (dm) PackPanels(a.mod_x, a.mod_x_stride, dm, row0, rows, P, packed_mod.get());
      if constexpr (kLabels) {
        for (std::int64_t r = 0; r < panels * P; ++r) {
          const std::int64_t p = r / P, lane = r % P;
          const T* table = r < rows ? a.label_bias + a.row_labels[row0 + r] * labels : nullptr;
          for (std::int64_t v = 0; v < labels; ++v)
            panel_labels[static_cast<std::size_t>((p * labels + v) * P + lane)] =
                table ? table[v] : T(0);
        }
      }
      std::fill_n(max.get(), panels * P, -std::numeric_limits<T>::infinity());
      std::fill_n(sum.get(), panels * P, T(0));
      std::fill_n(values.get(), panels * dv * P, T(0));

      const std::int64_t* range = sparse ? a.ranges + 2 * a.range_ptr[b] : dense_range;
      const std::int64_t range_count = sparse ? a.range_ptr[b + 1] - a.range_ptr[b] : 1;
      for (std::int64_t q = 0; q < range_count; ++q)
        for (std::int64_t c0 = range[2 * q]; c0 < range[2 * q + 1]; c0 += chunk) {
          const std::int64_t c1 = std::min(range[2 * q + 1], c0 + chunk);
          for (std::int64_t p = 0; p < panels; ++p) {
            const T* panel = packed.get() + p * dim * P;
            const T* lab = kLabels ? panel_labels.get() + p * labels * P : nullptr;
            for (std::int64_t t0 = c0; t0 < c1; t0 += kTile) {
              const std::int64_t cols = std::min(kTile, c1 - t0);
              if (power) {
                TileLogitsPower<kLabels>(d, panel, a.y + t0 * a.y_stride, a.y_stride, dim,
                                         a.bias + t0, a.scale, a.power, lab,
                                         kLabels ? a.col_labels + t0 : nullptr, a.value_exponent,
                                         power_mod ? mod.get() : nullptr, cols, logits.get());
              } else {
                TileLogits<kLabels>(d, panel, a.y + t0 * a.y_stride, a.y_stride, dim, a.bias + t0,
                                    a.scale, lab, kLabels ? a.col_labels + t0 : nullptr, cols,
                                    logits.get());
              }
              if (dm)
                TileLogits<false>(d, packed_mod.get() + p * dm * P, a.mod_y + t0 * a.mod_y_stride,
                                  a.mod_y_stride, dm, zeros.get(), T(1), nullptr, nullptr, cols,
                                  mod.get());
              Epilogue(d, logits.get(), cols, max.get() + p * P, sum.get() + p * P,
                       dv ? a.values + t0 * dv : nullptr, dv, dm || power_mod ? mod.get() : nullptr,
                       values.get() + p * dv * P);
            }
          }
        }

      for (std::int64_t r = 0; r < rows; ++r) {
        const std::int64_t p = r / P, lane = r % P;
        a.row_max[row0 + r] = max[static_cast<std::size_t>(p * P + lane)];
        a.row_sum[row0 + r] = sum[static_cast<std::size_t>(p * P + lane)];
        for (std::int64_t k = 0; k < dv; ++k)
          a.row_values[(row0 + r) * dv + k] =
              values[static_cast<std::size_t>((p * dv + k) * P + lane)];
      }
    }
  }
}

template <class T>
void RowLse(const LseArgs<T>& a) {
  if (a.label_bias && a.num_labels > 0) {
    RowLseImpl<T, true>(a);
  } else {
    RowLseImpl<T, false>(a);
  }
}

// Running (min, first argmin) of one panel's rows over one tile of values; strict < keeps the
// smallest column index on ties, since columns arrive in increasing order.
template <class D>
HWY_INLINE void MinEpilogue(D d, const hn::TFromD<D>* HWY_RESTRICT z, std::int64_t cols,
                            std::int64_t col0, hn::TFromD<D>* HWY_RESTRICT best,
                            hwy::MakeSigned<hn::TFromD<D>>* HWY_RESTRICT arg) {
  const hn::RebindToSigned<D> di;
  using TI = hwy::MakeSigned<hn::TFromD<D>>;
  const std::int64_t N = static_cast<std::int64_t>(hn::Lanes(d));
  const std::int64_t P = 2 * N;
  for (std::int64_t h = 0; h < 2; ++h) {
    auto b = hn::Load(d, best + h * N);
    auto idx = hn::Load(di, arg + h * N);
    for (std::int64_t c = 0; c < cols; ++c) {
      const auto v = hn::Load(d, z + h * N + c * P);
      const auto lt = hn::Lt(v, b);
      b = hn::IfThenElse(lt, v, b);
      idx = hn::IfThenElse(hn::RebindMask(di, lt), hn::Set(di, static_cast<TI>(col0 + c)), idx);
    }
    hn::Store(b, d, best + h * N);
    hn::Store(idx, di, arg + h * N);
  }
}

template <class T>
void RowMin(const MinArgs<T>& a) {
  using TI = hwy::MakeSigned<T>;
  const hn::ScalableTag<T> d;
  const std::int64_t N = static_cast<std::int64_t>(hn::Lanes(d));
  const std::int64_t P = 2 * N;
  const std::int64_t dim = a.d;
  const std::int64_t block_rows = kPanels * P;
  const std::int64_t blocks = (a.n + block_rows - 1) / block_rows;
  const std::int64_t row_bytes = static_cast<std::int64_t>(sizeof(T)) * dim;
  const std::int64_t chunk = std::max<std::int64_t>(
      kTile, (131072 / std::max<std::int64_t>(row_bytes, 1)) / kTile * kTile);
  const int threads = PassThreads(a.num_threads, blocks, a.n * a.m * (dim + 4));
  const bool power = a.power > 0;

#pragma omp parallel num_threads(threads)
  {
    auto packed = Allocate<T>(kPanels * P * dim);
    auto logits = Allocate<T>(kTile * P);
    auto best = Allocate<T>(kPanels * P);
    auto arg = Allocate<TI>(kPanels * P);

#pragma omp for schedule(dynamic, 1)
    for (std::int64_t b = 0; b < blocks; ++b) {
      const std::int64_t row0 = b * block_rows;
      const std::int64_t rows = std::min(block_rows, a.n - row0);
      const std::int64_t panels = (rows + P - 1) / P;
      PackPanels(a.x, a.x_stride, dim, row0, rows, P, packed.get());
      std::fill_n(best.get(), panels * P, std::numeric_limits<T>::infinity());
      std::fill_n(arg.get(), panels * P, TI(-1));
      for (std::int64_t c0 = 0; c0 < a.m; c0 += chunk) {
        const std::int64_t c1 = std::min(a.m, c0 + chunk);
        for (std::int64_t p = 0; p < panels; ++p) {
          for (std::int64_t t0 = c0; t0 < c1; t0 += kTile) {
            const std::int64_t cols = std::min(kTile, c1 - t0);
            if (power) {
              TileLogitsPower<false>(d, packed.get() + p * dim * P, a.y + t0 * a.y_stride,
                                     a.y_stride, dim, a.bias + t0, a.scale, a.power, nullptr,
                                     nullptr, T(0), nullptr, cols, logits.get());
            } else {
              TileLogits<false>(d, packed.get() + p * dim * P, a.y + t0 * a.y_stride, a.y_stride,
                                dim, a.bias + t0, a.scale, nullptr, nullptr, cols, logits.get());
            }
            MinEpilogue(d, logits.get(), cols, t0, best.get() + p * P, arg.get() + p * P);
          }
        }
      }
      for (std::int64_t r = 0; r < rows; ++r) {
        a.row_min[row0 + r] = best[static_cast<std::size_t>(r)];
        a.row_argmin[row0 + r] = static_cast<std::int64_t>(arg[static_cast<std::size_t>(r)]);
      }
    }
  }
}

// FP32 FMA throughput probe: 12 independent accumulator chains (enough to hide the FMA latency
// on the machines we target) per thread; returns the number of flops performed.
double FmaProbe(std::int64_t iterations, int num_threads) {
  const hn::ScalableTag<float> d;
  constexpr int kChains = 12;
  const int threads = num_threads > 0 ? num_threads : omp_get_max_threads();
  double total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
  {
    hn::Vec<decltype(d)> acc[kChains];
    for (int c = 0; c < kChains; ++c) acc[c] = hn::Set(d, static_cast<float>(c));
    const auto mul = hn::Set(d, 0.999999f), add = hn::Set(d, 1e-7f);
    for (std::int64_t i = 0; i < iterations; ++i)
      for (int c = 0; c < kChains; ++c) acc[c] = hn::MulAdd(acc[c], mul, add);
    auto sum = acc[0];
    for (int c = 1; c < kChains; ++c) sum = hn::Add(sum, acc[c]);
    // Keep the chains alive: the sum is tiny but not provably zero.
    total += static_cast<double>(hn::GetLane(sum)) * 1e-30 +
             2.0 * kChains * static_cast<double>(hn::Lanes(d)) * static_cast<double>(iterations);
  }
  return total;
}

void RowLseF32(const LseArgs<float>& a) { RowLse(a); }
void RowLseF64(const LseArgs<double>& a) { RowLse(a); }
void RowMinF32(const MinArgs<float>& a) { RowMin(a); }
void RowMinF64(const MinArgs<double>& a) { RowMin(a); }
void Exp2F32(const float* x, float* out, std::int64_t n) { Exp2Array(x, out, n); }
void Exp2F64(const double* x, double* out, std::int64_t n) { Exp2Array(x, out, n); }

}  // namespace birkhoff::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();
