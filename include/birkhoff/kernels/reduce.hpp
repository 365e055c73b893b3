#pragma once

#include <cstdint>

namespace birkhoff::kernels {

// Float32 reductions with a fixed summation order, so that callers can reproduce another
// program's arithmetic bit for bit (NOPE's keys against the authors' NumPy code). Every
// function gives the same bits on every SIMD target it is compiled for.

/// Inner product <a, b> of two float32 vectors of size n, accumulated in float64 in four lanes
/// (lane j takes the elements j, j + 4, ...; the tail goes into lane 0), combined as
/// (lane0 + lane1) + (lane2 + lane3) and rounded once to float32: within one float32 rounding
/// of the exact value for any n in practice.
float dot_widened(const float* a, const float* b, std::int64_t n);

/// sum_i (a_i - b_i)^2 over two float32 vectors of size n, in float32, in NumPy's pairwise
/// order: the bits of np.sum((a - b) ** 2) on float32 arrays.
float squared_distance_pairwise(const float* a, const float* b, std::int64_t n);

/// sum_i v[i * stride]^2 over n float32 values (stride in elements, >= 1), in float32, in
/// NumPy's pairwise order: the bits of np.sum(v ** 2) on the gathered float32 array.
float sum_squares_pairwise(const float* v, std::int64_t n, std::int64_t stride);

/// Scalar twins of the three, for tests: the same arithmetic written as plain loops (and a
/// plain recursion for the pairwise order), so they must agree bit for bit.
float dot_widened_reference(const float* a, const float* b, std::int64_t n);
float squared_distance_pairwise_reference(const float* a, const float* b, std::int64_t n);
float sum_squares_pairwise_reference(const float* v, std::int64_t n, std::int64_t stride);

}  // namespace birkhoff::kernels
