// cosim::spsc_ring vs boost::lockfree::spsc_queue, both carrying a 48-byte sample
// between two pinned threads, measured in the same run:
//   throughput/<impl>  items per second, producer -> consumer, ring of 1024 slots
//   roundtrip/<impl>   ping-pong over two rings; p50/p99/max round-trip in ns
// Ends with one summary line of ours/boost ratios (medians over the repetitions).
//
// Options (before Google Benchmark's own flags; environment variables as fallback):
//   --producer-cpu=N   COSIM_BENCH_PRODUCER_CPU   default 0
//   --consumer-cpu=N   COSIM_BENCH_CONSUMER_CPU   default 1
//   --items=N          items per throughput repetition, default 5000000
//   --round-trips=N    round trips per latency repetition, default 200000
//   --repetitions=N    default 5
//   --priority=N       COSIM_BENCH_PRIORITY       default 0 (SCHED_OTHER); 1..99 runs both
//                      threads SCHED_FIFO so a busy machine cannot preempt them
#include <benchmark/benchmark.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/lockfree/spsc_queue.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "cosim/runtime/hardware.hpp"
#include "cosim/runtime/rt_thread.hpp"
#include "cosim/runtime/spsc_ring.hpp"

#include "bench_support.hpp"

using cosim::bench::option_value;
using cosim::bench::ratio;

namespace {

// What a ring slot typically holds: a sequence number (lets the consumer detect gaps), a
// tick and four coupling values. Trivially copyable, no padding: 48 bytes per slot.
struct sample {
  std::uint64_t sequence = 0;
  std::int64_t tick = 0;
  std::array<double, 4> values{};
};
static_assert(std::is_trivially_copyable_v<sample>);
static_assert(sizeof(sample) == 48, "no hidden padding expected");
constexpr std::size_t ring_capacity = 1024;

struct bench_options {
  int producer_cpu = 0;
  int consumer_cpu = 1;
  std::uint64_t items = 5'000'000;
  std::uint64_t round_trips = 200'000;
  int repetitions = 5;
  int priority = 0;
};
bench_options options;  // set once in main() before any benchmark runs

// ---- the two queues behind one interface ----

struct ours_queue {
  cosim::spsc_ring<sample> ring{ring_capacity};
  bool push(const sample& s) noexcept { return ring.try_push(s); }
  bool pop(sample& s) noexcept { return ring.try_pop(s); }
};

struct boost_queue {
  // Compile-time capacity (the faster boost variant); it keeps one slot free, so 1023 usable.
  boost::lockfree::spsc_queue<sample, boost::lockfree::capacity<ring_capacity>> queue;
  bool push(const sample& s) noexcept { return queue.push(s); }
  bool pop(sample& s) noexcept { return queue.pop(s); }
};

// Spin with the pause hint; yield now and then in case both threads share a CPU.
struct backoff {
  unsigned spins = 0;
  void operator()() noexcept {
    if (++spins % 256 == 0) {
      sched_yield();
    } else {
      cosim::cpu_relax();
    }
  }
};

sample make_sample(std::uint64_t i) noexcept {
  sample s;
  s.sequence = i;
  s.tick = static_cast<std::int64_t>(i);
  s.values = {1.0, 2.0, 3.0, static_cast<double>(i)};
  return s;
}

cosim::rt_thread start_pinned(const char* name, int cpu, std::function<void()> body) {
  cosim::rt_thread thread({.name = name, .cpu = cpu, .priority = options.priority},
                          std::move(body));
  if (!thread.grant().warning.empty()) {
    std::fprintf(stderr, "ring_bench: %s: %s\n", name, thread.grant().warning.c_str());
  }
  return thread;
}

// ---- throughput ----

template <class Q>
void bm_throughput(benchmark::State& state) {
  const std::uint64_t items = options.items;
  std::uint64_t errors = 0;
  for (auto _ : state) {
    auto queue = std::make_unique<Q>();
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    std::atomic<std::int64_t> end_ns{0};
    std::uint64_t mismatches = 0;
    auto wait_for_go = [&] {
      ready.fetch_add(1, std::memory_order_release);  // release: pairs with main's acquire
      // Sleep, not spin: two spinning SCHED_FIFO threads would starve main() on 2 CPUs.
      go.wait(false, std::memory_order_acquire);  // acquire: pairs with main's release
    };
    cosim::rt_thread consumer =
        start_pinned("bench-cons", options.consumer_cpu, [&, q = queue.get()] {
          wait_for_go();
          sample s;
          backoff wait;
          for (std::uint64_t expected = 0; expected < items;) {
            if (!q->pop(s)) {
              wait();
              continue;
            }
            mismatches += s.sequence != expected ? 1 : 0;
            ++expected;
          }
          end_ns.store(cosim::monotonic_now_ns(), std::memory_order_relaxed);  // read after join
        });
    cosim::rt_thread producer =
        start_pinned("bench-prod", options.producer_cpu, [&, q = queue.get()] {
          wait_for_go();
          backoff wait;
          for (std::uint64_t i = 0; i < items; ++i) {
            const sample s = make_sample(i);
            while (!q->push(s)) wait();
          }
        });
    while (ready.load(std::memory_order_acquire) < 2) sched_yield();  // acquire: barrier
    const std::int64_t start_ns = cosim::monotonic_now_ns();
    go.store(true, std::memory_order_release);  // release: threads start after set-up
    go.notify_all();
    producer.join();
    consumer.join();
    errors += mismatches;
    state.SetIterationTime(static_cast<double>(end_ns.load() - start_ns) * 1e-9);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * items));
  if (errors != 0) state.SkipWithError("consumer saw a wrong sequence");
}

// ---- round-trip latency ----

