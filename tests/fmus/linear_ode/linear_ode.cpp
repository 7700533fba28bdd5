// Linear ODE x' = -k x, x(t0) = x0, solved exactly per step: x(t + h) = x(t) e^(-k h), so
// x(t) = x0 e^(-k (t - t0)) holds to rounding (two roundings per step: exp and the product).
// Outputs x and its derivatives for master-side extrapolation: x' = -k x, x'' = k^2 x
// (maxOutputDerivativeOrder = 2). Built as linear_ode_fmi2 and linear_ode_fmi3.
// canGetAndSetFMUstate: the FMU state is a copy of the model's five values. Built with
// COSIM_STATE_FAULT_AT = T (linear_ode_state_fault_fmi2), getting the state fails from t = T
// on, to test the importer's stop on an FMU state error.
#include <cmath>
#include <string>

#include "fmu_model.hpp"

namespace {

using cosim::fmu_kit::causality;
using cosim::fmu_kit::model_state;
using cosim::fmu_kit::step_outcome;

class linear_ode final : public cosim::fmu_kit::model {
 public:
  linear_ode() {
    add(0, causality::local, &v_.time);
    add(1, causality::output, &v_.x);
    add(2, causality::local, &v_.der_x);
    add(3, causality::parameter, &v_.k);
    add(4, causality::parameter, &v_.x0);
  }

  bool initialize(double t0, std::string& why) override {
    if (!std::isfinite(v_.k) || !std::isfinite(v_.x0)) {
      why = "k and x0 must be finite";
      return false;
    }
    v_.time = t0;
    v_.x = v_.x0;
    v_.der_x = -v_.k * v_.x;
    return true;
  }

  step_outcome step(double /*t*/, double t_end, bool /*stop_at_events*/) noexcept override {
    // From the model's own time: the spans then add up to t_end - t0 exactly, whatever the
    // importer's rounding of its communication points.
    v_.x *= std::exp(-v_.k * (t_end - v_.time));
    v_.der_x = -v_.k * v_.x;
    v_.time = t_end;
    step_outcome r;
    r.reached = t_end;
    return r;
  }

  bool output_derivative(std::uint32_t vr, int order, double& value) const noexcept override {
    if (vr != 1) return false;
    if (order == 1) {
      value = -v_.k * v_.x;
      return true;
    }
    if (order == 2) {
      value = v_.k * v_.k * v_.x;
      return true;
    }
    return false;
  }

  bool get_state(std::unique_ptr<model_state>& s, std::string& why) const override {
#ifdef COSIM_STATE_FAULT_AT
    if (v_.time >= COSIM_STATE_FAULT_AT) {
      why = "state fault on purpose from t = " + std::to_string(COSIM_STATE_FAULT_AT) + " s";
      return false;
    }
#endif
    return cosim::fmu_kit::save_copy(v_, s, why);
  }
  bool set_state(const model_state& s, std::string& why) override {
    return cosim::fmu_kit::restore_copy(s, v_, why);
  }

 private:
  struct values {
    double time = 0.0;
    double x = 1.0, der_x = -1.0;
    double k = 1.0, x0 = 1.0;
  };
  values v_;
};

}  // namespace

namespace cosim::fmu_kit {
std::unique_ptr<model> make_model() {
  return std::make_unique<linear_ode>();
}
const char* const model_token = "{2f9a1b7c-3d54-4e86-8b0f-5a7c9e1d4b02}";
}  // namespace cosim::fmu_kit
