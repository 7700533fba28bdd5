#pragma once
// Polynomial input extrapolation (Lagrange form) over the most recent samples.
// 000 Sect. 4 / 002 Sect. 2.2: order m uses the last m+1 samples; order 0 is ZOH.
// A sample may carry the producer's own time derivatives at its time (an FMU with
// maxOutputDerivativeOrder >= 1): order m then is the Taylor polynomial of order
// min(m, derivatives given) about the newest sample instead (no finite differences).
#include <array>
#include <cstddef>
#include <cstdint>

#include "cosim/runtime/time.hpp"

namespace cosim {

inline constexpr int max_extrapolation_order = 4;

/// Lagrange polynomial through n points (t_k, v_k), evaluated at t. Times are taken
/// relative to the newest point so that large absolute times do not cost precision.
/// Exact (to rounding) for polynomials of degree < n; spacing may be uneven.
inline double lagrange_eval(const std::int64_t* t, const double* v, int n,
                            std::int64_t t_eval) noexcept {
  const std::int64_t ref = t[n - 1];
  const double x = static_cast<double>(t_eval - ref) * 1e-9;
  double sum = 0.0;
  for (int j = 0; j < n; ++j) {
    const double xj = static_cast<double>(t[j] - ref) * 1e-9;
    double w = 1.0;
    for (int m = 0; m < n; ++m) {
      if (m == j) continue;
      const double xm = static_cast<double>(t[m] - ref) * 1e-9;
      w *= (x - xm) / (xj - xm);
    }
    sum += w * v[j];
  }
  return sum;
}

/// Fixed-capacity history of the last samples of one scalar signal.
/// Samples must arrive with strictly increasing times.
class sample_history {
 public:
  static constexpr int capacity = max_extrapolation_order + 1;

  void reset() noexcept { count_ = 0; }

  void push(time_point t, double v) noexcept {
    derivs_ = 0;
    newest_ = newest_ + 1 == capacity ? 0 : newest_ + 1;
    const std::int64_t tn = t.time_since_epoch().count();
    t_[newest_] = tn;
    t_[newest_ + capacity] = tn;
    v_[newest_] = v;
    v_[newest_ + capacity] = v;
    if (count_ < capacity) ++count_;
  }

  void replace_newest(double v) noexcept {
    v_[newest_] = v;
    v_[newest_ + capacity] = v;
    derivs_ = 0;
  }

  /// The newest sample's derivatives d^i v/dt^i, i = 1..n (in units per second^i); more
  /// than max_extrapolation_order are ignored. A later push/replace_newest clears them.
  void set_newest_derivatives(const double* d, int n) noexcept {
    derivs_ = n < max_extrapolation_order ? (n > 0 ? n : 0) : max_extrapolation_order;
    for (int i = 0; i < derivs_; ++i) d_[i] = d[i];
  }
  [[nodiscard]] int newest_derivatives() const noexcept { return derivs_; }

  [[nodiscard]] int size() const noexcept { return count_; }
  [[nodiscard]] double newest() const noexcept { return v_[last()]; }
  [[nodiscard]] time_point newest_time() const noexcept { return time_point{duration{t_[last()]}}; }

  /// Order-`order` extrapolation (or interpolation) at t, using as many samples as exist
  /// up to order+1. Requires size() > 0.
  [[nodiscard]] double value_at(time_point t, int order) const noexcept {
    if (derivs_ > 0 && order > 0) return taylor_at(t, order < derivs_ ? order : derivs_);
    const int n = (order + 1 < count_) ? order + 1 : count_;
    if (n <= 1) return v_[last()];
    const int first = last() + 1 - n;  // the newest n samples, oldest first
    return lagrange_eval(&t_[first], &v_[first], n, t.time_since_epoch().count());
  }

 private:
  // v + d1 x + d2 x^2 / 2! + ... + dm x^m / m!, x = t - newest time, in Horner form.
  [[nodiscard]] double taylor_at(time_point t, int m) const noexcept {
    const double x = static_cast<double>(t.time_since_epoch().count() - t_[last()]) * 1e-9;
    double sum = d_[m - 1];
    for (int i = m - 1; i >= 1; --i) sum = d_[i - 1] + sum * x / static_cast<double>(i + 1);
    return v_[last()] + sum * x;
  }
  // Index of the newest sample in the upper copy: the newest n samples are t_[last() - n + 1]
  // .. t_[last()], in time order.
  [[nodiscard]] int last() const noexcept { return newest_ + capacity; }

  // A ring of `capacity` slots stored twice (slot i at i and i + capacity), so the newest
  // samples are always contiguous for lagrange_eval and a push writes two slots instead of
  // shifting the history (one push per input per macro step on the real-time path).
  static constexpr std::size_t slots = 2 * static_cast<std::size_t>(capacity);
  std::array<std::int64_t, slots> t_{};
  std::array<double, slots> v_{};
  int newest_ = capacity - 1;  // slot of the newest sample
  int count_ = 0;
  std::array<double, max_extrapolation_order> d_{};  // the newest sample's derivatives
  int derivs_ = 0;
};

}  // namespace cosim