template <class Q>
void bm_roundtrip(benchmark::State& state) {
  const std::uint64_t trips = options.round_trips;
  const std::uint64_t warmup = std::min<std::uint64_t>(10'000, trips / 10);
  std::vector<std::int64_t> rtt(trips);
  double p50 = 0;
  double p99 = 0;
  double max = 0;
  for (auto _ : state) {
    auto ping = std::make_unique<Q>();
    auto pong = std::make_unique<Q>();
    std::atomic<bool> stop_echo{false};
    cosim::rt_thread echo = start_pinned("bench-echo", options.consumer_cpu, [&] {
      sample s;
      backoff wait;
      while (true) {
        if (ping->pop(s)) {
          while (!pong->push(s)) wait();
        } else if (stop_echo.load(std::memory_order_relaxed)) {  // relaxed: just a stop flag
          return;
        } else {
          wait();
        }
      }
    });
    std::int64_t total_ns = 0;
    cosim::rt_thread initiator = start_pinned("bench-init", options.producer_cpu, [&] {
      sample s;
      for (std::uint64_t i = 0; i < warmup + trips; ++i) {
        const std::int64_t t0 = cosim::monotonic_now_ns();
        while (!ping->push(make_sample(i))) cosim::cpu_relax();
        backoff wait;
        while (!pong->pop(s)) wait();
        const std::int64_t dt = cosim::monotonic_now_ns() - t0;
        if (i >= warmup) {
          rtt[i - warmup] = dt;
          total_ns += dt;
        }
      }
    });
    initiator.join();
    stop_echo.store(true, std::memory_order_relaxed);  // relaxed: just a stop flag
    echo.join();
    state.SetIterationTime(static_cast<double>(total_ns) * 1e-9);
    std::sort(rtt.begin(), rtt.end());
    p50 = static_cast<double>(rtt[trips / 2]);
    p99 = static_cast<double>(rtt[trips * 99 / 100]);
    max = static_cast<double>(rtt.back());
  }
  state.counters["p50_ns"] = p50;
  state.counters["p99_ns"] = p99;
  state.counters["max_ns"] = max;
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * trips));
}

// Each repetition is one manual-timed iteration; the repetition count is set in main().
BENCHMARK_TEMPLATE(bm_throughput, ours_queue)
    ->Name("throughput/ours")
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(bm_throughput, boost_queue)
    ->Name("throughput/boost")
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(bm_roundtrip, ours_queue)
    ->Name("roundtrip/ours")
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(bm_roundtrip, boost_queue)
    ->Name("roundtrip/boost")
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace

int run(int argc, char** argv) {
  options.producer_cpu =
      static_cast<int>(option_value(argc, argv, "--producer-cpu", "COSIM_BENCH_PRODUCER_CPU", 0));
  options.consumer_cpu =
      static_cast<int>(option_value(argc, argv, "--consumer-cpu", "COSIM_BENCH_CONSUMER_CPU", 1));
  options.items = static_cast<std::uint64_t>(
      std::max(1LL, option_value(argc, argv, "--items", "COSIM_BENCH_ITEMS", 5'000'000)));
  options.round_trips = static_cast<std::uint64_t>(std::max(
      100LL, option_value(argc, argv, "--round-trips", "COSIM_BENCH_ROUND_TRIPS", 200'000)));
  options.repetitions = static_cast<int>(
      std::max(1LL, option_value(argc, argv, "--repetitions", "COSIM_BENCH_REPETITIONS", 5)));
  options.priority =
      static_cast<int>(option_value(argc, argv, "--priority", "COSIM_BENCH_PRIORITY", 0));
  if (options.producer_cpu == options.consumer_cpu) {
    std::fprintf(stderr, "ring_bench: producer and consumer share CPU %d; numbers will be poor\n",
                 options.producer_cpu);
  }
  std::printf(
      "ring_bench: sample (%zu bytes), capacity %zu, producer CPU %d, "
      "consumer CPU %d, priority %d, %d repetitions\n",
      sizeof(sample), ring_capacity, options.producer_cpu, options.consumer_cpu, options.priority,
      options.repetitions);

  cosim::bench::counter_reporter reporter;
  if (cosim::bench::run_benchmarks(argc, argv, options.repetitions, reporter) != 0) return 1;

  const double tp_ours = reporter.median("throughput/ours", "items_per_second");
  const double tp_boost = reporter.median("throughput/boost", "items_per_second");
  const double p50_ours = reporter.median("roundtrip/ours", "p50_ns");
  const double p50_boost = reporter.median("roundtrip/boost", "p50_ns");
  const double p99_ours = reporter.median("roundtrip/ours", "p99_ns");
  const double p99_boost = reporter.median("roundtrip/boost", "p99_ns");
  const double max_ours = reporter.worst("roundtrip/ours", "max_ns");
  const double max_boost = reporter.worst("roundtrip/boost", "max_ns");
  std::printf(
      "\nring_bench summary (ours/boost; throughput: median, higher is better; round trip: "
      "median p50/p99 and worst max, lower is better):\n"
      "  throughput  ours %.2f M items/s  boost %.2f M items/s  ratio %.3f\n"
      "  rtt p50     ours %.0f ns  boost %.0f ns  ratio %.3f\n"
      "  rtt p99     ours %.0f ns  boost %.0f ns  ratio %.3f\n"
      "  rtt max     ours %.0f ns  boost %.0f ns  ratio %.3f\n",
      tp_ours * 1e-6, tp_boost * 1e-6, ratio(tp_ours, tp_boost), p50_ours, p50_boost,
      ratio(p50_ours, p50_boost), p99_ours, p99_boost, ratio(p99_ours, p99_boost), max_ours,
      max_boost, ratio(max_ours, max_boost));
  return 0;
}

int main(int argc, char** argv) {
  return cosim::bench::guarded_main(argc, argv, run);
}
