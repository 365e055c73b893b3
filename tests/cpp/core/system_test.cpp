// resolve_threads() follows OpenMP's default thread count, as system.hpp documents.
#include "birkhoff/core/system.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <cstdlib>

namespace birkhoff {
namespace {

TEST(ResolveThreads, KeepsAPositiveRequest) {
  EXPECT_EQ(resolve_threads(1), 1);
  EXPECT_EQ(resolve_threads(5), 5);
}

TEST(ResolveThreads, ZeroOrNegativeIsOpenMPsDefault) {
  EXPECT_EQ(resolve_threads(0), omp_get_max_threads());
  EXPECT_EQ(resolve_threads(-1), omp_get_max_threads());
  EXPECT_GE(resolve_threads(0), 1);
}

TEST(ResolveThreads, ZeroFollowsOmpSetNumThreads) {
  const int before = omp_get_max_threads();
  omp_set_num_threads(3);
  EXPECT_EQ(resolve_threads(0), 3);
  omp_set_num_threads(before);
}

// ctest runs this one again with OMP_NUM_THREADS=3 (tests/cpp/CMakeLists.txt).
TEST(ResolveThreads, ZeroHonoursOmpNumThreads) {
  const char* env = std::getenv("OMP_NUM_THREADS");
  const int expected = env != nullptr ? std::atoi(env) : omp_get_max_threads();
  EXPECT_EQ(resolve_threads(0), expected);
}

}  // namespace
}  // namespace birkhoff
