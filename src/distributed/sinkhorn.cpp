#include "birkhoff/distributed/sinkhorn.hpp"

#include <climits>
#include <cstring>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "birkhoff/core/error.hpp"
#include "transport/multiscale.hpp"
#include "transport/passes.hpp"
#include "transport/solver.hpp"
#include "transport/streams.hpp"

namespace birkhoff::distributed {

using transport::detail::Axis;
using transport::detail::LseOut;
using transport::detail::Passes;
using transport::detail::Side;

Slice slice(std::int64_t n, int rank, int size) {
  const std::int64_t base = n / size, extra = n % size;
  const std::int64_t begin = rank * base + std::min<std::int64_t>(rank, extra);
  return {begin, begin + base + (rank < extra ? 1 : 0)};
}

std::uint64_t hash_bytes(const void* data, std::size_t bytes) {
  std::uint64_t h = 1469598103934665603ull;
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

namespace {

void check(int code, const char* what) {
  if (code != MPI_SUCCESS) throw std::runtime_error(std::string("MPI: ") + what + " failed");
}

// One string per rank, gathered on every rank.
std::vector<std::string> allgather(MPI_Comm comm, const std::string& mine) {
  int size = 1;
  check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<std::size_t>(size)), displs(lens.size());
  check(MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, comm), "MPI_Allgather");
  int total = 0;
  for (std::size_t r = 0; r < lens.size(); ++r) {
    displs[r] = total;
    total += lens[r];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  check(MPI_Allgatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR,
                       comm),
        "MPI_Allgatherv");
  std::vector<std::string> out;
  for (std::size_t r = 0; r < lens.size(); ++r)
    out.push_back(
        all.substr(static_cast<std::size_t>(displs[r]), static_cast<std::size_t>(lens[r])));
  return out;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t k = 0; k < shape.size(); ++k) s += (k ? ", " : "") + std::to_string(shape[k]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// "name\nshape\nhash\n" per fingerprint: the shape as text, so it can be quoted back.
std::string encode(const std::vector<Fingerprint>& prints) {
  std::string s;
  for (const auto& f : prints)
    s += f.name + "\n" + shape_text(f.shape) + "\n" + std::to_string(f.hash) + "\n";
  return s;
}

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < s.size()) {
    const std::size_t nl = s.find('\n', at);
    out.push_back(s.substr(at, nl - at));
    at = nl + 1;
  }
  return out;
}

template <class T>
MPI_Datatype mpi_type() {
  return std::is_same_v<T, float> ? MPI_FLOAT : MPI_DOUBLE;
}

// Every rank's rows of a pass (rank r: counts[r] rows from row displs[r]) gathered on every
// rank: one record of (max, sum, dv values) per row, one MPI_Allgatherv.
template <class T>
void gather_rows(MPI_Comm comm, int rank, const LseOut<T>& part, std::int64_t dv,
                 const std::vector<int>& counts, const std::vector<int>& displs, std::int64_t n,
                 LseOut<T>& out) {
  const std::int64_t width = 2 + dv;
  const std::int64_t mine = counts[static_cast<std::size_t>(rank)];
  std::vector<T> send(static_cast<std::size_t>(mine * width));
  for (std::int64_t i = 0; i < mine; ++i) {
    const auto si = static_cast<std::size_t>(i);
    send[si * width] = part.max[si];
    send[si * width + 1] = part.sum[si];
    for (std::int64_t k = 0; k < dv; ++k)
      send[si * width + 2 + k] = part.values[static_cast<std::size_t>(i * dv + k)];
  }
  MPI_Datatype record;
  check(MPI_Type_contiguous(static_cast<int>(width), mpi_type<T>(), &record),
        "MPI_Type_contiguous");
  check(MPI_Type_commit(&record), "MPI_Type_commit");
  std::vector<T> recv(static_cast<std::size_t>(n * width));
  const int code = MPI_Allgatherv(send.data(), counts[static_cast<std::size_t>(rank)], record,
                                  recv.data(), counts.data(), displs.data(), record, comm);
  MPI_Type_free(&record);
  check(code, "MPI_Allgatherv");
  out.max.resize(static_cast<std::size_t>(n));
  out.sum.resize(static_cast<std::size_t>(n));
  out.values.resize(static_cast<std::size_t>(n * dv));
  for (std::int64_t i = 0; i < n; ++i) {
    const auto si = static_cast<std::size_t>(i);
    out.max[si] = recv[si * width];
    out.sum[si] = recv[si * width + 1];
    for (std::int64_t k = 0; k < dv; ++k)
      out.values[static_cast<std::size_t>(i * dv + k)] = recv[si * width + 2 + k];
  }
}

