#include "graph/align/operator.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "birkhoff/core/system.hpp"
#include "birkhoff/kernels/gemm.hpp"
#include "birkhoff/kernels/sparse.hpp"

namespace birkhoff::align::detail {
namespace {

constexpr std::int64_t kSmall = 256;

void scale_rows(double beta, double* out, std::int64_t n, int threads) {
  if (beta == 1.0) return;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t i = 0; i < n * n; ++i) out[i] = beta == 0.0 ? 0.0 : beta * out[i];
}

}  // namespace

int threads_for(std::int64_t n, int requested) { return n < 256 ? 1 : resolve_threads(requested); }

Operator::Operator(const graph::AttributedGraph& g, std::int64_t size,
                   const std::vector<std::int64_t>& position, int num_threads)
    : n_(size), directed_(g.directed), threads_(threads_for(size, num_threads)) {
  const std::int64_t n = g.num_nodes;
  nnz_ = g.num_entries();
  const auto weight = [&g](std::int64_t k) { return g.weights.empty() ? 1.0 : g.weights[k]; };
  if (nnz_ * 16 >= n_ * n_) {
    dense_ = true;
    matrix_.assign(static_cast<std::size_t>(n_ * n_), 0.0);
    for (std::int64_t u = 0; u < n; ++u) {
      double* row = matrix_.data() + position[u] * n_;
      for (std::int64_t k = g.indptr[u]; k < g.indptr[u + 1]; ++k) {
        row[position[g.indices[k]]] = weight(k);
      }
    }
    return;
  }
  // Rows in internal order, then each sorted by internal column (the order of every sum over a
  // row); the transpose is filled from it in ascending rows, so its rows come out sorted.
  csr_.indptr.assign(static_cast<std::size_t>(n_) + 1, 0);
  for (std::int64_t u = 0; u < n; ++u) csr_.indptr[position[u] + 1] = g.degree(u);
  for (std::int64_t i = 0; i < n_; ++i) csr_.indptr[i + 1] += csr_.indptr[i];
  csr_.indices.resize(static_cast<std::size_t>(nnz_));
  csr_.values.resize(static_cast<std::size_t>(nnz_));
  std::vector<std::pair<std::int32_t, double>> row;
  for (std::int64_t u = 0; u < n; ++u) {
    row.clear();
    for (std::int64_t k = g.indptr[u]; k < g.indptr[u + 1]; ++k) {
      row.emplace_back(static_cast<std::int32_t>(position[g.indices[k]]), weight(k));
    }
    std::sort(row.begin(), row.end());
    std::int64_t at = csr_.indptr[position[u]];
    for (const auto& [c, w] : row) {
      csr_.indices[at] = c;
      csr_.values[at++] = w;
    }
  }
  if (directed_) {
    csr_t_.indptr.assign(static_cast<std::size_t>(n_) + 1, 0);
    for (const std::int32_t c : csr_.indices) ++csr_t_.indptr[c + 1];
    for (std::int64_t i = 0; i < n_; ++i) csr_t_.indptr[i + 1] += csr_t_.indptr[i];
    csr_t_.indices.resize(static_cast<std::size_t>(nnz_));
    csr_t_.values.resize(static_cast<std::size_t>(nnz_));
    std::vector<std::int64_t> fill(csr_t_.indptr.begin(), csr_t_.indptr.end() - 1);
    for (std::int64_t r = 0; r < n_; ++r) {
      for (std::int64_t k = csr_.indptr[r]; k < csr_.indptr[r + 1]; ++k) {
        const std::int64_t at = fill[csr_.indices[k]]++;
        csr_t_.indices[at] = static_cast<std::int32_t>(r);
        csr_t_.values[at] = csr_.values[k];
      }
    }
  }
}

