// `birkhoff transport SOURCE TARGET`: entropic OT between two .npy point clouds.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "birkhoff/core/error.hpp"
#include "birkhoff/io/npy.hpp"
#include "birkhoff/io/npz.hpp"
#include "birkhoff/transport/describe.hpp"
#include "birkhoff/transport/sinkhorn.hpp"
#include "commands.hpp"
#include "common.hpp"
#include "describe.hpp"
#include "ranks.hpp"

namespace birkhoff::cli {
namespace {

// The problem's arguments; the solver's come from their description (transport/describe.hpp).
struct TransportArgs {
  std::string source, target, weights_a, weights_b, output, init, cost = "sqeuclidean";
  double blur = 0.05;
  std::optional<double> p;
  std::optional<double> reach, mass;
  bool debias = false, half_cost = false, json = false, quiet = false, map = false,
       gradient = false;
  transport::SinkhornOptions options;
};

template <class T>
void run(const TransportArgs& args, const Matrix& xm, const Matrix& ym,
         std::map<std::string, std::string> converted) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<T> a, b;
  std::string failed;  // on this rank: the others must hear of it before they wait for it
  try {
    if (!args.weights_a.empty()) a = load_vector<T>(args.weights_a, "--weights-a", converted);
    if (!args.weights_b.empty()) b = load_vector<T>(args.weights_b, "--weights-b", converted);
  } catch (const InvalidInput& e) {
    if (!ranks_active()) throw;
    failed = e.what();
  }
  agree_ranks(failed);
  const bool speaks = rank() == 0;
  note_conversions(converted, args.json || !speaks);
  require(!args.half_cost || args.cost == "sqeuclidean", "--half-cost",
          "applies to the sqeuclidean cost only, not " + args.cost);
  const auto cost = transport::Cost::named(args.cost, args.p, args.half_cost ? 0.5 : 1);
  transport::OtProblem<T> problem;
  problem.geometry =
      transport::PointCloud<T>({xm.array.template as<T>("SOURCE").data(), xm.rows, xm.cols},
                               {ym.array.template as<T>("TARGET").data(), ym.rows, ym.cols}, cost);
  problem.a = a;
  problem.b = b;
  require(args.blur > 0 && std::isfinite(args.blur), "--blur",
          "must be a positive number, got " + std::to_string(args.blur));
  // epsilon = blur^p, p the cost's exponent (GeomLoss's convention).
  const double exponent = cost->exponent();
  problem.epsilon = exponent == 2 ? args.blur * args.blur : std::pow(args.blur, exponent);
  problem.marginals = transport::marginals_from_reach(args.reach, args.reach);
  if (args.mass) {
    require(!args.reach, "--mass",
            "partial OT (--mass) and unbalanced OT (--reach) exclude each other");
    problem.marginals = transport::Partial{*args.mass};
  }
  transport::SinkhornOptions o = args.options;
  if (!args.init.empty()) {
    // A warm start from a previous run's --output: its f (n) and g (m), any float dtype.
    require(std::filesystem::is_regular_file(args.init), "--init",
            "cannot read " + args.init + " (no such file)");
    std::optional<io::NpzReader> archive;
    try {
      archive.emplace(args.init);
    } catch (const InvalidInput& e) {
      throw InvalidInput(std::string("--init: ") + e.what());
    }
    const io::NpzReader& npz = *archive;
    for (const char* key : {"f", "g"})
      require(npz.contains(key), "--init", args.init + " has no member '" + key + "'");
    for (auto [key, target] : {std::pair{"f", &o.init_f}, std::pair{"g", &o.init_g}}) {
      const io::NpyArray v = npz.read(key, io::DType::Float64, "--init");
      const auto values = v.as<double>("--init");
      target->assign(values.begin(), values.end());
    }
  }
  ProgressBar bar(args.quiet || args.json || !speaks);
  o.progress = bar.callback();

  std::optional<transport::DivergenceSolution<T>> div;
  transport::Solution<T> sol;
  try {
    if (args.debias) {
      div = solve_divergence(problem, o);
      sol = div->xy();
    } else {
      sol = solve(problem, o);
    }
  } catch (const InvalidInput& e) {
    rethrow_with_cli_names(e, {{"init_f", "--init"}, {"init_g", "--init"}});
  }
  // The other ranks hold the same solution: rank 0 writes it.
  if (!speaks) return;
  const double loss = div ? div->loss() : sol.loss();
  const auto& r = sol.report();
  if (!args.output.empty()) {
    io::NpzWriter npz(args.output);
    const std::vector<std::int64_t> sn = {xm.rows}, sm = {ym.rows}, snd = {xm.rows, xm.cols},
                                    smd = {ym.rows, ym.cols};
    npz.add_view("f", std::span<const std::int64_t>(sn), sol.f().data());
    npz.add_view("g", std::span<const std::int64_t>(sm), sol.g().data());
    if (args.mass) {
      // Partial OT: which points are matched, and how much of each.
      npz.add("row_marginal", std::span<const std::int64_t>(sn), sol.row_marginal());
      npz.add("col_marginal", std::span<const std::int64_t>(sm), sol.col_marginal());
    }
    if (args.map) {
      npz.add("barycentric_map", std::span<const std::int64_t>(snd), sol.barycentric_map());
    }
    if (args.gradient) {
      auto grad = div ? div->gradients() : sol.gradients();
      npz.add("grad_x", std::span<const std::int64_t>(snd), std::move(grad.x));
      npz.add("grad_y", std::span<const std::int64_t>(smd), std::move(grad.y));
    }
    npz.close();
  }
  const double seconds = seconds_since(start);
  if (!r.converged) warn_not_converged(r, o.marginal_tol);
  if (args.json) {
    auto j = to_json(r);
    j["loss"] = loss;
    j["cost"] = args.cost;
    j["p"] = exponent;
    j["options"] = to_json(args.options);
    if (args.mass) {
      j["mass"] = *args.mass;
      j["multiplier"] = sol.multiplier();
    }
    j["n"] = xm.rows;
    j["m"] = ym.rows;
    j["d"] = xm.cols;
    j["dtype"] = xm.is_double() ? "float64" : "float32";
    j["converted"] = converted;
    j["seconds"] = seconds;
    j["peak_rss_mb"] = peak_rss_mb();
    if (ranks_active()) j["ranks"] = num_ranks();
    print_json(j);
  } else {
    std::printf(
        "%s %.9g  transport cost %.9g  epsilon %.3g  iterations %d  marginal error %.3g  %.3f s  "
        "peak RSS %.1f MB\n",
        args.debias ? "divergence" : "loss", loss, r.transport_cost, r.epsilon, r.iterations,
        r.marginal_error, seconds, peak_rss_mb());
  }
}

}  // namespace

