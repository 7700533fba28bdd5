// Multirate interface options of 004 Sect. 2 on hand-written subsystems whose inputs and
// outputs are known in closed form: slowest-first / fastest-first synchronisation with
// interpolation and extrapolation orders, smoothing (interval averages) and non-matching
// time grids. Expected values are computed by hand from the signals, never by the runtime.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

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
const duration H{4 * ms};

double sec(time_point t) {
  return cosim::to_seconds(t);
}

/// Output y(t) = a + b t + c t^2, evaluated exactly at every update_outputs(t); records the
/// times its steps start at.
class signal_producer final : public subsystem {
 public:
  signal_producer(std::string name, double a, double b, double c)
      : subsystem(std::move(name)), a_(a), b_(b), c_(c) {
    add_output({"y", "1", port_role::signal});
    step_times.reserve(4096);
  }
  [[nodiscard]] double y(double t) const { return a_ + b_ * t + c_ * t * t; }
  std::vector<double> step_times;

 private:
  bool do_step(time_point t, duration /*h*/) noexcept override {
    step_times.push_back(sec(t));
    return true;
  }
  void do_update_outputs(time_point t) noexcept override { set_output(0, y(sec(t))); }
  double a_, b_, c_;
};

/// Reads its input at the start of every internal step and records (t, u(t)).
class input_recorder final : public subsystem {
 public:
  explicit input_recorder(std::string name) : subsystem(std::move(name)) {
    add_input({"u", "1", port_role::signal});
    add_output({"z", "1", port_role::signal});
    t.reserve(4096);
    u.reserve(4096);
  }
  std::vector<double> t, u;

