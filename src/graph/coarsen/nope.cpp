#include "birkhoff/graph/coarsen/nope.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "birkhoff/core/memory.hpp"
#include "birkhoff/core/system.hpp"
#include "birkhoff/core/team.hpp"
#include "birkhoff/kernels/bitset.hpp"
#include "birkhoff/kernels/reduce.hpp"
#include "graph/coarsen/build.hpp"
#include "graph/coarsen/queue.hpp"

namespace birkhoff::coarsen {
namespace {

using detail::HeapEntry;
using detail::Id;
using detail::LiveIds;
using detail::PairQueue;

/// NOPE keeps <x_i, x_j> next to each adjacency entry (design note §5.3): vectors never change
/// for a given id, so the value stays right while both ends live.
struct IdDot {
  Id id;
  float dot;
};
inline Id id_of(Id e) { return e; }
inline Id id_of(const IdDot& e) { return e.id; }
/// Floats from one entry's dot to the next one's.
constexpr std::int64_t kDotStride = sizeof(IdDot) / sizeof(float);

/// sum_t e[t].dot^2 in NumPy's pairwise float32 order (NOPE's interference sigma).
inline float sum_dot_squares(const IdDot* e, std::int64_t n) {
  return n == 0 ? 0.0f : kernels::sum_squares_pairwise(&e->dot, n, kDotStride);
}

/// Feature rows: the caller's matrix for original ids, a block pool with a free list for merged
/// ids. Live merged nodes hold at least two originals each, so at most N/2 pool rows are in use.
/// The blocks start on a cache line, so that a row of D = 128 takes eight lines, not nine (the
/// allocator's large blocks start 16 bytes past a page).
class FeatureStore {
 public:
  FeatureStore(MatrixView<const float> x, std::int64_t n)
      : x_(x), n_(n), d_(x.cols), slot_of_(static_cast<std::size_t>(n)) {}

  const float* row(Id id) const {
    if (id < n_) return x_.row(id);
    const std::uint32_t s = slot_of_[id - n_];
    return blocks_[s / kBlockRows].data() + static_cast<std::int64_t>(s % kBlockRows) * d_;
  }
  float* allocate(Id id) {
    std::uint32_t s;
    if (!free_.empty()) {
      s = free_.back();
      free_.pop_back();
    } else {
      s = next_++;
      if (s / kBlockRows >= blocks_.size()) {
        blocks_.emplace_back(static_cast<std::size_t>(kBlockRows * d_));
      }
    }
    slot_of_[id - n_] = s;
    return blocks_[s / kBlockRows].data() + static_cast<std::int64_t>(s % kBlockRows) * d_;
  }
  void prefetch_slot(Id id) const {
    if (id >= n_) __builtin_prefetch(&slot_of_[id - n_]);
  }
  void release(Id id) {
    if (id >= n_) free_.push_back(slot_of_[id - n_]);
  }

  /// Moves the rows of the live merged ids (ascending, each alive[id] != 0) to the lowest
  /// slots and frees the blocks above them, so the pool's memory follows the live count.
  void compact(std::span<const Id> live) {
    std::vector<Id> merged;
    for (const Id id : live) {
      if (id >= n_) merged.push_back(id);
    }
    std::sort(merged.begin(), merged.end(),
              [this](Id a, Id b) { return slot_of_[a - n_] < slot_of_[b - n_]; });
    std::uint32_t next = 0;
    for (const Id id : merged) {
      // Slots only move down and are taken in ascending order: no row is overwritten unread.
      const std::uint32_t from = slot_of_[id - n_];
      if (from != next) std::memcpy(slot(next), slot(from), static_cast<std::size_t>(d_) * 4);
      slot_of_[id - n_] = next++;
    }
    blocks_.resize((next + kBlockRows - 1) / kBlockRows);
    blocks_.shrink_to_fit();
    free_.clear();
    free_.shrink_to_fit();
    next_ = next;
  }

 private:
  float* slot(std::uint32_t s) {
    return blocks_[s / kBlockRows].data() + static_cast<std::int64_t>(s % kBlockRows) * d_;
  }

