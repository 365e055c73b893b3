// PRIVATE (kernels): the function multiversioning of the kernels that are not written with
// Highway. GCC compiles a function marked with one of these once per listed target and picks
// the clone at load time. The kernels so marked run the same operations in the same order in
// every clone (the library builds them with -ffp-contract=off), so their results are bitwise
// equal; the wider targets only hold more lanes per register.
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/// AVX2 and the baseline.
#define BIRKHOFF_CLONES_AVX2 [[gnu::target_clones("avx2", "default")]]
/// AVX-512 (Ice Lake server), AVX2 and the baseline.
#define BIRKHOFF_CLONES_AVX512 [[gnu::target_clones("arch=icelake-server", "avx2", "default")]]
/// Vector popcount (AVX-512 VPOPCNTDQ), Haswell, the popcnt instruction and the baseline.
#define BIRKHOFF_CLONES_POPCOUNT \
  [[gnu::target_clones("arch=icelake-server", "arch=haswell", "popcnt", "default")]]
#else
#define BIRKHOFF_CLONES_AVX2
#define BIRKHOFF_CLONES_AVX512
#define BIRKHOFF_CLONES_POPCOUNT
#endif
