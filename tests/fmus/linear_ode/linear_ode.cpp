// Linear ODE x' = -k x, x(t0) = x0, solved exactly per step: x(t + h) = x(t) e^(-k h), so
// x(t) = x0 e^(-k (t - t0)) holds to rounding (two roundings per step: exp and the product).
// Outputs x and its derivatives for master-side extrapolation: x' = -k x, x'' = k^2 x
// (maxOutputDerivativeOrder = 2). Built as linear_ode_fmi2 and linear_ode_fmi3.
#include <cmath>

#include "fmu_model.hpp"

namespace {

using cosim::fmu_kit::causality;
using cosim::fmu_kit::step_outcome;

class linear_ode final : public cosim::fmu_kit::model {
 public:
  linear_ode() {
    add(0, causality::local, &time_);
    add(1, causality::output, &x_);
    add(2, causality::local, &der_x_);
    add(3, causality::parameter, &k_);
    add(4, causality::parameter, &x0_);
  }

  bool initialize(double t0, std::string& why) override {
    if (!std::isfinite(k_) || !std::isfinite(x0_)) {
      why = "k and x0 must be finite";
      return false;
    }
    time_ = t0;
    x_ = x0_;
    der_x_ = -k_ * x_;
    return true;
  }

  step_outcome step(double /*t*/, double t_end, bool /*stop_at_events*/) noexcept override {
    // From the model's own time: the spans then add up to t_end - t0 exactly, whatever the
    // importer's rounding of its communication points.
    x_ *= std::exp(-k_ * (t_end - time_));
    der_x_ = -k_ * x_;
    time_ = t_end;
    step_outcome r;
    r.reached = t_end;
    return r;
  }

  bool output_derivative(std::uint32_t vr, int order, double& value) const noexcept override {
    if (vr != 1) return false;
    if (order == 1) {
      value = -k_ * x_;
      return true;
    }
    if (order == 2) {
      value = k_ * k_ * x_;
      return true;
    }
    return false;
  }

 private:
  double time_ = 0.0;
  double x_ = 1.0, der_x_ = -1.0;
  double k_ = 1.0, x0_ = 1.0;
};

}  // namespace

namespace cosim::fmu_kit {
std::unique_ptr<model> make_model() {
  return std::make_unique<linear_ode>();
}
const char* const model_token = "{2f9a1b7c-3d54-4e86-8b0f-5a7c9e1d4b02}";
}  // namespace cosim::fmu_kit
