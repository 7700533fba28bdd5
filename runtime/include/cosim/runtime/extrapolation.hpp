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
    if (count_ == capacity) {
      for (int i = 1; i < capacity; ++i) {
        t_[i - 1] = t_[i];
        v_[i - 1] = v_[i];
      }
      --count_;
    }
    t_[count_] = t.time_since_epoch().count();
    v_[count_] = v;
    ++count_;
  }

  void replace_newest(double v) noexcept {
    v_[count_ - 1] = v;
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
  [[nodiscard]] double newest() const noexcept { return v_[count_ - 1]; }
  [[nodiscard]] time_point newest_time() const noexcept {
    return time_point{duration{t_[count_ - 1]}};
  }

  /// Order-`order` extrapolation (or interpolation) at t, using as many samples as exist
  /// up to order+1. Requires size() > 0.
  [[nodiscard]] double value_at(time_point t, int order) const noexcept {
    if (derivs_ > 0 && order > 0) return taylor_at(t, order < derivs_ ? order : derivs_);
    const int n = (order + 1 < count_) ? order + 1 : count_;
    if (n <= 1) return v_[count_ - 1];
    const int first = count_ - n;
    return lagrange_eval(&t_[first], &v_[first], n, t.time_since_epoch().count());
  }

 private:
  // v + d1 x + d2 x^2 / 2! + ... + dm x^m / m!, x = t - newest time, in Horner form.
  [[nodiscard]] double taylor_at(time_point t, int m) const noexcept {
    const double x = static_cast<double>(t.time_since_epoch().count() - t_[count_ - 1]) * 1e-9;
    double sum = d_[m - 1];
    for (int i = m - 1; i >= 1; --i) sum = d_[i - 1] + sum * x / static_cast<double>(i + 1);
    return v_[count_ - 1] + sum * x;
  }

  std::array<std::int64_t, capacity> t_{};
  std::array<double, capacity> v_{};
  int count_ = 0;
  std::array<double, max_extrapolation_order> d_{};  // the newest sample's derivatives
  int derivs_ = 0;
};

}  // namespace cosim
