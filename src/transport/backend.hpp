// PRIVATE: the backend seam. A backend says how a solve visits the pairs; the dense and the
// multiscale backends are registered in Registry::local() (backend.cpp), the distributed
// library builds a registry of its own (src/distributed), and choose() is the one place where
// the backend option, the problem and auto's rules meet, with the reason reported.
#pragma once

#include <memory>
#include <string>

#include "birkhoff/transport/sinkhorn.hpp"
#include "transport/passes.hpp"

namespace birkhoff::transport::detail {

/// sinkhorn() on one backend.
template <class T>
class BackendImpl {
 public:
  virtual ~BackendImpl() = default;
  /// Solves `problem`; `reason` (why this backend) goes to the report.
  virtual Solution<T> solve(const OtProblem<T>& problem, const SinkhornOptions& options,
                            const std::string& reason) const = 0;
  /// sinkhorn_divergence() on this backend.
  virtual DivergenceSolution<T> divergence(const OtProblem<T>& problem,
                                           const SinkhornOptions& options,
                                           const std::string& reason) const = 0;
};

/// A backend whose passes read the sides in the caller's order (dense, distributed rows): its
/// solve and its divergence are the solver loop on passes().
template <class T>
class RowBackend : public BackendImpl<T> {
 public:
  /// The passes over two prepared sides (borrowed; they must outlive the passes).
  virtual std::unique_ptr<Passes<T>> passes(const Side<T>& x, const Side<T>& y, double kappa,
                                            int threads) const = 0;
  Solution<T> solve(const OtProblem<T>& problem, const SinkhornOptions& options,
                    const std::string& reason) const override;
  DivergenceSolution<T> divergence(const OtProblem<T>& problem, const SinkhornOptions& options,
                                   const std::string& reason) const override;
};

/// Every pair, streamed in tiles (DensePasses): the passes of every solution's plan products.
template <class T>
const RowBackend<T>& dense_backend();

/// The backends a solve may use, one implementation per dtype each.
struct Registry {
  template <template <class> class B>
  struct Entry {
    std::shared_ptr<const B<float>> f32;
    std::shared_ptr<const B<double>> f64;
    template <class T>
    const B<T>* get() const {
      if constexpr (sizeof(T) == 4) {
        return f32.get();
      } else {
        return f64.get();
      }
    }
  };
  Entry<RowBackend> dense;
  Entry<BackendImpl> multiscale;  ///< may be empty: see without_multiscale
  /// Where multiscale is absent, what refuses it (e.g. "does not run distributed yet").
  std::string without_multiscale;
  /// The registry of one process: dense and multiscale.
  static const Registry& local();
};

/// The backend a solve uses, and why.
template <class T>
struct Choice {
  const BackendImpl<T>* backend = nullptr;
  Backend kind = Backend::Dense;
  std::string reason;
};

/// The one choice of a backend: an explicit option is checked against what the problem needs
/// (refused with an error naming `backend`), auto picks multiscale when the kept pairs are
/// expected to be a small fraction (low dimension, epsilon small against the spread) and the
/// problem is large enough for it to matter, dense otherwise; the reason says which rule
/// decided; the debiased divergence follows the same rules.
template <class T>
Choice<T> choose(const Registry& registry, const OtProblem<T>& problem,
                 const SinkhornOptions& options);

}  // namespace birkhoff::transport::detail
