#pragma once
// The report of `birkhoff gw` and `birkhoff gw-graph`: the same result fields, one layout.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common.hpp"
#include "describe.hpp"

namespace birkhoff::cli {

/// Warns when `r` did not converge, then prints `r` with `extra` as JSON or one text line.
template <class Result, class Options>
void report_gromov(const Result& r, const Options& options, bool fused, nlohmann::json extra,
                   bool json, double seconds) {
  if (!r.converged) {
    char why[200];
    std::snprintf(why, sizeof why,
                  "not converged: %d outer iterations, marginal error %.3g (raise --max-iter, "
                  "--inner-max-iter or --epsilon)",
                  r.iterations, r.marginal_error);
    print_warning(why);
  }
  if (json) {
    auto j = to_json(r);
    j.update({{"options", to_json(options)},
              {"fused", fused},
              {"seconds", seconds},
              {"peak_rss_mb", peak_rss_mb()}});
    j.update(extra);
    print_json(j);
  } else {
    std::printf(
        "%s %.9g  gw %.9g  epsilon %.3g  outer iterations %d  inner %d  marginal error "
        "%.3g  %.3f s  peak RSS %.1f MB\n",
        fused ? "fgw" : "gw", r.loss, r.gw_loss, r.epsilon, r.iterations, r.inner_iterations,
        r.marginal_error, seconds, peak_rss_mb());
  }
}

}  // namespace birkhoff::cli