void add_transport_command(CLI::App& app) {
  auto args = std::make_shared<TransportArgs>();
  auto* cmd = app.add_subcommand(
      "transport",
      "Entropic OT between two point clouds (.npy arrays of shape (n, d) and (m, d), float32 or "
      "float64) with the streamed log-domain Sinkhorn iteration; memory O((n + m) d).");
  add_cloud_arguments(cmd, args->source, args->target, args->weights_a, args->weights_b);
  cmd->add_option("--blur", args->blur,
                  "final blur; epsilon = blur^p in cost units (p = 2 but for --cost euclidean)")
      ->capture_default_str();
  cmd->add_option("--cost", args->cost,
                  "ground cost: sqeuclidean |x - y|^2, euclidean |x - y|^p, cosine "
                  "1 - <x, y> / (|x| |y|)")
      ->check(CLI::IsMember(transport::cost_names()))
      ->capture_default_str();
  cmd->add_option("--p", args->p, "the power of --cost euclidean, p >= 1 (default 1)");
  cmd->add_option("--reach", args->reach, "unbalanced OT: marginal penalty rho = reach^2");
  cmd->add_option("--mass", args->mass,
                  "partial OT: move exactly this mass, 0 < M <= min(|a|, |b|), with P1 <= a, "
                  "P^T 1 <= b (--output also writes row_marginal, col_marginal)");
  cmd->add_flag("--debias", args->debias,
                "debiased Sinkhorn divergence OT(a,b) - OT(a,a)/2 - OT(b,b)/2");
  cmd->add_flag("--half-cost", args->half_cost,
                "cost |x - y|^2 / 2 (GeomLoss p = 2) instead of |x - y|^2");
  add_options(cmd, args->options);
  cmd->add_option("--output", args->output, "write f, g (and --map, --gradient) to this .npz");
  cmd->add_option("--init", args->init,
                  "warm start from the f (n) and g (m) of an .npz (a previous --output): the "
                  "converge schedule then iterates at the final epsilon from them");
  cmd->add_flag("--map", args->map, "with --output: also the barycentric map (n, d)");
  cmd->add_flag("--gradient", args->gradient,
                "with --output: also grad_x (n, d) and grad_y (m, d)");
  add_report_flags(cmd, args->json, args->quiet);
  cmd->callback([args] {
    require(args->output.empty() ? !(args->map || args->gradient) : true,
            args->map ? "--map" : "--gradient", "needs --output FILE.npz");
    // Under MPI a failure on one rank is made every rank's (agree_ranks) before any waits.
    std::string failed;
    Matrix x, y;
    try {
      if (!args->output.empty() && rank() == 0) check_writable(args->output, "--output");
      x = load_matrix(args->source, "SOURCE");
      y = load_matrix(args->target, "TARGET");
    } catch (const InvalidInput& e) {
      if (!ranks_active()) throw;
      failed = e.what();
    }
    agree_ranks(failed, "SOURCE", x.rows, x.cols, io::dtype_name(x.array.dtype));
    agree_ranks("", "TARGET", y.rows, y.cols, io::dtype_name(y.array.dtype));
    // Points of two dtypes are solved in float64, the float32 ones converted once.
    const auto converted = unify_dtypes(x, y, "SOURCE", "TARGET");
    try {
      if (x.is_double()) {
        run<double>(*args, x, y, converted);
      } else {
        run<float>(*args, x, y, converted);
      }
    } catch (const InvalidInput& e) {
      rethrow_with_cli_names(e, flag_names<transport::SinkhornOptions>(),
                             {{"x", "SOURCE"},
                              {"y", "TARGET"},
                              {"a", "--weights-a"},
                              {"b", "--weights-b"},
                              {"epsilon", "--blur"},
                              {"reach_a", "--reach"},
                              {"reach_b", "--reach"},
                              {"mass", "--mass"},
                              {"cost", "--cost"},
                              {"p", "--p"},
                              {"scale", "--half-cost"}});
    }
  });
}

}  // namespace birkhoff::cli