void Operator::left(bool transpose, double alpha, const double* p, double beta, double* out) const {
  const std::int64_t n = n_;
  transpose = transpose && directed_;  // a dense undirected adjacency is symmetric
  if (dense_) {
    // Small products: plain loops beat a threaded BLAS call (and its wake-up) by far.
    const auto product = n < kSmall ? kernels::gemm_rows : kernels::gemm;
    product(transpose, false, n, n, n, alpha, matrix_.data(), n, p, n, beta, out, n);
    return;
  }
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads_)
  for (std::int64_t i = 0; i < n; ++i) {
    double* o = out + i * n;
    if (beta == 0.0) {
      std::fill(o, o + n, 0.0);
    } else if (beta != 1.0) {
      for (std::int64_t j = 0; j < n; ++j) o[j] *= beta;
    }
    left_row(transpose, alpha, p, i, o);
  }
}

void Operator::right(bool transpose, double alpha, const double* p, double beta,
                     double* out) const {
  const std::int64_t n = n_;
  transpose = transpose && directed_;
  if (dense_) {
    const auto product = n < kSmall ? kernels::gemm_rows : kernels::gemm;
    product(false, transpose, n, n, n, alpha, p, n, matrix_.data(), n, beta, out, n);
    return;
  }
  scale_rows(beta, out, n, threads_);
  const Csr& m = csr(transpose);
#pragma omp parallel for schedule(static) num_threads(threads_)
  for (std::int64_t i = 0; i < n; ++i) {
    kernels::csr_scatter(m.indptr.data(), m.indices.data(), m.values.data(), n, p + i * n, alpha,
                         out + i * n);
  }
}

void Operator::left_row(bool transpose, double alpha, const double* p, std::int64_t i,
                        double* out_row, bool assign) const {
  const std::int64_t n = n_;
  const Csr& m = csr(transpose);
  const std::int64_t end = m.indptr[i + 1];
  if (assign && m.indptr[i] == end) {
    std::fill(out_row, out_row + n, 0.0);
    return;
  }
  // 0 + x == x: assigning the first term gives the values of adding onto a zeroed row.
  bool first = assign;
  for (std::int64_t k = m.indptr[i]; k < end;) {
    const int count = static_cast<int>(std::min<std::int64_t>(4, end - k));
    double w[4];
    const double* src[4];
    for (int c = 0; c < count; ++c, ++k) {
      w[c] = alpha * m.values[k];
      src[c] = p + static_cast<std::int64_t>(m.indices[k]) * n;
    }
    kernels::weighted_row_sum(first, count, w, src, out_row, n);
    first = false;
  }
}

void Operator::right_rows(bool transpose, double alpha, const double* p_rows, std::int64_t count,
                          double* out_rows) const {
  // Column j of op(M) is row j of op(M)^T.
  const Csr& m = csr(!transpose);
  const std::int64_t n = n_;
  std::int64_t r = 0;
  if (count >= 4) {
    thread_local std::vector<double> tile;
    tile.resize(static_cast<std::size_t>(4 * n));
    for (; r + 4 <= count; r += 4) {
      kernels::csr_gather4(m.indptr.data(), m.indices.data(), m.values.data(), n, p_rows + r * n, n,
                           alpha, out_rows + r * n, n, tile.data());
    }
  }
  for (; r < count; ++r) {
    kernels::csr_gather(m.indptr.data(), m.indices.data(), m.values.data(), n, p_rows + r * n,
                        alpha, out_rows + r * n);
  }
}

std::vector<double> Operator::row_sums() const {
  std::vector<double> s(static_cast<std::size_t>(n_), 0.0);
  for (std::int64_t i = 0; i < n_; ++i) {
    if (dense_) {
      for (std::int64_t j = 0; j < n_; ++j) s[i] += matrix_[i * n_ + j];
    } else {
      for (std::int64_t k = csr_.indptr[i]; k < csr_.indptr[i + 1]; ++k) s[i] += csr_.values[k];
    }
  }
  return s;
}

}  // namespace birkhoff::align::detail
