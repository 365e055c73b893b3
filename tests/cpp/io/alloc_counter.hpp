// Counts the bytes held by operator new in this test binary, so that tests can check how much
// a reader allocates (libzip's and libspng's own malloc calls are not counted).
#pragma once

#include <cstdint>

namespace birkhoff::io::testing {

/// Bytes allocated with operator new and not yet freed.
std::int64_t live_bytes();
/// Starts a measurement: the peak is reset to the current live bytes.
void reset_peak();
/// Highest live_bytes() since reset_peak().
std::int64_t peak_bytes();

}  // namespace birkhoff::io::testing
