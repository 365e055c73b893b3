// PRIVATE (transport): the inner solves of an outer iteration (Gromov-Wasserstein,
// barycenters): their Sinkhorn settings (converged to a tolerance on the backend auto picks,
// warm started from the previous outer step's potentials when there is one) and a plan kept in
// the arithmetic it was solved in.
#pragma once

#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "birkhoff/transport/sinkhorn.hpp"

namespace birkhoff::transport::detail {

template <class T>
SinkhornOptions inner_options(double marginal_tol, int max_iter, int num_threads,
                              const Solution<T>* warm, Backend backend = Backend::Auto) {
  SinkhornOptions o;
  o.schedule = Schedule::Converge;
  o.backend = backend;
  o.marginal_tol = marginal_tol;
  o.max_iter = max_iter;
  o.num_threads = num_threads;
  if (warm != nullptr) {
    o.init_f.assign(warm->f().begin(), warm->f().end());
    o.init_g.assign(warm->g().begin(), warm->g().end());
  }
  return o;
}

/// An inner solve's plan in the arithmetic it ran in (float32 or float64); its products take
/// and give float64.
class InnerPlan {
 public:
  InnerPlan() = default;
  explicit InnerPlan(Solution<double> s) : wide_(std::move(s)) {}
  explicit InnerPlan(Solution<float> s) : narrow_(std::move(s)) {}

  const SinkhornReport& report() const { return wide_ ? wide_->report() : narrow_->report(); }
  bool converged() const { return report().converged; }
  /// The solution when it ran in T, else null.
  template <class T>
  const Solution<T>* get() const {
    const auto& s = [this]() -> const std::optional<Solution<T>>& {
      if constexpr (std::is_same_v<T, float>)
        return narrow_;
      else
        return wide_;
    }();
    return s ? &*s : nullptr;
  }

  /// out (n, k) = P v for v (m, k).
  void apply(MatrixView<const double> v, MatrixView<double> out) const {
    if (wide_) return wide_->apply(v, out);
    product(v, out,
            [&](MatrixView<const float> vf, MatrixView<float> of) { narrow_->apply(vf, of); });
  }
  /// out (m, k) = P^T u for u (n, k).
  void apply_transpose(MatrixView<const double> u, MatrixView<double> out) const {
    if (wide_) return wide_->apply_transpose(u, out);
    product(u, out, [&](MatrixView<const float> uf, MatrixView<float> of) {
      narrow_->apply_transpose(uf, of);
    });
  }
  std::vector<double> dense_plan() const {
    if (wide_) return wide_->dense_plan();
    const std::vector<float> p = narrow_->dense_plan();
    return {p.begin(), p.end()};
  }

 private:
  // fn on `in` rounded to float32, its float32 output widened into `out`.
  template <class Fn>
  static void product(MatrixView<const double> in, MatrixView<double> out, Fn&& fn) {
    std::vector<float> i(static_cast<std::size_t>(in.rows * in.cols)),
        o(static_cast<std::size_t>(out.rows * out.cols));
    for (std::int64_t r = 0; r < in.rows; ++r)
      for (std::int64_t c = 0; c < in.cols; ++c)
        i[static_cast<std::size_t>(r * in.cols + c)] = static_cast<float>(in(r, c));
    fn(MatrixView<const float>{i.data(), in.rows, in.cols},
       MatrixView<float>{o.data(), out.rows, out.cols});
    for (std::int64_t r = 0; r < out.rows; ++r)
      for (std::int64_t c = 0; c < out.cols; ++c)
        out(r, c) = o[static_cast<std::size_t>(r * out.cols + c)];
  }

  std::optional<Solution<double>> wide_;
  std::optional<Solution<float>> narrow_;
};

}  // namespace birkhoff::transport::detail
