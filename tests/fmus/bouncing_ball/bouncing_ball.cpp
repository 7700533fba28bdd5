// Bouncing ball: height h, velocity v, h'' = -g in flight; at h = 0 moving down the ball
// bounces, v+ = -e v- (restitution e). Flight is integrated exactly (a parabola) and the
// impact time is the root of the parabola, so h(t) equals the closed form of the problem up
// to rounding: first impact at t1 = (v0 + sqrt(v0^2 + 2 g h0)) / g, impact speed w1 =
// sqrt(v0^2 + 2 g h0), then flights of 2 e^n w1 / g with apex heights e^(2n) w1^2 / (2 g).
// A rebound slower than v_min leaves the ball resting on the floor (no Zeno chatter).
//
// With the importer handling events (FMI 3 event mode with early return) the step stops at
// the impact with h = 0 and v < 0, and the bounce is applied in event mode
// (handle_event). Otherwise the step applies every bounce inside it. Built as
// bouncing_ball_fmi2 and bouncing_ball_fmi3 (the same model behind either interface).
#include <cmath>

#include "fmu_model.hpp"

namespace {

using cosim::fmu_kit::causality;
using cosim::fmu_kit::step_outcome;

class bouncing_ball final : public cosim::fmu_kit::model {
 public:
  bouncing_ball() {
    add(0, causality::local, &time_);
    add(1, causality::output, &h_);
    add(2, causality::output, &v_);
    add(3, causality::parameter, &g_);
    add(4, causality::parameter, &e_);
    add(5, causality::parameter, &h0_);
    add(6, causality::parameter, &v0_);
    add(7, causality::output, &bounces_);
    add(8, causality::parameter, &v_min_);
  }

  bool initialize(double t0, std::string& why) override {
    if (!(g_ > 0.0) || !(e_ >= 0.0 && e_ <= 1.0) || !(h0_ >= 0.0) || !std::isfinite(v0_) ||
        !(v_min_ >= 0.0)) {
      why = "needs g > 0, 0 <= e <= 1, h0 >= 0, finite v0 and v_min >= 0";
      return false;
    }
    time_ = t0;
    h_ = h0_;
    v_ = v0_;
    bounces_ = 0;
    resting_ = h_ == 0.0 && v_ <= 0.0;
    if (resting_) v_ = 0.0;
    return true;
  }

  step_outcome step(double /*t*/, double t_end, bool stop_at_events) noexcept override {
    step_outcome r;
    // The ball's own time: after an early return the importer's communication point is the
    // event time rounded to its clock; the state belongs to the exact one.
    while (time_ < t_end) {
      const double span = t_end - time_;
      const double tau = resting_ ? INFINITY : time_to_impact();
      if (tau > span) {
        fly(span);
        time_ = t_end;
        break;
      }
      fly(tau);
      h_ = 0.0;
      time_ += tau;
      if (stop_at_events) {
        r.what = step_outcome::kind::event;
        r.reached = time_;
        return r;
      }
      bounce();
    }
    r.reached = time_;
    return r;
  }

  void handle_event() noexcept override { bounce(); }

 private:
  // Time until h reaches 0 from above, or infinity. A ball at h = 0 moving down has just
  // arrived (its event was not handled): it is not stopped again and falls through the
  // floor, which is what an importer ignoring eventHandlingNeeded gets.
  [[nodiscard]] double time_to_impact() const noexcept {
    if (h_ < 0.0 || (h_ == 0.0 && v_ <= 0.0)) return INFINITY;
    const double root = std::sqrt(v_ * v_ + 2.0 * g_ * h_);
    // Positive root of h + v tau - g tau^2 / 2 = 0 without cancellation.
    return v_ > 0.0 ? (v_ + root) / g_ : 2.0 * h_ / (root - v_);
  }

  void fly(double tau) noexcept {
    if (resting_) return;
    h_ += tau * (v_ - 0.5 * g_ * tau);
    v_ -= g_ * tau;
  }

  void bounce() noexcept {
    ++bounces_;
    v_ = -e_ * v_;
    if (v_ < v_min_) {
      v_ = 0.0;
      resting_ = true;
    }
  }

  double time_ = 0.0;
  double h_ = 1.0, v_ = 0.0;
  double g_ = 9.81, e_ = 0.7, h0_ = 1.0, v0_ = 0.0, v_min_ = 1e-3;
  std::int32_t bounces_ = 0;
  bool resting_ = false;
};

}  // namespace

namespace cosim::fmu_kit {
std::unique_ptr<model> make_model() {
  return std::make_unique<bouncing_ball>();
}
const char* const model_token = "{8c4e8d43-6f35-4b0e-9a61-2c1d2f0b7a01}";
}  // namespace cosim::fmu_kit
