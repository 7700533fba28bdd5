// The one translation unit of runtime_tests that defines the operator new/delete
// replacements; see alloc_counter.hpp.
#define COSIM_DEFINE_ALLOC_COUNTER
#include "alloc_counter.hpp"

#include <gtest/gtest.h>
#include <spdlog/logger.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "cosim/runtime/latency_histogram.hpp"
#include "cosim/runtime/latest_value.hpp"
#include "cosim/runtime/rt_log.hpp"
#include "cosim/runtime/rt_thread.hpp"
#include "cosim/runtime/spsc_ring.hpp"
#include "cosim/runtime/stop_source.hpp"

namespace cosim {
namespace {

// A multi-word, trivially copyable payload like a coupling message: a torn copy would show
// as fields that disagree.
struct sample4 {
  std::uint64_t sequence = 0;
  std::int64_t tick = 0;
  std::array<double, 4> values{};
};

// The drains here only own channels; what they would log is irrelevant.
std::shared_ptr<spdlog::logger> quiet_logger() {
  return std::make_shared<spdlog::logger>("alloc_guard_quiet");  // no sinks: discards
}

// ---- the probe itself ----

TEST(AllocCounter, CountsThisThreadsAllocations) {
  const test::alloc_window window;
  auto p = std::make_unique<int>(3);
  std::vector<double> v(100);
  const std::uint64_t n = window.allocations();
  EXPECT_EQ(n, 2u);
}

TEST(AllocCounter, OtherThreadsCountGloballyButNotHere) {
  const std::uint64_t global_before = test::alloc_count_global();
  std::uint64_t other_thread_count = 0;
  std::thread other([&] {
    const test::alloc_window window;
    for (int i = 0; i < 10; ++i) {
      auto p = std::make_unique<long>(i);
      (void)p;
    }
    other_thread_count = window.allocations();
  });
  const test::alloc_window here;
  other.join();
  const std::uint64_t mine = here.allocations();
  EXPECT_EQ(other_thread_count, 10u);
  EXPECT_GE(test::alloc_count_global() - global_before, 10u);
  EXPECT_EQ(mine, 0u);
}

// NOLINTBEGIN(clang-analyzer-unix.Malloc): the analyzer pairs the replaced operator new
// (malloc) with the delete-expression and misses that operator delete frees it.
TEST(AllocCounter, AlignedAndNothrowFormsAreCounted) {
  struct alignas(128) wide {
    char bytes[128];
  };
  const test::alloc_window window;
  auto* a = new wide;
  auto* b = new (std::nothrow) int[4];
  const std::uint64_t n = window.allocations();
  delete a;
  delete[] b;
  EXPECT_EQ(n, 2u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % 128, 0u);
}
// NOLINTEND(clang-analyzer-unix.Malloc)

// ---- the RT-path operations allocate nothing ----

TEST(RtPathAllocations, SpscRingOperationsAllocateNothing) {
  spsc_ring<sample4> ring(8);
  sample4 s;
  std::uint64_t ok = 0;
  const test::alloc_window window;
  for (std::uint64_t i = 0; i < 100; ++i) {  // wraps, fills and empties repeatedly
    s.sequence = i;
    ok += ring.try_push(s) ? 1 : 0;
    ok += ring.push(s) ? 1 : 0;
    if (i % 10 == 0) {  // net +1 per iteration in between, so the ring overflows
      while (ring.try_pop(s)) ++ok;
    }
    if (const sample4* f = ring.front()) {
      ok += f->sequence;
      ring.pop();
    }
  }
  ok += ring.size_approx() + ring.drops();
  const std::uint64_t n = window.allocations();
  EXPECT_EQ(n, 0u);
  EXPECT_GT(ok, 0u);
  EXPECT_GT(ring.drops(), 0u) << "the full-ring path was exercised";
}

TEST(RtPathAllocations, StopSourceRaiseAndQueriesAllocateNothing) {
  // A driver raises stale_input on its real-time thread; the executor polls every step.
  stop_source op;
  stop_source run(&op);
  const char* who = "joystick";
  const test::alloc_window window;
  int seen = 0;
  for (int i = 0; i < 100; ++i) seen += run.stop_requested() ? 1 : 0;
  const bool won = run.raise(stop_cause::stale_input, 0, who);
  const bool lost = run.raise(stop_cause::deadline);
  op.raise(stop_cause::operator_signal, 2);
  seen += run.stop_requested() ? 1 : 0;
  const stop_cause c = run.cause();
  const char* w = run.who();
  const std::uint64_t n = window.allocations();
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(seen, 1);
  EXPECT_TRUE(won);
  EXPECT_FALSE(lost);
  EXPECT_EQ(c, stop_cause::stale_input);
  EXPECT_EQ(w, who);
}

TEST(RtPathAllocations, LatestValueWriteAndReadAllocateNothing) {
  latest_value<sample4> slot;
  sample4 out;
  std::uint64_t version = 0;
  std::uint64_t sum = 0;
  const test::alloc_window window;
  for (std::uint64_t i = 0; i < 100; ++i) {
    sample4 s;
    s.sequence = i;
    slot.write(s);
    sum += slot.read(out);
    sum += slot.read_if_newer(out, version) ? 1 : 0;
    sum += slot.has_new() ? 1 : 0;
  }
  const std::uint64_t n = window.allocations();
  EXPECT_EQ(n, 0u);
  EXPECT_GT(sum, 0u);
}

TEST(RtPathAllocations, HistogramRecordAllocatesNothing) {
  latency_histogram h;
  const test::alloc_window window;
  for (std::int64_t ns = -1000; ns < 20'000'000; ns += 997) h.record_ns(ns);
  const double p99 = h.percentile_us(99);
  const std::uint64_t n = window.allocations();
  EXPECT_EQ(n, 0u);
  EXPECT_GT(p99, 0.0);
  EXPECT_GT(h.overflow_count(), 0u);
}

TEST(RtPathAllocations, RtLogPostAllocatesNothingEvenWhenFull) {
  rt_log_drain drain(quiet_logger());
  rt_log_channel& channel = drain.add_channel("alloc", 16);
  int accepted = 0;
  const test::alloc_window window;
  for (int i = 0; i < 64; ++i) {
    accepted += channel.post(rt_event_code::overrun, i, 1.0, 2.0) ? 1 : 0;
    rt_event e;
    e.code = rt_event_code::info;
    accepted += channel.post(e) ? 1 : 0;
  }
  const std::int64_t t = monotonic_now_ns();
  const std::uint64_t n = window.allocations();
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(accepted, 16);
  EXPECT_GT(channel.drops(), 0u);
  EXPECT_GT(t, 0);
}

// The whole RT loop shape inside an rt_thread: after set-up, zero allocations and zero
// page faults while producing, logging and measuring.
TEST(RtPathAllocations, SteadyStateRtLoopAllocatesNothingAndDoesNotFault) {
  spsc_ring<sample4> ring(64);
  latest_value<sample4> setpoint;
  latency_histogram histogram;
  rt_log_drain drain(quiet_logger());
  rt_log_channel& log = drain.add_channel("loop", 64);
  std::uint64_t allocations = 1;
  long faults = -1;
  rt_thread thread({.name = "alloc-loop"}, [&] {
    prefault_stack(std::size_t{64} * 1024);
    sample4 s;
    sample4 sp;
    // One warm-up pass touches every line the loop uses.
    for (int warm = 0; warm < 2; ++warm) {
      const test::alloc_window window;
      const long faults_before = test::minor_faults_this_thread();
      for (std::uint64_t i = 0; i < 10'000; ++i) {
        const std::int64_t t0 = monotonic_now_ns();
        s.sequence = i;
        s.tick = static_cast<std::int64_t>(i);
        if (!ring.push(s)) log.post(rt_event_code::drop, s.tick);
        sample4 popped;
        if (i % 2 == 0) ring.try_pop(popped);
        setpoint.write(s);
        setpoint.read(sp);
        histogram.record_ns(monotonic_now_ns() - t0);
      }
      allocations = window.allocations();
      faults = test::minor_faults_this_thread() - faults_before;
    }
  });
  thread.join();
  EXPECT_EQ(allocations, 0u);
  EXPECT_EQ(faults, 0);
  EXPECT_EQ(histogram.count(), 20'000u);
}

}  // namespace
}  // namespace cosim
