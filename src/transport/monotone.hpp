// PRIVATE (transport): the monotone coupling of two weighted sets of reals, the optimal plan on
// a line for any convex cost of s - t: sliced Wasserstein and the random initial plans of
// Gromov-Wasserstein walk it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace birkhoff::transport::detail {

/// Values sorted ascending with their point index (ties by index).
using SortedLine = std::vector<std::pair<double, std::int64_t>>;

/// Walks the monotone (north-west corner) coupling of sx and sy with weights wa(index),
/// wb(index): visit(i, j, mass) for each segment, i and j positions in sx and sy, in order
/// (each step advances i, j or both). Returns the last positions (i, j); points past them get
/// no mass (the masses are equal up to rounding).
template <class WA, class WB, class Visit>
std::pair<std::int64_t, std::int64_t> monotone_coupling(const SortedLine& sx, const SortedLine& sy,
                                                        const WA& wa, const WB& wb, Visit&& visit) {
  const auto n = static_cast<std::int64_t>(sx.size());
  const auto m = static_cast<std::int64_t>(sy.size());
  std::int64_t i = 0, j = 0;
  double ra = wa(sx[0].second), rb = wb(sy[0].second);
  for (;;) {
    const double mass = std::min(ra, rb);
    visit(i, j, mass);
    ra -= mass;
    rb -= mass;
    if ((ra <= 0 && i + 1 == n) || (rb <= 0 && j + 1 == m)) break;
    if (ra <= 0) ra = wa(sx[static_cast<std::size_t>(++i)].second);
    if (rb <= 0) rb = wb(sy[static_cast<std::size_t>(++j)].second);
  }
  return {i, j};
}

}  // namespace birkhoff::transport::detail
