// First-order lag x' = -k x + u, y = x, behaving as FMUs some modelling tools export do:
// - fmi2SetupExperiment resets every parameter to the binary's defaults, so a parameter set
//   before it is lost;
// - the binary's default of min_step (1e-8) differs from the start its modelDescription.xml
//   declares (0), and min_step <= 0 fails initialisation (its solver would never advance);
// - initialisation limits k to at most k_limit = 100, changing a larger value that was set;
// - a doStep ending after the stop time, by however little, fails ("Exceeded model finish
//   time: 2 > 2");
// - its output declares no dependencies (FMI 2.0 then means: may depend on every input),
//   although y = x has no direct feedthrough.
// solver (a String parameter): "exact" integrates each step exactly with u held,
// x(t + h) = x e^(-k h) + (u / k)(1 - e^(-k h)); "euler" takes x + h (-k x + u).
#include <cmath>
#include <string>

#include "fmu_model.hpp"

namespace {

using cosim::fmu_kit::causality;
using cosim::fmu_kit::step_outcome;

constexpr double k_limit = 100.0;

class tool_lag final : public cosim::fmu_kit::model {
 public:
  tool_lag() {
    add(0, causality::local, &v_.time);
    add(1, causality::input, &v_.u);
    add(2, causality::output, &v_.x);
    add(3, causality::parameter, &v_.k);
    add(4, causality::parameter, &v_.x0);
    add(5, causality::parameter, &v_.min_step);
    add(6, causality::parameter, &v_.solver);
  }

  void on_setup_experiment() noexcept override {
    v_.k = defaults_.k;
    v_.x0 = defaults_.x0;
    v_.min_step = defaults_.min_step;
    v_.solver = defaults_.solver;  // short: no allocation beyond the small-string buffer
  }
  [[nodiscard]] bool exact_stop_time() const noexcept override { return true; }

  bool initialize(double t0, std::string& why) override {
    if (!(v_.min_step > 0.0)) {
      why = "min_step = " + std::to_string(v_.min_step) + ": the solver would never advance";
      return false;
    }
    if (v_.solver != "exact" && v_.solver != "euler") {
      why = "solver \"" + v_.solver + "\" is neither \"exact\" nor \"euler\"";
      return false;
    }
    if (!(v_.k > 0.0) || !std::isfinite(v_.x0)) {
      why = "k must be > 0 and x0 finite";
      return false;
    }
    if (v_.k > k_limit) v_.k = k_limit;  // the tool's own limit, applied silently
    v_.time = t0;
    v_.x = v_.x0;
    return true;
  }

  step_outcome step(double /*t*/, double t_end, bool /*stop_at_events*/) noexcept override {
    const double h = t_end - v_.time;
    if (v_.solver == "euler") {
      v_.x += h * (-v_.k * v_.x + v_.u);
    } else {
      const double e = std::exp(-v_.k * h);
      v_.x = v_.x * e + v_.u / v_.k * (1.0 - e);
    }
    v_.time = t_end;
    step_outcome r;
    r.reached = t_end;
    return r;
  }

 private:
  struct values {
    double time = 0.0;
    double u = 0.0, x = 1.0;
    double k = 1.0, x0 = 1.0, min_step = 1e-8;
    std::string solver = "exact";
  };
  values defaults_;
  values v_;
};

}  // namespace

namespace cosim::fmu_kit {
std::unique_ptr<model> make_model() {
  return std::make_unique<tool_lag>();
}
const char* const model_token = "{6c1e0b3a-94d2-4f57-a8e1-3b7d5c2f9e10}";
}  // namespace cosim::fmu_kit
