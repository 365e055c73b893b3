// `birkhoff color-transfer`: the main demo. The pixels of two photos are 3-D RGB point clouds;
// entropic OT between them moves each source pixel to its barycentric target colour.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "birkhoff/io/image.hpp"
#include "birkhoff/transport/describe.hpp"
#include "birkhoff/transport/sinkhorn.hpp"
#include "commands.hpp"
#include "common.hpp"
#include "describe.hpp"

namespace birkhoff::cli {
namespace {

// Debian's python3-skimage and scikit-image wheels ship these sample photos.
std::string find_sample(const std::string& name) {
  const char* roots[] = {"/usr/lib/python3/dist-packages/skimage/data",
                         "/usr/share/scikit-image/data"};
  for (const char* r : roots) {
    const auto p = std::filesystem::path(r) / name;
    if (std::filesystem::exists(p)) return p.string();
  }
  throw InvalidInput("SOURCE: no image given and the sample photo " + name +
                     " was not found (install Debian's python3-skimage, or pass two PNG files)");
}

io::RgbImage shrink_to(const io::RgbImage& img, std::int64_t short_side) {
  const std::int64_t s = std::min(img.width, img.height);
  if (short_side <= 0 || short_side >= s) return img;
  const double f = static_cast<double>(short_side) / static_cast<double>(s);
  return io::resize_area(
      img, std::max<std::int64_t>(1, std::lround(static_cast<double>(img.width) * f)),
      std::max<std::int64_t>(1, std::lround(static_cast<double>(img.height) * f)));
}

std::vector<float> to_points(const io::RgbImage& img) {
  std::vector<float> p(img.pixels.size());
  for (std::size_t i = 0; i < p.size(); ++i) p[i] = static_cast<float>(img.pixels[i]) / 255.0f;
  return p;
}

// Places the images side by side on a white canvas, each scaled to the same height.
io::RgbImage side_by_side(const std::vector<const io::RgbImage*>& images) {
  io::RgbImage out;
  for (const auto* im : images) {
    out.width += im->width + 8;
    out.height = std::max(out.height, im->height);
  }
  out.width -= 8;
  out.pixels.assign(static_cast<std::size_t>(out.width * out.height * 3), 255);
  std::int64_t x0 = 0;
  for (const auto* im : images) {
    for (std::int64_t y = 0; y < im->height; ++y)
      std::copy_n(im->pixels.begin() + y * im->width * 3, im->width * 3,
                  out.pixels.begin() + (y * out.width + x0) * 3);
    x0 += im->width + 8;
  }
  return out;
}

}  // namespace

void add_color_transfer_command(CLI::App& app) {
  struct Args {
    std::string source, target, output = "color_transfer.png";
    double blur = 0.05;
    std::int64_t size = 256;
    bool json = false, quiet = false;
    transport::SinkhornOptions options;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "color-transfer",
      "Recolour SOURCE with the colours of TARGET by entropic OT between their pixels (RGB "
      "points in [0, 1]^3). Without arguments: astronaut.png -> coffee.png from scikit-image.");
  cmd->add_option("SOURCE", args->source, "source PNG (default: scikit-image's astronaut.png)");
  cmd->add_option("TARGET", args->target, "target PNG (default: scikit-image's coffee.png)");
  cmd->add_option("--output", args->output, "picture: source | target | recoloured source")
      ->capture_default_str();
  cmd->add_option("--size", args->size,
                  "shrink each photo so its shorter side has this many pixels (0 = full size)")
      ->capture_default_str();
  cmd->add_option("--blur", args->blur, "blur in RGB units; epsilon = blur^2")
      ->capture_default_str();
  add_options(cmd, args->options);
  add_report_flags(cmd, args->json, args->quiet);
  cmd->callback([args] {
    const auto start = std::chrono::steady_clock::now();
    const std::string src_path = args->source.empty() ? find_sample("astronaut.png") : args->source;
    const std::string dst_path = args->target.empty() ? find_sample("coffee.png") : args->target;
    require(args->size >= 0, "--size", "must be >= 0");
    require(args->source.empty() == args->target.empty(), "TARGET",
            "give both SOURCE and TARGET, or neither (for the sample photos)");
    check_writable(args->output, "--output");
    io::RgbImage src, dst;
    try {
      src = shrink_to(io::read_png(src_path), args->size);
    } catch (const InvalidInput& e) {
      throw InvalidInput(std::string("SOURCE: ") + e.what());
    }
    try {
      dst = shrink_to(io::read_png(dst_path), args->size);
    } catch (const InvalidInput& e) {
      throw InvalidInput(std::string("TARGET: ") + e.what());
    }
    const auto x = to_points(src), y = to_points(dst);
    transport::OtProblem<float> problem;
    transport::SinkhornOptions o = args->options;
    ProgressBar bar(args->quiet || args->json);
    o.progress = bar.callback();
    transport::Solution<float> solution;
    try {
      problem.geometry = transport::PointCloud<float>({x.data(), src.width * src.height, 3},
                                                      {y.data(), dst.width * dst.height, 3});
      require(args->blur > 0 && std::isfinite(args->blur), "--blur",
              "must be a positive number, got " + std::to_string(args->blur));
      problem.epsilon = args->blur * args->blur;
      solution = transport::sinkhorn(problem, o);
    } catch (const InvalidInput& e) {
      rethrow_with_cli_names(e, flag_names<transport::SinkhornOptions>(), {{"epsilon", "--blur"}});
    }
    const auto& result = solution.report();
    const auto map = solution.barycentric_map();
    io::RgbImage recoloured = src;
    for (std::size_t i = 0; i < map.size(); ++i)
      recoloured.pixels[i] =
          static_cast<std::uint8_t>(std::clamp(std::lround(map[i] * 255.0f), 0L, 255L));
    io::write_png(args->output, side_by_side({&src, &dst, &recoloured}));
    const double seconds = seconds_since(start);
    if (!result.converged) warn_not_converged(result, o.marginal_tol);
    const double n = static_cast<double>(solution.n()), m = static_cast<double>(solution.m());
    const double dense_gb = n * m * 8 / 1e9;  // one float64 n x m matrix, as POT would hold
    if (args->json) {
      auto j = to_json(result);
      j["source"] = src_path;
      j["target"] = dst_path;
      j["output"] = args->output;
      j["n"] = solution.n();
      j["m"] = solution.m();
      j["seconds"] = seconds;
      j["peak_rss_mb"] = peak_rss_mb();
      j["dense_cost_matrix_gb"] = dense_gb;
      print_json(j);
    } else {
      std::printf(
          "color transfer %s (%lld px) -> %s (%lld px)\n"
          "  loss %.6g  transport cost %.6g  epsilon %.3g  iterations %d  marginal error %.3g\n"
          "  %.2f s  peak RSS %.1f MB (a dense solver would hold a %.1f GB float64 cost matrix)\n"
          "  wrote %s\n",
          src_path.c_str(), static_cast<long long>(solution.n()), dst_path.c_str(),
          static_cast<long long>(solution.m()), result.loss, result.transport_cost, result.epsilon,
          result.iterations, result.marginal_error, seconds, peak_rss_mb(), dense_gb,
          args->output.c_str());
    }
  });
}

}  // namespace birkhoff::cli
