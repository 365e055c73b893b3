// `birkhoff gw SOURCE TARGET`: entropic (fused) Gromov-Wasserstein between two .npy clouds.
#include "birkhoff/transport/gromov.hpp"

#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "birkhoff/core/error.hpp"
#include "birkhoff/transport/describe.hpp"
#include "commands.hpp"
#include "common.hpp"
#include "describe.hpp"
#include "gromov_report.hpp"

namespace birkhoff::cli {
namespace {

struct GromovArgs {
  std::string source, target, weights_a, weights_b, features_x, features_y, init, output;
  double epsilon = 0.1;
  bool gradient = false, plan = false, json = false, quiet = false;
  bool dtype_given = false;  // --dtype on the command line
  transport::GromovOptions options;
};

MatrixView<const double> view(const Matrix& m, const std::string& what) {
  return {m.array.as<double>(what).data(), m.rows, m.cols};
}

void run(const GromovArgs& args) {
  const auto start = std::chrono::steady_clock::now();
  if (!args.output.empty()) check_writable(args.output, "--output");
  std::map<std::string, std::string> converted;
  const Matrix x = load_double_matrix(args.source, "SOURCE", converted);
  const Matrix y = load_double_matrix(args.target, "TARGET", converted);
  Matrix fx, fy, t0;
  require(args.features_x.empty() == args.features_y.empty(),
          args.features_x.empty() ? "--features-x" : "--features-y",
          "fused GW needs --features-x and --features-y");
  if (!args.features_x.empty()) {
    fx = load_double_matrix(args.features_x, "--features-x", converted);
    fy = load_double_matrix(args.features_y, "--features-y", converted);
  }
  if (!args.init.empty()) t0 = load_double_matrix(args.init, "--init", converted);
  std::vector<double> a, b;
  if (!args.weights_a.empty()) a = load_vector<double>(args.weights_a, "--weights-a", converted);
  if (!args.weights_b.empty()) b = load_vector<double>(args.weights_b, "--weights-b", converted);
  note_conversions(converted, args.json);
  transport::GromovOptions o = args.options;
  // float32 files select float32 inner solves unless --dtype says otherwise (as in Python).
  const auto narrow = [](const Matrix& m) { return m.array.converted_from == io::DType::Float32; };
  if (!args.dtype_given && narrow(x) && narrow(y) && (fx.rows == 0 || (narrow(fx) && narrow(fy))))
    o.dtype = transport::InnerDtype::Float32;
  ProgressBar bar(args.quiet || args.json);
  o.progress = bar.callback();
  const auto r = transport::gromov_wasserstein(
      view(x, "SOURCE"), view(y, "TARGET"), a, b, args.epsilon, o,
      fx.rows ? view(fx, "--features-x") : MatrixView<const double>{},
      fy.rows ? view(fy, "--features-y") : MatrixView<const double>{},
      t0.rows ? view(t0, "--init") : MatrixView<const double>{}, args.gradient, args.plan);
  if (!args.output.empty()) write_npz(args.output, r);
  const double seconds = seconds_since(start);
  report_gromov(r, o, !args.features_x.empty(),
                {{"n", x.rows}, {"m", y.rows}, {"converted", converted}}, args.json, seconds);
}

}  // namespace

void add_gromov_command(CLI::App& app) {
  auto args = std::make_shared<GromovArgs>();
  auto* cmd = app.add_subcommand(
      "gw",
      "Entropic Gromov-Wasserstein between two point clouds (.npy (n, dx) and (m, dy); the "
      "dimensions may differ) with squared Euclidean inner costs, in linear memory: each outer "
      "iteration is one streamed Sinkhorn solve of the linearised cost. With --features-x and "
      "--features-y, fused GW (1 - alpha) <T, |fx - fy|^2> + alpha GW(T). POT's definitions.");
  cmd->add_option("SOURCE", args->source, "source points x, .npy (n, dx)")->required();
  cmd->add_option("TARGET", args->target, "target points y, .npy (m, dy)")->required();
  cmd->add_option("--weights-a", args->weights_a, "source weights a, .npy (n,); default 1/n");
  cmd->add_option("--weights-b", args->weights_b, "target weights b, .npy (m,); default 1/m");
  cmd->add_option("--features-x", args->features_x, "fused GW: source features, .npy (n, df)");
  cmd->add_option("--features-y", args->features_y, "fused GW: target features, .npy (m, df)");
  cmd->add_option("--epsilon", args->epsilon, "entropic regularisation (POT's epsilon)")
      ->capture_default_str();
  cmd->add_option("--init", args->init, "initial plan, .npy (n, m) (POT's G0)");
  add_options(cmd, args->options);
  cmd->add_option("--output", args->output,
                  "write the result's arrays (--gradient, --plan) to this .npz");
  cmd->add_flag("--gradient", args->gradient,
                "with --output: grad_x, grad_y (and the features' gradients)");
  cmd->add_flag("--plan", args->plan, "with --output: the dense plan (n, m)");
  add_report_flags(cmd, args->json, args->quiet);
  cmd->callback([args, cmd] {
    args->dtype_given = cmd->get_option("--dtype")->count() > 0;
    require(args->output.empty() ? !(args->gradient || args->plan) : true,
            args->gradient ? "--gradient" : "--plan", "needs --output FILE.npz");
    try {
      run(*args);
    } catch (const InvalidInput& e) {
      rethrow_with_cli_names(e, flag_names<transport::GromovOptions>(),
                             {{"x", "SOURCE"},
                              {"y", "TARGET"},
                              {"a", "--weights-a"},
                              {"b", "--weights-b"},
                              {"features_x", "--features-x"},
                              {"features_y", "--features-y"},
                              {"init", "--init"},
                              {"epsilon", "--epsilon"}});
    }
  });
}

}  // namespace birkhoff::cli
