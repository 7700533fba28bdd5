// The allowed values of run settings (limits.hpp), at and just past each bound.
#include "cosim/runtime/limits.hpp"

#include <gtest/gtest.h>

#include "cosim/runtime/rt_thread.hpp"

namespace {

using namespace cosim;

TEST(Limits, RingCapacityIsAPowerOfTwoFrom4To65536) {
  EXPECT_EQ(limits::ring_capacity(4), "");
  EXPECT_EQ(limits::ring_capacity(65536), "");
  EXPECT_NE(limits::ring_capacity(2), "");       // below the minimum
  EXPECT_NE(limits::ring_capacity(6), "");       // not a power of two
  EXPECT_NE(limits::ring_capacity(131072), "");  // above the maximum
  EXPECT_NE(limits::ring_capacity(-4), "");
}

TEST(Limits, ThreadPlacement) {
  EXPECT_EQ(limits::cpu(-1), "");
  EXPECT_EQ(limits::cpu(0), "");
  EXPECT_NE(limits::cpu(online_cpu_count()), "");
  EXPECT_NE(limits::cpu(-2), "");
  EXPECT_EQ(limits::priority(1, false), "");
  EXPECT_EQ(limits::priority(99, false), "");
  EXPECT_NE(limits::priority(0, false), "");
  EXPECT_EQ(limits::priority(0, true), "");
  EXPECT_NE(limits::priority(100, true), "");
  EXPECT_EQ(limits::stack_size(65536), "");
  EXPECT_NE(limits::stack_size(65535), "");
  EXPECT_EQ(limits::budget(0.0), "");
  EXPECT_NE(limits::budget(-1e-9), "");
  EXPECT_NE(limits::watchdog_count(0), "");
}

TEST(Limits, InternalStepAgainstTheMacroStep) {
  const duration H = to_duration(1e-3);
  EXPECT_EQ(limits::internal_step(to_duration(2e-4), H, false), "");  // 003 Sect. 5: h_H
  EXPECT_NE(limits::internal_step(to_duration(3e-4), H, false).find("does not divide"),
            std::string::npos);
  EXPECT_EQ(limits::internal_step(to_duration(3e-4), H, true), "");  // own grid (004 Sect. 2)
  EXPECT_NE(limits::internal_step(to_duration(2e-3), H, false).find("larger"), std::string::npos);
  EXPECT_NE(limits::internal_step(duration{0}, H, true), "");
  // The bound on internal steps per macro step, exactly at and one past it.
  const duration h{10};
  EXPECT_EQ(limits::internal_step(h, duration{10 * max_substeps_per_macro_step}, false), "");
  EXPECT_NE(limits::internal_step(h, duration{10 * (max_substeps_per_macro_step + 1)}, false)
                .find("internal steps"),
            std::string::npos);
}

}  // namespace
