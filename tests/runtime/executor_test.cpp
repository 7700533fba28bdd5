// Offline executor semantics with tiny hand-written subsystems whose every output is known
// in closed form: Jacobi vs Gauss-Seidel ordering (000 Sect. 2), multirate sub-stepping,
// output thinning, divergence handling, the energy monitor (000 Eqs. (29)-(33),
// 002 Eqs. (5)-(11)), safety limits and plan validation.
#include "cosim/runtime/executor.hpp"
#include "cosim/runtime/json_writer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <csignal>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cosim/runtime/error.hpp"
#include "cosim/runtime/system.hpp"
#include "cosim/runtime/threaded_executor.hpp"

namespace {

using cosim::duration;
using cosim::port_role;
using cosim::run_outcome;
using cosim::run_plan;
using cosim::run_status;
using cosim::safety_limits;
using cosim::scheme_kind;
using cosim::subsystem;
using cosim::time_point;

constexpr std::int64_t ms = 1'000'000;  // ns
const duration H{1 * ms};

/// Collects rows in memory.
class memory_sink final : public cosim::row_sink {
 public:
  void begin(std::span<const std::string> cols) override {
    columns.assign(cols.begin(), cols.end());
    ++begins;
  }
  void write(std::span<const double> row) noexcept override {
    rows.emplace_back(row.begin(), row.end());
  }
  void end() override { ++ends; }

  [[nodiscard]] std::size_t col(const std::string& name) const {
    for (std::size_t i = 0; i < columns.size(); ++i)
      if (columns[i] == name) return i;
    ADD_FAILURE() << "no column " << name;
    return 0;
  }
  [[nodiscard]] double at(std::size_t row, const std::string& name) const {
    return rows[row][col(name)];
  }

  std::vector<std::string> columns;
  std::vector<std::vector<double>> rows;
  int begins = 0;
  int ends = 0;
};

/// No inputs; output y(t) = (t - t0) / 1 ms, i.e. the macro-step count for H = 1 ms (exact
/// in double). Counts its internal steps.
class clock_sub final : public subsystem {
 public:
  explicit clock_sub(std::string name) : subsystem(std::move(name)) {
    add_output({"y", "1", port_role::signal});
  }
  int steps = 0;

 private:
  void do_initialize(time_point t0) override { t0_ = t0; }
  bool do_step(time_point /*t*/, duration /*h*/) noexcept override {
    ++steps;
    return true;
  }
  void do_update_outputs(time_point t) noexcept override {
    set_output(0, static_cast<double>((t - t0_).count()) / static_cast<double>(ms));
  }
  time_point t0_{};
};

/// Output y(t) = its input u extrapolated to t (direct feedthrough). Records every internal
/// step (time, size, input seen) and every output evaluation time.
class echo_sub final : public subsystem {
 public:
  explicit echo_sub(std::string name, double initial = -1.0)
      : subsystem(std::move(name)), initial_(initial) {
    add_input({"u", "1", port_role::signal});
    add_output({"y", "1", port_role::signal});
    step_t.reserve(4096);
    step_h.reserve(4096);
    step_u.reserve(4096);
    output_t.reserve(4096);
  }
  std::vector<std::int64_t> step_t, step_h, output_t;
  std::vector<double> step_u;

 private:
  void do_initialize(time_point t0) override { input(0).set_initial(t0, initial_); }
  bool do_step(time_point t, duration h) noexcept override {
    step_t.push_back(t.time_since_epoch().count());
    step_h.push_back(h.count());
    step_u.push_back(in(0, t));
    return true;
  }
  void do_update_outputs(time_point t) noexcept override {
    output_t.push_back(t.time_since_epoch().count());
    set_output(0, in(0, t));
  }
  double initial_;
};

/// One input and one output in the given units ("" = none declared, as an FMU variable
/// without a unit).
class unit_sub final : public subsystem {
 public:
  unit_sub(std::string name, const std::string& in_unit, const std::string& out_unit)
      : subsystem(std::move(name)) {
    add_input({"u", in_unit, port_role::signal});
    add_output({"y", out_unit, port_role::signal});
  }

 private:
  bool do_step(time_point /*t*/, duration /*h*/) noexcept override { return true; }
  void do_update_outputs(time_point t) noexcept override { set_output(0, in(0, t)); }
};

TEST(System, UnitsMustMatchUnlessOneSideDeclaresNone) {
  cosim::system sys;
  sys.add(std::make_unique<clock_sub>("clock"));            // y [1]
  sys.add(std::make_unique<unit_sub>("any", "", ""));       // no units declared
  sys.add(std::make_unique<unit_sub>("metres", "m", "m"));  // u, y [m]
  sys.add(std::make_unique<echo_sub>("echo"));              // u [1]
  EXPECT_NO_THROW(sys.connect("clock.y", "any.u"));
  EXPECT_NO_THROW(sys.connect("any.y", "metres.u"));
  try {
    sys.connect("metres.y", "echo.u");
    ADD_FAILURE() << "m into 1 connected";
  } catch (const cosim::error& e) {
    EXPECT_NE(std::string(e.what()).find("[m] to echo.u [1]: units differ"), std::string::npos)
        << e.what();
  }
}

/// Goes bad at macro step `bad_step` (t >= bad_step ms) in one of three ways.
enum class failure { nan_output, step_false, nan_variable };
class faulty_sub final : public subsystem {
 public:
  faulty_sub(std::string name, failure how, std::int64_t bad_step)
      : subsystem(std::move(name)), how_(how), bad_(bad_step) {
    add_output({"y", "1", port_role::signal});
    add_variable("z", "1", &z_);
  }

