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
// exponent return 0; the caller only ever passes z - max <= 0, so there is no overflow branch.
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

template <class T>
struct Scratch {
  hwy::AlignedFreeUniquePtr<T[]> packed;  // kPanels * P * d
  hwy::AlignedFreeUniquePtr<T[]> logits;  // kTile * P
  hwy::AlignedFreeUniquePtr<T[]> max;     // kPanels * P
  hwy::AlignedFreeUniquePtr<T[]> sum;     // kPanels * P
  hwy::AlignedFreeUniquePtr<T[]> values;  // kPanels * dv * P (k-major per panel)
};

// Logits of NR columns starting at column j for the P rows of one packed panel:
// out[c * P + r] = scale * <x_r, y_{j+c}> + bias_{j+c}. Two row vectors times NR broadcast
// columns gives 2 * NR independent FMA chains, enough to cover the FMA latency on AVX2.
template <int NR, class D>
HWY_INLINE void MicroKernel(D d, const hn::TFromD<D>* HWY_RESTRICT panel,
                            const hn::TFromD<D>* HWY_RESTRICT y, std::int64_t y_stride,
                            std::int64_t dim, const hn::TFromD<D>* HWY_RESTRICT bias,
                            hn::TFromD<D> scale, hn::TFromD<D>* HWY_RESTRICT out) {
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
    const V b = hn::Set(d, bias[c]);
    hn::Store(hn::MulAdd(acc0[c], s, b), d, out + c * 2 * N);
    hn::Store(hn::MulAdd(acc1[c], s, b), d, out + c * 2 * N + N);
  }
}

template <class D>
HWY_INLINE void TileLogits(D d, const hn::TFromD<D>* panel, const hn::TFromD<D>* y,
                           std::int64_t y_stride, std::int64_t dim, const hn::TFromD<D>* bias,
                           hn::TFromD<D> scale, std::int64_t cols, hn::TFromD<D>* out) {
  const std::int64_t P = 2 * static_cast<std::int64_t>(hn::Lanes(d));
  std::int64_t c = 0;
  for (; c + kNR <= cols; c += kNR)
    MicroKernel<kNR>(d, panel, y + c * y_stride, y_stride, dim, bias + c, scale, out + c * P);
  for (; c + 4 <= cols; c += 4)
    MicroKernel<4>(d, panel, y + c * y_stride, y_stride, dim, bias + c, scale, out + c * P);
  for (; c < cols; ++c)
    MicroKernel<1>(d, panel, y + c * y_stride, y_stride, dim, bias + c, scale, out + c * P);
}

// Online LogSumExp update of one panel's state with one tile of logits (kernels doc, §2.4).
template <class D>
HWY_INLINE void Epilogue(D d, const hn::TFromD<D>* HWY_RESTRICT logits, std::int64_t cols,
                         hn::TFromD<D>* HWY_RESTRICT max, hn::TFromD<D>* HWY_RESTRICT sum,
                         const hn::TFromD<D>* HWY_RESTRICT values, std::int64_t dv,
                         hn::TFromD<D>* HWY_RESTRICT acc) {
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
        const T* vc = values + c * dv;
        for (std::int64_t k = 0; k < dv; ++k)
          hn::Store(hn::MulAdd(w, hn::Set(d, vc[k]), hn::Load(d, o + k * P)), d, o + k * P);
      }
    }
    hn::Store(hn::MulAdd(hn::Load(d, sum + h * N), rescale, tile_sum), d, sum + h * N);
    hn::Store(new_max, d, max + h * N);
  }
}

