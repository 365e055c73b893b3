// The MPI ranks the CLI runs on (BIRKHOFF_MPI builds, started by mpirun or srun); one rank of
// one otherwise.
#pragma once

#include <string>

#include "birkhoff/transport/sinkhorn.hpp"

namespace birkhoff::cli {

/// Initialises MPI when a launcher started this process (its environment says so); call once,
/// first thing in main. finish_ranks() finalises it.
void start_ranks(int* argc, char*** argv);
void finish_ranks();
/// Whether this run is distributed (launched under MPI), this rank and the number of ranks.
bool ranks_active();
int rank();
int num_ranks();
/// Ends every rank with `code`: for a failure on one rank, which the others would wait for.
[[noreturn]] void abort_ranks(int code);
/// A collective check that every rank got this far: when some rank has a `local_error`, throws
/// InvalidInput with it on every rank (a no-op on one rank). `what`/`rows`/`cols`/`dtype`, when
/// given, are compared too.
void agree_ranks(const std::string& local_error, const std::string& what = "",
                 std::int64_t rows = 0, std::int64_t cols = 0, const std::string& dtype = "");

/// transport::sinkhorn() / sinkhorn_divergence(), over the ranks when ranks_active().
template <class T>
transport::Solution<T> solve(const transport::OtProblem<T>& problem,
                             const transport::SinkhornOptions& options);
template <class T>
transport::DivergenceSolution<T> solve_divergence(const transport::OtProblem<T>& problem,
                                                  const transport::SinkhornOptions& options);

}  // namespace birkhoff::cli
