// `birkhoff sliced SOURCE TARGET`: the sliced Wasserstein distance between two .npy clouds.
#include "birkhoff/transport/sliced.hpp"

#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "birkhoff/core/error.hpp"
#include "birkhoff/transport/describe.hpp"
#include "commands.hpp"
#include "common.hpp"
#include "describe.hpp"

namespace birkhoff::cli {
namespace {

struct SlicedArgs {
  std::string source, target, weights_a, weights_b, projections, output;
  bool gradient = false, json = false, quiet = false;
  transport::SlicedOptions options;
};

template <class T>
void run(const SlicedArgs& args, const Matrix& xm, const Matrix& ym,
         std::map<std::string, std::string> converted) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<T> a, b;
  if (!args.weights_a.empty()) a = load_vector<T>(args.weights_a, "--weights-a", converted);
  if (!args.weights_b.empty()) b = load_vector<T>(args.weights_b, "--weights-b", converted);
  MatrixView<const T> directions;
  Matrix pm;
  if (!args.projections.empty()) {
    pm = load_matrix(args.projections, "--projections");
    if (pm.is_double() != std::is_same_v<T, double>) {
      pm.array.convert(std::is_same_v<T, double> ? io::DType::Float64 : io::DType::Float32,
                       "--projections");
      converted["--projections"] = pm.array.conversion();
    }
    directions = {pm.array.template as<T>("--projections").data(), pm.rows, pm.cols};
  }
  note_conversions(converted, args.json);
  const auto r =
      transport::sliced_wasserstein<T>({xm.array.template as<T>("SOURCE").data(), xm.rows, xm.cols},
                                       {ym.array.template as<T>("TARGET").data(), ym.rows, ym.cols},
                                       a, b, args.options, directions, args.gradient);
  if (!args.output.empty()) write_npz(args.output, r);
  const double seconds = seconds_since(start);
  if (args.json) {
    auto j = to_json(r);
    j.update({{"options", to_json(args.options)},
              {"n", xm.rows},
              {"m", ym.rows},
              {"d", xm.cols},
              {"dtype", xm.is_double() ? "float64" : "float32"},
              {"converted", converted},
              {"seconds", seconds},
              {"peak_rss_mb", peak_rss_mb()}});
    print_json(j);
  } else {
    std::printf("%s %.9g  p %g  directions %lld  %.3f s  peak RSS %.1f MB\n",
                args.options.max_sliced ? "max-sliced" : "sliced", r.loss, args.options.p,
                static_cast<long long>(r.n_projections), seconds, peak_rss_mb());
  }
}

}  // namespace

void add_sliced_command(CLI::App& app) {
  auto args = std::make_shared<SlicedArgs>();
  auto* cmd = app.add_subcommand(
      "sliced",
      "Sliced (or max-sliced) Wasserstein distance between two point clouds (.npy (n, d) and "
      "(m, d), float32 or float64): exact 1-D transport of the sorted projections on random "
      "directions, (mean of W_p^p)^(1/p) as POT's sliced_wasserstein_distance.");
  add_cloud_arguments(cmd, args->source, args->target, args->weights_a, args->weights_b);
  cmd->add_option("--projections", args->projections,
                  "directions, .npy (d, L), one per column (instead of random ones)");
  add_options(cmd, args->options);
  cmd->add_option("--output", args->output,
                  "write projected (L), projections (d, L) (and --gradient's arrays) to this .npz");
  cmd->add_flag("--gradient", args->gradient,
                "with --output: also grad_x (n, d), grad_y (m, d), grad_a (n), grad_b (m)");
  add_report_flags(cmd, args->json, args->quiet);
  cmd->callback([args] {
    require(args->output.empty() ? !args->gradient : true, "--gradient", "needs --output FILE.npz");
    if (!args->output.empty()) check_writable(args->output, "--output");
    Matrix x = load_matrix(args->source, "SOURCE"), y = load_matrix(args->target, "TARGET");
    const auto converted = unify_dtypes(x, y, "SOURCE", "TARGET");
    try {
      if (x.is_double()) {
        run<double>(*args, x, y, converted);
      } else {
        run<float>(*args, x, y, converted);
      }
    } catch (const InvalidInput& e) {
      rethrow_with_cli_names(e, flag_names<transport::SlicedOptions>(),
                             {{"x", "SOURCE"},
                              {"y", "TARGET"},
                              {"a", "--weights-a"},
                              {"b", "--weights-b"},
                              {"projections", "--projections"}});
    }
  });
}

}  // namespace birkhoff::cli
