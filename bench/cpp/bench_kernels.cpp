// Micro-benchmarks of the streamed LSE kernel: GFLOP/s counted as 2 n m d per pass (the dot
// products; the exponentials come on top), and exponentials per second.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "birkhoff/kernels/lse.hpp"

namespace {

void BM_RowLse(benchmark::State& state) {
  const std::int64_t n = state.range(0), d = state.range(1), threads = state.range(2);
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  std::vector<float> x(static_cast<std::size_t>(n * d)), y(x.size()),
      bias(static_cast<std::size_t>(n));
  for (auto& v : x) v = normal(rng);
  for (auto& v : y) v = normal(rng);
  for (auto& v : bias) v = normal(rng);
  std::vector<float> mx(static_cast<std::size_t>(n)), sum(static_cast<std::size_t>(n));
  birkhoff::kernels::LseArgs<float> a;
  a.x = x.data();
  a.n = n;
  a.x_stride = d;
  a.y = y.data();
  a.m = n;
  a.y_stride = d;
  a.d = d;
  a.bias = bias.data();
  a.scale = 0.1f;
  a.row_max = mx.data();
  a.row_sum = sum.data();
  a.num_threads = static_cast<int>(threads);
  for (auto _ : state) {
    birkhoff::kernels::row_lse(a);
    benchmark::DoNotOptimize(sum.data());
  }
  const double pairs = static_cast<double>(n) * static_cast<double>(n);
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * pairs * static_cast<double>(d) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
  state.counters["Gexp/s"] =
      benchmark::Counter(pairs * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_RowLse)
    ->ArgsProduct({{4096}, {3, 16, 64, 256}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_FmaPeak(benchmark::State& state) {
  double flops = 0;
  for (auto _ : state) {
    flops = birkhoff::kernels::fma_probe(1 << 24, static_cast<int>(state.range(0)));
    benchmark::DoNotOptimize(flops);
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(static_cast<double>(static_cast<std::int64_t>(flops)) * 1e-9,
                         benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_FmaPeak)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