  static constexpr std::uint32_t kBlockRows = 1024;
  MatrixView<const float> x_;
  std::int64_t n_;
  std::int64_t d_;
  std::vector<std::vector<float, CacheLineAllocator<float>>> blocks_;
  std::vector<std::uint32_t> free_;
  std::vector<std::uint32_t> slot_of_;
  std::uint32_t next_ = 0;
};

/// Asks for the cache lines of a feature row ahead of its use (rows are read in random order):
/// every line the row touches. The caller's rows need not start on a line (a 512-byte row at
/// 16 bytes past one spans nine lines, of which stepping by 64 bytes from the row's start
/// reaches eight).
inline void prefetch_row(const float* row, std::int64_t d) {
  const auto first = reinterpret_cast<std::uintptr_t>(row) & ~std::uintptr_t{63};
  const auto last = reinterpret_cast<std::uintptr_t>(row + d);
  for (std::uintptr_t p = first; p < last; p += 64) {
    __builtin_prefetch(reinterpret_cast<const void*>(p));
  }
}

/// Calls f(i, j) for every id common to the sorted lists a and b (no repeats inside a list),
/// in ascending id order: a linear merge, or binary searches of the shorter list's ids in the
/// longer one when that is cheaper.
template <class A, class B, class F>
void for_common(const A* a, std::size_t na, const B* b, std::size_t nb, const F& f) {
  if (na == 0 || nb == 0) return;
  const bool swap = na > nb;
  const std::size_t ns = swap ? nb : na;
  const std::size_t nl = swap ? na : nb;
  if (ns * static_cast<std::size_t>(std::bit_width(nl)) < ns + nl) {
    std::size_t lo = 0;
    for (std::size_t s = 0; s < ns; ++s) {
      const Id key = swap ? id_of(b[s]) : id_of(a[s]);
      std::size_t first = lo, count = nl - lo;
      while (count > 0) {
        const std::size_t step = count / 2;
        const Id probe = swap ? id_of(a[first + step]) : id_of(b[first + step]);
        if (probe < key) {
          first += step + 1;
          count -= step + 1;
        } else {
          count = step;
        }
      }
      lo = first;
      if (first < nl && (swap ? id_of(a[first]) : id_of(b[first])) == key) {
        if (swap) {
          f(first, s);
        } else {
          f(s, first);
        }
      }
    }
    return;
  }
  std::size_t i = 0, j = 0;
  while (i < na && j < nb) {
    const Id x = id_of(a[i]);
    const Id y = id_of(b[j]);
    if (x < y) {
      ++i;
    } else if (y < x) {
      ++j;
    } else {
      f(i, j);
      ++i;
      ++j;
    }
  }
}

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

template <bool kNope>
class Loop {
 public:
  using Entry = std::conditional_t<kNope, IdDot, Id>;

  Loop(const graph::AttributedGraph& g, const NopeOptions& o)
      : g_(g), opt_(o), n_(g.num_nodes), d_(g.dim()), features_(g.x, g.num_nodes) {
    threads_ = resolve_threads(o.num_threads);
    scratch_.resize(static_cast<std::size_t>(threads_));
    budget_ = o.bitset_bytes;
    if (budget_ < 0) {
      const std::int64_t input =
          n_ * d_ * static_cast<std::int64_t>(sizeof(float)) +
          g.num_edges() * 2 * static_cast<std::int64_t>(sizeof(std::int64_t));
      // An eighth of the input, within [4, 64] MiB. Where the bitset would be larger, the rows
      // it starts with are too long: a pair costs more by AND + popcount over them than by the
      // lists. NOPE* to 0.01 against the budgets before (a quarter, at least 32 MiB), two
      // threads, interleaved: at N = 10^6 (64 MiB against 141 MiB) 28.3-31.0 s against
      // 29.9-31.9 s; arxiv-sized (12 against 32 MiB) and 10^5 (8 against 32) 0-10 % faster.
      budget_ = std::clamp<std::int64_t>(input / 8, std::int64_t{4} << 20, std::int64_t{64} << 20);
    }
  }