// The passes of one rank: its slice of the rows of every pass, then one MPI_Allgatherv of
// (max, sum, values) per row, so every rank holds what a single process would have computed.
// A row's reduction reads only that row and all columns, in the same order whatever the rows
// around it (kernels::row_lse), so the gathered rows carry the single-process bits.
template <class T>
class DistributedPasses final : public Passes<T> {
 public:
  DistributedPasses(const Side<T>& x, const Side<T>& y, double kappa, int threads, MPI_Comm comm)
      : x_(x), y_(y), kappa_(kappa), threads_(threads), comm_(comm) {
    check(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(comm, &size_), "MPI_Comm_size");
  }

  // Every rank holds every point: the minimum is local (and the same on every rank).
  void min(Axis rows, Axis cols, const std::vector<T>& col_hat, std::vector<T>& out,
           std::vector<std::int64_t>& argmin) override {
    transport::detail::min_pass(side(rows), side(cols), col_hat.data(), kappa_, threads_, out,
                                argmin);
  }
  void lse(Axis rows, Axis cols, const std::vector<T>&, const std::vector<T>& col_hat, double eps,
           LseOut<T>& out, const T* values, std::int64_t dv,
           const transport::detail::Modulation<T>& mod) override {
    const Side<T>& all = side(rows);
    const Slice s = slice(all.n, rank_, size_);
    const Side<T> mine = transport::detail::row_slice(all, s.begin, s.end);
    auto my_mod = mod;  // a dot-product factor's row operand is sliced like the rows
    if (my_mod.dm > 0) my_mod.mod_x += s.begin * my_mod.dm;
    // A rank may own no rows (n < K). A failure on one rank is made every rank's before the
    // exchange, which the others would otherwise wait in forever.
    LseOut<T> part;
    std::exception_ptr failure;
    try {
      if (mine.n > 0)
        transport::detail::lse_pass(mine, side(cols), col_hat.data(), eps, kappa_, threads_, part,
                                    values, dv, my_mod);
    } catch (...) {
      failure = std::current_exception();
    }
    int failed = failure ? 1 : 0, any = 0;
    check(MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, comm_), "MPI_Allreduce");
    if (failure) std::rethrow_exception(failure);
    if (any) throw std::runtime_error("a pass failed on another rank");
    require(all.n <= INT_MAX, "x", "more than 2^31 - 1 points per side are not distributed yet");
    std::vector<int> counts(static_cast<std::size_t>(size_)), displs(counts.size());
    for (int r = 0; r < size_; ++r) {
      const Slice sr = slice(all.n, r, size_);
      counts[static_cast<std::size_t>(r)] = static_cast<int>(sr.end - sr.begin);
      displs[static_cast<std::size_t>(r)] = static_cast<int>(sr.begin);
    }
    gather_rows(comm_, rank_, part, dv, counts, displs, all.n, out);
  }

 private:
  const Side<T>& side(Axis a) const { return a == Axis::X ? x_ : y_; }
  Side<T> x_, y_;
  double kappa_;
  int threads_;
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
};

// The dense passes with rows split over the ranks.
template <class T>
class DistributedBackend final : public transport::detail::RowBackend<T> {
 public:
  explicit DistributedBackend(MPI_Comm comm) : comm_(comm) {}
  std::unique_ptr<Passes<T>> passes(const Side<T>& x, const Side<T>& y, double kappa,
                                    int threads) const override {
    return std::make_unique<DistributedPasses<T>>(x, y, kappa, threads, comm_);
  }

 private:
  MPI_Comm comm_;
};

// The multiscale backend's rows over the ranks: rank r computes the r-th slice of the row
// superblocks of every block-sparse pass, and the rows are gathered as for the dense passes.
template <class T>
class MpiRowShare final : public transport::detail::RowShare<T> {
 public:
  explicit MpiRowShare(MPI_Comm comm) : comm_(comm) {
    check(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(comm, &size_), "MPI_Comm_size");
  }
  std::pair<std::int64_t, std::int64_t> groups(std::int64_t count) const override {
    const Slice s = slice(count, rank_, size_);
    return {s.begin, s.end};
  }
  void share(const LseOut<T>& part, std::int64_t dv, const std::vector<std::int64_t>& group_rows,
             LseOut<T>& out) const override {
    const std::int64_t n = group_rows.back();
    require(n <= INT_MAX, "x", "more than 2^31 - 1 points per side are not distributed yet");
    const auto count = static_cast<std::int64_t>(group_rows.size()) - 1;
    std::vector<int> counts(static_cast<std::size_t>(size_)), displs(counts.size());
    for (int r = 0; r < size_; ++r) {
      const Slice s = slice(count, r, size_);
      displs[static_cast<std::size_t>(r)] =
          static_cast<int>(group_rows[static_cast<std::size_t>(s.begin)]);
      counts[static_cast<std::size_t>(r)] =
          static_cast<int>(group_rows[static_cast<std::size_t>(s.end)] -
                           group_rows[static_cast<std::size_t>(s.begin)]);
    }
    gather_rows(comm_, rank_, part, dv, counts, displs, n, out);
  }
  std::int64_t sum(std::int64_t v) const override {
    std::int64_t total = 0;
    check(MPI_Allreduce(&v, &total, 1, MPI_INT64_T, MPI_SUM, comm_), "MPI_Allreduce");
    return total;
  }
  double max(double v) const override {
    double most = 0;
    check(MPI_Allreduce(&v, &most, 1, MPI_DOUBLE, MPI_MAX, comm_), "MPI_Allreduce");
    return most;
  }