 private:
  bool do_step(time_point t, duration h) noexcept override {
    const bool bad = (t + h).time_since_epoch().count() >= bad_ * ms;
    return !(bad && how_ == failure::step_false);
  }
  void do_update_outputs(time_point t) noexcept override {
    const double y = static_cast<double>(t.time_since_epoch().count()) / static_cast<double>(ms);
    const bool bad = t.time_since_epoch().count() >= bad_ * ms;
    set_output(0,
               bad && how_ == failure::nan_output ? std::numeric_limits<double>::quiet_NaN() : y);
    z_ = bad && how_ == failure::nan_variable ? std::numeric_limits<double>::quiet_NaN() : 2.0 * y;
  }
  failure how_;
  std::int64_t bad_;
  double z_ = 0.0;
};

run_plan make_plan(std::int64_t steps, std::vector<std::size_t> order,
                   scheme_kind scheme = scheme_kind::jacobi, std::int64_t output_every = 1) {
  run_plan p;
  p.start = time_point{};
  p.macro_step = H;
  p.macro_steps = steps;
  p.scheme = scheme;
  p.order = std::move(order);
  p.output_every = output_every;
  return p;
}

template <class T>
T* add(cosim::system& sys, std::unique_ptr<T> s, duration h) {
  T* raw = s.get();
  raw->set_step_size(h);
  sys.add(std::move(s));
  return raw;
}

// ---------------------------------------------------------------------------------------
// Ordering semantics (000 Sect. 2)

struct echo_case {
  scheme_kind scheme;
  std::vector<std::size_t> order;  // 0 = clock, 1 = echo
  std::int64_t delay;              // macro steps between clock and echo
  double first_echo;               // echo output in the t0 row
};

void run_echo_case(const echo_case& c) {
  cosim::system sys;
  add(sys, std::make_unique<clock_sub>("clock"), H);
  add(sys, std::make_unique<echo_sub>("echo"), H);
  sys.connect("clock.y", "echo.u");
  sys.add_probe("x", "clock.y");
  sys.add_probe("y", "echo.y");
  memory_sink sink;
  const run_outcome out = cosim::run_offline(sys, make_plan(6, c.order, c.scheme), {}, sink);
  ASSERT_EQ(out.status, run_status::completed);
  EXPECT_EQ(out.stop_reason, "end_time");
  ASSERT_EQ(sink.rows.size(), 7u);
  EXPECT_EQ(out.rows, 7);
  EXPECT_EQ(sink.at(0, "y"), c.first_echo);
  for (std::size_t n = 0; n < sink.rows.size(); ++n) {
    EXPECT_DOUBLE_EQ(sink.at(n, "t"), static_cast<double>(n) * 1e-3);
    EXPECT_EQ(sink.at(n, "x"), static_cast<double>(n));
    if (n > 0) {
      EXPECT_EQ(sink.at(n, "y"), static_cast<double>(static_cast<std::int64_t>(n) - c.delay))
          << "row " << n;
    }
  }
}

TEST(Executor, JacobiDelaysAFeedthroughSignalByOneMacroStep) {
  // Jacobi: every subsystem steps with samples up to t_n, then all outputs are delivered;
  // with ZOH the echo at t_{n+1} shows the clock's t_n value, whatever the order.
  run_echo_case({scheme_kind::jacobi, {0, 1}, 1, 0.0});
  // Start-up exchange in order echo, clock: the echo evaluates before the clock has
  // delivered, so row 0 shows its initial value -1.
  run_echo_case({scheme_kind::jacobi, {1, 0}, 1, -1.0});
}

TEST(Executor, GaussSeidelProducerFirstHasNoDelay) {
  run_echo_case({scheme_kind::gauss_seidel, {0, 1}, 0, 0.0});
}

TEST(Executor, GaussSeidelConsumerFirstKeepsTheDelay) {
  run_echo_case({scheme_kind::gauss_seidel, {1, 0}, 1, -1.0});
}

// ---------------------------------------------------------------------------------------
// Multirate: k = H/h internal steps at t_n + j h, then outputs at t_n + H

TEST(Executor, MultirateSubStepsAtTheRightTimes) {
  for (const int order : {0, 1}) {
    cosim::system sys;
    clock_sub* clock = add(sys, std::make_unique<clock_sub>("clock"), H);
    const duration h{200'000};  // H / 5
    echo_sub* echo = add(sys, std::make_unique<echo_sub>("echo"), h);
    sys.connect("clock.y", "echo.u");
    sys.at(1).input(0).set_order(order);
    memory_sink sink;
    constexpr std::int64_t N = 8;
    const run_outcome out = cosim::run_offline(sys, make_plan(N, {0, 1}), {}, sink);
    ASSERT_EQ(out.status, run_status::completed);
    EXPECT_EQ(out.macro_steps, N);
    EXPECT_EQ(clock->steps, N);
    ASSERT_EQ(echo->step_t.size(), static_cast<std::size_t>(5 * N));
    for (std::int64_t n = 0; n < N; ++n) {
      for (std::int64_t j = 0; j < 5; ++j) {
        const auto i = static_cast<std::size_t>(5 * n + j);
        EXPECT_EQ(echo->step_t[i], n * ms + j * 200'000) << "n " << n << " j " << j;
        EXPECT_EQ(echo->step_h[i], 200'000);
        // Input seen at the sub-step (Jacobi, samples up to t_n; clock value = t / 1 ms):
        // ZOH holds n; first-order extrapolation through (t_{n-1}, n-1), (t_n, n) is exact
        // on the linear clock, n + j/5, once two samples exist (n >= 1).
        const double expected = (order == 0 || n == 0)
                                    ? static_cast<double>(n)
                                    : static_cast<double>(n) + 0.2 * static_cast<double>(j);
        EXPECT_NEAR(echo->step_u[i], expected, 1e-12)
            << "order " << order << " n " << n << " j " << j;
      }
    }
    // Outputs: once at t0 (start-up), then once per macro step at t_n + H.
    ASSERT_EQ(echo->output_t.size(), static_cast<std::size_t>(N + 1));
    for (std::int64_t n = 0; n <= N; ++n)
      EXPECT_EQ(echo->output_t[static_cast<std::size_t>(n)], n * ms);
  }
}

// ---------------------------------------------------------------------------------------
// Output thinning

TEST(Executor, OutputEveryThinsRowsAndKeepsTheFinalState) {
  for (const std::int64_t N : {9, 10}) {
    cosim::system sys;
    add(sys, std::make_unique<clock_sub>("clock"), H);
    sys.add_probe("x", "clock.y");
    memory_sink sink;
    const run_outcome out =
        cosim::run_offline(sys, make_plan(N, {0}, scheme_kind::jacobi, 3), {}, sink);
    ASSERT_EQ(out.status, run_status::completed);
    EXPECT_EQ(sink.begins, 1);
    EXPECT_EQ(sink.ends, 1);
    const std::vector<std::string> cols{"t", "x", "dP", "dE", "sum_abs_dE"};
    EXPECT_EQ(sink.columns, cols);
    EXPECT_EQ(cosim::result_columns(sys), cols);
    // Rows at steps 0, 3, 6, 9, plus the final state when N is not a multiple of 3.
    const std::vector<double> expected =
        N == 9 ? std::vector<double>{0, 3, 6, 9} : std::vector<double>{0, 3, 6, 9, 10};
    ASSERT_EQ(sink.rows.size(), expected.size()) << "N = " << N;
    EXPECT_EQ(out.rows, static_cast<std::int64_t>(expected.size()));
    for (std::size_t r = 0; r < expected.size(); ++r) {
      EXPECT_EQ(sink.at(r, "x"), expected[r]);
      EXPECT_DOUBLE_EQ(sink.at(r, "t"), expected[r] * 1e-3);
    }
    EXPECT_EQ(out.macro_steps, N);
    EXPECT_DOUBLE_EQ(out.stop_time_s, static_cast<double>(N) * 1e-3);
    EXPECT_DOUBLE_EQ(out.sim_time_s, static_cast<double>(N) * 1e-3);
  }
}

// ---------------------------------------------------------------------------------------
// Divergence

struct divergence_case {
  failure how;
  std::int64_t bad_step;
  std::int64_t output_every;
  std::vector<double> expected_rows;  // t in ms of the rows kept
};

void run_divergence_case(const divergence_case& c) {
  cosim::system sys;
  add(sys, std::make_unique<clock_sub>("clock"), H);
  add(sys, std::make_unique<faulty_sub>("bad", c.how, c.bad_step), H);
  sys.add_probe("x", "clock.y");
  sys.add_probe("z", "bad.z");
  memory_sink sink;
  const run_outcome out =
      cosim::run_offline(sys, make_plan(20, {0, 1}, scheme_kind::jacobi, c.output_every), {}, sink);
  EXPECT_EQ(out.status, run_status::diverged);
  EXPECT_STREQ(cosim::to_string(out.status), "diverged");
  EXPECT_EQ(out.stop_reason, "non_finite");
  EXPECT_FALSE(out.message.empty());
  EXPECT_EQ(out.macro_steps, c.bad_step);
  EXPECT_DOUBLE_EQ(out.stop_time_s, static_cast<double>(c.bad_step) * 1e-3);
  EXPECT_EQ(sink.ends, 1);
  ASSERT_EQ(sink.rows.size(), c.expected_rows.size());
  EXPECT_EQ(out.rows, static_cast<std::int64_t>(c.expected_rows.size()));
  for (std::size_t r = 0; r < sink.rows.size(); ++r) {
    EXPECT_EQ(sink.at(r, "x"), c.expected_rows[r]) << "row " << r;
    EXPECT_EQ(sink.at(r, "z"), 2.0 * c.expected_rows[r]) << "row " << r;
    for (double v : sink.rows[r]) EXPECT_TRUE(std::isfinite(v)) << "row " << r;
  }
}

TEST(Executor, NonFiniteOutputStopsAsDivergedKeepingEarlierRows) {
  run_divergence_case({failure::nan_output, 7, 1, {0, 1, 2, 3, 4, 5, 6}});
}

TEST(Executor, FailedStepStopsAsDiverged) {
  run_divergence_case({failure::step_false, 7, 1, {0, 1, 2, 3, 4, 5, 6}});
}

TEST(Executor, NonFiniteRecordedVariableStopsAsDiverged) {
  run_divergence_case({failure::nan_variable, 7, 1, {0, 1, 2, 3, 4, 5, 6}});
}

// clock.y recorded as x, bad.z as z; `bad` fails `how` from step `bad_step` on.
run_outcome run_faulty(failure how, std::int64_t bad_step, bool threaded, memory_sink& sink) {
  cosim::system sys;
  add(sys, std::make_unique<clock_sub>("clock"), H);
  add(sys, std::make_unique<faulty_sub>("bad", how, bad_step), H);
  sys.add_probe("x", "clock.y");
  sys.add_probe("z", "bad.z");
  const run_plan plan = make_plan(20, {0, 1});
  if (!threaded) return cosim::run_offline(sys, plan, {}, sink);
  cosim::threaded_options opt;
  opt.lock_memory = false;
  return cosim::run_threaded(sys, plan, {}, sink, opt);
}

// The message says where: the recorded column of a non-finite value, or the subsystem whose
// step failed or gave a non-finite output (an unrecorded one: bad.y is not a column).
TEST(Executor, NonFiniteStopNamesTheColumnOrTheSubsystem) {
  for (const bool threaded : {false, true})
    for (const failure how : {failure::nan_output, failure::step_false, failure::nan_variable}) {
      SCOPED_TRACE(std::string(threaded ? "threaded " : "offline ") +
                   std::to_string(static_cast<int>(how)));
      memory_sink sink;
      const run_outcome out = run_faulty(how, 7, threaded, sink);
      EXPECT_EQ(out.stop_reason, "non_finite");
      const std::string expected = how == failure::nan_variable
                                       ? "non-finite value of z at t = 0.007 s"
                                       : "subsystem 'bad' diverged";
      EXPECT_NE(out.message.find(expected), std::string::npos) << out.message;
    }
}

// A value already non-finite at t0 (an FMU given an out-of-range start): the run stops
// there, before any step, with no row (none is finite) and the column named; before, the
// first step ran and the stop was reported one macro step late.
TEST(Executor, NonFiniteAtTheStartStopsBeforeTheFirstStep) {
  for (const bool threaded : {false, true}) {
    SCOPED_TRACE(threaded ? "threaded" : "offline");
    memory_sink sink;
    const run_outcome out = run_faulty(failure::nan_variable, 0, threaded, sink);
    EXPECT_EQ(out.status, run_status::diverged);
    EXPECT_EQ(out.stop_reason, "non_finite");
    EXPECT_EQ(out.message, "non-finite value of z at t = 0 s");
    EXPECT_EQ(out.macro_steps, 0);
    EXPECT_EQ(out.rows, 0);
    EXPECT_EQ(out.stop_time_s, 0.0);
    EXPECT_TRUE(sink.rows.empty());
    EXPECT_EQ(sink.ends, 1);
  }
}

TEST(Executor, DivergenceWithThinningWritesTheLastFiniteState) {
  // output_every = 4: rows at 0 and 4; the NaN at step 7 leaves step 6 as the newest
  // finite state, which is written. A NaN at step 5 leaves step 4, already written.
  run_divergence_case({failure::nan_output, 7, 4, {0, 4, 6}});
  run_divergence_case({failure::nan_output, 5, 4, {0, 4}});
  run_divergence_case({failure::nan_output, 9, 4, {0, 4, 8}});
}

// ---------------------------------------------------------------------------------------
// Energy monitor: constant effort F against a linearly rising flow v = a t.
//
// Bond: E outputs the effort e = F and consumes the flow v; V outputs v(t) = a (t - t0)
// and consumes e. The monitor's residual power (energy_monitor.cpp: power received by the
// flow producer minus power sent by the effort producer, each as that side computes it
// with its own input u~, 000 Eqs. (30)-(32)) at t_{n+1} is
//   dP = e_used(V) * v(t_{n+1}) - F * v_used(E).
// With ZOH in Jacobi, E holds v(t_n): dP = F a H exactly, every step; rectangle rule
// (002 Eq. (10)): dE = F a H^2, sum |dE| after N steps = N F a H^2.

constexpr double F = 2.0;  // [N]
constexpr double a = 3.0;  // [m/s^2]

class effort_src final : public subsystem {
 public:
  explicit effort_src(std::string name) : subsystem(std::move(name)) {
    add_input({"v", "m/s", port_role::flow});
    add_output({"e", "N", port_role::effort});
  }

 private:
  void do_initialize(time_point t0) override { input(0).set_initial(t0, 0.0); }
  bool do_step(time_point /*t*/, duration /*h*/) noexcept override { return true; }
  void do_update_outputs(time_point /*t*/) noexcept override { set_output(0, F); }
};

class flow_src final : public subsystem {
 public:
  explicit flow_src(std::string name) : subsystem(std::move(name)) {
    add_input({"f", "N", port_role::effort});
    add_output({"v", "m/s", port_role::flow});
  }

 private:
  void do_initialize(time_point t0) override {
    t0_ = t0;
    input(0).set_initial(t0, F);
  }
  bool do_step(time_point /*t*/, duration /*h*/) noexcept override { return true; }
  void do_update_outputs(time_point t) noexcept override {
    set_output(0, a * cosim::to_seconds(t - t0_));
  }
  time_point t0_{};
};

struct bond_system {
  cosim::system sys;
  explicit bond_system(int order = 0) {
    add(sys, std::make_unique<effort_src>("E"), H);
    add(sys, std::make_unique<flow_src>("V"), H);
    const std::size_t ce = sys.connect("E.e", "V.f");
    const std::size_t cv = sys.connect("V.v", "E.v");
    sys.add_bond({"bond", {{ce, cv, 1.0}}});
    sys.at(0).input(0).set_order(order);
    sys.at(1).input(0).set_order(order);
    sys.add_probe("e", "E.e");
    sys.add_probe("v", "V.v");
  }
};

constexpr double Hs = 1e-3;
constexpr double dP_zoh = F * a * Hs;       // 6e-3 W
constexpr double dE_zoh = F * a * Hs * Hs;  // 6e-6 J

TEST(EnergyMonitor, ConstantEffortRisingFlowZohJacobiMatchesHandComputation) {
  for (const std::vector<std::size_t>& order :
       {std::vector<std::size_t>{0, 1}, std::vector<std::size_t>{1, 0}}) {
    bond_system b;
    memory_sink sink;
    constexpr std::int64_t N = 10;
    const run_outcome out = cosim::run_offline(b.sys, make_plan(N, order), {}, sink);
    ASSERT_EQ(out.status, run_status::completed);
    ASSERT_EQ(sink.rows.size(), static_cast<std::size_t>(N + 1));
    EXPECT_EQ(sink.at(0, "dP"), 0.0);
    EXPECT_EQ(sink.at(0, "sum_abs_dE"), 0.0);
    for (std::size_t n = 1; n <= static_cast<std::size_t>(N); ++n) {
      EXPECT_NEAR(sink.at(n, "v"), a * static_cast<double>(n) * Hs, 1e-15);
      EXPECT_NEAR(sink.at(n, "dP"), dP_zoh, 1e-12 * dP_zoh) << "row " << n;
      EXPECT_NEAR(sink.at(n, "dE"), dE_zoh, 1e-12 * dE_zoh) << "row " << n;
      EXPECT_NEAR(sink.at(n, "sum_abs_dE"), static_cast<double>(n) * dE_zoh, 1e-11 * dE_zoh)
          << "row " << n;
    }
    EXPECT_NEAR(out.energy_residual, static_cast<double>(N) * dE_zoh, 1e-11 * dE_zoh);
    EXPECT_NEAR(out.max_residual_power, dP_zoh, 1e-12 * dP_zoh);
    ASSERT_EQ(out.bonds.size(), 1u);
    EXPECT_EQ(out.bonds[0].name, "bond");
    EXPECT_NEAR(out.bonds[0].sum_abs_dE, static_cast<double>(N) * dE_zoh, 1e-11 * dE_zoh);
    EXPECT_NEAR(out.bonds[0].max_abs_dP, dP_zoh, 1e-12 * dP_zoh);
  }
}

TEST(EnergyMonitor, GaussSeidelFlowFirstHasNoResidual) {
  // V steps and delivers v(t_{n+1}) before E steps, so E uses the exact flow: dP = 0.
  bond_system b;
  memory_sink sink;
  const run_outcome out =
      cosim::run_offline(b.sys, make_plan(10, {1, 0}, scheme_kind::gauss_seidel), {}, sink);
  ASSERT_EQ(out.status, run_status::completed);
  EXPECT_NEAR(out.energy_residual, 0.0, 1e-18);
  EXPECT_NEAR(out.max_residual_power, 0.0, 1e-15);
  // Effort first: E still holds v(t_n), as in Jacobi.
  bond_system b2;
  memory_sink sink2;
  const run_outcome out2 =
      cosim::run_offline(b2.sys, make_plan(10, {0, 1}, scheme_kind::gauss_seidel), {}, sink2);
  EXPECT_NEAR(out2.energy_residual, 10.0 * dE_zoh, 1e-11 * dE_zoh);
  EXPECT_NEAR(out2.max_residual_power, dP_zoh, 1e-12 * dP_zoh);
}

TEST(EnergyMonitor, FirstOrderExtrapolationUsesTheTrapezoidalRule) {
  // Order 1: step 1 has one sample of v (ZOH, dP_1 = F a H); from step 2 on the linear
  // extrapolation of v = a t is exact, dP = 0. Trapezoidal rule (002 Eq. (11), applied to
  // dP itself) with dP_0 = 0: dE_1 = H/2 (0 + F a H), dE_2 = H/2 (F a H + 0), then 0.
  bond_system b(1);
  memory_sink sink;
  const run_outcome out = cosim::run_offline(b.sys, make_plan(10, {0, 1}), {}, sink);
  ASSERT_EQ(out.status, run_status::completed);
  EXPECT_NEAR(sink.at(1, "dP"), dP_zoh, 1e-12 * dP_zoh);
  EXPECT_NEAR(sink.at(1, "dE"), 0.5 * dE_zoh, 1e-12 * dE_zoh);
  EXPECT_NEAR(sink.at(2, "dP"), 0.0, 1e-9 * dP_zoh);
  EXPECT_NEAR(sink.at(2, "dE"), 0.5 * dE_zoh, 1e-9 * dE_zoh);
  for (std::size_t n = 3; n < sink.rows.size(); ++n)
    EXPECT_NEAR(sink.at(n, "dP"), 0.0, 1e-9 * dP_zoh);
  EXPECT_NEAR(out.energy_residual, dE_zoh, 1e-8 * dE_zoh);
  EXPECT_NEAR(out.max_residual_power, dP_zoh, 1e-12 * dP_zoh);
}

TEST(EnergyMonitor, BondGainScalesTheResidual) {
  // p-s style bond term with gain a_p: power = a_p * p * sd.
  cosim::system sys;
  add(sys, std::make_unique<effort_src>("E"), H);
  add(sys, std::make_unique<flow_src>("V"), H);
  const std::size_t ce = sys.connect("E.e", "V.f");
  const std::size_t cv = sys.connect("V.v", "E.v");
  sys.add_bond({"bond", {{ce, cv, 65e-4}}});
  memory_sink sink;
  const run_outcome out = cosim::run_offline(sys, make_plan(10, {0, 1}), {}, sink);
  EXPECT_NEAR(out.energy_residual, 65e-4 * 10.0 * dE_zoh, 1e-11 * dE_zoh);
  EXPECT_NEAR(out.max_residual_power, 65e-4 * dP_zoh, 1e-12 * dP_zoh);
}

// ---------------------------------------------------------------------------------------
// Safety limits

TEST(Executor, EnergyResidualLimitTripsSafetyStop) {
  // sum |dE| = n dE_zoh exceeds 3.5 dE_zoh first at step 4.
  bond_system b;
  memory_sink sink;
  safety_limits lim;
  lim.energy_residual = 3.5 * dE_zoh;
  const run_outcome out =
      cosim::run_offline(b.sys, make_plan(10, {0, 1}, scheme_kind::jacobi, 3), lim, sink);
  EXPECT_EQ(out.status, run_status::safety_stop);
  EXPECT_STREQ(cosim::to_string(out.status), "safety_stop");
  EXPECT_EQ(out.stop_reason, "energy_residual");
  EXPECT_EQ(out.macro_steps, 4);
  EXPECT_DOUBLE_EQ(out.stop_time_s, 4e-3);
  // Rows at 0 and 3 (thinning) and the tripping step 4.
  ASSERT_EQ(sink.rows.size(), 3u);
  EXPECT_DOUBLE_EQ(sink.at(1, "t"), 3e-3);
  EXPECT_DOUBLE_EQ(sink.at(2, "t"), 4e-3);
  EXPECT_NEAR(sink.at(2, "sum_abs_dE"), 4.0 * dE_zoh, 1e-11 * dE_zoh);
  // The message gives the value, the limit, the time and the bond.
  ASSERT_EQ(out.bonds.size(), 1u);
  EXPECT_EQ(out.message,
            "energy residual sum |dE| = " + cosim::format_double(sink.at(2, "sum_abs_dE")) +
                " J exceeded safety.energy_residual_limit = " +
                cosim::format_double(lim.energy_residual) + " J at t = 0.004 s (bond '" +
                out.bonds[0].name +
                "': sum |dE| = " + cosim::format_double(out.bonds[0].sum_abs_dE) + " J)");
}

TEST(Executor, ResidualPowerLimitTripsSafetyStop) {
  bond_system b;
  memory_sink sink;
  safety_limits lim;
  lim.residual_power = 0.5 * dP_zoh;
  const run_outcome out = cosim::run_offline(b.sys, make_plan(10, {0, 1}), lim, sink);
  EXPECT_EQ(out.status, run_status::safety_stop);
  EXPECT_EQ(out.stop_reason, "residual_power");
  EXPECT_EQ(out.macro_steps, 1);
  ASSERT_EQ(sink.rows.size(), 2u);
  ASSERT_EQ(out.bonds.size(), 1u);
  EXPECT_EQ(
      out.message,
      "residual power |dP| = " + cosim::format_double(std::abs(sink.at(1, "dP"))) +
          " W exceeded safety.residual_power_limit = " + cosim::format_double(lim.residual_power) +
          " W at t = 0.001 s (bond '" + out.bonds[0].name +
          "': max |dP| = " + cosim::format_double(out.bonds[0].max_abs_dP) + " W)");

  // Limits above what the run produces do not trip.
  bond_system b2;
  memory_sink sink2;
  lim.residual_power = 2.0 * dP_zoh;
  lim.energy_residual = 20.0 * dE_zoh;
  const run_outcome out2 = cosim::run_offline(b2.sys, make_plan(10, {0, 1}), lim, sink2);
  EXPECT_EQ(out2.status, run_status::completed);
  EXPECT_EQ(out2.macro_steps, 10);
}

TEST(Executor, OperatorStopRequestEndsTheRunInOrder) {
  bond_system b;
  memory_sink sink;
  cosim::stop_source stop;
  stop.raise(cosim::stop_cause::operator_signal);
  const run_outcome out = cosim::run_offline(b.sys, make_plan(10, {0, 1}), {}, sink, &stop);
  EXPECT_EQ(out.status, run_status::safety_stop);
  EXPECT_EQ(out.stop_reason, "operator_signal");
  EXPECT_EQ(out.macro_steps, 0);
  EXPECT_EQ(sink.rows.size(), 1u);  // the t0 row
  EXPECT_EQ(sink.ends, 1);
  EXPECT_EQ(out.message, "stop requested by the operator");  // no signal number given
}

TEST(Executor, ARunsOwnStopStaysInTheRunAndTheCallersSourceStopsEveryLaterRun) {
  // One operator source for a batch of runs (tune, sweep): a safety stop in one run must
  // not stop the next, an operator stop must stop all that follow.
  cosim::stop_source batch;
  safety_limits lim;
  lim.residual_power = 0.5 * dP_zoh;
  bond_system b1;
  memory_sink s1;
  const run_outcome o1 = cosim::run_offline(b1.sys, make_plan(10, {0, 1}), lim, s1, &batch);
  EXPECT_EQ(o1.stop_reason, "residual_power");
  EXPECT_FALSE(batch.stop_requested());
  EXPECT_EQ(batch.cause(), cosim::stop_cause::none);
  bond_system b2;
  memory_sink s2;
  const run_outcome o2 = cosim::run_offline(b2.sys, make_plan(10, {0, 1}), {}, s2, &batch);
  EXPECT_EQ(o2.status, run_status::completed);
  EXPECT_EQ(o2.macro_steps, 10);
  batch.raise(cosim::stop_cause::operator_signal, SIGINT);
  for (int k = 0; k < 2; ++k) {
    bond_system b;
    memory_sink s;
    const run_outcome o = cosim::run_offline(b.sys, make_plan(10, {0, 1}), lim, s, &batch);
    EXPECT_EQ(o.stop_reason, "operator_signal");
    EXPECT_EQ(o.macro_steps, 0);
    EXPECT_EQ(o.message, "stop requested by the operator (SIGINT)");
  }
}

// ---------------------------------------------------------------------------------------
// Plan validation

TEST(Executor, ValidatePlanRejectsBadPlans) {
  cosim::system sys;
  add(sys, std::make_unique<clock_sub>("clock"), H);
  add(sys, std::make_unique<echo_sub>("echo"), duration{200'000});
  sys.connect("clock.y", "echo.u");
  EXPECT_NO_THROW(cosim::validate_plan(sys, make_plan(10, {0, 1})));
  EXPECT_NO_THROW(cosim::validate_plan(sys, make_plan(0, {1, 0}, scheme_kind::gauss_seidel)));

  auto rejects = [&](const run_plan& p, const std::string& needle) {
    try {
      cosim::validate_plan(sys, p);
      ADD_FAILURE() << "accepted a plan that should fail with '" << needle << "'";
    } catch (const cosim::error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  run_plan p = make_plan(10, {0, 1});
  p.macro_step = duration{0};
  rejects(p, "macro step");
  p.macro_step = duration{-1 * ms};
  rejects(p, "macro step");
  rejects(make_plan(-1, {0, 1}), "duration");
  rejects(make_plan(10, {0, 1}, scheme_kind::jacobi, 0), "output");
  rejects(make_plan(10, {0}), "order");
  rejects(make_plan(10, {0, 0}), "order");
  rejects(make_plan(10, {0, 2}), "order");
  rejects(make_plan(10, {0, 1, 1}), "order");

  sys.at(1).set_step_size(duration{0});
  rejects(make_plan(10, {0, 1}), "echo");
  sys.at(1).set_step_size(duration{2 * ms});  // larger than H
  rejects(make_plan(10, {0, 1}), "echo");
  sys.at(1).set_step_size(duration{300'000});  // 0.3 ms does not divide 1 ms
  rejects(make_plan(10, {0, 1}), "echo");
  sys.at(1).set_step_size(duration{250'000});  // divides
  EXPECT_NO_THROW(cosim::validate_plan(sys, make_plan(10, {0, 1})));

  // run_offline validates before it starts recording.
  sys.at(1).set_step_size(duration{300'000});
  memory_sink sink;
  EXPECT_THROW((void)cosim::run_offline(sys, make_plan(10, {0, 1}), {}, sink), cosim::error);
  EXPECT_EQ(sink.begins, 0);
}

TEST(Executor, SubStepCountFollowsAStepSizeChangeBetweenRuns) {
  // The sub-step count H / h is remembered between macro steps (subsystem::steps_per): a
  // new step size or macro step must give the new count, not the remembered one.
  cosim::system sys;
  clock_sub* c = add(sys, std::make_unique<clock_sub>("clock"), duration{250'000});
  memory_sink sink;
  ASSERT_EQ(cosim::run_offline(sys, make_plan(3, {0}), {}, sink).status, run_status::completed);
  EXPECT_EQ(c->steps, 3 * 4);
  c->steps = 0;
  c->set_step_size(duration{500'000});
  ASSERT_EQ(cosim::run_offline(sys, make_plan(3, {0}), {}, sink).status, run_status::completed);
  EXPECT_EQ(c->steps, 3 * 2);
  c->steps = 0;
  run_plan p = make_plan(3, {0});
  p.macro_step = duration{2 * ms};
  ASSERT_EQ(cosim::run_offline(sys, p, {}, sink).status, run_status::completed);
  EXPECT_EQ(c->steps, 3 * 4);
}

TEST(Executor, EachProducerDeliversToItsOwnConsumersOnly) {
  // connections_from(i) lists producer i's connections in connection order, and delivery
  // walks only those. A clock fans out to echoes a and c, a feeds echo b; with Jacobi and
  // ZOH every hop delays by one macro step: a = c = clock - 1, b = clock - 2.
  cosim::system sys;
  add(sys, std::make_unique<echo_sub>("b"), H);       // 0
  add(sys, std::make_unique<clock_sub>("clock"), H);  // 1
  add(sys, std::make_unique<echo_sub>("a"), H);       // 2
  add(sys, std::make_unique<echo_sub>("c"), H);       // 3
  sys.connect("clock.y", "a.u");
  sys.connect("a.y", "b.u");
  sys.connect("clock.y", "c.u");
  const auto from_clock = sys.connections_from(1);
  ASSERT_EQ(from_clock.size(), 2u);
  EXPECT_EQ(from_clock[0].to, 2u);
  EXPECT_EQ(from_clock[1].to, 3u);
  ASSERT_EQ(sys.connections_from(2).size(), 1u);
  EXPECT_EQ(sys.connections_from(2)[0].to, 0u);
  EXPECT_TRUE(sys.connections_from(0).empty());
  EXPECT_TRUE(sys.connections_from(3).empty());
  EXPECT_TRUE(sys.connections_from(7).empty());

  sys.add_probe("x", "clock.y");
  sys.add_probe("a", "a.y");
  sys.add_probe("b", "b.y");
  sys.add_probe("c", "c.y");
  memory_sink sink;
  const run_outcome out = cosim::run_offline(sys, make_plan(6, {0, 1, 2, 3}), {}, sink);
  ASSERT_EQ(out.status, run_status::completed);
  ASSERT_EQ(sink.rows.size(), 7u);
  for (std::size_t n = 2; n < sink.rows.size(); ++n) {
    const double x = static_cast<double>(n);
    EXPECT_EQ(sink.at(n, "x"), x);
    EXPECT_EQ(sink.at(n, "a"), x - 1.0) << "row " << n;
    EXPECT_EQ(sink.at(n, "c"), x - 1.0) << "row " << n;
    EXPECT_EQ(sink.at(n, "b"), x - 2.0) << "row " << n;
  }
  // The run resolved the connections into routes (pointers to the consumers' ports and the
  // producers' outputs); a new connection drops them until the next run.
  ASSERT_TRUE(sys.routes_resolved());
  const auto routes = sys.routes_from(1);
  ASSERT_EQ(routes.size(), 2u);
  EXPECT_EQ(routes[0].port, &sys.at(2).input(0));
  EXPECT_EQ(routes[1].port, &sys.at(3).input(0));
  EXPECT_EQ(routes[0].value, &sys.at(1).outputs()[0]);
  EXPECT_FALSE(routes[0].derivatives);
  add(sys, std::make_unique<echo_sub>("d"), H);
  sys.connect("b.y", "d.u");
  EXPECT_FALSE(sys.routes_resolved());
  EXPECT_TRUE(sys.routes_from(1).empty());
}

TEST(Executor, UnconnectedInputIsRejectedBeforeRecording) {
  cosim::system sys;
  add(sys, std::make_unique<echo_sub>("echo"), H);
  memory_sink sink;
  try {
    (void)cosim::run_offline(sys, make_plan(10, {0}), {}, sink);
    ADD_FAILURE() << "ran with an unconnected input";
  } catch (const cosim::error& e) {
    EXPECT_NE(std::string(e.what()).find("echo.u"), std::string::npos) << e.what();
  }
  EXPECT_EQ(sink.begins, 0);
}

}  // namespace
