#include "birkhoff/transport/geometry.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "birkhoff/core/error.hpp"
#include "birkhoff/transport/problem.hpp"
#include "checks.hpp"

namespace birkhoff::transport {
namespace {

// Centre of the joint bounding box of x and y.
template <class T>
std::vector<double> joint_centre(MatrixView<const T> x, MatrixView<const T> y) {
  const std::int64_t d = x.cols;
  std::vector<double> lo(static_cast<std::size_t>(d), std::numeric_limits<double>::infinity());
  std::vector<double> hi(static_cast<std::size_t>(d), -std::numeric_limits<double>::infinity());
  for (const auto& m : {x, y})
    for (std::int64_t i = 0; i < m.rows; ++i)
      for (std::int64_t k = 0; k < d; ++k) {
        lo[static_cast<std::size_t>(k)] =
            std::min(lo[static_cast<std::size_t>(k)], static_cast<double>(m(i, k)));
        hi[static_cast<std::size_t>(k)] =
            std::max(hi[static_cast<std::size_t>(k)], static_cast<double>(m(i, k)));
      }
  std::vector<double> c(static_cast<std::size_t>(d));
  for (std::size_t k = 0; k < c.size(); ++k) c[k] = 0.5 * (lo[k] + hi[k]);
  return c;
}

// The folded row terms of centred rows (n, d): kappa/2 |p_i - c|^2 for the dot-product form,
// summed in float64 from the stored coordinates; 0 for the distance-power form.
template <class T>
std::vector<T> folded_terms(const std::vector<T>& points, std::int64_t n, std::int64_t d,
                            const GroundCost& cost) {
  std::vector<T> out(static_cast<std::size_t>(n), T(0));
  if (cost.form() != CostForm::DotProduct) return out;
  for (std::int64_t i = 0; i < n; ++i) {
    double s = 0;
    for (std::int64_t k = 0; k < d; ++k) {
      const double v = static_cast<double>(points[static_cast<std::size_t>(i * d + k)]);
      s += v * v;
    }
    out[static_cast<std::size_t>(i)] = static_cast<T>(0.5 * cost.kappa() * s);
  }
  return out;
}

// Writes the centred rows of p and their folded row terms.
template <class T>
void centre_rows(MatrixView<const T> p, const std::vector<double>& centre, const GroundCost& cost,
                 std::vector<T>& points, std::vector<T>& sqnorm) {
  const std::int64_t n = p.rows, d = p.cols;
  points.resize(static_cast<std::size_t>(n * d));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t k = 0; k < d; ++k)
      points[static_cast<std::size_t>(i * d + k)] =
          static_cast<T>(static_cast<double>(p(i, k)) - centre[static_cast<std::size_t>(k)]);
  sqnorm = folded_terms(points, n, d, cost);
}

// The cost's features of p (rounded to T) and each point's scale.
template <class T>
std::vector<T> features(MatrixView<const T> p, const GroundCost& cost, const char* name,
                        std::vector<double>& scale) {
  std::vector<T> out(static_cast<std::size_t>(p.rows * p.cols));
  std::vector<double> row(static_cast<std::size_t>(p.cols));
  scale.resize(static_cast<std::size_t>(p.rows));
  for (std::int64_t i = 0; i < p.rows; ++i) {
    for (std::int64_t k = 0; k < p.cols; ++k) row[static_cast<std::size_t>(k)] = p(i, k);
    scale[static_cast<std::size_t>(i)] = cost.feature(row, name, i);
    for (std::int64_t k = 0; k < p.cols; ++k)
      out[static_cast<std::size_t>(i * p.cols + k)] =
          static_cast<T>(row[static_cast<std::size_t>(k)]);
  }
  return out;
}

}  // namespace

template <class T>
double bounding_diameter(MatrixView<const T> x, MatrixView<const T> y) {
  double s = 0;
  for (std::int64_t k = 0; k < x.cols; ++k) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const auto& m : {x, y})
      for (std::int64_t i = 0; i < m.rows; ++i) {
        lo = std::min(lo, static_cast<double>(m(i, k)));
        hi = std::max(hi, static_cast<double>(m(i, k)));
      }
    s += (hi - lo) * (hi - lo);
  }
  return std::sqrt(s);
}

