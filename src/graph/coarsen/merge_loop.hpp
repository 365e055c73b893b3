// PRIVATE (coarsen): the greedy merge loop of NOPE and NOPE* [bai2026nope]. One class template
// over the key policy (keys.hpp); its parts live in merge_loop.cpp (the loop and one merge),
// initial_keys.cpp (the keys of the input edges) and list_scoring.cpp (a merge's new keys from
// the adjacency lists); the bitset rows of the dense phase are in dense_phase.hpp.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "birkhoff/core/memory.hpp"
#include "birkhoff/core/team.hpp"
#include "birkhoff/graph/coarsen/merge_tree.hpp"
#include "birkhoff/graph/coarsen/nope_options.hpp"
#include "birkhoff/graph/graph.hpp"
#include "birkhoff/kernels/bitset.hpp"
#include "birkhoff/kernels/reduce.hpp"
#include "graph/coarsen/adjacency.hpp"
#include "graph/coarsen/dense_phase.hpp"
#include "graph/coarsen/feature_pool.hpp"
#include "graph/coarsen/keys.hpp"
#include "graph/coarsen/queue.hpp"

namespace birkhoff::coarsen::detail {

/// NOPE: an edge {m, k} inside N(n), m < k, found in N(m) by the scoring of the pair (m, n):
/// k's position in N(n), and its terms of the common-neighbour sums of both pairs,
/// (<x_m, x_k> - <x_n, x_k>)^2 for (m, n) and (<x_m, x_k> - <x_n, x_m>)^2 for (k, n).
struct InsideEdge {
  std::uint32_t k;
  float term_m;
  float term_k;
};

/// Per-thread buffers of the scoring of one merge's new pairs.
struct Scratch {
  std::vector<std::uint64_t> common;  // AND of two bitset rows
  std::vector<std::uint32_t> count;   // NOPE*: this thread's share of |N(m) ∩ N(n)| per pair
  std::vector<InsideEdge> inside;     // NOPE: the edges found by this thread, pair by pair
};

/// Repeatedly pops the lowest (key, lo, hi) pair whose ends are both live, merges it into a new
/// node (size-weighted mean feature, union of neighbourhoods) and scores the new node's pairs;
/// older keys are never re-scored (the reference's lazy heap). The merges of one run go to
/// `out.merges` and `out.keys`; the result does not depend on the thread count.
template <class Key>
class MergeLoop {
 public:
  using Entry = typename Key::Entry;
  static constexpr bool kInterference = Key::kInterference;

  /// `num_edges`: the edges of g between distinct nodes (its self-loops are skipped).
  MergeLoop(const graph::AttributedGraph& g, std::int64_t num_edges, const NopeOptions& o);

  /// Merges until `target` nodes are live or no pair is left.
  void run(std::int64_t target, MergeTree& out);

 private:
  // ---- keys ---------------------------------------------------------------------------------

  /// NOPE*'s key of (p, q) with `common` = |N(p) ∩ N(q)| and dist = |x_p - x_q|^2.
  double star_key(Id p, Id q, std::int64_t common, float dist) const {
    return Key::key(node_[p].size, node_[q].size, node_[p].deg, node_[q].deg, common, dist);
  }
  /// The same, computing the distance.
  double star_key(Id p, Id q, std::int64_t common) const {
    return star_key(p, q, common,
                    kernels::squared_distance_pairwise(features_.row(p), features_.row(q), d_));
  }
  /// NOPE's key of (p, q) with c the common-neighbour sum.
  double nope_key(Id p, Id q, float c) const {
    return key_.key(node_[p].size, node_[q].size, sigma_[p], sigma_[q], c);
  }

  // ---- the parts ----------------------------------------------------------------------------

  /// The lists, degrees and interferences of the input, and one queue entry per input edge.
  void initialise();
  /// Merges u and v into the new node n, then scores and queues the pairs (m, n).
  void merge(Id u, Id v, Id n);
  /// Outside the dense phase: the keys of the new pairs (nb_[t], n) from the lists.
  void score_by_lists(Id u, Id v, Id n, bool parallel);
  /// Enters (or renews) the dense phase before the merge that creates `next_id`.
  void maybe_use_bitset(std::int64_t live, Id next_id);

  /// In the dense phase: the key of the new pair (nb_[t], n) from the bitset rows.
  double score_by_bits(std::int64_t t, Id n, Scratch& scratch) {
    const Id m = nb_[t];
    const std::int64_t words = bitset_.used_words();
    if constexpr (kInterference) {
      std::uint64_t* both = scratch.common.data();
      float c = 0.0f;
      if (kernels::and_into(bitset_.row(m), bitset_.row(n), both, words) > 0) {
        c = kernels::rank_squared_differences(bitset_.row(m), bitset_.row(n), both,
                                              &node_[m].list.data()->dot,
                                              &node_[n].list.data()->dot, kDotStride, words);
      }
      return nope_key(m, n, c);
    } else {
      if (t + kPrefetch < static_cast<std::int64_t>(nb_.size())) {
        prefetch_row(features_.row(nb_[t + kPrefetch]), d_);
      }
      return star_key(m, n, kernels::and_count(bitset_.row(m), bitset_.row(n), words));
    }
  }

