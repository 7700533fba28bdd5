#pragma once
// Latency histogram with fixed 1 µs bins (cyclictest's resolution, so the two can be
// compared bin for bin) plus one overflow bin. Storage is sized in the constructor;
// record_ns() never allocates, so it can run on the RT path. Not thread-safe: record on
// one thread, read or merge after that thread has stopped (or on copies).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

namespace cosim {

class latency_histogram {
 public:
  static constexpr std::size_t default_bins_us = 10'000;  // 0..9999 µs, then overflow

  /// bins_us 1-µs bins cover [0, bins_us) µs; larger values go to the overflow bin.
  explicit latency_histogram(std::size_t bins_us = default_bins_us) : bins_(bins_us + 1, 0) {
    if (bins_us == 0) throw std::invalid_argument("latency_histogram needs at least one bin");
  }

  /// Negative values (clock jitter when a wake-up is measured against its deadline)
  /// count as 0 µs in the bins; min/max keep the exact value.
  void record_ns(std::int64_t ns) noexcept {
    const std::uint64_t us = ns <= 0 ? 0 : static_cast<std::uint64_t>(ns) / 1000;
    const std::size_t bin = us < bin_count() ? static_cast<std::size_t>(us) : bin_count();
    ++bins_[bin];
    ++count_;
    sum_ns_ += static_cast<double>(ns);
    min_ns_ = std::min(min_ns_, ns);
    max_ns_ = std::max(max_ns_, ns);
  }

  /// Upper edge (µs) of the bin holding the p-th percentile, p in [0, 100], so the
  /// result is never below the true percentile. In the overflow bin the exact maximum
  /// is the only bound known and is returned. 0 if empty.
  [[nodiscard]] double percentile_us(double p) const noexcept {
    if (count_ == 0) return 0.0;
    const double fraction = std::clamp(p, 0.0, 100.0) / 100.0;
    // Nearest-rank definition: the smallest value with at least p% of samples <= it.
    auto rank = static_cast<std::uint64_t>(std::ceil(fraction * static_cast<double>(count_)));
    rank = std::clamp<std::uint64_t>(rank, 1, count_);
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < bin_count(); ++i) {
      cumulative += bins_[i];
      if (cumulative >= rank) return static_cast<double>(i + 1);
    }
    return max_us();
  }

  [[nodiscard]] double max_us() const noexcept {
    return count_ == 0 ? 0.0 : static_cast<double>(max_ns_) / 1000.0;
  }
  [[nodiscard]] double min_us() const noexcept {
    return count_ == 0 ? 0.0 : static_cast<double>(min_ns_) / 1000.0;
  }
  [[nodiscard]] double mean_us() const noexcept {
    return count_ == 0 ? 0.0 : sum_ns_ / static_cast<double>(count_) / 1000.0;
  }
  [[nodiscard]] std::int64_t max_ns() const noexcept { return count_ == 0 ? 0 : max_ns_; }
  [[nodiscard]] std::uint64_t count() const noexcept { return count_; }

  /// Number of 1-µs bins (excluding the overflow bin).
  [[nodiscard]] std::size_t bin_count() const noexcept { return bins_.size() - 1; }
  /// Samples in [i, i+1) µs; i == bin_count() is the overflow bin.
  [[nodiscard]] std::uint64_t bin(std::size_t i) const noexcept {
    return i < bins_.size() ? bins_[i] : 0;
  }
  [[nodiscard]] std::uint64_t overflow_count() const noexcept { return bins_.back(); }

  /// Adds other's samples. Bins beyond this histogram's range go to its overflow bin.
  void merge(const latency_histogram& other) noexcept {
    for (std::size_t i = 0; i < other.bin_count(); ++i) {
      bins_[std::min(i, bin_count())] += other.bins_[i];
    }
    bins_.back() += other.overflow_count();
    if (other.count_ > 0) {
      min_ns_ = std::min(min_ns_, other.min_ns_);
      max_ns_ = std::max(max_ns_, other.max_ns_);
    }
    count_ += other.count_;
    sum_ns_ += other.sum_ns_;
  }

  void reset() noexcept {
    std::fill(bins_.begin(), bins_.end(), 0);
    count_ = 0;
    sum_ns_ = 0.0;
    min_ns_ = std::numeric_limits<std::int64_t>::max();
    max_ns_ = std::numeric_limits<std::int64_t>::min();
  }

 private:
  std::vector<std::uint64_t> bins_;  // last element: overflow
  std::uint64_t count_ = 0;
  double sum_ns_ = 0.0;  // double: cannot overflow, exact up to 2^53 ns in total
  std::int64_t min_ns_ = std::numeric_limits<std::int64_t>::max();
  std::int64_t max_ns_ = std::numeric_limits<std::int64_t>::min();
};

}  // namespace cosim
