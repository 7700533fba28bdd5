#pragma once
// A long history of one input's samples for 004's multirate interface (004 Sect. 2.1):
// with fast-step delivery a slow consumer receives its fast producer's outputs at every
// fast step, and its own step then spans many samples. Evaluating the input at a time
// inside that span must use the samples around that time, not the newest ones: 004 builds
// the order-P polynomial on t_P, the first stored time after t (if any), and the P times
// before it. sample_history (5 samples) cannot do that, so such inputs keep this ring.
//
// Capacity is set once before the run (allocates); push/value_at never allocate.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cosim/runtime/extrapolation.hpp"
#include "cosim/runtime/time.hpp"

namespace cosim {

/// Which sample ends the polynomial's points (t_P) for an evaluation at t.
enum class dense_points : std::uint8_t {
  first_after,  // the first sample after t: a slow consumer of fast samples (004 Sect. 2.1)
  // 004 Table 1 seen from the fast side, whose evaluation at t finds only the slow samples
  // stepped while t2 < t (slowest-first: up to the first at or after t) or t2 + h2 < t
  // (fastest-first: those before t); the runtime may already hold later ones.
  first_at_or_after,
  last_before,
};

class dense_history {
 public:
  /// Keeps the newest `n` samples (0 = disabled).
  void reserve(std::size_t n) {
    t_.assign(n, 0);
    v_.assign(n, 0.0);
    head_ = 0;
    count_ = 0;
  }
  [[nodiscard]] bool enabled() const noexcept { return !t_.empty(); }
  [[nodiscard]] std::size_t capacity() const noexcept { return t_.size(); }
  [[nodiscard]] std::size_t size() const noexcept { return count_; }
  void reset() noexcept { count_ = 0; }
  void set_points(dense_points p) noexcept { points_ = p; }

  /// Appends a sample (strictly later than the newest) or, at the newest time, replaces it.
  void push(time_point t, double v) noexcept {
    const std::int64_t tn = t.time_since_epoch().count();
    if (count_ > 0 && at_t(count_ - 1) >= tn) {
      v_[index(count_ - 1)] = v;
      return;
    }
    if (count_ == t_.size()) {
      head_ = (head_ + 1) % t_.size();
      --count_;
    }
    t_[index(count_)] = tn;
    v_[index(count_)] = v;
    ++count_;
  }

  /// Order-`order` Lagrange polynomial at t on 004's points: the first sample after t (or
  /// the newest, when t is at or past it) and the `order` samples before it; set_points
  /// chooses another t_P.
  [[nodiscard]] double value_at(time_point t, int order) const noexcept {
    const std::int64_t te = t.time_since_epoch().count();
    std::size_t last = count_ - 1;  // t_P
    switch (points_) {
      case dense_points::first_after:  // walk back while the sample before is still after t
        while (last > 0 && at_t(last - 1) > te) --last;
        break;
      case dense_points::first_at_or_after:
        while (last > 0 && at_t(last - 1) >= te) --last;
        break;
      case dense_points::last_before:  // the oldest when none is before t (the start)
        while (last > 0 && at_t(last) >= te) --last;
        break;
    }
    const std::size_t want = static_cast<std::size_t>(order) + 1;
    const std::size_t n = want < last + 1 ? want : last + 1;
    if (n <= 1) return v_[index(last)];
    std::int64_t ts[max_extrapolation_order + 1];
    double vs[max_extrapolation_order + 1];
    for (std::size_t k = 0; k < n; ++k) {
      ts[k] = at_t(last + 1 - n + k);
      vs[k] = v_[index(last + 1 - n + k)];
    }
    return lagrange_eval(ts, vs, static_cast<int>(n), te);
  }

 private:
  [[nodiscard]] std::size_t index(std::size_t k) const noexcept { return (head_ + k) % t_.size(); }
  [[nodiscard]] std::int64_t at_t(std::size_t k) const noexcept { return t_[index(k)]; }

  std::vector<std::int64_t> t_;
  std::vector<double> v_;
  std::size_t head_ = 0;   // oldest sample
  std::size_t count_ = 0;  // samples held
  dense_points points_ = dense_points::first_after;
};

}  // namespace cosim
