// A subsystem whose model ends the simulation (stop_cause::model_end, e.g. an FMU's
// terminateSimulation) or fails (model_error) inside a step: the run ends at that step's
// start with its rows up to there, as completed (or error) with the subsystem's message, and
// the threaded executor keeps the rows a fast worker produced ahead of the recorder, so it
// ends exactly where offline ends. The same for a remote subsystem lost in a step, and a
// model error in the start-up exchange is reported as such.
#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "cosim/runtime/executor.hpp"
#include "cosim/runtime/system.hpp"
#include "cosim/runtime/threaded_executor.hpp"

namespace {

using cosim::duration;
using cosim::stop_cause;
using cosim::time_point;

constexpr std::int64_t ms = 1'000'000;  // ns
const duration H{1 * ms};

class memory_sink final : public cosim::row_sink {
 public:
  void begin(std::span<const std::string> /*columns*/) override {}
  void write(std::span<const double> row) noexcept override { t.push_back(row[0]); }
  void end() override {}
  std::vector<double> t;
};

/// Output y = macro-step count; the step that starts at step `end_at` raises `cause` and
/// fails, like an FMU that ends the simulation there.
class ending_sub final : public cosim::subsystem {
 public:
  ending_sub(std::int64_t end_at, stop_cause cause)
      : subsystem("ender"), end_at_(end_at), cause_(cause) {
    add_output({"y", "1", cosim::port_role::signal});
  }

 private:
  void do_start(cosim::stop_source& stop) override { stop_ = &stop; }
  void do_stop(bool /*fail_safe*/) noexcept override { stop_ = nullptr; }
  bool do_step(time_point t, duration /*h*/) noexcept override {
    if (t.time_since_epoch() / H < end_at_) return true;
    if (stop_ != nullptr) stop_->raise(cause_, 0, "ender: the model ended the simulation");
    return false;
  }
  void do_update_outputs(time_point t) noexcept override {
    set_output(0, static_cast<double>(t.time_since_epoch() / H));
  }
  std::int64_t end_at_;
  stop_cause cause_;
  cosim::stop_source* stop_ = nullptr;
};

cosim::run_outcome run(stop_cause cause, bool threaded, memory_sink& sink,
                       std::int64_t end_at = 5) {
  cosim::system sys;
  sys.add(std::make_unique<ending_sub>(end_at, cause));
  sys.at(0).set_step_size(H);
  sys.add_probe("y", "ender.y");
  cosim::run_plan plan;
  plan.macro_step = H;
  plan.macro_steps = 1000;
  plan.order = {0};
  if (!threaded) return cosim::run_offline(sys, plan, {}, sink);
  cosim::threaded_options opt;
  opt.lock_memory = false;
  return cosim::run_threaded(sys, plan, {}, sink, opt);
}

TEST(ModelEnd, RunCompletesAtTheStartOfTheStepWithTheModelsMessage) {
  for (bool threaded : {false, true}) {
    SCOPED_TRACE(threaded ? "threaded" : "offline");
    memory_sink sink;
    const cosim::run_outcome o = run(stop_cause::model_end, threaded, sink);
    EXPECT_EQ(o.status, cosim::run_status::completed);
    EXPECT_EQ(o.stop_reason, "model_end");
    EXPECT_EQ(o.message, "ender: the model ended the simulation");
    // Steps 0..4 complete (t = 1..5 ms); the step from 5 ms fails: the run ends at 5 ms.
    EXPECT_DOUBLE_EQ(o.stop_time_s, 5e-3);
    ASSERT_EQ(sink.t.size(), 6u);  // t = 0, 1, ..., 5 ms
    for (std::size_t i = 0; i < sink.t.size(); ++i)
      EXPECT_DOUBLE_EQ(sink.t[i], static_cast<double>(i) * 1e-3);
  }
}

TEST(ModelEnd, ModelErrorIsAnErrorWithTheModelsMessage) {
  for (bool threaded : {false, true}) {
    SCOPED_TRACE(threaded ? "threaded" : "offline");
    memory_sink sink;
    const cosim::run_outcome o = run(stop_cause::model_error, threaded, sink);
    EXPECT_EQ(o.status, cosim::run_status::error);
    EXPECT_EQ(o.stop_reason, "model_error");
    EXPECT_EQ(o.message, "ender: the model ended the simulation");
    // The failing step (from 5 ms) did not complete: the run stopped at its start, the last
    // row's time, not at its end.
    EXPECT_DOUBLE_EQ(o.stop_time_s, 5e-3);
    ASSERT_EQ(sink.t.size(), 6u);
    EXPECT_DOUBLE_EQ(sink.t.back(), 5e-3);
  }
}

// A remote subsystem whose worker was lost or did not answer in a step (host = "dds" or
// "process") is a step that did not complete either: the run ends at its start, its last row,
// as a safety stop.
TEST(ModelEnd, LostRemoteWorkerEndsTheRunAtTheStartOfItsStep) {
  for (const stop_cause cause : {stop_cause::remote_lost, stop_cause::remote_deadline})
    for (bool threaded : {false, true}) {
      SCOPED_TRACE(std::string(cosim::to_string(cause)) + (threaded ? " threaded" : " offline"));
      memory_sink sink;
      const cosim::run_outcome o = run(cause, threaded, sink);
      EXPECT_EQ(o.status, cosim::run_status::safety_stop);
      EXPECT_EQ(o.stop_reason, cosim::to_string(cause));
      ASSERT_EQ(sink.t.size(), 6u);  // t = 0 .. 5 ms
      EXPECT_DOUBLE_EQ(sink.t.back(), 5e-3);
      EXPECT_EQ(o.stop_time_s, sink.t.back());
    }
}

/// A model whose outputs cannot be read at t0: the start-up exchange leaves them non-finite
/// and the subsystem raises model_error when it starts.
class failing_start final : public cosim::subsystem {
 public:
  failing_start() : subsystem("broken") { add_output({"y", "1", cosim::port_role::signal}); }