template <class T>
PointCloud<T>::PointCloud(MatrixView<const T> x, MatrixView<const T> y, Cost cost) {
  detail::check_points(x, "x");
  detail::check_points(y, "y");
  require(x.cols == y.cols, "y",
          "dimension mismatch: x has d = " + std::to_string(x.cols) +
              ", y has d = " + std::to_string(y.cols));
  auto data = std::make_shared<Data>();
  const GroundCost& model = cost.model();
  std::vector<T> fx, fy;
  if (!model.identity_features()) {
    fx = features(x, model, "x", data->x_scale);
    fy = features(y, model, "y", data->y_scale);
    x = {fx.data(), x.rows, x.cols};
    y = {fy.data(), y.rows, y.cols};
  }
  data->diameter = bounding_diameter(x, y);
  // Squared norms (relative to the centre of the data) must not overflow T.
  require(std::isfinite(static_cast<T>(data->diameter * data->diameter)), "x",
          "coordinates are too large: squared distances overflow " +
              std::string(sizeof(T) == 4 ? "float32" : "float64"));
  data->n = x.rows;
  data->m = y.rows;
  data->d = x.cols;
  data->cost = std::move(cost);
  data->centre = joint_centre(x, y);
  centre_rows(x, data->centre, model, data->x, data->x_sqnorm);
  centre_rows(y, data->centre, model, data->y, data->y_sqnorm);
  data_ = std::move(data);
}

template <class T>
template <class U>
PointCloud<U> PointCloud<T>::cast() const {
  auto to = [](const std::vector<T>& v) { return std::vector<U>(v.begin(), v.end()); };
  const Data& a = *data_;
  auto b = std::make_shared<typename PointCloud<U>::Data>();
  b->n = a.n;
  b->m = a.m;
  b->d = a.d;
  b->cost = a.cost;
  b->diameter = a.diameter;
  b->centre = a.centre;
  b->x = to(a.x);
  b->y = to(a.y);
  // The folded row terms are recomputed from the cast coordinates: float32 ones carried into a
  // float64 geometry would shift every standard potential by their rounding (2^-24 of
  // kappa/2 |x - c|^2), which the plan read from f, g and the exact cost then shows.
  b->x_sqnorm = folded_terms(b->x, a.n, a.d, a.cost.model());
  b->y_sqnorm = folded_terms(b->y, a.m, a.d, a.cost.model());
  b->x_scale = a.x_scale;
  b->y_scale = a.y_scale;
  b->num_labels = a.num_labels;
  b->x_labels = a.x_labels;
  b->y_labels = a.y_labels;
  b->label_cost = a.label_cost;
  PointCloud<U> out;
  out.data_ = std::move(b);
  return out;
}

template <class T>
PointCloud<T> PointCloud<T>::permuted(std::span<const std::int64_t> x_order,
                                      std::span<const std::int64_t> y_order) const {
  auto rows = [](const auto& v, std::span<const std::int64_t> order, std::int64_t width) {
    std::remove_cvref_t<decltype(v)> out(v.empty() ? 0 : order.size() * width);
    if (v.empty()) return out;
    for (std::size_t p = 0; p < order.size(); ++p)
      std::copy_n(v.begin() + order[p] * width, width,
                  out.begin() + static_cast<std::int64_t>(p) * width);
    return out;
  };
  const Data& a = *data_;
  auto b = std::make_shared<Data>(a);
  b->x = rows(a.x, x_order, a.d);
  b->y = rows(a.y, y_order, a.d);
  b->x_sqnorm = rows(a.x_sqnorm, x_order, 1);
  b->y_sqnorm = rows(a.y_sqnorm, y_order, 1);
  b->x_scale = rows(a.x_scale, x_order, 1);
  b->y_scale = rows(a.y_scale, y_order, 1);
  b->x_labels = rows(a.x_labels, x_order, 1);
  b->y_labels = rows(a.y_labels, y_order, 1);
  PointCloud out;
  out.data_ = std::move(b);
  return out;
}

namespace {

std::vector<std::int32_t> check_labels(std::span<const std::int64_t> labels, std::int64_t count,
                                       std::int64_t classes, const char* name) {
  require(static_cast<std::int64_t>(labels.size()) == count, name,
          "must have one label per point (" + std::to_string(count) + "), got " +
              std::to_string(labels.size()));
  std::vector<std::int32_t> out(labels.size());
  for (std::size_t i = 0; i < labels.size(); ++i) {
    require(labels[i] >= 0 && labels[i] < classes, name,
            "label " + std::to_string(labels[i]) + " at index " + std::to_string(i) +
                " is outside [0, " + std::to_string(classes) + ") (the label_cost table's size)");
    out[i] = static_cast<std::int32_t>(labels[i]);
  }
  return out;
}

}  // namespace

