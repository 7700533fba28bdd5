// stop_source: the first cause wins and keeps its details, a linked run source sees its
// upstream's cause without any forwarding thread and adopts it when raised later, its own
// causes never reach upstream, concurrent raises elect exactly one winner, and a raise from
// a real signal handler is seen by the interrupted thread.
#include "cosim/runtime/stop_source.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cosim/runtime/executor.hpp"

namespace {

using cosim::stop_cause;
using cosim::stop_source;

TEST(StopSource, FirstCauseWinsWithItsDetails) {
  stop_source s;
  EXPECT_FALSE(s.stop_requested());
  EXPECT_EQ(s.cause(), stop_cause::none);
  EXPECT_FALSE(s.raise(stop_cause::none));  // none is no cause
  EXPECT_FALSE(s.stop_requested());
  const char* joystick = "joystick";
  EXPECT_TRUE(s.raise(stop_cause::stale_input, 0, joystick));
  EXPECT_FALSE(s.raise(stop_cause::operator_signal, SIGINT));
  EXPECT_FALSE(s.raise(stop_cause::deadline));
  EXPECT_TRUE(s.stop_requested());
  EXPECT_EQ(s.cause(), stop_cause::stale_input);
  EXPECT_EQ(s.who(), joystick);
  EXPECT_EQ(s.code(), 0);
}

TEST(StopSource, StopReasonNamesMatchSummaryJson) {
  // docs/results.md lists the stop_reason values of summary.json.
  EXPECT_STREQ(cosim::to_string(stop_cause::none), "end_time");
  EXPECT_STREQ(cosim::to_string(stop_cause::operator_signal), "operator_signal");
  EXPECT_STREQ(cosim::to_string(stop_cause::stale_input), "stale_input");
  EXPECT_STREQ(cosim::to_string(stop_cause::deadline), "deadline");
  EXPECT_STREQ(cosim::to_string(stop_cause::energy_residual), "energy_residual");
  EXPECT_STREQ(cosim::to_string(stop_cause::residual_power), "residual_power");
  EXPECT_STREQ(cosim::to_string(stop_cause::non_finite), "non_finite");
  EXPECT_STREQ(cosim::to_string(stop_cause::output_error), "output_error");
  EXPECT_STREQ(cosim::to_string(stop_cause::error), "error");
  EXPECT_STREQ(cosim::to_string(stop_cause::alarm), "alarm");
  EXPECT_EQ(cosim::status_of(stop_cause::alarm), cosim::run_status::safety_stop);
}

TEST(StopSource, LinkedRunSeesUpstreamAndAdoptsItWhenRaisedLater) {
  stop_source op;
  stop_source run(&op);
  stop_source inner(&run);  // an executor's source inside a run's
  EXPECT_FALSE(inner.stop_requested());
  op.raise(stop_cause::operator_signal, SIGHUP);
  EXPECT_TRUE(run.stop_requested());
  EXPECT_TRUE(inner.stop_requested());
  EXPECT_EQ(inner.cause(), stop_cause::operator_signal);
  EXPECT_EQ(inner.code(), SIGHUP);
  // A driver going stale after the operator's stop does not replace it.
  EXPECT_FALSE(run.raise(stop_cause::stale_input, 0, "joystick"));
  EXPECT_EQ(run.cause(), stop_cause::operator_signal);
  EXPECT_EQ(run.code(), SIGHUP);
  EXPECT_EQ(run.who(), nullptr);
}

TEST(StopSource, ARunsOwnCauseNeverReachesUpstream) {
  stop_source op;
  {
    stop_source run(&op);
    EXPECT_TRUE(run.raise(stop_cause::energy_residual));
    EXPECT_EQ(run.cause(), stop_cause::energy_residual);
  }
  EXPECT_FALSE(op.stop_requested());
  stop_source next(&op);
  EXPECT_FALSE(next.stop_requested());
  // Raised in the run before the operator's signal: the run keeps its own cause.
  EXPECT_TRUE(next.raise(stop_cause::deadline));
  op.raise(stop_cause::operator_signal, SIGINT);
  EXPECT_EQ(next.cause(), stop_cause::deadline);
}

TEST(StopSource, ConcurrentRaisesElectExactlyOneCause) {
  const stop_cause causes[] = {stop_cause::operator_signal, stop_cause::stale_input,
                               stop_cause::deadline, stop_cause::energy_residual};
  for (int round = 0; round < 200; ++round) {
    stop_source s;
    std::atomic<bool> go{false};
    std::atomic<int> winners{0};
    std::atomic<int> winner_cause{0};
    std::vector<std::thread> threads;
    for (stop_cause c : causes) {
      threads.emplace_back([&, c] {
        while (!go.load(std::memory_order_acquire)) {
        }
        if (s.raise(c, static_cast<int>(c))) {
          winners.fetch_add(1);
          winner_cause.store(static_cast<int>(c));
        }
      });
    }
    go.store(true, std::memory_order_release);
    for (auto& t : threads) t.join();
    ASSERT_EQ(winners.load(), 1) << "round " << round;
    EXPECT_EQ(static_cast<int>(s.cause()), winner_cause.load());
    EXPECT_EQ(s.code(), winner_cause.load());  // the details are the winner's
  }
}

stop_source& signalled() {
  static stop_source s;
  return s;
}

extern "C" void on_test_signal(int sig) {
  signalled().raise(stop_cause::operator_signal, sig);
}

TEST(StopSource, RaisedFromASignalHandler) {
  struct sigaction sa {};
  struct sigaction old {};
  sa.sa_handler = on_test_signal;
  sigemptyset(&sa.sa_mask);
  ASSERT_EQ(sigaction(SIGUSR1, &sa, &old), 0);
  stop_source run(&signalled());
  EXPECT_FALSE(run.stop_requested());
  ASSERT_EQ(std::raise(SIGUSR1), 0);  // the handler runs before raise() returns
  EXPECT_TRUE(run.stop_requested());
  EXPECT_EQ(run.cause(), stop_cause::operator_signal);
  EXPECT_EQ(run.code(), SIGUSR1);
  sigaction(SIGUSR1, &old, nullptr);
}

}  // namespace
