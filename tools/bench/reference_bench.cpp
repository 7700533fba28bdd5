// Wall time of the monolithic crane reference (003 Sect. 4): the default M1 run, 10 s at
// h = 0.05 ms (200 000 steps), and its real-time factor = simulated time / wall time
// (> 1: faster than real time). M2 is measured alongside.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <limits>

#include "cosim/subsystems/crane_reference.hpp"

namespace {

using cosim::crane::manoeuvre_kind;

struct best_run {
  double wall = std::numeric_limits<double>::infinity();
  double simulated = 0.0;
  long steps = 0;
  long iterations = 0;
  bool converged = false;
};
best_run best_m1, best_m2;

void run(benchmark::State& state, manoeuvre_kind kind, best_run& best) {
  cosim::crane::reference_options options;  // defaults: 10 s, h = 0.05 ms
  options.manoeuvre = kind;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    const auto t0 = std::chrono::steady_clock::now();
    const cosim::crane::reference_result r = cosim::crane::run_crane_reference(options);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    benchmark::DoNotOptimize(r.samples.data());
    if (wall < best.wall) {
      best = {wall, options.duration, r.steps, r.total_iterations, r.converged};
    }
  }
  state.counters["sim_s"] = options.duration;
  state.counters["steps"] = static_cast<double>(best.steps);
  state.counters["newton_per_step"] =
      best.steps > 0 ? static_cast<double>(best.iterations) / static_cast<double>(best.steps) : 0.0;
  state.counters["real_time_factor"] = options.duration / best.wall;
}

void bm_reference_m1(benchmark::State& state) {
  run(state, manoeuvre_kind::m1, best_m1);
}
void bm_reference_m2(benchmark::State& state) {
  run(state, manoeuvre_kind::m2, best_m2);
}

BENCHMARK(bm_reference_m1)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
BENCHMARK(bm_reference_m2)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();

void print(const char* name, const best_run& b) {
  if (b.steps == 0) return;
  std::printf(
      "%s reference: %.1f s simulated, %ld steps, wall %.3f s (best of runs), "
      "real-time factor %.1f, converged %s\n",
      name, b.simulated, b.steps, b.wall, b.simulated / b.wall, b.converged ? "yes" : "no");
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  print("M1", best_m1);
  print("M2", best_m2);
  return 0;
}
