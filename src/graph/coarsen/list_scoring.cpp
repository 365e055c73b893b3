// A merge's new keys from the adjacency lists, outside the dense phase (see merge_loop.hpp).
#include <algorithm>
#include <bit>

#include "graph/coarsen/merge_loop.hpp"

namespace birkhoff::coarsen::detail {

/// Outside the dense phase: the keys of the new pairs (nb_[t], n); each pair's N(m) is
/// joined to n (join()) in the same pass, while the list is in cache.
/// Both scores sum over N(m) ∩ N(n) for m in N(n): over the edges inside N(n) at m. Each such
/// edge {m, k}, m < k, is found once, in the part of N(m) above m, and serves both ends, so a
/// pair reads half of N(m) on average.
/// NOPE*: the counts are integers, summed per thread.
/// NOPE: the float32 sum of the pair (m, n) must run over k in ascending order, as a scan of
/// all of N(m) would. The edges are recorded per pair, then added up in one pass over the
/// pairs in ascending m: pair t first receives its terms from the pairs below it (k < m, in
/// ascending k), then its own (k > m, ascending). So the keys do not depend on the threads.
template <class Key>
void MergeLoop<Key>::score_by_lists(Id u, Id v, Id n, bool parallel) {
  const auto dn = static_cast<std::int64_t>(nb_.size());
  const int shares = parallel ? team_->size() : 1;
  for (int h = 0; h < shares; ++h) {
    Scratch& sc = scratch_[static_cast<std::size_t>(h)];
    if constexpr (kInterference) {
      sc.inside.clear();
    } else {
      sc.count.assign(static_cast<std::size_t>(dn), 0);
    }
  }
  if constexpr (kInterference) {
    found_.resize(static_cast<std::size_t>(dn));
  } else {
    dist_.resize(static_cast<std::size_t>(dn));
  }
  const std::uint8_t* state = alive_.data();
  const std::uint32_t* pos = mark_pos_.data();
  const float* xn = features_.row(n);
  const Entry* ln = node_[n].list.data();
  auto pair = [&](int thread, std::int64_t t, std::int64_t last) {
    Scratch& sc = scratch_[static_cast<std::size_t>(thread)];
    // Lists and feature rows are scattered: the node record and row slot eight
    // pairs ahead, the list and the feature row a few pairs ahead (their addresses
    // are then in cache), so that the two streams of misses overlap.
    if (t + 8 < last) {
      const Id ahead = nb_[t + 8];
      __builtin_prefetch(&node_[ahead]);
      __builtin_prefetch(&above_[ahead]);
      if constexpr (!kInterference) features_.prefetch_slot(ahead);
    }
    if (t + 3 < last) {
      // The whole list up to 1 KiB. The pair is in this thread's chunk, so no other thread
      // edits that list.
      const auto& ahead = node_[nb_[t + 3]].list;
      const char* p = reinterpret_cast<const char*>(ahead.data());
      const std::size_t bytes = std::min<std::size_t>(ahead.size() * sizeof(Entry), 1024);
      for (std::size_t b = 0; b < bytes; b += 64) __builtin_prefetch(p + b);
    }
    const Id m = nb_[t];
    if constexpr (!kInterference) {
      if (t + kPrefetch < last) prefetch_row(features_.row(nb_[t + kPrefetch]), d_);
      dist_[t] = kernels::squared_distance_pairwise(features_.row(m), xn, d_);
    }
    std::uint32_t* count = sc.count.data();
    float dot_m = 0.0f;
    if constexpr (kInterference) {
      dot_m = ln[t].dot;
      found_[t] = Found{static_cast<std::uint32_t>(sc.inside.size()), 0,
                        static_cast<std::uint32_t>(thread)};
    }
    // The edge {m, k} with k = nb_[a] and N(m)'s entry e for k.
    const auto edge = [&](std::uint32_t a, const Entry& e) {
      if constexpr (kInterference) {
        const float dk = e.dot - ln[a].dot;
        const float dm = e.dot - dot_m;
        sc.inside.push_back(InsideEdge{a, dk * dk, dm * dm});
      } else {
        ++count[a];
      }
    };
    auto& lm = node_[m].list;
    const std::size_t first = above_[m];
    const std::size_t above = lm.size() - first;
    const auto rest = static_cast<std::size_t>(dn - t - 1);
    std::uint32_t inside = 0;
    if (above > 0 && rest > 0) {
      if (above <= rest * static_cast<std::size_t>(std::bit_width(above))) {
        // Scan the part above m against the marks, dropping its dead entries on the way. Up
        // to the first dead entry (few are dead) nothing is written, so the list's lines stay
        // clean and are not written back to memory.
        Entry* data = lm.data();
        const std::size_t size = lm.size();
        std::size_t r = first;
        for (; r < size; ++r) {
          const Entry e = data[r];
          const std::uint8_t st = state[id_of(e)];
          if (st == 0) break;
          if (st == kMarked) {
            ++inside;
            edge(pos[id_of(e)], e);
          }
        }
        std::size_t w = r;
        for (; r < size; ++r) {
          const Entry e = data[r];
          const std::uint8_t st = state[id_of(e)];
          data[w] = e;
          w += st != 0;
          if (st == kMarked) {
            ++inside;
            edge(pos[id_of(e)], e);
          }
        }
        lm.resize(w);
      } else {
        for_common(
            nb_.data() + t + 1, rest, lm.data() + first, above, [&](std::size_t a, std::size_t b) {
              ++inside;
              edge(static_cast<std::uint32_t>(t + 1 + static_cast<std::int64_t>(a)), lm[first + b]);
            });
      }
    }
    if constexpr (kInterference) {
      found_[t].end = static_cast<std::uint32_t>(sc.inside.size());
    } else {
      count[t] += inside;
    }
    join(static_cast<std::size_t>(t), u, v, n);
  };
  // A thread prefetches only within the chunk it runs, and starts each chunk by asking for
  // its first pairs' records, lists (from the entry above m) and rows.
  auto chunk = [&](int thread, std::int64_t first, std::int64_t last) {
    for (std::int64_t t = first; t < std::min(last, first + 8); ++t) {
      __builtin_prefetch(&node_[nb_[t]]);
      __builtin_prefetch(&above_[nb_[t]]);
      if constexpr (!kInterference) features_.prefetch_slot(nb_[t]);
    }
    for (std::int64_t t = first; t < std::min(last, first + 3); ++t) {
      const Id m = nb_[t];
      const char* p = reinterpret_cast<const char*>(node_[m].list.data() + above_[m]);
      __builtin_prefetch(p);
      __builtin_prefetch(p + 64);
    }
    if constexpr (!kInterference) {
      for (std::int64_t t = first; t < std::min(last, first + kPrefetch); ++t) {
        prefetch_row(features_.row(nb_[t]), d_);
      }
    }
    for (std::int64_t t = first; t < last; ++t) pair(thread, t, last);
  };
  team_->for_ranges(dn, kPairChunk, parallel, chunk);
  if constexpr (kInterference) {
    sum_.assign(static_cast<std::size_t>(dn), 0.0f);
    for (std::int64_t t = 0; t < dn; ++t) {
      const Found& f = found_[t];
      const InsideEdge* edges = scratch_[f.thread].inside.data();
      for (std::uint32_t i = f.begin; i < f.end; ++i) {
        sum_[t] += edges[i].term_m;
        sum_[edges[i].k] += edges[i].term_k;
      }
      keys_[t] = nope_key(nb_[t], n, sum_[t]);
    }
  } else {
    for (std::int64_t t = 0; t < dn; ++t) {
      std::int64_t inter = 0;
      for (int h = 0; h < shares; ++h) inter += scratch_[static_cast<std::size_t>(h)].count[t];
      keys_[t] = star_key(nb_[t], n, inter, dist_[t]);
    }
  }
}

template void MergeLoop<NopeKey>::score_by_lists(Id, Id, Id, bool);
template void MergeLoop<NopeStarKey>::score_by_lists(Id, Id, Id, bool);

}  // namespace birkhoff::coarsen::detail
