#include "graph/align/operator.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <tuple>
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

Operator::Operator(const AlignGraph& g, std::int64_t size,
                   const std::vector<std::int64_t>& position, const std::string& suffix,
                   int num_threads)
    : n_(size), directed_(g.directed), threads_(threads_for(size, num_threads)) {
  const std::int64_t n = g.num_nodes;
  const std::string ei = "edge_index" + suffix, ew = "edge_weight" + suffix,
                    adj = "adjacency" + suffix;
  if (!g.adjacency.empty()) {
    require(g.edge_index.empty(), ei, "give either an edge list or a dense adjacency, not both");
    require(g.adjacency.rows == n && g.adjacency.cols == n, adj,
            "expected shape (" + std::to_string(n) + ", " + std::to_string(n) + "), got (" +
                std::to_string(g.adjacency.rows) + ", " + std::to_string(g.adjacency.cols) + ")");
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        const double a = g.adjacency(i, j);
        require(std::isfinite(a), adj, "holds NaN or inf (row " + std::to_string(i) + ")");
        if (!g.directed && j > i) {
          const double b = g.adjacency(j, i);
          require(std::abs(a - b) <= 1e-12 * (std::abs(a) + std::abs(b)), adj,
                  "is not symmetric (entry " + std::to_string(i) + ", " + std::to_string(j) +
                      "); pass directed=True for a directed graph");
        }
      }
    }
    dense_ = true;
    matrix_.assign(static_cast<std::size_t>(n_ * n_), 0.0);
    for (std::int64_t i = 0; i < n; ++i) {
      double* row = matrix_.data() + position[i] * n_;
      for (std::int64_t j = 0; j < n; ++j) {
        row[position[j]] = g.adjacency(i, j);
        nnz_ += g.adjacency(i, j) != 0.0;
      }
    }
    return;
  }
  require(g.edge_index.empty() || g.edge_index.rows == 2, ei,
          "expected shape (2, E), got (" + std::to_string(g.edge_index.rows) + ", " +
              std::to_string(g.edge_index.cols) + ")");
  const std::int64_t e = g.edge_index.empty() ? 0 : g.edge_index.cols;
  require(g.edge_weight.empty() || static_cast<std::int64_t>(g.edge_weight.size()) == e, ew,
          "expected " + std::to_string(e) + " weights (one per column of " + ei + "), got " +
              std::to_string(g.edge_weight.size()));
  std::vector<std::tuple<std::int64_t, std::int64_t, double>> triplets;
  triplets.reserve(static_cast<std::size_t>(g.directed ? e : 2 * e));
  for (std::int64_t k = 0; k < e; ++k) {
    const std::int64_t u = g.edge_index(0, k), v = g.edge_index(1, k);
    if (u < 0 || u >= n || v < 0 || v >= n) {
      throw InvalidInput(ei + ": node id " + std::to_string((u < 0 || u >= n) ? u : v) +
                         " in column " + std::to_string(k) + " is outside [0, " +
                         std::to_string(n) + ")");
    }
    const double w = g.edge_weight.empty() ? 1.0 : g.edge_weight[k];
    require(std::isfinite(w), ew, "holds NaN or inf (edge " + std::to_string(k) + ")");
    triplets.emplace_back(position[u], position[v], w);
    if (!g.directed && u != v) triplets.emplace_back(position[v], position[u], w);
  }
  std::sort(triplets.begin(), triplets.end());
  std::size_t out = 0;
  for (std::size_t k = 0; k < triplets.size(); ++k) {
    if (out > 0 && std::get<0>(triplets[out - 1]) == std::get<0>(triplets[k]) &&
        std::get<1>(triplets[out - 1]) == std::get<1>(triplets[k])) {
      require(std::get<2>(triplets[out - 1]) == std::get<2>(triplets[k]), ew,
              "an edge is listed more than once with different weights");
      continue;
    }
    triplets[out++] = triplets[k];
  }
  triplets.resize(out);
  nnz_ = static_cast<std::int64_t>(out);
  if (nnz_ * 16 >= n_ * n_) {
    dense_ = true;
    matrix_.assign(static_cast<std::size_t>(n_ * n_), 0.0);
    for (const auto& [r, c, w] : triplets) matrix_[r * n_ + c] = w;
    return;
  }
  auto build = [&](Csr& m, bool transpose) {
    m.indptr.assign(static_cast<std::size_t>(n_) + 1, 0);
    for (const auto& t : triplets) ++m.indptr[(transpose ? std::get<1>(t) : std::get<0>(t)) + 1];
    for (std::int64_t i = 0; i < n_; ++i) m.indptr[i + 1] += m.indptr[i];
    m.indices.resize(out);
    m.values.resize(out);
    std::vector<std::int64_t> fill(m.indptr.begin(), m.indptr.end() - 1);
    for (const auto& [r, c, w] : triplets) {
      const std::int64_t row = transpose ? c : r;
      m.indices[fill[row]] = static_cast<std::int32_t>(transpose ? r : c);
      m.values[fill[row]++] = w;
    }
  };
  build(csr_, false);
  if (directed_) build(csr_t_, true);
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