 private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
};

// The backends of a run over the ranks of `comm`.
transport::detail::Registry registry(MPI_Comm comm) {
  transport::detail::Registry r;
  r.dense.f32 = std::make_shared<DistributedBackend<float>>(comm);
  r.dense.f64 = std::make_shared<DistributedBackend<double>>(comm);
  r.multiscale.f32 =
      transport::detail::multiscale_backend<float>(std::make_shared<MpiRowShare<float>>(comm));
  r.multiscale.f64 =
      transport::detail::multiscale_backend<double>(std::make_shared<MpiRowShare<double>>(comm));
  return r;
}

template <class T>
void agree_on(const transport::OtProblem<T>& problem, MPI_Comm comm) {
  const auto& g = problem.geometry;
  const double settings[3] = {problem.epsilon, transport::reach_a(problem.marginals).value_or(-1.0),
                              transport::reach_b(problem.marginals).value_or(-1.0)};
  agree(comm, "",
        {{"x", {g.n(), g.dim()}, hash_bytes(g.x().data, sizeof(T) * g.n() * g.dim())},
         {"y", {g.m(), g.dim()}, hash_bytes(g.y().data, sizeof(T) * g.m() * g.dim())},
         {"a",
          {static_cast<std::int64_t>(problem.a.size())},
          hash_bytes(problem.a.data(), problem.a.size_bytes())},
         {"b",
          {static_cast<std::int64_t>(problem.b.size())},
          hash_bytes(problem.b.data(), problem.b.size_bytes())},
         {"epsilon", {}, hash_bytes(settings, sizeof settings)}});
}

}  // namespace

void agree(MPI_Comm comm, const std::string& local_error,
           const std::vector<Fingerprint>& fingerprints) {
  // The error flag first, so a failed rank's fingerprints are never compared.
  const auto all = allgather(comm, (local_error.empty() ? "0" : "1" + local_error) + "\n" +
                                       (local_error.empty() ? encode(fingerprints) : ""));
  for (std::size_t r = 0; r < all.size(); ++r)
    if (all[r][0] == '1') {
      const std::string message = all[r].substr(1, all[r].find('\n') - 1);
      throw InvalidInput(r == 0 ? message : message + " (on rank " + std::to_string(r) + ")");
    }
  const auto ref = lines(all[0].substr(2));
  for (std::size_t r = 1; r < all.size(); ++r) {
    const auto got = lines(all[r].substr(2));
    for (std::size_t k = 0; k + 2 < std::max(ref.size(), got.size()); k += 3) {
      require(k + 2 < got.size() && k + 2 < ref.size() && got[k] == ref[k], "rank",
              "rank " + std::to_string(r) + " holds other arguments than rank 0");
      const std::string& name = ref[k];
      require(got[k + 1] == ref[k + 1], name,
              "has shape " + got[k + 1] + " on rank " + std::to_string(r) + " but " + ref[k + 1] +
                  " on rank 0");
      require(got[k + 2] == ref[k + 2], name,
              "differs between rank " + std::to_string(r) +
                  " and rank 0 (same shape, other "
                  "values): every rank must be given the same input");
    }
  }
}

template <class T>
transport::Solution<T> sinkhorn(const transport::OtProblem<T>& problem,
                                const transport::SinkhornOptions& options, MPI_Comm comm) {
  agree_on(problem, comm);
  return transport::detail::sinkhorn_with(problem, options, registry(comm));
}

template <class T>
transport::DivergenceSolution<T> sinkhorn_divergence(const transport::OtProblem<T>& problem,
                                                     const transport::SinkhornOptions& options,
                                                     MPI_Comm comm) {
  agree_on(problem, comm);
  return transport::detail::sinkhorn_divergence_with(problem, options, registry(comm));
}

template transport::Solution<float> sinkhorn(const transport::OtProblem<float>&,
                                             const transport::SinkhornOptions&, MPI_Comm);
template transport::Solution<double> sinkhorn(const transport::OtProblem<double>&,
                                              const transport::SinkhornOptions&, MPI_Comm);
template transport::DivergenceSolution<float> sinkhorn_divergence(
    const transport::OtProblem<float>&, const transport::SinkhornOptions&, MPI_Comm);
template transport::DivergenceSolution<double> sinkhorn_divergence(
    const transport::OtProblem<double>&, const transport::SinkhornOptions&, MPI_Comm);

}  // namespace birkhoff::distributed
