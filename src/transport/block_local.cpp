// Block-local float32 passes of the multiscale backend's float64 solves: the logits of a row
// block are formed in float32 from coordinates and biases relative to the block's box centre,
// the large terms kept in float64 (design: multiscale.md §4; docs/transport.md, "Precision").
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "birkhoff/kernels/lse.hpp"
#include "transport/block_sparse.hpp"

namespace birkhoff::transport::detail {

std::vector<float> local_coordinates(const Side<double>& s, const Blocks& b, const Boxes& boxes) {
  const std::int64_t d = s.d;
  std::vector<float> out(static_cast<std::size_t>(s.n * d));
  for (std::int64_t blk = 0; blk < b.count; ++blk) {
    const double* c = boxes.centre.data() + blk * d;
    for (std::int64_t p = b.begin(blk); p < b.end(blk); ++p)
      for (std::int64_t k = 0; k < d; ++k)
        out[static_cast<std::size_t>(p * d + k)] = static_cast<float>(s.points[p * d + k] - c[k]);
  }
  return out;
}

namespace {

// The box of the column blocks (of col_block points) kept for row block `blk`: its centre e (d)
// and the largest half-width per coordinate h (d).
void kept_box(const Boxes& cols, const std::int64_t* ptr, const std::int64_t* ranges,
              std::int64_t col_block, std::int64_t blk, double* e, double* h) {
  const std::int64_t d = cols.d;
  for (std::int64_t k = 0; k < d; ++k) {
    e[k] = std::numeric_limits<double>::infinity();
    h[k] = -std::numeric_limits<double>::infinity();
  }
  for (std::int64_t q = ptr[blk]; q < ptr[blk + 1]; ++q)
    for (std::int64_t j = ranges[2 * q] / col_block;
         j < (ranges[2 * q + 1] + col_block - 1) / col_block; ++j)
      for (std::int64_t k = 0; k < d; ++k) {
        e[k] = std::min(e[k], cols.centre[j * d + k] - cols.half[j * d + k]);
        h[k] = std::max(h[k], cols.centre[j * d + k] + cols.half[j * d + k]);
      }
  for (std::int64_t k = 0; k < d; ++k) {
    const double lo = e[k], hi = h[k];
    e[k] = lo <= hi ? 0.5 * (lo + hi) : 0.0;
    h[k] = lo <= hi ? 0.5 * (hi - lo) : 0.0;
  }
}

// What the gather of a row block's columns reads: the points, their own bias, the row block's
// centre c, its columns' centre e and the scale of the cross term.
struct Gather {
  const double* points;
  const double* col_bias;
  const double* c;
  const double* e;
  double sk;
  std::int64_t d;
};

// Columns [j0, j1): bias_j = col_bias_j + sk <c, y_j> and y~_j = y_j - e in float32; returns
// the largest bias. D > 0 fixes the dimension at compile time (0: at.d).
template <int D>
double gather(const Gather& at, std::int64_t j0, std::int64_t j1, double* bias, float* y32) {
  const std::int64_t d = D > 0 ? D : at.d;
  double top = -std::numeric_limits<double>::infinity();
  for (std::int64_t j = j0; j < j1; ++j) {
    const double* y = at.points + j * d;
    float* out = y32 + (j - j0) * d;
    double dot = 0;
    for (std::int64_t k = 0; k < d; ++k) {
      dot += at.c[k] * y[k];
      out[k] = static_cast<float>(y[k] - at.e[k]);
    }
    const double v = at.col_bias[j] + at.sk * dot;
    bias[j - j0] = v;
    top = std::max(top, v);
  }
  return top;
}

}  // namespace

// Gathered columns per kernel call (about 1.3 MB of scratch in three dimensions).
constexpr std::int64_t kBatch = 1 << 16;

// With c the centre of row block I, e the centre of its kept columns' box, x~ = x - c and
// y~ = y - e, the base-2 logit of a pair is
//   log2e [kappa <x, y> + h_j] / eps + log2 w_j
//     = kappa' <x~_i, y~_j> + (B_j - tau) + (kappa' <x~_i, e> + tau),
// kappa' = log2e kappa / eps, B_j = log2e [(h_j + kappa <c, y_j>) / eps + ln w_j] and tau the
// block's largest B_j. The first two terms are small on a kept block pair (the potentials
// nearly cancel the cost there) and go to the float32 kernel; the row offset stays float64.
double local_lse(const Side<double>& rows, const Side<double>& cols, const Blocks& br,
                 const Boxes& row_boxes, const Boxes& col_boxes,
                 const std::vector<float>& local_rows, const std::int64_t* ptr,
                 const std::int64_t* ranges, std::int64_t col_block, const double* col_hat,
                 double eps, double kappa, std::int64_t group,
                 std::pair<std::int64_t, std::int64_t> own, int threads, LseOut<double>& out) {
  const std::int64_t d = rows.d;
  const double s2 = kLog2e / eps;
  const std::int64_t groups = (br.count + group - 1) / group;
  const std::int64_t g_first = std::min(own.first, groups), g_last = std::min(own.second, groups);
  const std::int64_t row0 = br.begin(g_first * group);
  const std::int64_t rows_out =
      g_last > g_first ? br.end(std::min(br.count, g_last * group) - 1) - row0 : 0;
  out.max.resize(static_cast<std::size_t>(rows_out));
  out.sum.resize(static_cast<std::size_t>(rows_out));
  out.values.clear();
  // The columns' own part of the bias, log2e (h_j / eps + ln w_j); sk <c, y_j> is added per block.
  const double sk = s2 * kappa;
  std::vector<double> col_bias(static_cast<std::size_t>(cols.n));
  for (std::size_t j = 0; j < col_bias.size(); ++j)
    col_bias[j] = s2 * col_hat[j] + kLog2e * cols.logw[j];
  double largest = 0;
#pragma omp parallel num_threads(threads) reduction(max : largest)
  {
    std::vector<float> y32, bias32, max32, sum32;
    std::vector<double> bias, tau, image(static_cast<std::size_t>(group * d)),
        half(static_cast<std::size_t>(d));
    std::vector<std::int64_t> gptr(1, 0), granges;
    // Runs the kernel on row blocks [lo, hi), whose kept columns were gathered, and resets.
    std::int64_t used = 0;
    auto flush = [&](std::int64_t lo, std::int64_t hi) {
      const std::int64_t r0 = br.begin(lo), r1 = br.end(hi - 1);
      max32.resize(static_cast<std::size_t>(r1 - r0));
      sum32.resize(max32.size());
      kernels::LseArgs<float> a;
      a.x = local_rows.data() + r0 * d;
      a.n = r1 - r0;
      a.x_stride = d;
      a.y = y32.data();
      a.m = used;
      a.y_stride = d;
      a.d = d;
      a.bias = bias32.data();
      a.scale = static_cast<float>(sk);
      a.row_max = max32.data();
      a.row_sum = sum32.data();
      a.num_threads = 1;
      a.row_block = br.size;
      a.range_ptr = gptr.data();
      a.ranges = granges.data();
      kernels::row_lse(a);
      for (std::int64_t blk = lo; blk < hi; ++blk) {
        const double* c = row_boxes.centre.data() + blk * d;
        const double* e = image.data() + (blk - lo) * d;
        const double t = tau[static_cast<std::size_t>(blk - lo)];
        for (std::int64_t i = br.begin(blk); i < br.end(blk); ++i) {
          double dot = 0;
          for (std::int64_t k = 0; k < d; ++k) dot += (rows.points[i * d + k] - c[k]) * e[k];
          const auto si = static_cast<std::size_t>(i - row0);
          out.max[si] = static_cast<double>(max32[static_cast<std::size_t>(i - r0)]) + sk * dot + t;
          out.sum[si] = sum32[static_cast<std::size_t>(i - r0)];
        }
      }
      used = 0;
      gptr.assign(1, 0);
      granges.clear();
      tau.clear();
    };
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t g = g_first; g < g_last; ++g) {
      const std::int64_t b0 = g * group, b1 = std::min(br.count, b0 + group);
      std::int64_t lo = b0;
      for (std::int64_t blk = b0; blk < b1; ++blk) {
        const double* c = row_boxes.centre.data() + blk * d;
        double* e = image.data() + (blk - lo) * d;
        kept_box(col_boxes, ptr, ranges, col_block, blk, e, half.data());
        double reach = 0;  // kappa' sum_k |x~_k| |y~_k| bounds the float32 dot products
        for (std::int64_t k = 0; k < d; ++k) reach += row_boxes.half[blk * d + k] * half[k];
        largest = std::max(largest, sk * reach);
        std::int64_t count = 0;
        for (std::int64_t q = ptr[blk]; q < ptr[blk + 1]; ++q)
          count += ranges[2 * q + 1] - ranges[2 * q];
        const std::int64_t start = used;
        used += count;
        if (static_cast<std::int64_t>(bias.size()) < used) {
          bias.resize(static_cast<std::size_t>(2 * used));
          bias32.resize(bias.size());
          y32.resize(static_cast<std::size_t>(2 * used * d));
        }
        double top = -std::numeric_limits<double>::infinity();
        std::int64_t w = start;
        for (std::int64_t q = ptr[blk]; q < ptr[blk + 1]; ++q) {
          const std::int64_t j0 = ranges[2 * q], j1 = ranges[2 * q + 1];
          const Gather at{cols.points, col_bias.data(), c, e, sk, d};
          double* bw = bias.data() + w;
          float* yw = y32.data() + w * d;
          top = std::max(top, d == 2   ? gather<2>(at, j0, j1, bw, yw)
                              : d == 3 ? gather<3>(at, j0, j1, bw, yw)
                                       : gather<0>(at, j0, j1, bw, yw));
          w += j1 - j0;
        }
        if (!std::isfinite(top)) top = 0;  // every column masked: the kernel gives -inf, 0
        for (std::int64_t q = start; q < used; ++q)
          bias32[static_cast<std::size_t>(q)] =
              static_cast<float>(bias[static_cast<std::size_t>(q)] - top);
        granges.push_back(start);
        granges.push_back(used);
        gptr.push_back(static_cast<std::int64_t>(granges.size() / 2));
        tau.push_back(top);
        // A batch of about kBatch gathered columns per kernel call bounds the scratch.
        if (used >= kBatch || blk + 1 == b1) {
          flush(lo, blk + 1);
          lo = blk + 1;
        }
      }
    }
  }
  return largest;
}

}  // namespace birkhoff::transport::detail
