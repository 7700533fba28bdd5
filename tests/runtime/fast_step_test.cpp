// Fast-step delivery (004 Sect. 2.1): communication at the fast step, the slow subsystem on
// its own grid ahead (slowest-first) or behind (fastest-first), and the dense input history
// that evaluates on 004's polynomial points. Expected values are computed here from the
// signals' closed forms, never taken from the runtime.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "alloc_counter.hpp"
#include "cosim/runtime/dense_history.hpp"
#include "cosim/runtime/executor.hpp"
#include "cosim/runtime/scheme.hpp"
#include "cosim/runtime/system.hpp"

namespace {

using cosim::duration;
using cosim::port_role;
using cosim::subsystem;
using cosim::time_point;
namespace scheme = cosim::scheme;

constexpr std::int64_t ms = 1'000'000;  // ns

double sec(time_point t) {
  return cosim::to_seconds(t);
}
time_point at_ms(double t) {
  return time_point{duration{static_cast<std::int64_t>(t * 1e6)}};
}
double f(double t) {
  return std::sin(50.0 * t) + 0.3 * t;  // no polynomial: the points chosen matter
}

TEST(DenseHistory, InterpolatesOnThePointsAroundT) {
  cosim::dense_history d;
  d.reserve(12);
  for (int k = 0; k <= 9; ++k) d.push(at_ms(k), f(1e-3 * k));
  // 004 Sect. 2.1: t_P is the first sample after t, then the P before it.
  EXPECT_EQ(d.value_at(at_ms(2.5), 0), f(3e-3));
  EXPECT_NEAR(d.value_at(at_ms(2.5), 1), 0.5 * (f(2e-3) + f(3e-3)), 1e-15);
  // Order 2 on 1, 2, 3 ms at 2.5 ms: Lagrange weights -1/8, 3/4, 3/8.
  EXPECT_NEAR(d.value_at(at_ms(2.5), 2), -0.125 * f(1e-3) + 0.75 * f(2e-3) + 0.375 * f(3e-3),
              1e-15);
  // At a sample time the polynomial passes through it.
  EXPECT_EQ(d.value_at(at_ms(4), 3), f(4e-3));
  // Past the newest sample: extrapolation from the newest P + 1.
  EXPECT_NEAR(d.value_at(at_ms(10), 1), 2.0 * f(9e-3) - f(8e-3), 1e-14);
}

// 004 Table 1 from the fast side: slowest-first, an evaluation at t finds the slow samples
// up to the first at or after t (the slow side steps only while t2 < t1); fastest-first,
// those before t (it steps only while t2 + h2 < t1).
TEST(DenseHistory, Table1PointsAtAndBetweenSlowSamples) {
  cosim::dense_history d;
  d.reserve(8);
  for (int k = 0; k <= 4; ++k) d.push(at_ms(10.0 * k), f(1e-2 * k));  // slow grid 10 ms
  d.set_points(cosim::dense_points::first_at_or_after);
  EXPECT_EQ(d.value_at(at_ms(20), 0), f(2e-2));  // at a sample: that one, not the next
  EXPECT_EQ(d.value_at(at_ms(25), 0), f(3e-2));  // between: the next, as first_after
  EXPECT_NEAR(d.value_at(at_ms(25), 1), 0.5 * (f(2e-2) + f(3e-2)), 1e-15);
  EXPECT_EQ(d.value_at(at_ms(20), 1), f(2e-2));
  EXPECT_EQ(d.value_at(at_ms(50), 0), f(4e-2));  // past the newest: the newest
  d.set_points(cosim::dense_points::last_before);
  EXPECT_EQ(d.value_at(at_ms(20), 0), f(1e-2));  // at a sample: the one before it
  EXPECT_EQ(d.value_at(at_ms(25), 0), f(2e-2));
  // Order 1 at 20 ms on 0 and 10 ms: extrapolated, 2 f(10 ms) - f(0).
  EXPECT_NEAR(d.value_at(at_ms(20), 1), 2.0 * f(1e-2) - f(0.0), 1e-14);
  EXPECT_EQ(d.value_at(at_ms(0), 0), f(0.0));  // nothing before the start: the start
  d.set_points(cosim::dense_points::first_after);
  EXPECT_EQ(d.value_at(at_ms(20), 0), f(3e-2));  // the slow consumer's rule is unchanged
}

TEST(DenseHistory, RingKeepsTheNewestAndReplacesAtTheSameTime) {
  cosim::dense_history d;
  d.reserve(4);
  for (int k = 0; k <= 9; ++k) d.push(at_ms(k), f(1e-3 * k));
  EXPECT_EQ(d.size(), 4u);
  // Oldest kept is 6 ms: the first point after 6.5 ms is 7 ms.
  EXPECT_NEAR(d.value_at(at_ms(6.5), 1), 0.5 * (f(6e-3) + f(7e-3)), 1e-15);
  d.push(at_ms(9), 42.0);  // re-delivery at the newest time replaces the value
  EXPECT_EQ(d.size(), 4u);
  EXPECT_EQ(d.value_at(at_ms(9.5), 0), 42.0);
}

/// Output y = f(t) at every update_outputs(t); records the times its steps start at.
class producer final : public subsystem {
 public:
  explicit producer(std::string name) : subsystem(std::move(name)) {
    add_output({"y", "1", port_role::signal});
    step_times.reserve(4096);
  }
  std::vector<double> step_times;