  void run(std::int64_t target, Coarsening& out) {
    const std::int64_t ids = 2 * n_;
    alive_.assign(static_cast<std::size_t>(ids), 0);
    std::fill(alive_.begin(), alive_.begin() + n_, 1);
    node_.resize(static_cast<std::size_t>(ids));
    for (std::int64_t i = 0; i < n_; ++i) node_[i].size = 1.0f;
    if constexpr (kNope) sigma_.assign(static_cast<std::size_t>(ids), 0.0f);
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
      // The entry now at the top is most often the next merge: its records are fetched
      // during this one (its lists and rows once they are in cache, in merge()).
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

 private:
  // ---- scores -------------------------------------------------------------------------------

  /// NOPE* key: ((w * max(d_p + d_q - inter - 2, 0)) * |x_p - x_q|^2), all float32.
  double star_key(Id p, Id q, std::int64_t inter) const {
    return star_key(p, q, inter,
                    kernels::squared_distance_pairwise(features_.row(p), features_.row(q), d_));
  }
  /// The same with dist = |x_p - x_q|^2 given.
  double star_key(Id p, Id q, std::int64_t inter, float dist) const {
    const float sp = node_[p].size;
    const float sq = node_[q].size;
    const float w = (sp * sq) / ((sp + sq) + 1e-8f);
    const std::int64_t touched =
        std::max<std::int64_t>(std::int64_t{node_[p].deg} + node_[q].deg - inter - 2, 0);
    return static_cast<double>((w * static_cast<float>(touched)) * dist);
  }

  /// NOPE key: w * (sigma_p + sigma_q + c), with the precision of opt_.key_precision.
  double nope_key(Id p, Id q, float c) const {
    const float sp = node_[p].size;
    const float sq = node_[q].size;
    const float bracket = (sigma_[p] + sigma_[q]) + c;
    if (opt_.key_precision == KeyPrecision::NumPy1) {
      const double w = static_cast<double>(sp * sq) / (static_cast<double>(sp + sq) + 1e-8);
      return w * static_cast<double>(bracket);
    }
    const float w = (sp * sq) / ((sp + sq) + 1e-8f);
    return static_cast<double>(w * bracket);
  }

  // ---- initialisation ----------------------------------------------------------------------

  void initialise() {
    const int threads = resolve_threads(opt_.num_threads);
    const std::int64_t n = n_;
    const bool parallel = (n + g_.num_edges()) * d_ > (1 << 16);
#pragma omp parallel for schedule(dynamic, 256) num_threads(threads) if (parallel)
    for (std::int64_t i = 0; i < n; ++i) {
      const auto row = g_.neighbors(i);
      auto& list = node_[i].list;
      list.resize(row.size());
      for (std::size_t t = 0; t < row.size(); ++t) {
        if (kNope && t + kInitPrefetch < row.size()) {
          prefetch_row(features_.row(static_cast<Id>(row[t + kInitPrefetch])), d_);
        }
        const Id j = static_cast<Id>(row[t]);
        if constexpr (kNope) {
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
      if constexpr (kNope) {
        sigma_[i] = sum_dot_squares(list.data(), static_cast<std::int64_t>(list.size()));
      }
    }
    // One heap entry per undirected edge (p, q), p < q, at a fixed offset: thread-independent.
    std::vector<std::int64_t> offset(static_cast<std::size_t>(n) + 1, 0);
    for (std::int64_t p = 0; p < n; ++p) {
      const auto row = g_.neighbors(p);
      const auto first = std::upper_bound(row.begin(), row.end(), static_cast<std::int32_t>(p));
      offset[p + 1] = offset[p] + (row.end() - first);
    }
    // Room for the most entries the queue holds between two compactions (see run()): a
    // doubling would hold the old and the new buffer at once, at the start of the merges.
    auto& pool = queue_.pool(static_cast<std::size_t>(offset[n] + offset[n] / 4 + kHeapSlack));
    pool.resize(static_cast<std::size_t>(offset[n]));
    HeapEntry* heap = pool.data();
#pragma omp parallel num_threads(threads) if (parallel)
    {
      // mark[k] = (p + 1) << 32 | (position of k in N(p)) for the members of N(p): a scan of
      // N(q) against them finds N(p) ∩ N(q) in ascending id order, as the linear merge does.
      std::vector<std::uint64_t> mark(static_cast<std::size_t>(n), 0);
#pragma omp for schedule(dynamic, 256)
      for (std::int64_t p = 0; p < n; ++p) {
        const auto& lp = node_[p].list;
        const std::uint64_t stamp = static_cast<std::uint64_t>(p + 1) << 32;
        bool marked = false;
        std::int64_t at = offset[p];
        for (std::size_t at_p = 0; at_p < lp.size(); ++at_p) {
          // The feature row and the list of the pair two entries ahead: rows are read in random
          // order, from memory at N = 10^6 (initial keys 1.1-1.4 s there against 1.7 s).
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
              if constexpr (kNope) {
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
            for_common(lp.data(), lp.size(), lq.data(), lq.size(),
                       [&](std::size_t a, std::size_t b) {
                         ++inter;
                         if constexpr (kNope) {
                           const float diff = lp[a].dot - lq[b].dot;
                           c += diff * diff;
                         }
                       });
          }
          double key;
          if constexpr (kNope) {
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

  // ---- one merge ---------------------------------------------------------------------------

  void merge(Id u, Id v, Id n) {
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

    // N(n) = (N(u) ∪ N(v)) minus {u, v}, by a linear merge of the two sorted lists that
    // skips dead entries and remembers which side each neighbour came from.
    const auto& lu = node_[u].list;
    const auto& lv = node_[v].list;
    nb_.clear();
    from_.clear();
    if constexpr (kNope) {
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
      if constexpr (kNope) {
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
      if constexpr (kNope) {
        dot_u_.push_back(du);
        dot_v_.push_back(dv);
      }
    }
    const std::size_t dn = nb_.size();

    // Retire u and v; their lists are no longer needed.
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
    if constexpr (kNope) {
      // sigma_n from scratch; sigma_m updated as the reference does (design note §3.1). The
      // dot products read dn feature rows in random order.
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
    if (dense_) update_bitset(u, v, n);

    // Score the new pairs (m, n), m < n, with the updated state; nothing else is re-scored.
    // The thread of each pair also replaces u and v by n in N(m) (join()), while N(m) is in
    // cache: before the key in the dense phase, after the list scan outside it.
    keys_.resize(dn);
    if (dense_) {
      auto pair = [&](int thread, std::int64_t t) {
        join(static_cast<std::size_t>(t), u, v, n);
        keys_[t] = score(t, n, scratch_[static_cast<std::size_t>(thread)]);
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

  /// Replaces u and v by n in N(m), m = nb_[t], and updates m's live degree: lazily (n is
  /// appended, dead entries stay until the list is compacted), or exactly for NOPE in the dense
  /// phase, whose sums read the lists by rank. Only the thread that scores (m, n) touches N(m)
  /// (and prefetches it, as pairs are prefetched within a thread's chunk). The buffer never
  /// grows, so the pair loops allocate nothing: N(m) still holds u or v (or the list scan has
  /// just dropped them), and a full list drops its dead entries first.
  void join(std::size_t t, Id u, Id v, Id n) {
    const Id m = nb_[t];
    auto& lm = node_[m].list;
    const std::uint8_t f = from_[t];
    node_[m].deg += 1 - (f & 1) - ((f >> 1) & 1);
    if (kNope && dense_) {
      if (f & 2) erase_id(lm, v);
      if (f & 1) erase_id(lm, u);
    } else {
      if (drop_dead_before_append(lm, node_[m].deg)) {
        above_[m] = static_cast<std::uint32_t>(
            std::upper_bound(lm.begin(), lm.end(), m,
                             [](Id key, const Entry& e) { return key < id_of(e); }) -
            lm.begin());
      }
    }
    if constexpr (kNope) {
      lm.push_back(IdDot{n, node_[n].list[t].dot});
    } else {
      lm.push_back(n);
    }
  }

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
  void score_by_lists(Id u, Id v, Id n, bool parallel) {
    const auto dn = static_cast<std::int64_t>(nb_.size());
    const int shares = parallel ? team_->size() : 1;
    for (int h = 0; h < shares; ++h) {
      Scratch& sc = scratch_[static_cast<std::size_t>(h)];
      if constexpr (kNope) {
        sc.inside.clear();
      } else {
        sc.count.assign(static_cast<std::size_t>(dn), 0);
      }
    }
    if constexpr (kNope) {
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
        if constexpr (!kNope) features_.prefetch_slot(ahead);
      }
      if (t + 3 < last) {
        // The whole list up to 1 KiB (the scan's part alone, from above_, measured the same).
        // The pair is in this thread's chunk, so no other thread edits that list.
        const auto& ahead = node_[nb_[t + 3]].list;
        const char* p = reinterpret_cast<const char*>(ahead.data());
        const std::size_t bytes = std::min<std::size_t>(ahead.size() * sizeof(Entry), 1024);
        for (std::size_t b = 0; b < bytes; b += 64) __builtin_prefetch(p + b);
      }
      const Id m = nb_[t];
      if constexpr (!kNope) {
        if (t + kPrefetch < last) prefetch_row(features_.row(nb_[t + kPrefetch]), d_);
        dist_[t] = kernels::squared_distance_pairwise(features_.row(m), xn, d_);
      }
      std::uint32_t* count = sc.count.data();
      float dot_m = 0.0f;
      if constexpr (kNope) {
        dot_m = ln[t].dot;
        found_[t] = Found{static_cast<std::uint32_t>(sc.inside.size()), 0,
                          static_cast<std::uint32_t>(thread)};
      }
      // The edge {m, k} with k = nb_[a] and N(m)'s entry e for k.
      const auto edge = [&](std::uint32_t a, const Entry& e) {
        if constexpr (kNope) {
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
          // to the first dead entry (0.7 % of the entries are dead) nothing is written, so the
          // list's lines stay clean and are not written back to memory.
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
          for_common(nb_.data() + t + 1, rest, lm.data() + first, above,
                     [&](std::size_t a, std::size_t b) {
                       ++inside;
                       edge(static_cast<std::uint32_t>(t + 1 + static_cast<std::int64_t>(a)),
                            lm[first + b]);
                     });
        }
      }
      if constexpr (kNope) {
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
        if constexpr (!kNope) features_.prefetch_slot(nb_[t]);
      }
      for (std::int64_t t = first; t < std::min(last, first + 3); ++t) {
        const Id m = nb_[t];
        const char* p = reinterpret_cast<const char*>(node_[m].list.data() + above_[m]);
        __builtin_prefetch(p);
        __builtin_prefetch(p + 64);
      }
      if constexpr (!kNope) {
        for (std::int64_t t = first; t < std::min(last, first + kPrefetch); ++t) {
          prefetch_row(features_.row(nb_[t]), d_);
        }
      }
      for (std::int64_t t = first; t < last; ++t) pair(thread, t, last);
    };
    team_->for_ranges(dn, kPairChunk, parallel, chunk);
    if constexpr (kNope) {
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

  /// The key of the new pair (nb_[t], n): from the bitset rows in the dense phase, else (NOPE)
  /// from the lists.
  double score(std::int64_t t, Id n, Scratch& scratch) {
    if constexpr (kNope) {
      return nope_score(t, n, scratch);
    } else {
      if (t + kPrefetch < static_cast<std::int64_t>(nb_.size())) {
        prefetch_row(features_.row(nb_[t + kPrefetch]), d_);
      }
      const std::int64_t words = (static_cast<std::int64_t>(next_slot_) + 63) / 64;
      return star_key(nb_[t], n, kernels::and_count(row(nb_[t]), row(n), words));
    }
  }

  /// NOPE's key of the pair (nb_[t], n) in the dense phase.
  double nope_score(std::int64_t t, Id n, Scratch& scratch) {
    const Id m = nb_[t];
    const std::int64_t words = (static_cast<std::int64_t>(next_slot_) + 63) / 64;
    std::uint64_t* both = scratch.common.data();
    float c = 0.0f;
    if (kernels::and_into(row(m), row(n), both, words) > 0) {
      c = kernels::rank_squared_differences(row(m), row(n), both, &node_[m].list.data()->dot,
                                            &node_[n].list.data()->dot, kDotStride, words);
    }
    return nope_key(m, n, c);
  }

  // ---- dense phase: bitset adjacency ---------------------------------------------------------
  //
  // Late in a run the coarse graph is dense (hundreds of neighbours per super-node) and the
  // list scans dominate. Then every live node gets a slot, assigned in ascending id order, and a
  // row of bits over the slots holding its live neighbours; a new node takes the next slot, so
  // slot order stays id order. |N(m) ∩ N(n)| is a popcount of two ANDed rows. When the slots
  // run out the rows are rebuilt for the live nodes (geometric: each build has room for L / 8
  // more merges, after which L has shrunk by an eighth). The rows span the slots taken so far,
  // so a small headroom keeps them near L bits; a rebuild costs about what L / 8 merges spend
  // in popcounts. Against L / 2 of headroom: 5 % fewer instructions on the arxiv-sized graph.

  static std::int64_t bitset_words(std::int64_t live) {
    const std::int64_t slots = live + std::max<std::int64_t>(live / 8, 512);
    return (slots + 511) / 512 * 8;
  }

  std::uint64_t* row(Id id) {
    return bits_.data() + static_cast<std::int64_t>(row_of_[id]) * words_;
  }

  /// Enters (or renews) the dense phase before the merge that creates `next_id`, when the
  /// bitset is cheaper than the lists (L^2 <= kDenseFactor * live edges, i.e. the rows are
  /// short against the degrees) and fits in the budget.
  void maybe_use_bitset(std::int64_t live, Id next_id) {
    if (dense_) {
      if (next_slot_ < slot_cap_) return;
    } else if (budget_ <= 0 || live * live > kDenseFactor * live_edges_) {
      return;
    }
    const std::int64_t words = bitset_words(live);
    if (!dense_ && live * words * static_cast<std::int64_t>(sizeof(std::uint64_t)) > budget_) {
      return;
    }
    std::vector<std::uint64_t>().swap(bits_);
    std::vector<Id> ids;
    ids.reserve(static_cast<std::size_t>(live));
    for (Id id = 0; id < next_id; ++id) {
      if (alive_[id]) ids.push_back(id);
    }
    features_.compact(ids);
    release_free_memory();
    bits_.assign(static_cast<std::size_t>(live * words), 0);
    words_ = words;
    slot_cap_ = static_cast<std::uint32_t>(words * 64);
    if (!dense_) {
      slot_.assign(static_cast<std::size_t>(2 * n_), 0);
      row_of_.assign(static_cast<std::size_t>(2 * n_), 0);
    }
    for (Scratch& sc : scratch_) sc.common.assign(static_cast<std::size_t>(words), 0);
    std::uint32_t s = 0;
    for (const Id id : ids) {
      slot_[id] = s;
      row_of_[id] = s;
      ++s;
    }
    for (const Id id : ids) {
      std::uint64_t* r = row(id);
      if constexpr (kNope) {
        std::erase_if(node_[id].list, [this](const Entry& e) { return !alive_[id_of(e)]; });
      }
      for (const Entry& e : node_[id].list) {
        const Id q = id_of(e);
        if (alive_[q]) r[slot_[q] / 64] |= std::uint64_t{1} << (slot_[q] % 64);
      }
    }
    next_slot_ = s;
    dense_ = true;
  }

  /// After merging u and v into n (u, v dead, nb_ = N(n)): n takes u's row and the next slot.
  void update_bitset(Id u, Id v, Id n) {
    const std::uint32_t su = slot_[u], sv = slot_[v], sn = next_slot_++;
    slot_[n] = sn;
    row_of_[n] = row_of_[u];
    std::uint64_t* rn = row(n);
    const std::uint64_t* rv = row(v);
    const std::int64_t words = (static_cast<std::int64_t>(next_slot_) + 63) / 64;
    for (std::int64_t w = 0; w < words; ++w) rn[w] |= rv[w];
    const auto clear = [](std::uint64_t* r, std::uint32_t b) {
      r[b / 64] &= ~(std::uint64_t{1} << (b % 64));
    };
    clear(rn, su);
    clear(rn, sv);
    for (const Id m : nb_) {
      std::uint64_t* rm = row(m);
      clear(rm, su);
      clear(rm, sv);
      rm[sn / 64] |= std::uint64_t{1} << (sn % 64);
    }
  }

  /// Before n is appended to N(m) (live degree `degree`, counting n): drops the dead entries
  /// when they are many, or when the list is full and would otherwise grow. Growing lists that
  /// still hold dead entries is what fragments the allocator's memory (at N = 10^6, 215 MB of
  /// free blocks against 110 MB in use); dropping them first keeps the lists near their live
  /// size. The dead count is exact: the list holds each live neighbour once, n not yet.
  /// Returns whether it dropped them.
  bool drop_dead_before_append(std::vector<Entry>& lm, std::int64_t degree) {
    const std::size_t dead = lm.size() + 1 - static_cast<std::size_t>(degree);
    if (dead == 0) return false;
    if (lm.size() == lm.capacity() || lm.size() + 1 > 2 * static_cast<std::size_t>(degree) + 8) {
      std::erase_if(lm, [this](const Entry& e) { return !alive_[id_of(e)]; });
      return true;
    }
    return false;
  }

  /// Removes id from the sorted list (it must be there).
  static void erase_id(std::vector<Entry>& list, Id id) {
    const auto at = std::lower_bound(list.begin(), list.end(), id,
                                     [](const Entry& e, Id key) { return id_of(e) < key; });
    list.erase(at);
  }

  const graph::AttributedGraph& g_;
  const NopeOptions& opt_;
  std::int64_t n_;
  std::int64_t d_;
  FeatureStore features_;
  /// 0 = dead, 1 = alive, kMarked = alive and in N(n) during the scoring of one merge.
  static constexpr std::uint8_t kMarked = 2;
  std::vector<std::uint8_t> alive_;
  /// What a merge reads of each node it touches, in one 32-byte record within one cache line:
  /// the adjacency list, the live degree (ids fit in 31 bits, so degrees do) and the size (the
  /// number of original nodes). Separate arrays cost a miss each per pair at N = 10^6.
  struct alignas(32) Node {
    std::vector<Entry> list;
    std::int32_t deg = 0;
    float size = 0.0f;
  };
  static_assert(sizeof(Node) == 32);
  std::vector<Node, CacheLineAllocator<Node>> node_;
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
  // Dense phase.
  static constexpr std::int64_t kDenseFactor = 1024;
  // Dead heap entries allowed beyond a quarter of the live edges before a compaction.
  static constexpr std::int64_t kHeapSlack = 16384;
  static constexpr std::int64_t kPrefetch = 6;
  static constexpr std::size_t kInitPrefetch = 2;
  // A merge with this many new pairs scores them on all threads (arxiv-sized NOPE* to 0.01:
  // 32 is about 12 % faster than 256; 10^5 and 10^6 unchanged).
  static constexpr std::int64_t kParallelPairs = 32;
  // Consecutive pairs a thread takes at a time.
  static constexpr std::int64_t kPairChunk = 16;
  std::int64_t budget_ = 0;
  bool dense_ = false;
  std::int64_t words_ = 0;
  std::uint32_t next_slot_ = 0, slot_cap_ = 0;
  std::vector<std::uint64_t> bits_;
  std::vector<std::uint32_t> slot_, row_of_;
  std::int64_t pushes_ = 0;
  // Scratch of one merge.
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

}  // namespace

std::int64_t target_for_ratio(std::int64_t num_nodes, double ratio) {
  require(std::isfinite(ratio) && ratio > 0.0 && ratio <= 1.0, "ratio",
          "must be the fraction of nodes kept, in (0, 1]; got " + std::to_string(ratio));
  if (num_nodes == 0) return 0;
  // Python's round() on the double product: half to even (std::nearbyint under the default
  // rounding mode; std::llround would round 1663.5 up).
  const auto rounded =
      static_cast<std::int64_t>(std::nearbyint(static_cast<double>(num_nodes) * ratio));
  return std::max<std::int64_t>(1, rounded);
}

Coarsening nope(const graph::AttributedGraph& graph, const NopeOptions& options) {
  const std::int64_t n = graph.num_nodes;
  std::int64_t target = target_for_ratio(n, options.ratio);
  if (options.n_coarse) {
    require(*options.n_coarse >= 1 && *options.n_coarse <= std::max<std::int64_t>(n, 1), "n_coarse",
            "must lie in [1, N]; got " + std::to_string(*options.n_coarse));
    target = n == 0 ? 0 : *options.n_coarse;
  }
  require(graph.x.rows == n, "x",
          "has " + std::to_string(graph.x.rows) + " rows but the graph " + std::to_string(n) +
              " nodes");
  require(static_cast<std::int64_t>(graph.indptr.size()) == n + 1, "graph",
          "indptr must have N + 1 entries");
  require(n < (std::int64_t{1} << 31), "graph", "too many nodes (ids must fit in 31 bits)");

  Coarsening out;
  out.num_nodes = n;
  out.dim = graph.dim();
  out.target = target;
  out.self_loops_dropped = graph.self_loops_dropped;
  out.duplicates_merged = graph.duplicates_merged;
  if (n > 0) {
    if (options.variant == Variant::Nope) {
      Loop<true>(graph, options).run(target, out);
    } else {
      Loop<false>(graph, options).run(target, out);
    }
    // The run's lists are many small blocks that the allocator keeps once freed: hand them
    // back before the output is built, so that the two do not add up.
    release_free_memory();
  }
  detail::build_coarse_graph(graph, out.num_merges(), options.edge_weights, options.num_threads,
                             out);
  return out;
}

}  // namespace birkhoff::coarsen
