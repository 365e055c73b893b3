#pragma once

#include <cstdint>

namespace birkhoff {

/// Peak resident set size of this process so far, in bytes (0 where the OS does not tell).
std::int64_t peak_rss_bytes();

/// The thread count a parallel region should use: `requested` when positive, else the OpenMP
/// default (OMP_NUM_THREADS or the number of cores).
int resolve_threads(int requested);

}  // namespace birkhoff
