// `birkhoff barycenter CLOUD...`: the free-support Wasserstein barycenter of .npy clouds.
#include "birkhoff/transport/barycenter.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "birkhoff/core/error.hpp"
#include "birkhoff/transport/describe.hpp"
#include "commands.hpp"
#include "common.hpp"
#include "describe.hpp"

namespace birkhoff::cli {
namespace {

struct BarycenterArgs {
  std::vector<std::string> clouds;
  std::vector<double> weights;
  std::string init, output;
  double blur = 0.05;
  std::optional<std::int64_t> n_support;
  std::int64_t seed = 0;
  bool json = false, quiet = false;
  transport::BarycenterOptions options;
};

void run(const BarycenterArgs& args) {
  const auto start = std::chrono::steady_clock::now();
  if (!args.output.empty()) check_writable(args.output, "--output");
  std::map<std::string, std::string> converted;
  std::vector<Matrix> clouds;
  for (std::size_t k = 0; k < args.clouds.size(); ++k) {
    clouds.push_back(load_double_matrix(args.clouds[k], "CLOUD " + args.clouds[k], converted));
  }
  note_conversions(converted, args.json);
  std::vector<MatrixView<const double>> views;
  for (const auto& c : clouds)
    views.push_back({c.array.as<double>("CLOUD").data(), c.rows, c.cols});
  const std::vector<double>& lambda = args.weights;
  require(lambda.empty() || lambda.size() == clouds.size(), "--weights",
          "has " + std::to_string(lambda.size()) + " numbers for " + std::to_string(clouds.size()) +
              " clouds");
  // The initial support: --init, or --n-support points drawn from all clouds, or the first.
  std::vector<double> init;
  std::int64_t n = clouds[0].rows;
  const std::int64_t d = clouds[0].cols;
  if (!args.init.empty()) {
    const Matrix m = load_double_matrix(args.init, "--init", converted);
    const auto v = m.array.as<double>("--init");
    init.assign(v.begin(), v.end());
    n = m.rows;
    require(m.cols == d, "--init",
            "has dimension " + std::to_string(m.cols) + ", the clouds " + std::to_string(d));
  } else if (args.n_support) {
    require(*args.n_support >= 1 && *args.n_support <= 100'000'000, "--n-support",
            "must lie in [1, 1e8], got " + std::to_string(*args.n_support));
    std::mt19937_64 gen(static_cast<std::uint64_t>(args.seed));
    std::int64_t total = 0;
    for (const auto& c : views) total += c.rows;
    n = *args.n_support;
    for (std::int64_t i = 0; i < n; ++i) {
      std::int64_t pick = static_cast<std::int64_t>(gen() % static_cast<std::uint64_t>(total));
      std::size_t k = 0;
      while (pick >= views[k].rows) pick -= views[k++].rows;
      init.insert(init.end(), views[k].row(pick), views[k].row(pick) + d);
    }
  } else {
    init.assign(views[0].data, views[0].data + views[0].rows * d);
  }
  require(args.blur > 0 && std::isfinite(args.blur), "--blur", "must be positive and finite");
  transport::BarycenterOptions o = args.options;
  ProgressBar bar(args.quiet || args.json);
  o.progress = bar.callback();
  const auto r = transport::barycenter<double>(views, {}, lambda, {init.data(), n, d}, {},
                                               args.blur * args.blur, o);
  if (!args.output.empty()) {
    io::NpzWriter npz(args.output);
    const std::vector<std::int64_t> shape = {n, d};
    npz.add_view("points", std::span<const std::int64_t>(shape), r.points.data());
    npz.add_view("init", std::span<const std::int64_t>(shape), init.data());
    npz.close();
  }
  const double seconds = seconds_since(start);
  if (!r.converged && args.options.tol > 0)  // --tol 0 asks for exactly --max-iter
    print_warning("not converged after " + std::to_string(r.iterations) +
                  " iterations (raise --max-iter or --tol)");
  if (args.json) {
    auto j = to_json(r);
    j.update({{"options", to_json(args.options)},
              {"n", n},
              {"d", d},
              {"clouds", args.clouds.size()},
              {"converted", converted},
              {"seconds", seconds},
              {"peak_rss_mb", peak_rss_mb()}});
    print_json(j);
  } else {
    std::printf(
        "barycenter of %zu clouds: %lld points, loss %.9g, iterations %d, displacement "
        "%.3g, %.3f s, peak RSS %.1f MB\n",
        args.clouds.size(), static_cast<long long>(n), r.loss, r.iterations, r.displacement,
        seconds, peak_rss_mb());
  }
}

}  // namespace

void add_barycenter_command(CLI::App& app) {
  auto args = std::make_shared<BarycenterArgs>();
  auto* cmd = app.add_subcommand(
      "barycenter",
      "Free-support entropic Wasserstein barycenter of point clouds (.npy (m_k, d), uniform "
      "weights): the support moves by the fixed-point iteration of Cuturi & Doucet (2014), "
      "each step one streamed Sinkhorn solve per cloud (POT's free_support_sinkhorn_barycenter).");
  cmd->add_option("CLOUD", args->clouds, "the clouds, .npy (m_k, d) each")->required();
  cmd->add_option("--weights", args->weights,
                  "weights of the clouds, comma-separated (normalised; default uniform)")
      ->delimiter(',');
  cmd->add_option("--blur", args->blur, "epsilon = blur^2 (squared Euclidean cost)")
      ->capture_default_str();
  auto* n_support =
      cmd->add_option("--n-support", args->n_support,
                      "support points drawn from all clouds (default: the first cloud's points)");
  cmd->add_option("--seed", args->seed, "seed of the drawn support")->capture_default_str();
  cmd->add_option("--init", args->init, "initial support, .npy (n, d)")->excludes(n_support);
  add_options(cmd, args->options);
  cmd->add_option("--output", args->output, "write points (n, d) and init (n, d) to this .npz");
  add_report_flags(cmd, args->json, args->quiet);
  cmd->callback([args] {
    try {
      run(*args);
    } catch (const InvalidInput& e) {
      rethrow_with_cli_names(e, flag_names<transport::BarycenterOptions>(),
                             {{"weights", "--weights"}, {"init", "--init"}, {"epsilon", "--blur"}});
    }
  });
}

}  // namespace birkhoff::cli
