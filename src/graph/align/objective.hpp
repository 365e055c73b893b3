// PRIVATE (align): QPAlign's objective F(Pi), its gradient and the Barzilai-Borwein products.
#pragma once

#include <cstdint>

#include "graph/align/problem.hpp"

namespace birkhoff::align::detail {

/// F(Pi) and, on request, the gradient and the Barzilai-Borwein products of the next step.
struct Evaluation {
  double f = 0;
  double ss = 0,
         sy = 0;  // <S, S>, <S, Y> over the free block, S = pi - pi_old, Y = grad - grad_old
};

/// F(Pi) and, when grad is not null, its gradient 2 lambda_e (A^T E - E B^T) + 2 lambda_f D∘Pi
/// + gamma (J - 2 Pi), E = A Pi - Pi B (all N x N row-major); e is an N x N scratch buffer.
/// With pi_old and grad_old (the previous iterate and its gradient) also the BB products, and
/// with `best` the first column of the largest entry of each free row in the free block, in
/// the same pass. The sums do not depend on the thread count.
Evaluation evaluate(const Problem& p, const double* pi, double* e, double* grad,
                    const double* pi_old = nullptr, const double* grad_old = nullptr,
                    std::int64_t* best = nullptr);

}  // namespace birkhoff::align::detail