  /// Replaces u and v by n in N(m), m = nb_[t], and updates m's live degree: lazily (n is
  /// appended, dead entries stay until the list is compacted), or exactly for NOPE in the dense
  /// phase, whose sums read the lists by rank. Only the thread that scores (m, n) touches N(m)
  /// (and prefetches it, as pairs are prefetched within a thread's chunk). The buffer never
  /// grows, so the pair loops allocate nothing: N(m) still holds u or v (or the list scan has
  /// just dropped them), and a full list drops its dead entries first. Kept out of line: both
  /// pair loops call it, and inlined into them it made the dense phase's loop run longer.
  [[gnu::noinline]] void join(std::size_t t, Id u, Id v, Id n) {
    const Id m = nb_[t];
    auto& lm = node_[m].list;
    const std::uint8_t f = from_[t];
    node_[m].deg += 1 - (f & 1) - ((f >> 1) & 1);
    if (kInterference && bitset_.active()) {
      if (f & 2) erase_id(lm, v);
      if (f & 1) erase_id(lm, u);
    } else {
      if (drop_dead_before_append(lm, node_[m].deg)) above_[m] = first_above(lm, m);
    }
    if constexpr (kInterference) {
      lm.push_back(IdDot{n, node_[n].list[t].dot});
    } else {
      lm.push_back(n);
    }
  }

  /// Before n is appended to N(m) (live degree `degree`, counting n): drops the dead entries
  /// when they are many, or when the list is full and would otherwise grow. Growing lists that
  /// still hold dead entries fragments the allocator's memory; dropping them first keeps the
  /// lists near their live size. The dead count is exact: the list holds each live neighbour
  /// once, n not yet. Returns whether it dropped them.
  bool drop_dead_before_append(std::vector<Entry>& lm, std::int64_t degree) {
    const std::size_t dead = lm.size() + 1 - static_cast<std::size_t>(degree);
    if (dead == 0) return false;
    if (lm.size() == lm.capacity() || lm.size() + 1 > 2 * static_cast<std::size_t>(degree) + 8) {
      std::erase_if(lm, [this](const Entry& e) { return !alive_[id_of(e)]; });
      return true;
    }
    return false;
  }

  // ---- tuning -------------------------------------------------------------------------------

  /// The bitset replaces the lists once L^2 <= kDenseFactor * (live edges), L live nodes.
  static constexpr std::int64_t kDenseFactor = 1024;
  /// Dead queue entries allowed beyond a quarter of the live edges before a compaction.
  static constexpr std::int64_t kHeapSlack = 16384;
  /// How many pairs ahead feature rows are prefetched in the pair loops.
  static constexpr std::int64_t kPrefetch = 6;
  /// How many entries ahead the initial scoring prefetches.
  static constexpr std::size_t kInitPrefetch = 2;
  /// A merge with this many new pairs scores them on all threads.
  static constexpr std::int64_t kParallelPairs = 32;
  /// Consecutive pairs a thread takes at a time.
  static constexpr std::int64_t kPairChunk = 16;
  /// alive_: 0 = dead, 1 = alive, kMarked = alive and in N(n) during the scoring of one merge.
  static constexpr std::uint8_t kMarked = 2;

  // ---- state --------------------------------------------------------------------------------

  const graph::AttributedGraph& g_;
  std::int64_t num_edges_;
  const NopeOptions& opt_;
  Key key_;
  std::int64_t n_;
  std::int64_t d_;
  FeaturePool features_;
  std::vector<std::uint8_t> alive_;
  std::vector<NodeRecord<Entry>, CacheLineAllocator<NodeRecord<Entry>>> node_;
  std::vector<float> sigma_;
  // The position in N(n) of each member during one merge.
  std::vector<std::uint32_t> mark_pos_;
  // Outside the dense phase: the position in N(id) of its first entry above id (the part a
  // pair's scan reads). New ids are the largest, so appends leave it alone; only dropping dead
  // entries below it moves it.
  std::vector<std::uint32_t> above_;
  // The queue's top when this merge began (see run()).
  HeapEntry next_{};
  bool has_next_ = false;
  PairQueue queue_;
  std::int64_t live_edges_ = 0;
  std::int64_t pushes_ = 0;
  // The dense phase: its memory cap in bytes, and the rows.
  std::int64_t budget_ = 0;
  BitsetRows bitset_;
  // Scratch of one merge: N(n), which of u (1) and v (2) each member came from, and NOPE's
  // <x_m, x_u>, <x_m, x_v>.
  std::vector<Id> nb_;
  std::vector<std::uint8_t> from_;
  std::vector<float> dot_u_, dot_v_;
  std::vector<double> keys_;
  std::vector<float> dist_;
  // NOPE: where the edges found by the pair t lie (scratch_[thread].inside[begin, end)), and
  // the common-neighbour sums.
  struct Found {
    std::uint32_t begin, end, thread;
  };
  std::vector<Found> found_;
  std::vector<float> sum_;
  int threads_ = 1;
  std::vector<Scratch> scratch_;
  std::unique_ptr<ThreadTeam> team_;
};

}  // namespace birkhoff::coarsen::detail
