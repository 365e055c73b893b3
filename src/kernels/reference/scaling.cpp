// Scalar twins of the matrix-scaling row kernels (kernels/scaling.hpp). For tests.
#include "birkhoff/kernels/scaling.hpp"

#include <cmath>

namespace birkhoff::kernels {

double scale_row_reference(const double* row, const double* v, double* acc, std::int64_t m) {
  double part[16] = {};
  for (std::int64_t j = 0; j < m; ++j) part[j % 16] = part[j % 16] + row[j] * v[j];
  double s = 0;
  for (const double x : part) s = s + x;
  const double ui = 1.0 / s;
  for (std::int64_t j = 0; j < m; ++j) acc[j] = acc[j] + ui * row[j];
  return ui;
}

void scale_rows4_reference(const double* row0, std::int64_t stride, const double* v, double* acc,
                           std::int64_t m, double* u) {
  for (std::int64_t r = 0; r < 4; ++r) u[r] = scale_row_reference(row0 + r * stride, v, acc, m);
}

void step_row_reference(const double* x, const double* grad, double alpha, double* row,
                        std::int64_t m) {
  for (std::int64_t j = 0; j < m; ++j) row[j] = x[j] - alpha * grad[j];
}

bool floor_row_reference(double* row, std::int64_t m, double floor) {
  bool finite = true;
  for (std::int64_t j = 0; j < m; ++j) {
    finite = finite && std::isfinite(row[j]);
    if (row[j] < floor) row[j] = floor;
  }
  return finite;
}

double scale_columns_reference(double* row, double u, const double* v, std::int64_t m) {
  double s = 0;
  for (std::int64_t j = 0; j < m; ++j) {
    row[j] = row[j] * (u * v[j]);
    s = s + row[j];
  }
  return s;
}

}  // namespace birkhoff::kernels
