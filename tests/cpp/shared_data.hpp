// Where the tests find the project's shared data (../shared/data beside the checkout: the
// datasets and the goldens), and what a test does when it is absent.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace birkhoff::tests {

/// $BIRKHOFF_SHARED_DATA when set, else the folder beside the source tree.
inline std::string shared_data_dir() {
  const char* env = std::getenv("BIRKHOFF_SHARED_DATA");
  return env != nullptr && *env != '\0' ? std::string(env) : std::string(BIRKHOFF_SHARED_DATA);
}

/// True under BIRKHOFF_REQUIRE_SHARED=1 (CI, which has the data): a test that needs the shared
/// data then fails without it instead of being skipped.
inline bool shared_data_required() {
  const char* env = std::getenv("BIRKHOFF_REQUIRE_SHARED");
  return env != nullptr && std::strcmp(env, "1") == 0;
}

}  // namespace birkhoff::tests

/// Ends a test that cannot find `path` (a std::string) of the shared data: skipped, or failed
/// under BIRKHOFF_REQUIRE_SHARED=1.
#define BIRKHOFF_SKIP_WITHOUT_SHARED_DATA(path)                                             \
  do {                                                                                      \
    if (::birkhoff::tests::shared_data_required()) {                                        \
      GTEST_FAIL() << "shared data not found at " << (path)                                 \
                   << " and BIRKHOFF_REQUIRE_SHARED=1 (set BIRKHOFF_SHARED_DATA)";          \
    }                                                                                       \
    GTEST_SKIP() << "shared data not found at " << (path) << " (set BIRKHOFF_SHARED_DATA)"; \
  } while (0)
