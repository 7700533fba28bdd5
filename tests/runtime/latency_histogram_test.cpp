#include "cosim/runtime/latency_histogram.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>

namespace cosim {
namespace {

TEST(LatencyHistogram, EmptyHistogramReportsZeros) {
  const latency_histogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.percentile_us(50), 0.0);
  EXPECT_EQ(h.max_us(), 0.0);
  EXPECT_EQ(h.min_us(), 0.0);
  EXPECT_EQ(h.mean_us(), 0.0);
  EXPECT_EQ(h.bin_count(), latency_histogram::default_bins_us);
  EXPECT_THROW(latency_histogram{0}, std::invalid_argument);
}

TEST(LatencyHistogram, BinsAreOneMicrosecondWide) {
  latency_histogram h(10);
  h.record_ns(0);
  h.record_ns(999);
  h.record_ns(1000);
  h.record_ns(9'999);
  EXPECT_EQ(h.bin(0), 2u);
  EXPECT_EQ(h.bin(1), 1u);
  EXPECT_EQ(h.bin(9), 1u);
  EXPECT_EQ(h.overflow_count(), 0u);
  EXPECT_EQ(h.count(), 4u);
}

TEST(LatencyHistogram, NegativeValuesGoToBinZeroButKeepExactMin) {
  latency_histogram h(10);
  h.record_ns(-2'500);
  EXPECT_EQ(h.bin(0), 1u);
  EXPECT_DOUBLE_EQ(h.min_us(), -2.5);
  EXPECT_EQ(h.percentile_us(50), 1.0);
}

TEST(LatencyHistogram, PercentileIsUpperEdgeOfTheQuantileBin) {
  latency_histogram h;
  // 100 samples: 1..100 µs plus 0.5 µs each, i.e. sample k lies in bin k.
  for (std::int64_t k = 1; k <= 100; ++k) h.record_ns(k * 1000 + 500);
  EXPECT_EQ(h.percentile_us(50), 51.0) << "50th sample is 50.5 µs, bin [50,51)";
  EXPECT_EQ(h.percentile_us(99), 100.0);
  EXPECT_EQ(h.percentile_us(100), 101.0);
  EXPECT_EQ(h.percentile_us(0), 2.0) << "p0 is the smallest sample's bin";
  EXPECT_GE(h.percentile_us(99), 99.5) << "conservative: never below the true value";
  EXPECT_DOUBLE_EQ(h.max_us(), 100.5);
  EXPECT_DOUBLE_EQ(h.min_us(), 1.5);
  EXPECT_DOUBLE_EQ(h.mean_us(), 51.0);
}

TEST(LatencyHistogram, OverflowBinRemembersTheMaximum) {
  latency_histogram h(100);  // 0..99 µs
  for (int i = 0; i < 98; ++i) h.record_ns(5'000);
  h.record_ns(250'000);
  h.record_ns(1'234'567);
  EXPECT_EQ(h.overflow_count(), 2u);
  EXPECT_EQ(h.percentile_us(50), 6.0);
  EXPECT_DOUBLE_EQ(h.percentile_us(99.5), 1234.567) << "in overflow the max is the bound";
  EXPECT_DOUBLE_EQ(h.max_us(), 1234.567);
  EXPECT_EQ(h.max_ns(), 1'234'567);
}

TEST(LatencyHistogram, MergeAddsCountsAndExtremes) {
  latency_histogram a(100);
  latency_histogram b(100);
  a.record_ns(1'000);
  a.record_ns(2'000);
  b.record_ns(3'000);
  b.record_ns(500'000);
  a.merge(b);
  EXPECT_EQ(a.count(), 4u);
  EXPECT_EQ(a.bin(1), 1u);
  EXPECT_EQ(a.bin(3), 1u);
  EXPECT_EQ(a.overflow_count(), 1u);
  EXPECT_DOUBLE_EQ(a.max_us(), 500.0);
  EXPECT_DOUBLE_EQ(a.min_us(), 1.0);
  EXPECT_EQ(b.count(), 2u) << "the source is unchanged";
}

TEST(LatencyHistogram, MergeFromWiderHistogramFoldsExcessIntoOverflow) {
  latency_histogram narrow(10);
  latency_histogram wide(1000);
  wide.record_ns(5'000);
  wide.record_ns(50'000);
  narrow.merge(wide);
  EXPECT_EQ(narrow.bin(5), 1u);
  EXPECT_EQ(narrow.overflow_count(), 1u);
  EXPECT_DOUBLE_EQ(narrow.percentile_us(100), 50.0);
}

TEST(LatencyHistogram, MergingAnEmptyHistogramKeepsExtremes) {
  latency_histogram a(10);
  a.record_ns(3'000);
  a.merge(latency_histogram(10));
  EXPECT_DOUBLE_EQ(a.min_us(), 3.0);
  EXPECT_DOUBLE_EQ(a.max_us(), 3.0);
  EXPECT_EQ(a.count(), 1u);
}

TEST(LatencyHistogram, ResetClearsEverything) {
  latency_histogram h(10);
  h.record_ns(100'000);
  h.record_ns(1'000);
  h.reset();
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.overflow_count(), 0u);
  EXPECT_EQ(h.bin(1), 0u);
  EXPECT_EQ(h.max_us(), 0.0);
  h.record_ns(2'000);
  EXPECT_DOUBLE_EQ(h.max_us(), 2.0);
  EXPECT_DOUBLE_EQ(h.min_us(), 2.0);
}

}  // namespace
}  // namespace cosim
