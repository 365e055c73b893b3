// PRIVATE (transport): the Sinkhorn settings of the inner solves of an outer iteration
// (Gromov-Wasserstein, barycenters): converged to a tolerance on the backend auto picks, warm
// started from the previous outer step's potentials when there is one.
#pragma once

#include "birkhoff/transport/sinkhorn.hpp"

namespace birkhoff::transport::detail {

template <class T>
SinkhornOptions inner_options(double marginal_tol, int max_iter, int num_threads,
                              const Solution<T>* warm, Backend backend = Backend::Auto) {
  SinkhornOptions o;
  o.schedule = Schedule::Converge;
  o.backend = backend;
  o.marginal_tol = marginal_tol;
  o.max_iter = max_iter;
  o.num_threads = num_threads;
  if (warm != nullptr) {
    o.init_f.assign(warm->f().begin(), warm->f().end());
    o.init_g.assign(warm->g().begin(), warm->g().end());
  }
  return o;
}

}  // namespace birkhoff::transport::detail
