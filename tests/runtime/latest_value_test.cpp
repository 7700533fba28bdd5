#include "cosim/runtime/latest_value.hpp"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <thread>

#include "cosim/runtime/hardware.hpp"

namespace cosim {
namespace {

// Full size under ThreadSanitizer too (~10x slower, still seconds): the interleavings
// are the point.
constexpr std::uint64_t stress_writes = 10'000'000;

// Every field carries the same counter, so any mix of two writes is detectable.
struct wide_value {
  std::array<std::uint64_t, 11> words{};  // > one cache line, odd size
  double as_double = 0.0;
  std::int32_t as_int = 0;
};

wide_value make_wide(std::uint64_t k) {
  wide_value v;
  v.words.fill(k);
  v.as_double = static_cast<double>(k);
  v.as_int = static_cast<std::int32_t>(k);
  return v;
}

bool consistent(const wide_value& v) {
  for (std::uint64_t w : v.words) {
    if (w != v.words[0]) return false;
  }
  return v.as_double == static_cast<double>(v.words[0]) &&
         v.as_int == static_cast<std::int32_t>(v.words[0]);
}

TEST(LatestValue, NeverWrittenReadsValueInitialisedWithVersionZero) {
  struct sample2 {
    std::uint64_t sequence = 0;
    std::array<double, 2> values{};
  };
  latest_value<sample2> slot;
  sample2 out;
  out.sequence = 99;
  EXPECT_FALSE(slot.has_new());
  EXPECT_EQ(slot.read(out), 0u);
  EXPECT_EQ(out.sequence, 0u);
  EXPECT_EQ(out.values[1], 0.0);
}

TEST(LatestValue, ReaderGetsNewestValueAndItsVersion) {
  latest_value<int> slot;
  int out = 0;
  slot.write(10);
  EXPECT_TRUE(slot.has_new());
  EXPECT_EQ(slot.read(out), 1u);
  EXPECT_EQ(out, 10);
  EXPECT_FALSE(slot.has_new());
  slot.write(11);
  slot.write(12);
  slot.write(13);
  EXPECT_EQ(slot.writes(), 4u);
  EXPECT_EQ(slot.read(out), 4u) << "intermediate values are skipped, only the newest counts";
  EXPECT_EQ(out, 13);
  EXPECT_EQ(slot.read(out), 4u) << "re-reading without a write returns the same snapshot";
  EXPECT_EQ(out, 13);
}

TEST(LatestValue, ReadIfNewerReportsOnlyNewValues) {
  latest_value<double> slot;
  std::uint64_t version = 0;
  double out = -1.0;
  EXPECT_FALSE(slot.read_if_newer(out, version));
  EXPECT_EQ(out, -1.0);
  slot.write(2.5);
  EXPECT_TRUE(slot.read_if_newer(out, version));
  EXPECT_EQ(out, 2.5);
  EXPECT_EQ(version, 1u);
  EXPECT_FALSE(slot.read_if_newer(out, version));
  slot.write(3.5);
  EXPECT_TRUE(slot.read_if_newer(out, version));
  EXPECT_EQ(out, 3.5);
  EXPECT_EQ(version, 2u);
}

TEST(LatestValueStress, ReaderNeverSeesTornOrOlderValues) {
  latest_value<wide_value> slot;
  std::atomic<bool> done{false};
  std::uint64_t torn = 0;
  std::uint64_t went_back = 0;
  std::uint64_t mismatched_version = 0;
  std::uint64_t distinct = 0;
  std::uint64_t last_version = 0;
  std::thread reader([&] {
    wide_value v;
    for (;;) {
      // acquire: after seeing done, the final write is visible to the read below.
      const bool finished = done.load(std::memory_order_acquire);
      const std::uint64_t version = slot.read(v);
      if (!consistent(v)) ++torn;
      if (version < last_version) ++went_back;
      if (version != v.words[0]) ++mismatched_version;  // write k carries value k
      if (version != last_version) ++distinct;
      last_version = version;
      if (finished) return;
    }
  });
  for (std::uint64_t k = 1; k <= stress_writes; ++k) slot.write(make_wide(k));
  done.store(true, std::memory_order_release);  // release: all writes happen before
  reader.join();
  EXPECT_EQ(torn, 0u);
  EXPECT_EQ(went_back, 0u);
  EXPECT_EQ(mismatched_version, 0u);
  EXPECT_EQ(last_version, stress_writes) << "the reader ends with the newest value";
  EXPECT_GT(distinct, 1u) << "the reader should have observed intermediate versions";
}

}  // namespace
}  // namespace cosim
