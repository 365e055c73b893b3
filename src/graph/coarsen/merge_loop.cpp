// The merge loop's driver and one merge (see merge_loop.hpp).
#include "graph/coarsen/merge_loop.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "birkhoff/core/system.hpp"

namespace birkhoff::coarsen::detail {

template <class Key>
MergeLoop<Key>::MergeLoop(const graph::AttributedGraph& g, std::int64_t num_edges,
                          const NopeOptions& o)
    : g_(g),
      num_edges_(num_edges),
      opt_(o),
      key_(o),
      n_(g.num_nodes),
      d_(g.dim()),
      features_(g.x, g.num_nodes) {
  threads_ = resolve_threads(o.num_threads);
  scratch_.resize(static_cast<std::size_t>(threads_));
  budget_ = o.bitset_bytes;
  if (budget_ < 0) {
    // An eighth of the input arrays, within [4, 64] MiB: where the bitset would be larger, its
    // first rows are too long for AND + popcount to beat the lists.
    const std::int64_t input = n_ * d_ * static_cast<std::int64_t>(sizeof(float)) +
                               num_edges * 2 * static_cast<std::int64_t>(sizeof(std::int64_t));
    budget_ = std::clamp<std::int64_t>(input / 8, std::int64_t{4} << 20, std::int64_t{64} << 20);
  }
}

template <class Key>
void MergeLoop<Key>::run(std::int64_t target, MergeTree& out) {
  const std::int64_t ids = 2 * n_;
  alive_.assign(static_cast<std::size_t>(ids), 0);
  std::fill(alive_.begin(), alive_.begin() + n_, 1);
  node_.resize(static_cast<std::size_t>(ids));
  for (std::int64_t i = 0; i < n_; ++i) node_[i].size = 1.0f;
  if constexpr (kInterference) sigma_.assign(static_cast<std::size_t>(ids), 0.0f);
  mark_pos_.assign(static_cast<std::size_t>(ids), 0);
  above_.assign(static_cast<std::size_t>(ids), 0);
  initialise();
  // The merges' threads; started after the OpenMP start-up, gone before the output build.
  team_ = std::make_unique<ThreadTeam>(threads_);

  const std::int64_t needed = n_ - target;
  out.merges.reserve(static_cast<std::size_t>(3 * std::max<std::int64_t>(needed, 0)));
  out.keys.reserve(static_cast<std::size_t>(std::max<std::int64_t>(needed, 0)));
  std::int64_t live = n_;
  std::int64_t k = 0;
  constexpr std::int64_t kReportEvery = 4096;
  report_progress(opt_.progress, "coarsen", 0, needed);
  while (live > target) {
    HeapEntry top{};
    if (!queue_.pop_live(top, LiveIds{alive_.data()}, *team_)) break;
    const Id n = static_cast<Id>(n_ + k);
    // The entry now at the top is most often the next merge: its records are fetched during
    // this one (its lists and rows once they are in cache, in merge()).
    const HeapEntry* next = queue_.peek();
    has_next_ = next != nullptr;
    if (has_next_) {
      next_ = *next;
      __builtin_prefetch(&node_[next_.lo]);
      __builtin_prefetch(&node_[next_.hi]);
      features_.prefetch_slot(next_.lo);
      features_.prefetch_slot(next_.hi);
    }
    maybe_use_bitset(live, n);
    merge(top.lo, top.hi, n);
    out.merges.push_back(n);
    out.merges.push_back(top.lo);
    out.merges.push_back(top.hi);
    out.keys.push_back(top.key);
    ++k;
    --live;
    // Each live edge has one entry; the dead ones are dropped once they are a quarter of that.
    if (queue_.size() > static_cast<std::size_t>(live_edges_ + live_edges_ / 4 + kHeapSlack)) {
      queue_.compact(LiveIds{alive_.data()}, *team_);
      release_free_memory();
    }
    if (k % kReportEvery == 0) report_progress(opt_.progress, "coarsen", k, needed);
  }
  report_progress(opt_.progress, "coarsen", k, needed);
  team_.reset();
  out.reached_target = live <= target;
  out.heap_pushes = pushes_;
}

template <class Key>
void MergeLoop<Key>::merge(Id u, Id v, Id n) {
  // Size and size-weighted mean feature, in float32: two products, one sum, one division.
  const float su = node_[u].size;
  const float sv = node_[v].size;
  const float sn = su + sv;
  node_[n].size = sn;
  alive_[n] = 1;
  {
    const float* xu = features_.row(u);
    const float* xv = features_.row(v);
    float* xn = features_.allocate(n);
    for (std::int64_t j = 0; j < d_; ++j) xn[j] = (xu[j] * su + xv[j] * sv) / sn;
  }
  features_.release(u);
  features_.release(v);

  // N(n) = (N(u) ∪ N(v)) minus {u, v}, by a linear merge of the two sorted lists that skips
  // dead entries and remembers which side each neighbour came from.
  const auto& lu = node_[u].list;
  const auto& lv = node_[v].list;
  nb_.clear();
  from_.clear();
  if constexpr (kInterference) {
    dot_u_.clear();
    dot_v_.clear();
  }
  std::size_t i = 0, j = 0;
  while (i < lu.size() || j < lv.size()) {
    const Id a = i < lu.size() ? id_of(lu[i]) : std::numeric_limits<Id>::max();
    const Id b = j < lv.size() ? id_of(lv[j]) : std::numeric_limits<Id>::max();
    const Id m = std::min(a, b);
    const bool in_u = a == m;
    const bool in_v = b == m;
    float du = 0.0f, dv = 0.0f;
    if constexpr (kInterference) {
      if (in_u) du = lu[i].dot;
      if (in_v) dv = lv[j].dot;
    }
    if (in_u) ++i;
    if (in_v) ++j;
    if (m == u || m == v || !alive_[m]) continue;
    // The first pairs' records: the pair loops ask for those of pair t + 8 at pair t.
    if (nb_.size() < 8) {
      __builtin_prefetch(&node_[m]);
      features_.prefetch_slot(m);
    }
    nb_.push_back(m);
    from_.push_back(static_cast<std::uint8_t>((in_u ? 1 : 0) | (in_v ? 2 : 0)));
    if constexpr (kInterference) {
      dot_u_.push_back(du);
      dot_v_.push_back(dv);
    }
  }
  const std::size_t dn = nb_.size();

  live_edges_ -= std::int64_t{node_[u].deg} + node_[v].deg - 1;
  alive_[u] = 0;
  alive_[v] = 0;
  // Retire u and v; N(n) reuses the larger of their buffers (fewer allocations, and the
  // allocator's free lists do not fill with blocks of dead lists).
  auto& ln = node_[n].list;
  const bool keep_u = node_[u].list.capacity() >= node_[v].list.capacity();
  ln = std::move(keep_u ? node_[u].list : node_[v].list);
  std::vector<Entry>().swap(node_[u].list);
  std::vector<Entry>().swap(node_[v].list);
  ln.resize(dn);
  const auto dn_signed = static_cast<std::int64_t>(dn);
  // A merge with many new pairs splits its per-pair work over the threads (each pair t reads
  // the shared state and writes only its own m's state and list); every value is computed the
  // same way either way.
  const bool parallel = dn_signed >= kParallelPairs;
  if constexpr (kInterference) {
    // sigma_n from scratch; sigma_m updated as the reference does: the terms of u and v leave,
    // the term of n comes in. The dot products read dn feature rows in random order.
    const float* xn = features_.row(n);
    // Each thread prefetches the rows of its own chunk only (see score_by_lists).
    auto dot = [&](std::int64_t t, std::int64_t last) {
      if (t + 2 * kPrefetch < last) {
        const Id ahead = nb_[t + 2 * kPrefetch];
        features_.prefetch_slot(ahead);
        __builtin_prefetch(&sigma_[ahead]);
      }
      if (t + kPrefetch < last) prefetch_row(features_.row(nb_[t + kPrefetch]), d_);
      const Id m = nb_[t];
      const float dmn = kernels::dot_widened(features_.row(m), xn, d_);
      ln[t] = IdDot{m, dmn};
      float upd = dmn * dmn;
      if (from_[t] & 1) upd = upd - dot_u_[t] * dot_u_[t];
      if (from_[t] & 2) upd = upd - dot_v_[t] * dot_v_[t];
      float s = sigma_[m] + upd;
      if (opt_.clamp_interference && s < 0.0f) s = 0.0f;
      sigma_[m] = s;
      alive_[m] = kMarked;
      mark_pos_[m] = static_cast<std::uint32_t>(t);
    };
    auto chunk = [&](int, std::int64_t first, std::int64_t last) {
      for (std::int64_t t = first; t < std::min(last, first + 2 * kPrefetch); ++t) {
        features_.prefetch_slot(nb_[t]);
        __builtin_prefetch(&sigma_[nb_[t]]);
      }
      for (std::int64_t t = first; t < std::min(last, first + kPrefetch); ++t) {
        prefetch_row(features_.row(nb_[t]), d_);
      }
      for (std::int64_t t = first; t < last; ++t) dot(t, last);
    };
    team_->for_ranges(dn_signed, kPairChunk, parallel, chunk);
    sigma_[n] = sum_dot_squares(ln.data(), dn_signed);
  } else {
    for (std::size_t t = 0; t < dn; ++t) {
      ln[t] = nb_[t];
      alive_[nb_[t]] = kMarked;
      mark_pos_[nb_[t]] = static_cast<std::uint32_t>(t);
    }
  }
  node_[n].deg = static_cast<std::int32_t>(dn);
  above_[n] = static_cast<std::uint32_t>(dn);
  if (has_next_ && alive_[next_.lo] != 0 && alive_[next_.hi] != 0) {
    for (const Id x : {next_.lo, next_.hi}) {
      const char* p = reinterpret_cast<const char*>(node_[x].list.data());
      __builtin_prefetch(p);
      __builtin_prefetch(p + 64);
      prefetch_row(features_.row(x), d_);
    }
  }
  live_edges_ += static_cast<std::int64_t>(dn);
  if (bitset_.active()) bitset_.merge(u, v, n, nb_);

  // Score the new pairs (m, n), m < n, with the updated state; nothing else is re-scored.
  // The thread of each pair also replaces u and v by n in N(m) (join()), while N(m) is in
  // cache: before the key in the dense phase, after the list scan outside it.
  keys_.resize(dn);
  if (bitset_.active()) {
    auto pair = [&](int thread, std::int64_t t) {
      join(static_cast<std::size_t>(t), u, v, n);
      keys_[t] = score_by_bits(t, n, scratch_[static_cast<std::size_t>(thread)]);
    };
    team_->for_each(dn_signed, kPairChunk, parallel, pair);
  } else {
    score_by_lists(u, v, n, parallel);
  }
  for (std::size_t t = 0; t < dn; ++t) {
    const Id m = nb_[t];
    queue_.push(HeapEntry{keys_[t], m, n});
    alive_[m] = 1;
  }
  pushes_ += static_cast<std::int64_t>(dn);
}

template <class Key>
void MergeLoop<Key>::maybe_use_bitset(std::int64_t live, Id next_id) {
  // Enter when the bitset is cheaper than the lists (the rows are short against the degrees)
  // and fits in the budget; renew when its slots are used up.
  if (bitset_.active()) {
    if (!bitset_.full()) return;
  } else if (budget_ <= 0 || live * live > kDenseFactor * live_edges_) {
    return;
  }
  const std::int64_t words = BitsetRows::words_for(live);
  if (!bitset_.active() &&
      live * words * static_cast<std::int64_t>(sizeof(std::uint64_t)) > budget_) {
    return;
  }
  bitset_.release();
  std::vector<Id> ids;
  ids.reserve(static_cast<std::size_t>(live));
  for (Id id = 0; id < next_id; ++id) {
    if (alive_[id]) ids.push_back(id);
  }
  features_.compact(ids);
  release_free_memory();
  bitset_.build(ids, words, 2 * n_, [this](Id id, const auto& set) {
    // NOPE's sums read the lists by rank of the bits: they must hold exactly the live ones.
    if constexpr (kInterference) {
      std::erase_if(node_[id].list, [this](const Entry& e) { return !alive_[id_of(e)]; });
    }
    for (const Entry& e : node_[id].list) {
      const Id q = id_of(e);
      if (alive_[q]) set(q);
    }
  });
  for (Scratch& sc : scratch_) sc.common.assign(static_cast<std::size_t>(words), 0);
}

// The members defined here, for both keys (a whole-class instantiation would also instantiate
// the other key's helpers).
template MergeLoop<NopeKey>::MergeLoop(const graph::AttributedGraph&, std::int64_t,
                                       const NopeOptions&);
template MergeLoop<NopeStarKey>::MergeLoop(const graph::AttributedGraph&, std::int64_t,
                                           const NopeOptions&);
template void MergeLoop<NopeKey>::run(std::int64_t, MergeTree&);
template void MergeLoop<NopeStarKey>::run(std::int64_t, MergeTree&);

}  // namespace birkhoff::coarsen::detail
