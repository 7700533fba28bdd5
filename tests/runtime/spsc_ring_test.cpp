#include "cosim/runtime/spsc_ring.hpp"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <thread>

#include "cosim/runtime/hardware.hpp"

namespace cosim {
namespace {

// Full size under ThreadSanitizer too (~10x slower, still seconds): the interleavings
// are the point.
constexpr std::uint64_t stress_items = 10'000'000;

// A multi-word, trivially copyable payload like a coupling message: a torn copy would show
// as fields that disagree.
struct sample4 {
  std::uint64_t sequence = 0;
  std::int64_t tick = 0;
  std::array<double, 4> values{};
};

// Spin politely: on a loaded 2-CPU machine both test threads may share a CPU, and a
// pure spin would then burn a whole time slice per wait.
struct backoff {
  unsigned spins = 0;
  void operator()() {
    if (++spins % 64 == 0) {
      std::this_thread::yield();
    } else {
      cpu_relax();
    }
  }
};

sample4 make_sample(std::uint64_t i) {
  sample4 s;
  s.sequence = i;
  s.tick = static_cast<std::int64_t>(i) * 3;
  for (std::size_t k = 0; k < s.values.size(); ++k) s.values[k] = static_cast<double>(i + k);
  return s;
}

bool sample_ok(const sample4& s, std::uint64_t expected) {
  if (s.sequence != expected || s.tick != static_cast<std::int64_t>(expected) * 3) return false;
  for (std::size_t k = 0; k < s.values.size(); ++k) {
    if (s.values[k] != static_cast<double>(expected + k)) return false;
  }
  return true;
}

TEST(SpscRing, RejectsCapacityThatIsNotAPowerOfTwo) {
  EXPECT_THROW(spsc_ring<int>{0}, std::invalid_argument);
  EXPECT_THROW(spsc_ring<int>{3}, std::invalid_argument);
  EXPECT_THROW(spsc_ring<int>{1000}, std::invalid_argument);
  EXPECT_NO_THROW(spsc_ring<int>{1});
  EXPECT_NO_THROW(spsc_ring<int>{1024});
}

TEST(SpscRing, FullCapacityIsUsableAndFifoOrderHolds) {
  spsc_ring<int> ring(8);
  EXPECT_EQ(ring.capacity(), 8u);
  EXPECT_EQ(ring.size_approx(), 0u);
  for (int i = 0; i < 8; ++i) EXPECT_TRUE(ring.try_push(i)) << i;
  EXPECT_EQ(ring.size_approx(), 8u);
  EXPECT_FALSE(ring.try_push(99));
  EXPECT_EQ(ring.drops(), 0u) << "try_push does not count drops";
  int out = -1;
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(ring.try_pop(out));
    EXPECT_EQ(out, i);
  }
  EXPECT_FALSE(ring.try_pop(out));
  EXPECT_EQ(ring.size_approx(), 0u);
}

TEST(SpscRing, PushOnFullRejectsNewValueAndCountsDrop) {
  spsc_ring<int> ring(4);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(ring.push(i));
  EXPECT_FALSE(ring.push(100));
  EXPECT_FALSE(ring.push(101));
  EXPECT_EQ(ring.drops(), 2u);
  int out = -1;
  ASSERT_TRUE(ring.try_pop(out));
  EXPECT_EQ(out, 0) << "the oldest value is kept, the new one rejected";
  EXPECT_TRUE(ring.push(4));
  for (int expected : {1, 2, 3, 4}) {
    ASSERT_TRUE(ring.try_pop(out));
    EXPECT_EQ(out, expected);
  }
  EXPECT_EQ(ring.drops(), 2u);
}

TEST(SpscRing, FrontAndPopAccessInPlace) {
  spsc_ring<sample4> ring(2);
  EXPECT_EQ(ring.front(), nullptr);
  ASSERT_TRUE(ring.try_push(make_sample(7)));
  ASSERT_TRUE(ring.try_push(make_sample(8)));
  const sample4* first = ring.front();
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(sample_ok(*first, 7));
  EXPECT_EQ(ring.front(), first) << "front() without pop() keeps returning the same slot";
  ring.pop();
  const sample4* second = ring.front();
  ASSERT_NE(second, nullptr);
  EXPECT_TRUE(sample_ok(*second, 8));
  ring.pop();
  EXPECT_EQ(ring.front(), nullptr);
}

TEST(SpscRing, WrapsAroundManyTimes) {
  spsc_ring<std::uint64_t> ring(4);
  std::uint64_t next_out = 0;
  for (std::uint64_t i = 0; i < 10'000; ++i) {
    ASSERT_TRUE(ring.try_push(i));
    if (i % 3 == 2) {  // drain in uneven batches so head and tail wrap at different points
      std::uint64_t out = 0;
      while (ring.try_pop(out)) ASSERT_EQ(out, next_out++);
    }
  }
  std::uint64_t out = 0;
  while (ring.try_pop(out)) ASSERT_EQ(out, next_out++);
  EXPECT_EQ(next_out, 10'000u);
}

TEST(SpscRing, SlotStorageIsCacheLineAligned) {
  spsc_ring<int> ring(16);
  ASSERT_TRUE(ring.try_push(1));
  const auto address = reinterpret_cast<std::uintptr_t>(ring.front());
  EXPECT_EQ(address % cache_line_size, 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(&ring) % cache_line_size, 0u);
}

TEST(SpscRingStress, TwoThreadsTransferExactSequenceWithoutLoss) {
  spsc_ring<sample4> ring(1024);
  std::uint64_t mismatches = 0;
  std::uint64_t received = 0;
  std::thread consumer([&] {
    sample4 s;
    backoff wait;
    while (received < stress_items) {
      if (!ring.try_pop(s)) {
        wait();
        continue;
      }
      if (!sample_ok(s, received)) ++mismatches;
      ++received;
    }
  });
  backoff wait;
  for (std::uint64_t i = 0; i < stress_items; ++i) {
    const sample4 s = make_sample(i);
    while (!ring.try_push(s)) wait();
  }
  consumer.join();
  EXPECT_EQ(received, stress_items);
  EXPECT_EQ(mismatches, 0u);
  EXPECT_EQ(ring.drops(), 0u);
  EXPECT_EQ(ring.size_approx(), 0u);
}

TEST(SpscRingStress, FrontPopConsumerSeesExactSequence) {
  spsc_ring<sample4> ring(64);  // small: producer and consumer collide constantly
  const std::uint64_t items = stress_items / 4;
  std::uint64_t mismatches = 0;
  std::thread consumer([&] {
    backoff wait;
    for (std::uint64_t expected = 0; expected < items;) {
      const sample4* s = ring.front();
      if (s == nullptr) {
        wait();
        continue;
      }
      if (!sample_ok(*s, expected)) ++mismatches;
      ring.pop();
      ++expected;
    }
  });
  backoff wait;
  for (std::uint64_t i = 0; i < items; ++i) {
    const sample4 s = make_sample(i);
    while (!ring.try_push(s)) wait();
  }
  consumer.join();
  EXPECT_EQ(mismatches, 0u);
}

TEST(SpscRingStress, DroppingProducerLosesOnlyCountedValuesAndKeepsOrder) {
  spsc_ring<std::uint64_t> ring(16);
  const std::uint64_t items = stress_items / 10;
  std::uint64_t received = 0;
  std::uint64_t out_of_order = 0;
  std::atomic<bool> producer_done{false};
  std::thread consumer([&] {
    std::uint64_t last = 0;
    bool first = true;
    std::uint64_t v = 0;
    for (;;) {
      if (ring.try_pop(v)) {
        if (!first && v <= last) ++out_of_order;
        first = false;
        last = v;
        ++received;
        // Slow consumer: forces the ring to overflow regularly.
        for (int spin = 0; spin < 20; ++spin) cpu_relax();
      } else if (producer_done.load(std::memory_order_acquire)) {
        // acquire: all pushes happened before; one more pass empties the ring.
        while (ring.try_pop(v)) {
          if (!first && v <= last) ++out_of_order;
          first = false;
          last = v;
          ++received;
        }
        return;
      }
    }
  });
  for (std::uint64_t i = 0; i < items; ++i) ring.push(i);
  producer_done.store(true, std::memory_order_release);  // release: orders all pushes before
  consumer.join();
  EXPECT_EQ(out_of_order, 0u);
  EXPECT_EQ(received + ring.drops(), items);
  EXPECT_GT(ring.drops(), 0u) << "the test is meant to overflow the ring";
}

}  // namespace
}  // namespace cosim
