#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace birkhoff {

/// Threads that split fine-grained parallel loops with the calling thread, for callers that ask
/// for help very often (every few microseconds) with little work each time, where opening an
/// OpenMP parallel region would cost more than the work. The handoff is one atomic counter;
/// helpers spin between calls and sleep (futex) after a while idle, so they cost nothing while
/// the caller runs long serial stretches. A call returns only once every helper has checked in,
/// so the next call may rewrite the job under no late helper.
///
/// Not reentrant: one caller thread, one call at a time; bodies must not throw.
class ThreadTeam {
 public:
  /// `threads` counts the caller: threads - 1 helpers are started (none for 1 or less).
  explicit ThreadTeam(int threads) {
    for (int h = 1; h < threads; ++h) helpers_.emplace_back([this, h] { serve(h); });
  }
  ~ThreadTeam() {
    stop_.store(true, std::memory_order_relaxed);
    publish();
    for (std::thread& t : helpers_) t.join();
  }
  ThreadTeam(const ThreadTeam&) = delete;
  ThreadTeam& operator=(const ThreadTeam&) = delete;

  /// The caller and the helpers: thread ids 0 (the caller) to size() - 1.
  int size() const { return static_cast<int>(helpers_.size()) + 1; }

  /// Calls body(thread, t) once for each t in [0, n), in chunks of `chunk` consecutive t taken
  /// in increasing order by whichever thread is free; returns when all calls have returned.
  /// With `parallel` false the caller runs all of them.
  template <class F>
  void for_each(std::int64_t n, std::int64_t chunk, bool parallel, F& body) {
    auto range = [&body](int thread, std::int64_t first, std::int64_t last) {
      for (std::int64_t t = first; t < last; ++t) body(thread, t);
    };
    for_ranges(n, chunk, parallel, range);
  }

  /// The same with body(thread, first, last) called once per chunk [first, last) (the whole
  /// [0, n) when not parallel), so that the body can prefetch within what it runs.
  template <class F>
  void for_ranges(std::int64_t n, std::int64_t chunk, bool parallel, F& body) {
    if (!parallel || helpers_.empty()) {
      if (n > 0) body(0, std::int64_t{0}, n);
      return;
    }
    call_ = [](void* f, int thread, std::int64_t first, std::int64_t last) {
      (*static_cast<F*>(f))(thread, first, last);
    };
    body_ = &body;
    n_ = n;
    chunk_ = chunk;
    next_.store(0, std::memory_order_relaxed);
    done_.store(0, std::memory_order_relaxed);
    publish();
    work(0);
    const int helpers = static_cast<int>(helpers_.size());
    while (done_.load(std::memory_order_acquire) != helpers) pause();
  }

 private:
  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#else
    std::this_thread::yield();
#endif
  }

  /// Starts a new call; wakes the helpers that sleep. (seq_cst on both sides: a helper either
  /// sees the new epoch before it sleeps, or this sees it asleep.)
  void publish() {
    epoch_.fetch_add(1, std::memory_order_seq_cst);
    if (sleeping_.load(std::memory_order_seq_cst) > 0) epoch_.notify_all();
  }

  void work(int thread) {
    for (;;) {
      const std::int64_t first = next_.fetch_add(chunk_, std::memory_order_relaxed);
      if (first >= n_) return;
      const std::int64_t last = first + chunk_ < n_ ? first + chunk_ : n_;
      call_(body_, thread, first, last);
    }
  }

  void serve(int thread) {
    std::uint32_t seen = 0;  // no call is published before the helpers start
    for (;;) {
      std::uint32_t now = epoch_.load(std::memory_order_acquire);
      for (int spin = 0; now == seen && spin < kSpins; ++spin) {
        pause();
        now = epoch_.load(std::memory_order_acquire);
      }
      if (now == seen) {
        sleeping_.fetch_add(1, std::memory_order_seq_cst);
        epoch_.wait(seen, std::memory_order_seq_cst);
        sleeping_.fetch_sub(1, std::memory_order_seq_cst);
        continue;
      }
      seen = now;
      if (stop_.load(std::memory_order_relaxed)) return;
      work(thread);
      done_.fetch_add(1, std::memory_order_release);
    }
  }

  // A few milliseconds of pauses before a helper sleeps, about as long as libgomp spins: a
  // helper that slept through a run of small serial steps wakes too late for the next call.
  static constexpr int kSpins = 1 << 17;
  std::vector<std::thread> helpers_;
  void (*call_)(void*, int, std::int64_t, std::int64_t) = nullptr;
  void* body_ = nullptr;
  std::int64_t n_ = 0;
  std::int64_t chunk_ = 1;
  alignas(64) std::atomic<std::uint32_t> epoch_{0};
  alignas(64) std::atomic<int> sleeping_{0};
  alignas(64) std::atomic<std::int64_t> next_{0};
  alignas(64) std::atomic<int> done_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace birkhoff