 private:
  void do_initialize(time_point t0) override { input(0).set_initial(t0, 0.0); }
  bool do_step(time_point ts, duration /*h*/) noexcept override {
    t.push_back(sec(ts));
    u.push_back(in(0, ts));
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

struct two_rate {
  cosim::system sys;
  signal_producer* slow = nullptr;
  input_recorder* fast = nullptr;
};

/// Slow producer (step H) feeding a fast consumer (step H/4) with the given input order.
std::unique_ptr<two_rate> make_two_rate(double a, double b, double c, int order) {
  auto s = std::make_unique<two_rate>();
  auto slow = std::make_unique<signal_producer>("slow", a, b, c);
  auto fast = std::make_unique<input_recorder>("fast");
  s->slow = slow.get();
  s->fast = fast.get();
  s->sys.add(std::move(fast));  // model order: fast first, so sync_order must reorder
  s->sys.add(std::move(slow));
  s->sys.connect("slow.y", "fast.u");
  s->sys.at(0).set_step_size(H / 4);
  s->sys.at(1).set_step_size(H);
  s->sys.at(0).input(0).set_order(order);
  return s;
}

cosim::run_outcome run(cosim::system& sys, std::vector<std::size_t> order, std::int64_t steps) {
  cosim::run_plan plan;
  plan.macro_step = H;
  plan.macro_steps = steps;
  plan.scheme = cosim::scheme_kind::gauss_seidel;
  plan.order = std::move(order);
  null_sink sink;
  return cosim::run_offline(sys, plan, cosim::safety_limits{}, sink);
}

TEST(Multirate, SyncOrderFollowsStepSizes) {
  auto s = make_two_rate(0, 1, 0, 0);
  EXPECT_EQ(scheme::sync_order(s->sys, scheme::sync::slowest_first, {0, 1}),
            (std::vector<std::size_t>{1, 0}));
  EXPECT_EQ(scheme::sync_order(s->sys, scheme::sync::fastest_first, {1, 0}),
            (std::vector<std::size_t>{0, 1}));
}

// Slowest-first (004 Sect. 2.1, step 2a): the slow subsystem has already delivered
// y(t_{n+1}) when the fast one steps through (t_n, t_{n+1}), so a first-order input is a
// linear interpolation, exact for a linear signal.
TEST(Multirate, SlowestFirstOrder1InterpolatesExactly) {
  auto s = make_two_rate(0.5, -3.0, 0.0, 1);
  const auto order = scheme::sync_order(s->sys, scheme::sync::slowest_first, {0, 1});
  ASSERT_EQ(run(s->sys, order, 25).status, cosim::run_status::completed);
  ASSERT_EQ(s->fast->t.size(), 100u);
  for (std::size_t i = 0; i < s->fast->t.size(); ++i)
    EXPECT_NEAR(s->fast->u[i], s->slow->y(s->fast->t[i]), 1e-12) << "t = " << s->fast->t[i];
}

// Order 0 holds the newest sample: y(t_{n+1}) over the whole interval, not exact.
TEST(Multirate, SlowestFirstOrder0HoldsTheSampleAhead) {
  auto s = make_two_rate(0.5, -3.0, 0.0, 0);
  const auto order = scheme::sync_order(s->sys, scheme::sync::slowest_first, {0, 1});
  run(s->sys, order, 10);
  const double Hs = cosim::to_seconds(H);
  for (std::size_t i = 0; i < s->fast->t.size(); ++i) {
    const std::size_t n = i / 4;  // the slow step that fast sample i falls in (4 per step)
    const double t_next = Hs * (static_cast<double>(n) + 1.0);
    EXPECT_NEAR(s->fast->u[i], s->slow->y(t_next), 1e-12);
  }
}

// A quadratic signal y = t^2 tells interpolation from extrapolation. With order 1,
// slowest-first interpolates between t_n and t_{n+1}: t_n^2 + (t - t_n)(t_n + t_{n+1});
// fastest-first extrapolates from t_{n-1}, t_n: t_n^2 + (t - t_n)(t_n + t_{n-1}).
TEST(Multirate, FastestFirstExtrapolatesSlowestFirstInterpolates) {
  const double Hs = cosim::to_seconds(H);
  for (auto mode : {scheme::sync::slowest_first, scheme::sync::fastest_first}) {
    auto s = make_two_rate(0.0, 0.0, 1.0, 1);
    run(s->sys, scheme::sync_order(s->sys, mode, {0, 1}), 12);
    for (std::size_t i = 8; i < s->fast->t.size(); ++i) {  // past the start-up samples
      const double t = s->fast->t[i];
      const std::size_t n = i / 4;  // the slow step that fast sample i falls in (4 per step)
      const double tn = Hs * static_cast<double>(n);
      const double expected = mode == scheme::sync::slowest_first
                                  ? tn * tn + (t - tn) * (tn + tn + Hs)
                                  : tn * tn + (t - tn) * (tn + tn - Hs);
      EXPECT_NEAR(s->fast->u[i], expected, 1e-12)
          << (mode == scheme::sync::slowest_first ? "SF" : "FF") << " t = " << t;
    }
  }
}

// Smoothing (004 Sect. 2.2): a producer with output y(t) = t and four internal steps per
// interval delivers (t_n + H/4 + t_n + H/2 + t_n + 3H/4 + t_n + H)/4 = t_n + 5H/8,
// which a zero-order consumer holds over the next interval. Its own output is unchanged.
TEST(Multirate, SmoothingDeliversTheIntervalAverage) {
  cosim::system sys;
  auto fast = std::make_unique<signal_producer>("fast", 0.0, 1.0, 0.0);
  auto slow = std::make_unique<input_recorder>("slow");
  signal_producer* fp = fast.get();
  input_recorder* sp = slow.get();
  sys.add(std::move(fast));
  sys.add(std::move(slow));
  sys.connect("fast.y", "slow.u");
  scheme::configure_multirate(sys.at(0), {true, false}, H / 4, H);
  sys.at(1).set_step_size(H);
  EXPECT_EQ(sys.at(0).step_size(), H / 4);
  run(sys, {0, 1}, 10);  // fastest-first: the slow one uses the fresh average
  const double Hs = cosim::to_seconds(H);
  ASSERT_EQ(sp->t.size(), 10u);
  for (std::size_t n = 0; n < sp->t.size(); ++n)
    EXPECT_NEAR(sp->u[n], Hs * (static_cast<double>(n) + 5.0 / 8.0), 1e-12) << "n = " << n;
  EXPECT_NEAR(fp->output(0), 10 * Hs, 1e-12);
  // The primitive the executors publish.
  EXPECT_NEAR(scheme::delivered_output(*fp, 0), 9 * Hs + 5.0 / 8.0 * Hs, 1e-12);
}

// Non-matching grid: h = 1.5 ms does not divide H = 4 ms. The producer steps on its own
// grid 0, 1.5, 3, 4.5, ... to the last point <= t_{n+1} and delivers samples stamped with
// that time; the consumer's first-order input then interpolates between true sample times
// (slowest-first), exact for a linear signal.
TEST(Multirate, NonMatchingGridStepsOnItsOwnGrid) {
  cosim::system sys;
  auto slow = std::make_unique<signal_producer>("slow", 1.0, 2.0, 0.0);
  auto fast = std::make_unique<input_recorder>("fast");
  signal_producer* sp = slow.get();
  input_recorder* fp = fast.get();
  sys.add(std::move(slow));
  sys.add(std::move(fast));
  sys.connect("slow.y", "fast.u");
  const duration h{1'500'000};
  scheme::configure_multirate(sys.at(0), {false, true}, h, H);
  EXPECT_EQ(sys.at(0).step_size(), H);  // validate_plan needs h | H; see multirate.hpp
  EXPECT_EQ(scheme::internal_step(sys.at(0)), h);
  sys.at(1).set_step_size(H / 4);
  sys.at(1).input(0).set_order(1);
  ASSERT_EQ(run(sys, {0, 1}, 5).status, cosim::run_status::completed);
  // 20 ms: own steps start at 0, 1.5, ..., 18 ms; the last ends at 19.5 ms.
  ASSERT_EQ(sp->step_times.size(), 13u);
  for (std::size_t j = 0; j < sp->step_times.size(); ++j)
    EXPECT_NEAR(sp->step_times[j], 1.5e-3 * static_cast<double>(j), 1e-15);
  EXPECT_EQ(sys.at(0).multirate().own_time(), time_point{duration{19'500'000}});
  // The consumer's last sample is stamped 19.5 ms, the last own grid point <= 20 ms.
  EXPECT_EQ(sys.at(1).input(0).history().newest_time(), time_point{duration{19'500'000}});
  for (std::size_t i = 0; i < fp->t.size(); ++i)
    EXPECT_NEAR(fp->u[i], sp->y(fp->t[i]), 1e-12) << "t = " << fp->t[i];
}

// A non-matching step larger than H: some macro steps take no step at all.
TEST(Multirate, NonMatchingStepLargerThanMacroStep) {
  cosim::system sys;
  auto slow = std::make_unique<signal_producer>("slow", 0.0, 1.0, 0.0);
  signal_producer* sp = slow.get();
  sys.add(std::move(slow));
  auto rec = std::make_unique<input_recorder>("fast");
  sys.add(std::move(rec));
  sys.connect("slow.y", "fast.u");
  scheme::configure_multirate(sys.at(0), {false, true}, duration{10 * ms}, H);
  sys.at(1).set_step_size(H);
  ASSERT_EQ(run(sys, {0, 1}, 8).status, cosim::run_status::completed);  // 32 ms
  ASSERT_EQ(sp->step_times.size(), 3u);  // 0, 10, 20 -> own time 30 ms
  EXPECT_EQ(sys.at(0).multirate().own_time(), time_point{duration{30 * ms}});
  EXPECT_EQ(sys.at(1).input(0).history().newest_time(), time_point{duration{30 * ms}});
  EXPECT_NEAR(sys.at(1).input(0).history().newest(), 0.030, 1e-15);
}

// Re-initialising restarts the own grid (a system run twice gives the same samples).
TEST(Multirate, InitializeRestartsOwnGrid) {
  cosim::system sys;
  sys.add(std::make_unique<signal_producer>("slow", 0.0, 1.0, 0.0));
  sys.add(std::make_unique<input_recorder>("fast"));
  sys.connect("slow.y", "fast.u");
  scheme::configure_multirate(sys.at(0), {false, true}, duration{3 * ms}, H);
  sys.at(1).set_step_size(H);
  run(sys, {0, 1}, 5);
  const time_point first = sys.at(0).multirate().own_time();
  run(sys, {0, 1}, 5);
  EXPECT_EQ(sys.at(0).multirate().own_time(), first);
  EXPECT_EQ(first, time_point{duration{18 * ms}});
}

}  // namespace
