// PRIVATE: the block-sparse passes of the multiscale backend. For each block of rows they keep
// the blocks of columns whose plan entries can matter, with a certified bound on what the
// others add ([schmitzer2019] §3-4; design in docs/transport.md, "Multiscale").
#pragma once

#include <cmath>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "transport/blocks.hpp"
#include "transport/passes.hpp"

namespace birkhoff::transport::detail {

/// Where the points of one side's blocks lie, in the frame of the passes: per block (and per
/// superblock of kGroup consecutive blocks) the box centre c and half-widths h.
struct Boxes {
  std::int64_t d = 0, count = 0, groups = 0;
  std::vector<double> centre, half;              // (count, d)
  std::vector<double> group_centre, group_half;  // (groups, d)
  std::vector<double> group_log_mass;            // (groups)
};

/// An upper bound of a side's standard potential on each block and superblock:
/// h_i <= alpha + <u, p_i - c> + rho for every point p_i of the block (least-squares slope u,
/// one-sided residual rho).
struct AffineBound {
  std::vector<double> alpha, u, rho;  // per block: (count), (count, d), (count)
  std::vector<double> group_alpha, group_u, group_rho;
};

/// How the rows of the block-sparse passes are shared out between processes (a distributed
/// run, src/distributed): this process computes the row superblocks groups(count) of each pass
/// and share() assembles every row's result on every process; the reductions of the list
/// builds and the certificate go through sum() and max(). Each row's result is computed as in
/// one process, so the bits do not depend on the number of processes.
template <class T>
class RowShare {
 public:
  virtual ~RowShare() = default;
  /// This process's superblocks [first, last) of `count`.
  virtual std::pair<std::int64_t, std::int64_t> groups(std::int64_t count) const = 0;
  /// `part` holds rows [group_rows[first], group_rows[last]) of this process (max, sum and
  /// dv values per row); `out` receives all group_rows.back() rows, in order.
  virtual void share(const LseOut<T>& part, std::int64_t dv,
                     const std::vector<std::int64_t>& group_rows, LseOut<T>& out) const = 0;
  virtual std::int64_t sum(std::int64_t v) const = 0;
  virtual double max(double v) const = 0;
};

/// The points of `s` relative to the box centre of their block (float32, block order): the
/// rows of a block-local pass.
std::vector<float> local_coordinates(const Side<double>& s, const Blocks& b, const Boxes& boxes);

/// One block-sparse lse pass of a float64 problem with float32 logits formed block by block:
/// each row block's coordinates are taken relative to its box centre, its kept columns'
/// relative to the centre of their box, and its column biases relative to their largest, so
/// that float32 carries only what varies within the kept block pairs; the large terms (the
/// rows' offsets, each block's largest bias) are added back in float64. Rows come in groups of
/// `group` blocks (one kernel call each, over `threads` threads), of which groups [own.first,
/// own.second) are computed, their rows written from 0 in `out`; ptr and ranges are the kept
/// lists, whose ranges start and end on column blocks of col_block points. Without values; rows'
/// max in base 2 and sums as lse_pass gives them. Returns the largest dot-product term the float32
/// logits held (base 2), the scale of their rounding.
double local_lse(const Side<double>& rows, const Side<double>& cols, const Blocks& br,
                 const Boxes& row_boxes, const Boxes& col_boxes,
                 const std::vector<float>& local_rows, const std::int64_t* ptr,
                 const std::int64_t* ranges, std::int64_t col_block, const double* col_hat,
                 double eps, double kappa, std::int64_t group,
                 std::pair<std::int64_t, std::int64_t> own, int threads, LseOut<double>& out);

/// Block-sparse passes over a cloud pair in block order. Rows are taken by blocks (one kernel
/// row group each), columns by the finer sub-blocks of the same order where given (col_x,
/// col_y: a column list follows the plan's support more closely). The potentials are nearly affine
/// on a small block, so with the affine bounds above, f_i + g_j - C_ij is at most
///     U(I, J) = max over the boxes of [fbound_I(x) + gbound_J(y) - cs |x - y|^2]
/// on the pair of blocks I, J (bounded in closed form, coordinate by coordinate). Column block J
/// is kept for row block I when b_J exp(U(I, J) / eps) is above delta / (number of column
/// blocks) times a safety factor; superblocks of kGroup blocks are tested first, so building
/// the lists costs far less than one test per block pair. The lists stay valid while the
/// largest rise of the row potential plus that of the column potential stays within their
/// margin of 2 kDrift epsilons, and are rebuilt otherwise (or when epsilon changes). Each ordered
/// pair of sides (x against y, y against x, and the self passes x against x, y against y of the
/// debiased divergence) keeps lists of its own. Source: the truncation of [schmitzer2019] §3 with a
/// bound on blocks.
template <class T>
class BlockSparsePasses final : public Passes<T> {
 public:
  BlockSparsePasses(const Side<T>& x, const Side<T>& y, const Blocks& bx, const Blocks& by,
                    double cost_scale, double delta, int threads, const Blocks* col_x = nullptr,
                    const Blocks* col_y = nullptr);
  void lse(Axis rows, Axis cols, const std::vector<T>& row_hat, const std::vector<T>& col_hat,
           double eps, LseOut<T>& out, const T* values, std::int64_t dv,
           const Modulation<T>& mod) override;
  /// Exact: the minimum is taken over every pair (no bound certifies a pruned minimum).
  void min(Axis rows, Axis cols, const std::vector<T>& col_hat, std::vector<T>& out,
           std::vector<std::int64_t>& argmin) override {
    min_pass(side(rows), side(cols), col_hat.data(), 2 * cs_, threads_, out, argmin);
  }
  /// Whether the lists of (rows, cols) hold at these potentials (the drift test of lse()).
  bool holds(Axis rows, Axis cols, const std::vector<T>& row_hat, const std::vector<T>& col_hat,
             double eps) const override;
  /// The kept fraction of the x-against-y lists (of the latest lists before they exist).
  double kept_fraction() const override;
  /// How many times kept lists were built.
  std::int64_t builds() const { return builds_; }
  /// Shares the rows of each pass out over processes (null: this process computes them all).
  void set_share(std::shared_ptr<const RowShare<T>> share) { share_ = std::move(share); }
  /// Block-local float32 logits (design §4 of docs/transport.md, "Precision") for the
  /// passes without values of a float64 problem, until tighten(): the solver iterates in them
  /// while they make progress and finishes in float64. No effect for float32, nor on passes
  /// whose lists keep more than a quarter of the pairs (approximate() then says false).
  void set_local_float32(bool on) { local_ = on && std::is_same_v<T, double>; }
  bool approximate() const override { return local_ && local_used_; }
  /// The scale of the relative marginal error the block-local logits of the latest pass leave:
  /// float32's unit roundoff times their largest dot-product term plus the bias and exponent
  /// range that matter (64, base 2).
  double rounding_floor() const override {
    return approximate() ? std::ldexp(local_reach_ + 64, -24) : 0;
  }
  void tighten() override { local_ = local_used_ = false; }
  /// Drops the kept lists (the next pass builds them from its own potentials), so that what a
  /// solution's products keep does not depend on when the solve last built them.
  void reset_lists() {
    for (Lists& l : lists_) l.built = false;
  }

