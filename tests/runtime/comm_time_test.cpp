// Communication points in seconds (comm_time.hpp): a run's steps chain bit
// for bit and its last step ends exactly at the stop time declared to the model, for every
// duration and step, as an FMU that refuses to step past its stop time needs.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>

#include "cosim/runtime/comm_time.hpp"

namespace {

using namespace cosim;

// The run of `duration_s` at macro step `H_s`: fill_plan's step count, and the run length the
// builder declares to the model (from the same ticks), converted back to ticks by the model.
std::int64_t steps_of(double duration_s, double H_s) {
  return static_cast<std::int64_t>(std::ceil(duration_s / H_s - 1e-9));
}
double declared_stop(double duration_s, double H_s, double start_s) {
  const duration length = steps_of(duration_s, H_s) * to_duration(H_s);
  return comm_time(start_s, to_duration(static_cast<double>(length.count()) / 1e9));
}
bool same_bits(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}
// Steps n = 0 .. N-1 whose start + step is not the next start, and the last end.
std::int64_t chain_misses(std::int64_t N, duration H, double start_s, double& end) {
  std::int64_t misses = 0;
  end = comm_time(start_s, duration{0});
  for (std::int64_t n = 0; n < N; ++n) {
    const duration a = n * H;
    const double t = comm_time(start_s, a);
    if (!same_bits(t, end)) ++misses;
    end = t + comm_step(start_s, a, a + H);
  }
  return misses;
}

TEST(CommTime, EveryDurationOfTheGridEndsAtItsStopTimeAndChains) {
  // 1000 durations spread over 0.1 .. 100 s (most of them not round numbers).
  for (const double H : {1e-3, 1e-4}) {
    // The points of every run at this step are those of the longest one: chaining over
    // the longest covers them all; each run's own end is checked against its stop time.
    double end = 0.0;
    EXPECT_EQ(chain_misses(steps_of(100.0, H), to_duration(H), 0.0, end), 0) << H;
    int bad_end = 0;
    for (int k = 0; k < 1000; ++k) {
      const double D = 0.1 + (100.0 - 0.1) * k / 999.0;
      const std::int64_t N = steps_of(D, H);
      const double last = comm_time(0.0, (N - 1) * to_duration(H)) +
                          comm_step(0.0, (N - 1) * to_duration(H), N * to_duration(H));
      if (!same_bits(last, declared_stop(D, H, 0.0))) {
        ++bad_end;
        ADD_FAILURE() << "duration " << D << " s, step " << H << " s: the last step ends at "
                      << last << ", not at the stop time " << declared_stop(D, H, 0.0);
      }
    }
    EXPECT_EQ(bad_end, 0) << H;
  }
}

TEST(CommTime, TheDurationsTheFmusRefusedEndExactly) {
  // 2 s and 3 s at 1e-4 s, 0.01 s at 1e-3 s: multiplying ticks by 1e-9 ended 1-2 ulp past
  // the stop time; the stop time declared is the decimal one.
  for (const auto& [D, H] : {std::pair{2.0, 1e-4}, std::pair{3.0, 1e-4}, std::pair{0.01, 1e-3}}) {
    double end = 0.0;
    EXPECT_EQ(chain_misses(steps_of(D, H), to_duration(H), 0.0, end), 0) << D;
    EXPECT_TRUE(same_bits(end, declared_stop(D, H, 0.0))) << D;
    EXPECT_EQ(end, D);
  }
}

TEST(CommTime, AStartTimeOtherThanZeroChainsToo) {
  for (const double start : {0.5, 10.0, 1234.5678}) {
    double end = 0.0;
    EXPECT_EQ(chain_misses(steps_of(7.3, 1e-3), to_duration(1e-3), start, end), 0) << start;
    EXPECT_TRUE(same_bits(end, declared_stop(7.3, 1e-3, start))) << start;
  }
}

TEST(CommTime, ToSecondsIsUnchanged) {
  // CSV output keeps its conversion (results compared byte for byte elsewhere).
  EXPECT_EQ(to_seconds(duration{2'000'000'000}), 2e9 * 1e-9);
}

}  // namespace