template <class T>
void RowLse(const LseArgs<T>& a) {
  const hn::ScalableTag<T> d;
  const std::int64_t N = static_cast<std::int64_t>(hn::Lanes(d));
  const std::int64_t P = 2 * N;
  const std::int64_t dim = a.d;
  const std::int64_t dv = a.values ? a.dv : 0;
  const std::int64_t block_rows = kPanels * P;
  const std::int64_t blocks = (a.n + block_rows - 1) / block_rows;
  // L2 chunk: about 128 KiB of y rows (and values), at least one tile.
  const std::int64_t row_bytes = static_cast<std::int64_t>(sizeof(T)) * (dim + dv);
  const std::int64_t chunk = std::max<std::int64_t>(
      kTile, (131072 / std::max<std::int64_t>(row_bytes, 1)) / kTile * kTile);
  // No more threads than row blocks, and at least ~2^24 units of work (a few ms) per thread:
  // below that the fork/join costs more than it saves, badly so on a loaded machine where a
  // descheduled thread holds the barrier. Results do not depend on the thread count.
  const std::int64_t work = a.n * a.m * (dim + dv + 8);
  const std::int64_t useful = std::max<std::int64_t>(1, std::min(blocks, work >> 24));
  const int threads = static_cast<int>(
      std::min<std::int64_t>(a.num_threads > 0 ? a.num_threads : omp_get_max_threads(), useful));

#pragma omp parallel num_threads(threads)
  {
    Scratch<T> s;
    s.packed = hwy::AllocateAligned<T>(
        static_cast<std::size_t>(std::max<std::int64_t>(kPanels * P * dim, 1)));
    s.logits = hwy::AllocateAligned<T>(static_cast<std::size_t>(kTile * P));
    s.max = hwy::AllocateAligned<T>(static_cast<std::size_t>(kPanels * P));
    s.sum = hwy::AllocateAligned<T>(static_cast<std::size_t>(kPanels * P));
    s.values = hwy::AllocateAligned<T>(
        static_cast<std::size_t>(std::max<std::int64_t>(kPanels * dv * P, 1)));

#pragma omp for schedule(dynamic, 1)
    for (std::int64_t b = 0; b < blocks; ++b) {
      const std::int64_t row0 = b * block_rows;
      const std::int64_t rows = std::min(block_rows, a.n - row0);
      const std::int64_t panels = (rows + P - 1) / P;
      // Pack: panel p, coordinate k, row r -> packed[(p * dim + k) * P + r]; pad rows with 0.
      for (std::int64_t p = 0; p < panels; ++p) {
        T* dst = s.packed.get() + p * dim * P;
        for (std::int64_t r = 0; r < P; ++r) {
          const std::int64_t i = row0 + p * P + r;
          if (i < a.n) {
            const T* src = a.x + i * a.x_stride;
            for (std::int64_t k = 0; k < dim; ++k) dst[k * P + r] = src[k];
          } else {
            for (std::int64_t k = 0; k < dim; ++k) dst[k * P + r] = T(0);
          }
        }
      }
      std::fill_n(s.max.get(), panels * P, -std::numeric_limits<T>::infinity());
      std::fill_n(s.sum.get(), panels * P, T(0));
      std::fill_n(s.values.get(), panels * dv * P, T(0));

      for (std::int64_t c0 = 0; c0 < a.m; c0 += chunk) {
        const std::int64_t c1 = std::min(a.m, c0 + chunk);
        for (std::int64_t p = 0; p < panels; ++p) {
          const T* panel = s.packed.get() + p * dim * P;
          for (std::int64_t t0 = c0; t0 < c1; t0 += kTile) {
            const std::int64_t cols = std::min(kTile, c1 - t0);
            TileLogits(d, panel, a.y + t0 * a.y_stride, a.y_stride, dim, a.bias + t0, a.scale, cols,
                       s.logits.get());
            Epilogue(d, s.logits.get(), cols, s.max.get() + p * P, s.sum.get() + p * P,
                     dv ? a.values + t0 * dv : nullptr, dv, s.values.get() + p * dv * P);
          }
        }
      }

      for (std::int64_t r = 0; r < rows; ++r) {
        const std::int64_t p = r / P, lane = r % P;
        a.row_max[row0 + r] = s.max[static_cast<std::size_t>(p * P + lane)];
        a.row_sum[row0 + r] = s.sum[static_cast<std::size_t>(p * P + lane)];
        for (std::int64_t k = 0; k < dv; ++k)
          a.row_values[(row0 + r) * dv + k] =
              s.values[static_cast<std::size_t>((p * dv + k) * P + lane)];
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
void Exp2F32(const float* x, float* out, std::int64_t n) { Exp2Array(x, out, n); }
void Exp2F64(const double* x, double* out, std::int64_t n) { Exp2Array(x, out, n); }

}  // namespace birkhoff::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();