template <class T>
PointCloud<T>::PointCloud(MatrixView<const T> x, MatrixView<const T> y, Cost cost,
                          const LabelCost& labels)
    : PointCloud(x, y, cost) {
  const auto& t = labels.table;
  const std::int64_t v = t.rows;
  require(v > 0 && t.cols == v && t.data != nullptr, "label_cost",
          "must be a non-empty square (V, V) table");
  require(v <= 4096, "label_cost", "at most 4096 classes are supported");
  require(std::isfinite(labels.weight) && labels.weight >= 0, "label_weight",
          "must be finite and >= 0");
  auto data = std::make_shared<Data>(*data_);
  data->num_labels = v;
  data->x_labels = check_labels(labels.x_labels, data->n, v, "x_labels");
  data->y_labels = check_labels(labels.y_labels, data->m, v, "y_labels");
  data->label_cost.resize(static_cast<std::size_t>(v * v));
  for (std::int64_t i = 0; i < v; ++i)
    for (std::int64_t j = 0; j < v; ++j) {
      const double w = t(i, j);
      require(std::isfinite(w) && w >= 0, "label_cost", "entries must be finite and >= 0");
      require(w == t(j, i), "label_cost", "must be symmetric");
      data->label_cost[static_cast<std::size_t>(i * v + j)] = labels.weight * w;
    }
  data_ = std::move(data);
}

template <class T>
double support_diameter(const OtProblem<T>& problem) {
  const auto& geom = problem.geometry;
  auto all_positive = [](std::span<const T> w) {
    return std::all_of(w.begin(), w.end(), [](T v) { return v > 0; });
  };
  if (all_positive(problem.a) && all_positive(problem.b)) return geom.diameter();
  const std::int64_t d = geom.dim();
  std::vector<double> lo(static_cast<std::size_t>(d), std::numeric_limits<double>::infinity());
  std::vector<double> hi(lo.size(), -std::numeric_limits<double>::infinity());
  auto extend = [&](MatrixView<const T> p, std::span<const T> w) {
    for (std::int64_t i = 0; i < p.rows; ++i) {
      if (!w.empty() && !(w[static_cast<std::size_t>(i)] > 0)) continue;
      for (std::int64_t k = 0; k < d; ++k) {
        lo[static_cast<std::size_t>(k)] =
            std::min(lo[static_cast<std::size_t>(k)], static_cast<double>(p(i, k)));
        hi[static_cast<std::size_t>(k)] =
            std::max(hi[static_cast<std::size_t>(k)], static_cast<double>(p(i, k)));
      }
    }
  };
  extend(geom.x(), problem.a);
  extend(geom.y(), problem.b);
  double s = 0;
  for (std::int64_t k = 0; k < d; ++k) {
    const double e = hi[static_cast<std::size_t>(k)] - lo[static_cast<std::size_t>(k)];
    if (e > 0) s += e * e;
  }
  return std::sqrt(s);
}

template <class T>
double logit_scale(const OtProblem<T>& problem) {
  const auto& geom = problem.geometry;
  // The largest distance of a weighted feature from the centre the geometry subtracted.
  auto radius = [](MatrixView<const T> p, std::span<const T> w) {
    double r2 = 0;
    for (std::int64_t i = 0; i < p.rows; ++i) {
      if (!w.empty() && !(w[static_cast<std::size_t>(i)] > 0)) continue;
      double s = 0;
      for (std::int64_t k = 0; k < p.cols; ++k) s += static_cast<double>(p(i, k)) * p(i, k);
      r2 = std::max(r2, s);
    }
    return std::sqrt(r2);
  };
  return geom.cost()->bound(radius(geom.x(), problem.a) + radius(geom.y(), problem.b));
}

template class PointCloud<float>;
template class PointCloud<double>;
template PointCloud<double> PointCloud<float>::cast<double>() const;
template PointCloud<float> PointCloud<double>::cast<float>() const;
template PointCloud<float> PointCloud<float>::cast<float>() const;
template PointCloud<double> PointCloud<double>::cast<double>() const;
template double support_diameter(const OtProblem<float>&);
template double support_diameter(const OtProblem<double>&);
template double logit_scale(const OtProblem<float>&);
template double logit_scale(const OtProblem<double>&);
template double bounding_diameter(MatrixView<const float>, MatrixView<const float>);
template double bounding_diameter(MatrixView<const double>, MatrixView<const double>);

}  // namespace birkhoff::transport