 private:
  bool do_step(time_point t, duration /*h*/) noexcept override {
    step_times.push_back(sec(t));
    return true;
  }
  void do_update_outputs(time_point t) noexcept override { set_output(0, f(sec(t))); }
};

/// Reads its input at the start and the end of every internal step, as the trapezoidal
/// rule does.
class recorder final : public subsystem {
 public:
  explicit recorder(std::string name) : subsystem(std::move(name)) {
    add_input({"u", "1", port_role::signal});
    add_output({"z", "1", port_role::signal});
    t.reserve(4096);
    u.reserve(4096);
  }
  std::vector<double> t, u;

 private:
  void do_initialize(time_point t0) override { input(0).set_initial(t0, 0.0); }
  bool do_step(time_point ts, duration h) noexcept override {
    for (const time_point tq : {ts, ts + h}) {
      t.push_back(sec(tq));
      u.push_back(in(0, tq));
    }
    return true;
  }
  void do_update_outputs(time_point /*t*/) noexcept override { set_output(0, 0.0); }
};

class null_sink final : public cosim::row_sink {
 public:
  void begin(std::span<const std::string> /*cols*/) override {}
  void write(std::span<const double> /*row*/) noexcept override {}
  void end() override {}
};

cosim::run_outcome run(cosim::system& sys, duration H, std::vector<std::size_t> order,
                       std::int64_t steps) {
  cosim::run_plan plan;
  plan.macro_step = H;
  plan.macro_steps = steps;
  plan.scheme = cosim::scheme_kind::gauss_seidel;
  plan.order = std::move(order);
  null_sink sink;
  return cosim::run_offline(sys, plan, cosim::safety_limits{}, sink);
}

// Slowest-first: the slow producer (own step 10 ms, H = 2 ms) runs ahead, so the fast
// consumer only ever interpolates between the slow samples around its times.
TEST(FastStep, SlowestFirstRunsAheadAndTheFastSideInterpolates) {
  cosim::system sys;
  auto slow = std::make_unique<producer>("slow");
  auto fast = std::make_unique<recorder>("fast");
  producer* sp = slow.get();
  recorder* fp = fast.get();
  sys.add(std::move(slow));
  sys.add(std::move(fast));
  sys.connect("slow.y", "fast.u");
  const duration H{2 * ms};
  scheme::configure_multirate(sys.at(0), {false, true, true}, duration{10 * ms}, H);
  sys.at(1).set_step_size(H);
  sys.at(1).input(0).set_order(1);
  ASSERT_EQ(run(sys, H, {0, 1}, 12).status, cosim::run_status::completed);  // 24 ms
  // Steps start at 0, 10, 20 ms: each at the first macro step of its interval.
  ASSERT_EQ(sp->step_times.size(), 3u);
  for (std::size_t j = 0; j < 3; ++j)
    EXPECT_NEAR(sp->step_times[j], 0.01 * static_cast<double>(j), 1e-15);
  EXPECT_EQ(sys.at(0).multirate().own_time(), time_point{duration{30 * ms}});
  ASSERT_EQ(fp->t.size(), 24u);
  for (std::size_t i = 0; i < fp->t.size(); ++i) {
    // Linear interpolation between the slow samples at 10 ms multiples around t.
    const double t = fp->t[i];
    const double t0 = 0.01 * std::floor(t / 0.01 + 1e-9);
    const double t_next = std::abs(t - t0) < 1e-12 ? t0 : t0 + 0.01;
    const double w = t_next > t0 ? (t - t0) / 0.01 : 0.0;
    EXPECT_NEAR(fp->u[i], (1.0 - w) * f(t0) + w * f(t_next), 1e-12) << "t = " << t;
  }
}

// Fastest-first: the slow consumer (own step 10 ms) steps behind, after the fast producer
// delivered every 2 ms sample of its interval. Its inputs at both ends of its step are the
// samples there (004's points, not the newest few), for any order.
TEST(FastStep, FastestFirstSlowSideReadsTheDenseHistory) {
  for (const bool dense : {true, false}) {
    cosim::system sys;
    auto fast = std::make_unique<producer>("fast");
    auto slow = std::make_unique<recorder>("slow");
    recorder* rp = slow.get();
    sys.add(std::move(fast));
    sys.add(std::move(slow));
    sys.connect("fast.y", "slow.u");
    const duration H{2 * ms};
    sys.at(0).set_step_size(H);
    scheme::configure_multirate(sys.at(1), {false, true, false}, duration{10 * ms}, H);
    sys.at(1).input(0).set_order(2);
    if (dense) sys.at(1).input(0).keep_dense_history(5 + 6);
    ASSERT_EQ(run(sys, H, {0, 1}, 15).status, cosim::run_status::completed);  // 30 ms
    ASSERT_EQ(rp->t.size(), 6u);  // steps 0-10, 10-20, 20-30
    double worst = 0.0;
    for (std::size_t i = 0; i < rp->t.size(); ++i)
      worst = std::max(worst, std::abs(rp->u[i] - f(rp->t[i])));
    if (dense)
      EXPECT_LT(worst, 1e-15);
    else
      EXPECT_GT(worst, 1e-3);  // the newest three samples extrapolated 10 ms back
  }
}

// The stepping of both sides (advance + deliver, ahead and behind, dense history) touches
// no heap.
TEST(FastStep, SteppingAllocatesNothing) {
  for (const bool ahead : {true, false}) {
    cosim::system sys;
    sys.add(std::make_unique<producer>("fast"));
    sys.add(std::make_unique<recorder>("slow"));
    sys.add(std::make_unique<producer>("slow_out"));
    sys.add(std::make_unique<recorder>("fast_in"));
    sys.connect("fast.y", "slow.u");
    sys.connect("slow_out.y", "fast_in.u");
    const duration H{2 * ms}, h{10 * ms};
    sys.at(0).set_step_size(H);
    sys.at(3).set_step_size(H);
    scheme::configure_multirate(sys.at(1), {false, true, ahead}, h, H);
    scheme::configure_multirate(sys.at(2), {false, true, ahead}, h, H);
    for (std::size_t i : {1u, 3u}) sys.at(i).input(0).set_order(3);
    sys.at(1).input(0).keep_dense_history(11);
    cosim::run_plan plan;
    plan.macro_step = H;
    plan.order = {2, 0, 1, 3};
    cosim::initialize_and_exchange(sys, plan);
    time_point t{};
    const cosim::test::alloc_window window;
    for (int n = 0; n < 200; ++n) {  // fewer than the recorders' reserved 4096 entries
      for (std::size_t i : plan.order) {
        ASSERT_TRUE(scheme::advance(sys.at(i), t, H));
        scheme::deliver(sys, i, t + H);
      }
      t += H;
    }
    EXPECT_EQ(window.allocations(), 0u) << (ahead ? "ahead" : "behind");
  }
}

}  // namespace
