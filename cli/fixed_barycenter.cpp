// `birkhoff fixed-support-barycenter SUPPORT [CLOUD...]`: the weights of the (debiased) entropic
// barycenter on a fixed support, of histograms on it or of .npy clouds.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "birkhoff/transport/barycenter.hpp"
#include "birkhoff/transport/describe.hpp"
#include "commands.hpp"
#include "common.hpp"
#include "describe.hpp"

namespace birkhoff::cli {
namespace {

struct FixedBarycenterArgs {
  std::string support, histograms, output, cost = "sqeuclidean";
  std::vector<std::string> clouds;
  std::vector<double> weights;
  std::optional<double> p;
  double blur = 0.05;
  bool json = false, quiet = false;
  transport::FixedBarycenterOptions options;
};

void run(const FixedBarycenterArgs& args) {
  const auto start = std::chrono::steady_clock::now();
  if (!args.output.empty()) check_writable(args.output, "--output");
  require(args.clouds.empty() != args.histograms.empty(), "--histograms",
          "give the measures as --histograms (K, n) on SUPPORT or as CLOUD files, one of the two");
  std::map<std::string, std::string> converted;
  const Matrix support = load_double_matrix(args.support, "SUPPORT", converted);
  const std::int64_t n = support.rows, d = support.cols;
  const MatrixView<const double> x{support.array.as<double>("SUPPORT").data(), n, d};
  std::vector<Matrix> clouds;
  std::vector<MatrixView<const double>> views;
  std::vector<std::span<const double>> cloud_weights;
  std::optional<Matrix> histograms;
  if (!args.histograms.empty()) {
    histograms = load_double_matrix(args.histograms, "--histograms", converted, true);
    require(histograms->cols == n, "--histograms",
            "has " + std::to_string(histograms->cols) + " columns for " + std::to_string(n) +
                " support points");
    const auto h = histograms->array.as<double>("--histograms");
    for (std::int64_t k = 0; k < histograms->rows; ++k) {
      views.push_back(x);
      cloud_weights.emplace_back(h.data() + k * n, static_cast<std::size_t>(n));
    }
  } else {
    for (const auto& path : args.clouds)
      clouds.push_back(load_double_matrix(path, "CLOUD " + path, converted));
    for (const auto& c : clouds)
      views.push_back({c.array.as<double>("CLOUD").data(), c.rows, c.cols});
  }
  note_conversions(converted, args.json);
  require(args.weights.empty() || args.weights.size() == views.size(), "--weights",
          "has " + std::to_string(args.weights.size()) + " numbers for " +
              std::to_string(views.size()) + " measures");
  require(args.blur > 0 && std::isfinite(args.blur), "--blur", "must be positive and finite");
  const auto cost = transport::Cost::named(args.cost, args.p, 1.0);
  transport::FixedBarycenterOptions o = args.options;
  ProgressBar bar(args.quiet || args.json);
  o.progress = bar.callback();
  // epsilon = blur^p, p the cost's exponent (GeomLoss's convention).
  const auto r = transport::fixed_support_barycenter<double>(
      x, views, cloud_weights, args.weights, std::pow(args.blur, cost->exponent()), cost, o);
  if (!args.output.empty()) {
    io::NpzWriter npz(args.output);
    const std::vector<std::int64_t> shape = {n};
    npz.add_view("weights", std::span<const std::int64_t>(shape), r.weights.data());
    npz.close();
  }
  const double seconds = seconds_since(start);
  if (!r.converged && args.options.tol > 0) {  // --tol 0 asks for exactly --max-iter
    char what[160];
    std::snprintf(what, sizeof what,
                  "not converged after %d iterations, marginal error %.2g against --tol %.2g "
                  "(raise --max-iter, or lower --blur against the support's spacing)",
                  r.iterations, r.marginal_error, args.options.tol);
    print_warning(what);
  }
  if (args.json) {
    auto j = to_json(r);
    j.update({{"options", to_json(args.options)},
              {"n", n},
              {"d", d},
              {"measures", views.size()},
              {"cost", args.cost},
              {"converted", converted},
              {"seconds", seconds},
              {"peak_rss_mb", peak_rss_mb()}});
    print_json(j);
  } else {
    std::printf(
        "fixed-support barycenter of %zu measures on %lld points: loss %.9g, iterations %d, "
        "marginal error %.3g, %.3f s, peak RSS %.1f MB\n",
        views.size(), static_cast<long long>(n), r.loss, r.iterations, r.marginal_error, seconds,
        peak_rss_mb());
  }
}

}  // namespace

void add_fixed_barycenter_command(CLI::App& app) {
  auto args = std::make_shared<FixedBarycenterArgs>();
  auto* cmd = app.add_subcommand(
      "fixed-support-barycenter",
      "Entropic Wasserstein barycenter on a fixed support (.npy (n, d)): its weights, debiased "
      "(Janati et al. 2020) or not (--no-debias, iterative Bregman projections), of K histograms "
      "on the support (--histograms, .npy (K, n)) or of K .npy clouds with uniform weights; one "
      "streamed pass per measure each way per iteration (POT's barycenter_debiased).");
  cmd->add_option("SUPPORT", args->support, "the fixed support, .npy (n, d)")->required();
  cmd->add_option("CLOUD", args->clouds, "the measures as clouds, .npy (m_k, d) each");
  cmd->add_option("--histograms", args->histograms,
                  "the measures as K histograms on SUPPORT, .npy (K, n), rows of one total mass");
  cmd->add_option("--weights", args->weights,
                  "weights of the measures, comma-separated (normalised; default uniform)")
      ->delimiter(',');
  cmd->add_option("--blur", args->blur, "epsilon = blur^p in cost units")->capture_default_str();
  cmd->add_option("--cost", args->cost,
                  "ground cost: sqeuclidean |x - y|^2, euclidean |x - y|^p, cosine "
                  "1 - <x, y> / (|x| |y|)")
      ->check(CLI::IsMember(transport::cost_names()))
      ->capture_default_str();
  cmd->add_option("--p", args->p, "the power of --cost euclidean, p >= 1 (default 1)");
  add_options(cmd, args->options);
  cmd->add_option("--output", args->output, "write weights (n) to this .npz");
  add_report_flags(cmd, args->json, args->quiet);
  cmd->callback([args] {
    try {
      run(*args);
    } catch (const InvalidInput& e) {
      rethrow_with_cli_names(e, flag_names<transport::FixedBarycenterOptions>(),
                             {{"weights", "--weights"},
                              {"support", "SUPPORT"},
                              {"clouds", "CLOUD"},
                              {"cloud_weights", "--histograms"},
                              {"epsilon", "--blur"},
                              {"cost", "--cost"},
                              {"p", "--p"}});
    }
  });
}

}  // namespace birkhoff::cli
