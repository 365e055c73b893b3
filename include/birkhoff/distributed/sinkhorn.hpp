// Optional (BIRKHOFF_MPI): the transport solver over the ranks of an MPI communicator.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "birkhoff/transport/sinkhorn.hpp"

namespace birkhoff::distributed {

/// The rows [begin, end) that rank `rank` of `size` owns out of n: contiguous blocks in rank
/// order, the first n % size ranks one row longer.
struct Slice {
  std::int64_t begin = 0, end = 0;
};
Slice slice(std::int64_t n, int rank, int size);

/// What every rank must hold alike: a name (the argument), its shape, and a hash of its bytes.
struct Fingerprint {
  std::string name;
  std::vector<std::int64_t> shape;
  std::uint64_t hash = 0;
};

/// FNV-1a hash of `bytes` bytes.
std::uint64_t hash_bytes(const void* data, std::size_t bytes);

/// A collective check that the ranks of `comm` can go on together: throws InvalidInput on
/// every rank when some rank had a `local_error` (non-empty: the message, e.g. of an input it
/// could not read) or a fingerprint differs from rank 0's, naming the argument and the rank
/// ("x: has shape (10, 4) on rank 1 but (10, 3) on rank 0").
void agree(MPI_Comm comm, const std::string& local_error,
           const std::vector<Fingerprint>& fingerprints = {});

/// transport::sinkhorn() on the ranks of `comm`, every rank calling it with the same problem
/// and options (checked by agree() on the points, weights and epsilon). Each rank reduces its
/// slice() of the rows of x (the f-update) and of y (the g-update), and MPI_Allgatherv
/// exchanges the row maxima and sums: 2 (n + m) values of T per iteration, no n x m anything.
/// Every other step runs on every rank over all points in index order, so the solution (the
/// potentials, the report, the loss) has the same bits for any number of ranks as
/// transport::sinkhorn() with the dense backend, on machines that run the same SIMD kernels
/// (docs/distributed.md). The dense passes only: Backend::Multiscale is refused and an Auto
/// choice of it runs dense. The returned solution's products run on the calling rank alone.
/// @throws InvalidInput as transport::sinkhorn(), or from agree() on every rank.
template <class T>
transport::Solution<T> sinkhorn(const transport::OtProblem<T>& problem,
                                const transport::SinkhornOptions& options, MPI_Comm comm);

/// transport::sinkhorn_divergence() on the ranks of `comm`, as sinkhorn() above (the self
/// terms' passes are sliced the same way).
template <class T>
transport::DivergenceSolution<T> sinkhorn_divergence(const transport::OtProblem<T>& problem,
                                                     const transport::SinkhornOptions& options,
                                                     MPI_Comm comm);

}  // namespace birkhoff::distributed
