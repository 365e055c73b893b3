#pragma once

#include <tuple>

#include "birkhoff/core/describe.hpp"
#include "birkhoff/transport/barycenter.hpp"
#include "birkhoff/transport/gromov.hpp"
#include "birkhoff/transport/sinkhorn.hpp"
#include "birkhoff/transport/sliced.hpp"

namespace birkhoff {

inline constexpr EnumName<transport::Schedule> kScheduleNames[] = {
    {"auto", transport::Schedule::Auto},
    {"converge", transport::Schedule::Converge},
    {"geomloss", transport::Schedule::GeomLoss}};
inline constexpr EnumName<transport::Backend> kBackendNames[] = {
    {"auto", transport::Backend::Auto},
    {"dense", transport::Backend::Dense},
    {"multiscale", transport::Backend::Multiscale}};
inline constexpr EnumName<transport::Acceleration> kAccelerationNames[] = {
    {"none", transport::Acceleration::None},
    {"over-relaxation", transport::Acceleration::OverRelaxation},
    {"anderson", transport::Acceleration::Anderson}};
inline constexpr EnumName<transport::InnerDtype> kInnerDtypeNames[] = {
    {"float64", transport::InnerDtype::Float64}, {"float32", transport::InnerDtype::Float32}};
inline constexpr EnumName<transport::Update> kUpdateNames[] = {
    {"symmetric", transport::Update::Symmetric}, {"alternating", transport::Update::Alternating}};

/// The solver options as every front end shows them (progress excepted).
template <>
struct Describe<transport::SinkhornOptions> {
  using S = transport::SinkhornOptions;
  static constexpr auto fields() {
    return std::tuple{
        field("schedule", &S::schedule,
              "converge (to marginal_tol, the default through auto) or geomloss (one sweep per "
              "epsilon, GeomLoss's values); auto: converge unless iterations or epsilons are given",
              kScheduleNames),
        field("backend", &S::backend,
              "dense (every pair), multiscale (block-sparse passes with a certified truncation "
              "bound), or auto",
              kBackendNames),
        field("scaling", &S::scaling, "ratio between successive blurs of the schedule, in (0, 1)"),
        field("diameter", &S::diameter,
              "start of the schedule (default: the diameter of the points with weight)"),
        field("max_iter", &S::max_iter, "converge: budget of iterations at the final epsilon"),
        field("acceleration", &S::acceleration, "converge: at the final epsilon",
              kAccelerationNames),
        field("marginal_tol", &S::marginal_tol,
              "converged means a relative marginal error within this"),
        field("block_size", &S::block_size,
              "multiscale: points per row block (a multiple of 16; columns are kept by sub-blocks "
              "of 8 points, 16 from d = 4, whole blocks from d = 8)"),
        field("iterations", &S::iterations,
              "geomloss: this many iterations at the final epsilon, no annealing"),
        field("epsilons", &S::epsilons,
              "geomloss: explicit epsilon schedule (cost units), its last value the final one"),
        field("update", &S::update, "geomloss: how the potentials are updated", kUpdateNames),
        field("last_extrapolation", &S::last_extrapolation,
              "geomloss, symmetric: a final full sweep (exact gradients)", "--extrapolation"),
        field("tol", &S::tol,
              "geomloss, fixed epsilon: stop once the potentials move less than this (cost "
              "units)",
              "--tolerance"),
        field("check_every", &S::check_every, "geomloss: iterations between two tol checks"),
        field("num_threads", &S::num_threads, "OpenMP threads (0 = OpenMP's default)", "--threads"),
    };
  }
};

/// One stage of a solve's report.
template <>
struct Describe<transport::LevelReport> {
  using S = transport::LevelReport;
  static constexpr auto fields() {
    return std::tuple{field("name", &S::name, "coarse, anneal or final"),
                      field("epsilon_start", &S::epsilon_start, "first epsilon"),
                      field("epsilon_end", &S::epsilon_end, "last epsilon"),
                      field("iterations", &S::iterations, "iterations in the stage"),
                      field("kept_fraction", &S::kept_fraction, "pairs read per pass / (n m)")};
  }
};

/// The report of a solve, as the CLI's JSON and Python's `report` show it.
template <>
struct Describe<transport::SinkhornReport> {
  using S = transport::SinkhornReport;
  static constexpr auto fields() {
    return std::tuple{
        field("epsilon", &S::epsilon, "final epsilon (cost units)"),
        field("loss", &S::loss, "the value"),
        field("transport_cost", &S::transport_cost, "<P, C>"),
        field("iterations", &S::iterations, "iterations in all"),
        field("converged", &S::converged, "marginal error (and truncation bound) within tolerance"),
        field("marginal_error", &S::marginal_error, "relative L1 marginal error of the plan"),
        field("stopped_early", &S::stopped_early, "geomloss: the tol criterion fired"),
        field("budget_exhausted", &S::budget_exhausted, "converge: max_iter ran out"),
        field("stalled", &S::stalled, "converge: the error stopped improving above tolerance"),
        field("schedule", &S::schedule, "converge or geomloss"),
        field("backend", &S::backend, "dense or multiscale"),
        field("backend_reason", &S::backend_reason, "why the backend was chosen"),
        field("acceleration", &S::acceleration, "acceleration at the final epsilon"),
        field("working_dtype", &S::working_dtype, "the arithmetic of the solve"),
        field("truncation_bound", &S::truncation_bound,
              "certified error (cost units) of a truncated update; 0 for dense"),
        field("kept_fraction", &S::kept_fraction, "pairs read per pass / (n m)"),
        field("ideal_fraction", &S::ideal_fraction,
              "multiscale: pairs whose plan entry passes the truncation / (n m), estimated"),
        field("levels", &S::levels, "the stages: coarse, anneal, final"),
    };
  }
};

/// The sliced Wasserstein settings as every front end shows them.
template <>
struct Describe<transport::SlicedOptions> {
  using S = transport::SlicedOptions;
  static constexpr auto fields() {
    return std::tuple{
        field("n_projections", &S::n_projections,
              "number of random directions (when no directions are given)"),
        field("seed", &S::seed, "seed of the random directions (the same on every machine)"),
        field("p", &S::p, "exponent of the cost |s - t|^p on each line, p >= 1"),
        field("max_sliced", &S::max_sliced,
              "the largest projected cost instead of the mean (max-sliced Wasserstein)"),
        field("num_threads", &S::num_threads, "OpenMP threads (0 = OpenMP's default)"),
    };
  }
};

/// The sliced Wasserstein result: the CLI's JSON and .npz members, Python's keys.
template <class T>
struct Describe<transport::SlicedResult<T>> {
  using S = transport::SlicedResult<T>;
  static std::vector<std::int64_t> lines(const S& s) { return {s.n_projections}; }
  static std::vector<std::int64_t> directions(const S& s) { return {s.d, s.n_projections}; }
  static std::vector<std::int64_t> nd(const S& s) { return {s.n, s.d}; }
  static std::vector<std::int64_t> md(const S& s) { return {s.m, s.d}; }
  static std::vector<std::int64_t> n(const S& s) { return {s.n}; }
  static std::vector<std::int64_t> m(const S& s) { return {s.m}; }
  static constexpr auto fields() {
    return std::tuple{
        field("loss", &S::loss, "SW_p: (mean, or max, of the projected W_p^p)^(1/p)"),
        field("n_projections", &S::n_projections, "directions used"),
    };
  }
  static constexpr auto arrays() {
    return std::tuple{
        array_field("projected", &S::projected, &lines, "W_p^p on each direction"),
        array_field("projections", &S::projections, &directions,
                    "the directions used, one per column"),
        array_field("grad_x", &S::grad_x, &nd, "gradient of loss in x", true),
        array_field("grad_y", &S::grad_y, &md, "gradient of loss in y", true),
        array_field("grad_a", &S::grad_a, &n, "gradient of loss in a", true),
        array_field("grad_b", &S::grad_b, &m, "gradient of loss in b", true),
    };
  }
};

/// The Gromov-Wasserstein settings as every front end shows them (progress excepted).
template <>
struct Describe<transport::GromovOptions> {
  using S = transport::GromovOptions;
  static constexpr auto fields() {
    return std::tuple{
        field("alpha", &S::alpha,
              "fused GW: weight of the structure term, (1 - alpha) features + alpha GW"),
        field("max_iter", &S::max_iter, "outer iterations (one Sinkhorn solve each) at the most"),
        field("tol", &S::tol, "stop when the linearisation changes by less than this (relative)"),
        field("n_init", &S::n_init,
              "initial plans: the product plan, then random monotone couplings; best kept"),
        field("seed", &S::seed, "seed of the random initial plans"),
        field("marginal_tol", &S::marginal_tol, "each inner solve's relative marginal error"),
        field("inner_max_iter", &S::inner_max_iter, "each inner solve's iteration budget"),
        field("backend", &S::backend, "the inner solves' backend: auto, dense or multiscale",
              kBackendNames),
        field("dtype", &S::dtype,
              "the inner solves' arithmetic: float64 or float32 (finished in float64 where "
              "float32 cannot reach marginal_tol); the CLI and Python pick float32 when every "
              "input array is float32",
              kInnerDtypeNames),
        field("num_threads", &S::num_threads, "OpenMP threads (0 = OpenMP's default)"),
    };
  }
};

/// The Gromov-Wasserstein result: the CLI's JSON and .npz members, Python's keys.
template <>
struct Describe<transport::GromovResult> {
  using S = transport::GromovResult;
  static std::vector<std::int64_t> ndx(const S& s) { return {s.n, s.dx}; }
  static std::vector<std::int64_t> mdy(const S& s) { return {s.m, s.dy}; }
  static std::vector<std::int64_t> ndf(const S& s) { return {s.n, s.df}; }
  static std::vector<std::int64_t> mdf(const S& s) { return {s.m, s.df}; }
  static std::vector<std::int64_t> nm(const S& s) { return {s.n, s.m}; }
  static constexpr auto fields() {
    return std::tuple{
        field("loss", &S::loss, "the objective at the final plan, without the entropy"),
        field("gw_loss", &S::gw_loss, "the Gromov-Wasserstein term"),
        field("feature_loss", &S::feature_loss, "fused GW: the feature term <T, M>"),
        field("epsilon", &S::epsilon, "the entropic regularisation"),
        field("iterations", &S::iterations, "outer iterations of the kept initial plan"),
        field("inner_iterations", &S::inner_iterations, "Sinkhorn iterations in all"),
        field("converged", &S::converged, "tol met and the last inner solve converged"),
        field("marginal_error", &S::marginal_error, "relative marginal error of the final plan"),
        field("backend", &S::backend, "the last inner solve's backend"),
        field("working_dtype", &S::working_dtype, "the last inner solve's arithmetic"),
        field("best_init", &S::best_init, "the initial plan kept (0: the product plan)"),
        field("losses", &S::losses, "each initial plan's final loss"),
    };
  }
  static constexpr auto arrays() {
    return std::tuple{
        array_field("grad_x", &S::grad_x, &ndx, "gradient of loss in x", true),
        array_field("grad_y", &S::grad_y, &mdy, "gradient of loss in y", true),
        array_field("grad_features_x", &S::grad_features_x, &ndf, "gradient of loss in features_x",
                    true),
        array_field("grad_features_y", &S::grad_features_y, &mdf, "gradient of loss in features_y",
                    true),
        array_field("plan", &S::plan, &nm, "the final plan", true),
    };
  }
};

/// The barycenter settings as every front end shows them (progress excepted).
template <>
struct Describe<transport::BarycenterOptions> {
  using S = transport::BarycenterOptions;
  static constexpr auto fields() {
    return std::tuple{
        field("max_iter", &S::max_iter, "fixed-point iterations at the most"),
        field("tol", &S::tol, "stop when sum_i |X_new,i - X_i|^2 falls below this"),
        field("marginal_tol", &S::marginal_tol, "each inner solve's relative marginal error"),
        field("num_threads", &S::num_threads, "OpenMP threads (0 = OpenMP's default)"),
    };
  }
};

/// The barycenter result: the CLI's JSON and .npz members, Python's keys.
template <class T>
struct Describe<transport::BarycenterResult<T>> {
  using S = transport::BarycenterResult<T>;
  static std::vector<std::int64_t> nd(const S& s) { return {s.n, s.d}; }
  static constexpr auto fields() {
    return std::tuple{
        field("loss", &S::loss, "sum_k weights_k OT_eps(barycenter, measure_k)"),
        field("losses", &S::losses, "each measure's OT_eps term"),
        field("iterations", &S::iterations, "fixed-point iterations"),
        field("inner_iterations", &S::inner_iterations, "Sinkhorn iterations in all"),
        field("converged", &S::converged, "tol met and every last inner solve converged"),
        field("displacement", &S::displacement, "sum_i |X_new,i - X_i|^2 of the last step"),
    };
  }
  static constexpr auto arrays() {
    return std::tuple{array_field("points", &S::points, &nd, "the barycenter's support")};
  }
};

/// The fixed-support barycenter settings as every front end shows them (progress excepted).
template <>
struct Describe<transport::FixedBarycenterOptions> {
  using S = transport::FixedBarycenterOptions;
  static constexpr auto fields() {
    return std::tuple{
        field("debias", &S::debias,
              "the debiased barycenter (false: iterative Bregman projections)"),
        field("max_iter", &S::max_iter, "iterations at the most"),
        field("tol", &S::tol,
              "stop when the marginal error and q's relative change fall below this"),
        field("num_threads", &S::num_threads, "OpenMP threads (0 = OpenMP's default)"),
    };
  }
};

/// The fixed-support barycenter result: the CLI's JSON and .npz members, Python's keys.
template <class T>
struct Describe<transport::FixedBarycenterResult<T>> {
  using S = transport::FixedBarycenterResult<T>;
  static std::vector<std::int64_t> n(const S& s) { return {s.n}; }
  static constexpr auto fields() {
    return std::tuple{
        field("loss", &S::loss, "sum_k weights_k S_eps(q, measure_k) (OT_eps without debias)"),
        field("losses", &S::losses, "each measure's term"),
        field("iterations", &S::iterations, "iterations"),
        field("converged", &S::converged, "the marginal error fell below tol"),
        field("marginal_error", &S::marginal_error,
              "sum_k weights_k |P_k^T 1 - q|_1 / |q|_1 at the last iteration"),
    };
  }
  static constexpr auto arrays() {
    return std::tuple{array_field("weights", &S::weights, &n, "the barycenter's weights q")};
  }
};

}  // namespace birkhoff