 private:
  void do_start(cosim::stop_source& stop) override {
    (void)stop.raise(stop_cause::model_error, 0, "broken: its outputs could not be read");
  }
  bool do_step(time_point /*t*/, duration /*h*/) noexcept override { return true; }
  void do_update_outputs(time_point /*t*/) noexcept override {
    set_output(0, std::numeric_limits<double>::quiet_NaN());
  }
};

TEST(ModelEnd, AModelErrorInTheStartUpExchangeIsNotReportedAsANonFiniteValue) {
  for (bool threaded : {false, true}) {
    SCOPED_TRACE(threaded ? "threaded" : "offline");
    cosim::system sys;
    sys.add(std::make_unique<failing_start>());
    sys.at(0).set_step_size(H);
    sys.add_probe("y", "broken.y");
    cosim::run_plan plan;
    plan.macro_step = H;
    plan.macro_steps = 10;
    plan.order = {0};
    memory_sink sink;
    cosim::run_outcome o;
    if (threaded) {
      cosim::threaded_options opt;
      opt.lock_memory = false;
      o = cosim::run_threaded(sys, plan, {}, sink, opt);
    } else {
      o = cosim::run_offline(sys, plan, {}, sink);
    }
    EXPECT_EQ(o.status, cosim::run_status::error);
    EXPECT_EQ(o.stop_reason, "model_error");
    EXPECT_EQ(o.message, "broken: its outputs could not be read");
    EXPECT_TRUE(sink.t.empty());
    EXPECT_EQ(o.stop_time_s, 0.0);
  }
}

// The failing step lies 500 steps in: the worker thread gets there long before the recorder,
// and raises the error at once; the rows before it must still all be written.
TEST(ModelEnd, ModelErrorFarAheadOfTheRecorderKeepsEveryRowBeforeIt) {
  for (int attempt = 0; attempt < 5; ++attempt)
    for (bool threaded : {false, true}) {
      SCOPED_TRACE(threaded ? "threaded" : "offline");
      memory_sink sink;
      const cosim::run_outcome o = run(stop_cause::model_error, threaded, sink, 500);
      EXPECT_EQ(o.status, cosim::run_status::error);
      EXPECT_EQ(o.stop_reason, "model_error");
      EXPECT_GE(sink.t.size(), 501u);  // t = 0 ... 500 ms at least
      EXPECT_DOUBLE_EQ(o.stop_time_s, 0.5);
      EXPECT_DOUBLE_EQ(sink.t.back(), 0.5);
    }
}

}  // namespace