  /// The certified bound (cost units) on |f_exact - f_truncated| of a truncated update of the
  /// rows of `rows` from the potential col_hat of `cols`, given the truncated candidate
  /// cand_hat of that update: eps log(1 + max_I R(I)), R(I) the bound of what the pruned
  /// blocks add relative to what the kept ones give (docs/transport.md, "Multiscale").
  double certify(Axis rows, Axis cols, const std::vector<T>& cand_hat,
                 const std::vector<T>& col_hat, double eps) const;

 private:
  struct Lists {
    double eps = 0;
    std::vector<T> row_hat, col_hat;        // the potentials the lists were built from
    std::vector<std::int64_t> ptr, ranges;  // CSR of column ranges (in columns) per row block
    double kept = -1;                       // pairs kept / (rows cols); -1 before a build
    std::int64_t first = 0, last = -1;      // the row superblocks the lists hold
    bool built = false;
  };
  const Side<T>& side(Axis a) const { return a == Axis::X ? x_ : y_; }
  const Blocks& blocks(Axis a) const { return a == Axis::X ? bx_ : by_; }
  const Boxes& boxes(Axis a) const { return a == Axis::X ? boxes_x_ : boxes_y_; }
  const Blocks& col_blocks(Axis a) const { return a == Axis::X ? cx_ : cy_; }
  const Boxes& col_boxes(Axis a) const { return a == Axis::X ? col_boxes_x_ : col_boxes_y_; }
  Lists& lists(Axis rows, Axis cols) { return lists_[2 * (rows == Axis::Y) + (cols == Axis::Y)]; }
  const Lists& lists(Axis rows, Axis cols) const {
    return lists_[2 * (rows == Axis::Y) + (cols == Axis::Y)];
  }
  /// The affine bounds of side a's potential on its row blocks, or its column blocks.
  AffineBound bound(Axis a, const std::vector<T>& hat, bool as_cols) const;
  void build(Lists& l, Axis rows, Axis cols, const std::vector<T>& row_hat,
             const std::vector<T>& col_hat, double eps);
  /// The first row of each superblock of side `rows`, and the number of rows last.
  std::vector<std::int64_t> group_rows(Axis rows) const;
  /// This process's row superblocks of side `rows`.
  std::pair<std::int64_t, std::int64_t> own_groups(Axis rows) const;

  Side<T> x_, y_;
  const Blocks& bx_;
  const Blocks& by_;
  const Blocks& cx_;
  const Blocks& cy_;
  Boxes boxes_x_, boxes_y_, col_boxes_x_, col_boxes_y_;
  double cs_, delta_;
  int threads_;
  Lists lists_[4];                           // x-x, x-y, y-x, y-y
  bool local_ = false, local_used_ = false;  // asked for; taken by the latest pass
  double local_reach_ = 0;
  std::vector<float> local_x_, local_y_;  // block-local coordinates, made on first use
  double latest_kept_ = 1;
  std::int64_t builds_ = 0;
  std::shared_ptr<const RowShare<T>> share_;
};

}  // namespace birkhoff::transport::detail
