#include "cosim/drivers/sequence_tracker.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace {

using cosim::drivers::sequence_class;
using cosim::drivers::sequence_distance;
using cosim::drivers::sequence_tracker;

void expect_counters(const sequence_tracker& t, std::uint64_t fresh, std::uint64_t lost,
                     std::uint64_t duplicates, std::uint64_t out_of_order) {
  EXPECT_EQ(t.received_fresh(), fresh);
  EXPECT_EQ(t.lost(), lost);
  EXPECT_EQ(t.duplicates(), duplicates);
  EXPECT_EQ(t.out_of_order(), out_of_order);
}

TEST(SequenceDistance, SerialArithmetic) {
  EXPECT_EQ(sequence_distance(5, 5), 0);
  EXPECT_EQ(sequence_distance(5, 6), 1);
  EXPECT_EQ(sequence_distance(6, 5), -1);
  EXPECT_EQ(sequence_distance(0xFFFFFFFFu, 0), 1);
  EXPECT_EQ(sequence_distance(0, 0xFFFFFFFFu), -1);
  EXPECT_EQ(sequence_distance(0xFFFFFFF0u, 0x10u), 0x20);
  EXPECT_EQ(sequence_distance(0, 0x7FFFFFFFu), std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ(sequence_distance(0, 0x80000000u), std::numeric_limits<std::int32_t>::min());
  static_assert(sequence_distance(0xFFFFFFFFu, 1) == 2);
}

TEST(SequenceTracker, StartsEmpty) {
  const sequence_tracker t;
  EXPECT_FALSE(t.newest().has_value());
  expect_counters(t, 0, 0, 0, 0);
}

TEST(SequenceTracker, FirstPacketIsAlwaysFresh) {
  for (const std::uint32_t first : {0u, 1u, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu}) {
    sequence_tracker t;
    EXPECT_EQ(t.observe(first), sequence_class::fresh) << first;
    EXPECT_EQ(t.newest(), first);
    expect_counters(t, 1, 0, 0, 0);
  }
}

TEST(SequenceTracker, ConsecutiveNumbersAreFreshWithoutLoss) {
  sequence_tracker t;
  for (std::uint32_t s = 100; s < 200; ++s) {
    EXPECT_EQ(t.observe(s), sequence_class::fresh);
  }
  expect_counters(t, 100, 0, 0, 0);
  EXPECT_EQ(t.newest(), 199u);
}

TEST(SequenceTracker, GapsAddToLost) {
  sequence_tracker t;
  t.observe(10);
  EXPECT_EQ(t.observe(11), sequence_class::fresh);
  EXPECT_EQ(t.observe(15), sequence_class::fresh);  // 12, 13, 14 missing
  expect_counters(t, 3, 3, 0, 0);
  EXPECT_EQ(t.observe(17), sequence_class::fresh);  // 16 missing
  expect_counters(t, 4, 4, 0, 0);
}

TEST(SequenceTracker, DuplicatesOfNewestAreCounted) {
  sequence_tracker t;
  t.observe(7);
  EXPECT_EQ(t.observe(7), sequence_class::duplicate);
  EXPECT_EQ(t.observe(7), sequence_class::duplicate);
  EXPECT_EQ(t.observe(8), sequence_class::fresh);
  EXPECT_EQ(t.observe(8), sequence_class::duplicate);
  expect_counters(t, 2, 0, 3, 0);
  EXPECT_EQ(t.newest(), 8u);
}

TEST(SequenceTracker, OlderPacketsAreOutOfOrderAndLostIsKept) {
  sequence_tracker t;
  t.observe(1);
  t.observe(2);
  t.observe(5);  // 3, 4 counted lost
  EXPECT_EQ(t.observe(3), sequence_class::out_of_order);
  EXPECT_EQ(t.observe(4), sequence_class::out_of_order);
  // A repeat of an older packet is out_of_order too: only the newest is remembered.
  EXPECT_EQ(t.observe(2), sequence_class::out_of_order);
  expect_counters(t, 3, 2, 0, 3);  // documented choice: late arrivals do not reduce lost
  EXPECT_EQ(t.newest(), 5u);
  EXPECT_EQ(t.observe(6), sequence_class::fresh);
  expect_counters(t, 4, 2, 0, 3);
}

TEST(SequenceTracker, WrapsAroundWithoutLoss) {
  sequence_tracker t;
  t.observe(0xFFFFFFFDu);
  EXPECT_EQ(t.observe(0xFFFFFFFEu), sequence_class::fresh);
  EXPECT_EQ(t.observe(0xFFFFFFFFu), sequence_class::fresh);
  EXPECT_EQ(t.observe(0u), sequence_class::fresh);
  EXPECT_EQ(t.observe(1u), sequence_class::fresh);
  expect_counters(t, 5, 0, 0, 0);
  EXPECT_EQ(t.newest(), 1u);
}

TEST(SequenceTracker, GapAcrossWrapIsCountedLost) {
  sequence_tracker t;
  t.observe(0xFFFFFFFEu);
  EXPECT_EQ(t.observe(2u), sequence_class::fresh);  // 0xFFFFFFFF, 0, 1 missing
  expect_counters(t, 2, 3, 0, 0);
}

TEST(SequenceTracker, ReorderingAndDuplicatesAcrossWrap) {
  sequence_tracker t;
  t.observe(0xFFFFFFFFu);
  EXPECT_EQ(t.observe(1u), sequence_class::fresh);  // 0 lost
  EXPECT_EQ(t.observe(0u), sequence_class::out_of_order);
  EXPECT_EQ(t.observe(0xFFFFFFFFu), sequence_class::out_of_order);
  EXPECT_EQ(t.observe(1u), sequence_class::duplicate);
  expect_counters(t, 2, 1, 1, 2);
}

TEST(SequenceTracker, HalfRangeBoundary) {
  sequence_tracker t;
  t.observe(0);
  // 2^31 - 1 ahead is the furthest that still counts as newer.
  EXPECT_EQ(t.observe(0x7FFFFFFFu), sequence_class::fresh);
  expect_counters(t, 2, 0x7FFFFFFEu, 0, 0);

  sequence_tracker u;
  u.observe(0);
  // Exactly 2^31 away is ambiguous under RFC 1982; treated as older so it is dropped.
  EXPECT_EQ(u.observe(0x80000000u), sequence_class::out_of_order);
  expect_counters(u, 1, 0, 0, 1);
}

TEST(SequenceTracker, LostAccumulatesBeyond32Bits) {
  sequence_tracker t;
  std::uint32_t s = 0;
  t.observe(s);
  for (int i = 0; i < 4; ++i) {
    s += 0x7FFFFFFFu;
    EXPECT_EQ(t.observe(s), sequence_class::fresh);
  }
  EXPECT_EQ(t.lost(), 4ull * 0x7FFFFFFEull);
}

TEST(SequenceTracker, ResetForgetsEverything) {
  sequence_tracker t;
  t.observe(1000);
  t.observe(1000);
  t.observe(999);
  t.observe(1005);
  t.reset();
  EXPECT_FALSE(t.newest().has_value());
  expect_counters(t, 0, 0, 0, 0);
  // After a sender restart its low numbers are fresh again.
  EXPECT_EQ(t.observe(0), sequence_class::fresh);
  expect_counters(t, 1, 0, 0, 0);
}

TEST(SequenceTracker, RestartAtForgetsTheNumberingButKeepsTheCounters) {
  sequence_tracker t;
  t.observe(1000);
  t.observe(1000);  // duplicate
  t.observe(999);   // out of order
  t.observe(1005);  // 4 lost
  ASSERT_EQ(t.observe(0), sequence_class::out_of_order);
  // The transport recognises 0 as a restart: counted fresh, not out of order.
  EXPECT_EQ(t.restart_at(0), sequence_class::fresh);
  EXPECT_EQ(t.newest(), 0u);
  expect_counters(t, 3, 4, 1, 1);
  EXPECT_EQ(t.restarts(), 1U);
  EXPECT_EQ(t.observe(1), sequence_class::fresh);
}

TEST(SequenceTracker, ToString) {
  EXPECT_STREQ(to_string(sequence_class::fresh), "fresh");
  EXPECT_STREQ(to_string(sequence_class::duplicate), "duplicate");
  EXPECT_STREQ(to_string(sequence_class::out_of_order), "out_of_order");
  EXPECT_STREQ(to_string(static_cast<sequence_class>(200)), "unknown");
}

}  // namespace
