// The merge loop's start: the adjacency lists of the input and the keys of all its edges.
#include <algorithm>
#include <bit>
#include <span>
#include <vector>

#include "birkhoff/core/system.hpp"
#include "graph/coarsen/merge_loop.hpp"

namespace birkhoff::coarsen::detail {

template <class Key>
void MergeLoop<Key>::initialise() {
  const int threads = resolve_threads(opt_.num_threads);
  const std::int64_t n = n_;
  const bool parallel = (n + num_edges_) * d_ > (1 << 16);
#pragma omp parallel for schedule(dynamic, 256) num_threads(threads) if (parallel)
  for (std::int64_t i = 0; i < n; ++i) {
    // The neighbours, without a self-loop: the merges ignore it.
    std::span<const std::int32_t> row = g_.neighbors(i);
    const auto self = std::lower_bound(row.begin(), row.end(), static_cast<std::int32_t>(i));
    thread_local std::vector<std::int32_t> without_self;
    if (self != row.end() && *self == i) {
      without_self.assign(row.begin(), self);
      without_self.insert(without_self.end(), self + 1, row.end());
      row = without_self;
    }
    auto& list = node_[i].list;
    list.resize(row.size());
    for (std::size_t t = 0; t < row.size(); ++t) {
      if (kInterference && t + kInitPrefetch < row.size()) {
        prefetch_row(features_.row(static_cast<Id>(row[t + kInitPrefetch])), d_);
      }
      const Id j = static_cast<Id>(row[t]);
      if constexpr (kInterference) {
        const float dt =
            kernels::dot_widened(features_.row(static_cast<Id>(i)), features_.row(j), d_);
        list[t] = IdDot{j, dt};
      } else {
        list[t] = j;
      }
    }
    node_[i].deg = static_cast<std::int32_t>(row.size());
    above_[i] = static_cast<std::uint32_t>(
        std::upper_bound(row.begin(), row.end(), static_cast<std::int32_t>(i)) - row.begin());
    if constexpr (kInterference) {
      sigma_[i] = sum_dot_squares(list.data(), static_cast<std::int64_t>(list.size()));
    }
  }
  // One queue entry per undirected edge (p, q), p < q, at a fixed offset: thread-independent.
  std::vector<std::int64_t> offset(static_cast<std::size_t>(n) + 1, 0);
  for (std::int64_t p = 0; p < n; ++p) {
    const auto row = g_.neighbors(p);
    const auto first = std::upper_bound(row.begin(), row.end(), static_cast<std::int32_t>(p));
    offset[p + 1] = offset[p] + (row.end() - first);
  }
  // Room for the most entries the queue holds between two compactions (see run()): a doubling
  // would hold the old and the new buffer at once, at the start of the merges.
  auto& pool = queue_.pool(static_cast<std::size_t>(offset[n] + offset[n] / 4 + kHeapSlack));
  pool.resize(static_cast<std::size_t>(offset[n]));
  HeapEntry* heap = pool.data();
#pragma omp parallel num_threads(threads) if (parallel)
  {
    // mark[k] = (p + 1) << 32 | (position of k in N(p)) for the members of N(p): a scan of N(q)
    // against them finds N(p) ∩ N(q) in ascending id order, as the linear merge does.
    std::vector<std::uint64_t> mark(static_cast<std::size_t>(n), 0);
#pragma omp for schedule(dynamic, 256)
    for (std::int64_t p = 0; p < n; ++p) {
      const auto& lp = node_[p].list;
      const std::uint64_t stamp = static_cast<std::uint64_t>(p + 1) << 32;
      bool marked = false;
      std::int64_t at = offset[p];
      for (std::size_t at_p = 0; at_p < lp.size(); ++at_p) {
        // The feature row and the list of the pair a few entries ahead: rows are read in
        // random order.
        if (at_p + kInitPrefetch < lp.size()) {
          const Id ahead = id_of(lp[at_p + kInitPrefetch]);
          if (ahead > p) {
            prefetch_row(features_.row(ahead), d_);
            __builtin_prefetch(node_[ahead].list.data());
          }
        }
        const Id q = id_of(lp[at_p]);
        if (q <= p) continue;
        const auto& lq = node_[q].list;
        std::int64_t inter = 0;
        float c = 0.0f;
        if (lq.size() <= lp.size() * static_cast<std::size_t>(std::bit_width(lq.size()))) {
          if (!marked) {
            for (std::size_t a = 0; a < lp.size(); ++a) mark[id_of(lp[a])] = stamp | a;
            marked = true;
          }
          for (const Entry& f : lq) {
            const std::uint64_t mk = mark[id_of(f)];
            if constexpr (kInterference) {
              if ((mk & ~std::uint64_t{0xffffffff}) == stamp) {
                ++inter;
                const float diff = lp[mk & 0xffffffff].dot - f.dot;
                c += diff * diff;
              }
            } else {
              inter += (mk & ~std::uint64_t{0xffffffff}) == stamp;
            }
          }
        } else {
          for_common(lp.data(), lp.size(), lq.data(), lq.size(), [&](std::size_t a, std::size_t b) {
            ++inter;
            if constexpr (kInterference) {
              const float diff = lp[a].dot - lq[b].dot;
              c += diff * diff;
            }
          });
        }
        double key;
        if constexpr (kInterference) {
          key = nope_key(static_cast<Id>(p), q, c);
        } else {
          key = star_key(static_cast<Id>(p), q, inter);
        }
        heap[at++] = HeapEntry{key, static_cast<Id>(p), q};
      }
    }
  }
  live_edges_ = offset[n];
  pushes_ = offset[n];
}

template void MergeLoop<NopeKey>::initialise();
template void MergeLoop<NopeStarKey>::initialise();

}  // namespace birkhoff::coarsen::detail
