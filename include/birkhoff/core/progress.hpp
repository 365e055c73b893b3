#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string_view>

#include "birkhoff/core/error.hpp"

namespace birkhoff {

/// One report of a long run: `done` of `total` steps of the named stage are finished.
struct ProgressInfo {
  std::string_view stage;
  std::int64_t done = 0;
  std::int64_t total = 0;
  /// Solvers with a regularisation schedule: the current epsilon (NaN when not applicable).
  double epsilon = std::numeric_limits<double>::quiet_NaN();
  /// Solvers with a stopping criterion: the current error (NaN when not measured yet).
  double error = std::numeric_limits<double>::quiet_NaN();
};

/// Called from the calling thread between steps (never from inside a parallel region).
/// Return false to stop the run: the solver then throws birkhoff::Cancelled.
using ProgressCallback = std::function<bool(const ProgressInfo&)>;

/// Invokes `callback` when set and throws Cancelled when it asks to stop.
inline void report_progress(const ProgressCallback& callback, std::string_view stage,
                            std::int64_t done, std::int64_t total) {
  if (callback && !callback(ProgressInfo{stage, done, total})) throw Cancelled();
}

/// The same with the schedule's epsilon and the current error.
inline void report_progress(const ProgressCallback& callback, const ProgressInfo& info) {
  if (callback && !callback(info)) throw Cancelled();
}

}  // namespace birkhoff
