#pragma once

#include <cstddef>
#include <cstdint>

namespace birkhoff {

/// Peak resident set size of this process so far, in bytes: Linux's VmHWM (the current program
/// image's own peak, not carried across exec), else getrusage; 0 where the OS does not tell.
std::int64_t peak_rss_bytes();

/// The thread count a parallel region should use: `requested` when positive, else OpenMP's
/// default, omp_get_max_threads(): OMP_NUM_THREADS when it is set, else the number of cores
/// this process may run on. Always at least 1.
int resolve_threads(int requested);

/// Asks the kernel to back the whole 2 MiB pages inside [data, data + bytes) with transparent
/// huge pages (Linux `madvise(MADV_HUGEPAGE)`), as NumPy does for its large arrays: rows read in
/// random order then miss the TLB far less. Call it before the pages are first written. Does
/// nothing for ranges under 4 MiB, elsewhere than Linux, or where the kernel declines.
void advise_huge_pages(void* data, std::size_t bytes);

/// Hands the allocator's free pages back to the system (glibc `malloc_trim`): after many small
/// blocks were freed, so that the next large allocation does not add to them in the peak
/// memory. Does nothing elsewhere than glibc.
void release_free_memory();

}  // namespace birkhoff
