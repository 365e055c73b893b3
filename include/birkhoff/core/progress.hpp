#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "birkhoff/core/error.hpp"

namespace birkhoff {

/// One report of a long run: `done` of `total` steps of the named stage are finished.
struct ProgressInfo {
  std::string_view stage;
  std::int64_t done = 0;
  std::int64_t total = 0;
};

/// Called from the calling thread between steps (never from inside a parallel region).
/// Return false to stop the run: the solver then throws birkhoff::Cancelled.
using ProgressCallback = std::function<bool(const ProgressInfo&)>;

/// Invokes `callback` when set and throws Cancelled when it asks to stop.
inline void report_progress(const ProgressCallback& callback, std::string_view stage,
                            std::int64_t done, std::int64_t total) {
  if (callback && !callback(ProgressInfo{stage, done, total})) throw Cancelled();
}

}  // namespace birkhoff
