// `birkhoff transport SOURCE TARGET`: entropic OT between two .npy point clouds.
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "birkhoff/core/error.hpp"
#include "birkhoff/io/npy.hpp"
#include "birkhoff/io/npz.hpp"
#include "birkhoff/transport/sinkhorn.hpp"
#include "commands.hpp"
#include "common.hpp"

namespace birkhoff::cli {
namespace {

struct TransportArgs {
  std::string source, target, weights_a, weights_b, output, schedule = "symmetric";
  double blur = 0.05, scaling = 0.5;
  std::optional<double> tolerance, reach, diameter;
  int iterations = 0, threads = 0, check_every = 5;
  bool debias = false, half_cost = false, json = false, quiet = false, map = false,
       gradient = false, no_extrapolation = false;
};

template <class T>
void run(const TransportArgs& args, const Matrix& xm, const Matrix& ym,
         std::map<std::string, std::string> converted) {
  const auto start = std::chrono::steady_clock::now();
  require(args.schedule == "symmetric" || args.schedule == "alternating", "--schedule",
          "must be symmetric or alternating");
  std::vector<T> a, b;
  if (!args.weights_a.empty()) a = load_vector<T>(args.weights_a, "--weights-a", converted);
  if (!args.weights_b.empty()) b = load_vector<T>(args.weights_b, "--weights-b", converted);
  note_conversions(converted, args.json);
  transport::OtProblem<T> problem;
  problem.geometry = transport::PointCloud<T>(
      {xm.array.template as<T>("SOURCE").data(), xm.rows, xm.cols},
      {ym.array.template as<T>("TARGET").data(), ym.rows, ym.cols},
      args.half_cost ? transport::Cost::HalfSqEuclidean : transport::Cost::SqEuclidean);
  problem.a = a;
  problem.b = b;
  problem.epsilon = args.blur * args.blur;
  problem.marginals = transport::marginals_from_reach(args.reach, args.reach);
  transport::SinkhornOptions o;
  o.scaling = args.scaling;
  o.diameter = args.diameter;
  o.iterations = args.iterations;
  o.tol = args.tolerance;
  o.check_every = args.check_every;
  o.num_threads = args.threads;
  o.last_extrapolation = !args.no_extrapolation;
  o.update = args.schedule == "alternating" ? transport::Update::Alternating
                                            : transport::Update::Symmetric;
  ProgressBar bar(args.quiet || args.json);
  o.progress = bar.callback();

  std::optional<transport::DivergenceSolution<T>> div;
  transport::Solution<T> sol;
  if (args.debias) {
    div = transport::sinkhorn_divergence(problem, o);
    sol = div->xy();
  } else {
    sol = transport::sinkhorn(problem, o);
  }
  const double loss = div ? div->loss() : sol.loss();
  const auto& r = sol.report();
  if (!args.output.empty()) {
    io::NpzWriter npz(args.output);
    const std::vector<std::int64_t> sn = {xm.rows}, sm = {ym.rows}, snd = {xm.rows, xm.cols},
                                    smd = {ym.rows, ym.cols};
    npz.add_view("f", std::span<const std::int64_t>(sn), sol.f().data());
    npz.add_view("g", std::span<const std::int64_t>(sm), sol.g().data());
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
  if (!r.converged) warn_not_converged(r.marginal_error, o.marginal_tol);
  if (args.json) {
    print_json({{"loss", loss},
                {"transport_cost", r.transport_cost},
                {"epsilon", r.epsilon},
                {"iterations", r.iterations},
                {"converged", r.converged},
                {"stopped_early", r.stopped_early},
                {"marginal_error", r.marginal_error},
                {"n", xm.rows},
                {"m", ym.rows},
                {"d", xm.cols},
                {"dtype", xm.is_double() ? "float64" : "float32"},
                {"converted", converted},
                {"seconds", seconds},
                {"peak_rss_mb", peak_rss_mb()}});
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
  cmd->add_option("SOURCE", args->source, "source points x, .npy (n, d)")->required();
  cmd->add_option("TARGET", args->target, "target points y, .npy (m, d)")->required();
  cmd->add_option("--weights-a", args->weights_a,
                  "source weights a, .npy (n,); default uniform 1/n");
  cmd->add_option("--weights-b", args->weights_b,
                  "target weights b, .npy (m,); default uniform 1/m");
  cmd->add_option("--blur", args->blur, "final blur; epsilon = blur^2 in cost units")
      ->capture_default_str();
  cmd->add_option("--scaling", args->scaling, "ratio between successive blurs, in (0, 1)")
      ->capture_default_str();
  cmd->add_option("--diameter", args->diameter,
                  "start of the epsilon schedule (default: bounding box diagonal)");
  cmd->add_option("--iterations", args->iterations,
                  "fixed number of iterations at epsilon = blur^2, no annealing");
  cmd->add_option("--tolerance", args->tolerance,
                  "stop when the potentials move less than this (cost units)");
  cmd->add_option("--check-every", args->check_every, "iterations between two tolerance checks")
      ->capture_default_str();
  cmd->add_option("--reach", args->reach, "unbalanced OT: marginal penalty rho = reach^2");
  cmd->add_flag("--debias", args->debias,
                "debiased Sinkhorn divergence OT(a,b) - OT(a,a)/2 - OT(b,b)/2");
  cmd->add_flag("--half-cost", args->half_cost,
                "cost |x - y|^2 / 2 (GeomLoss p = 2) instead of |x - y|^2");
  cmd->add_flag("--no-extrapolation", args->no_extrapolation, "skip the last extrapolation sweep");
  cmd->add_option("--schedule", args->schedule, "symmetric (GeomLoss) or alternating (OTT)")
      ->capture_default_str();
  cmd->add_option("--threads", args->threads, "OpenMP threads (0 = all cores)");
  cmd->add_option("--output", args->output, "write f, g (and --map, --gradient) to this .npz");
  cmd->add_flag("--map", args->map, "with --output: also the barycentric map (n, d)");
  cmd->add_flag("--gradient", args->gradient,
                "with --output: also grad_x (n, d) and grad_y (m, d)");
  cmd->add_flag("--json", args->json, "print one JSON object with the results");
  cmd->add_flag("--quiet", args->quiet, "no progress bar");
  cmd->callback([args] {
    require(args->output.empty() ? !(args->map || args->gradient) : true,
            args->map ? "--map" : "--gradient", "needs --output FILE.npz");
    if (!args->output.empty()) check_writable(args->output, "--output");
    Matrix x = load_matrix(args->source, "SOURCE");
    Matrix y = load_matrix(args->target, "TARGET");
    // Points of two dtypes are solved in float64, the float32 ones converted once.
    std::map<std::string, std::string> converted;
    for (auto [m, what] : {std::pair{&x, "SOURCE"}, std::pair{&y, "TARGET"}}) {
      if (x.array.dtype != y.array.dtype && !m->is_double()) {
        m->array.convert(io::DType::Float64, what);
        converted[what] = m->array.conversion();
      }
    }
    try {
      if (x.is_double()) {
        run<double>(*args, x, y, converted);
      } else {
        run<float>(*args, x, y, converted);
      }
    } catch (const InvalidInput& e) {
      rethrow_with_cli_names(e, {{"x", "SOURCE"},
                                 {"y", "TARGET"},
                                 {"a", "--weights-a"},
                                 {"b", "--weights-b"},
                                 {"epsilon", "--blur"},
                                 {"scaling", "--scaling"},
                                 {"reach_a", "--reach"},
                                 {"reach_b", "--reach"},
                                 {"diameter", "--diameter"},
                                 {"iterations", "--iterations"},
                                 {"check_every", "--check-every"},
                                 {"tol", "--tolerance"},
                                 {"num_threads", "--threads"}});
    }
  });
}

}  // namespace birkhoff::cli
