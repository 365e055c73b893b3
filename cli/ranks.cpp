#include "ranks.hpp"

#include <cstdlib>

#include "birkhoff/core/error.hpp"

#if BIRKHOFF_HAVE_MPI
#include "birkhoff/distributed/sinkhorn.hpp"
#endif

namespace birkhoff::cli {
namespace {
bool active = false;
int this_rank = 0, size = 1;
}  // namespace

#if BIRKHOFF_HAVE_MPI

void start_ranks(int* argc, char*** argv) {
  // Open MPI's mpirun, PMIx (srun --mpi=pmix), PMI-1/2 (srun, MPICH's hydra).
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (std::getenv(v) != nullptr) active = true;
  if (!active) return;
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &this_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
}

void finish_ranks() {
  if (active) MPI_Finalize();
}

void abort_ranks(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

void agree_ranks(const std::string& local_error, const std::string& what, std::int64_t rows,
                 std::int64_t cols, const std::string& dtype) {
  if (!active) {
    if (!local_error.empty()) throw InvalidInput(local_error);
    return;
  }
  std::vector<distributed::Fingerprint> prints;
  if (!what.empty())
    prints.push_back({what, {rows, cols}, distributed::hash_bytes(dtype.data(), dtype.size())});
  distributed::agree(MPI_COMM_WORLD, local_error, prints);
}

template <class T>
transport::Solution<T> solve(const transport::OtProblem<T>& problem,
                             const transport::SinkhornOptions& options) {
  if (active) return distributed::sinkhorn(problem, options, MPI_COMM_WORLD);
  return transport::sinkhorn(problem, options);
}

template <class T>
transport::DivergenceSolution<T> solve_divergence(const transport::OtProblem<T>& problem,
                                                  const transport::SinkhornOptions& options) {
  if (active) return distributed::sinkhorn_divergence(problem, options, MPI_COMM_WORLD);
  return transport::sinkhorn_divergence(problem, options);
}

#else

void start_ranks(int*, char***) {}
void finish_ranks() {}
void abort_ranks(int code) { std::exit(code); }
void agree_ranks(const std::string& local_error, const std::string&, std::int64_t, std::int64_t,
                 const std::string&) {
  if (!local_error.empty()) throw InvalidInput(local_error);
}

template <class T>
transport::Solution<T> solve(const transport::OtProblem<T>& problem,
                             const transport::SinkhornOptions& options) {
  return transport::sinkhorn(problem, options);
}

template <class T>
transport::DivergenceSolution<T> solve_divergence(const transport::OtProblem<T>& problem,
                                                  const transport::SinkhornOptions& options) {
  return transport::sinkhorn_divergence(problem, options);
}

#endif

bool ranks_active() { return active; }
int rank() { return this_rank; }
int num_ranks() { return size; }

template transport::Solution<float> solve(const transport::OtProblem<float>&,
                                          const transport::SinkhornOptions&);
template transport::Solution<double> solve(const transport::OtProblem<double>&,
                                           const transport::SinkhornOptions&);
template transport::DivergenceSolution<float> solve_divergence(const transport::OtProblem<float>&,
                                                               const transport::SinkhornOptions&);
template transport::DivergenceSolution<double> solve_divergence(const transport::OtProblem<double>&,
                                                                const transport::SinkhornOptions&);

}  // namespace birkhoff::cli
