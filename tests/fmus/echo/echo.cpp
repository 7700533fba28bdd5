// Echo y = the input u it received over its last step: y depends on no input at the same
// time (no direct feedthrough), so the recorded y at a communication point is exactly what the
// importer set before that step. From the time fail_at on, doStep fails (fmi2Error) after
// logging why, in category logStatusError; built with COSIM_KIT_LOG_AS_ASKED, it logs only
// when the importer turned logging on (and that category, if it named any).
#include <cstdio>
#include <string>

#include "fmu_model.hpp"

namespace {

using cosim::fmu_kit::causality;
using cosim::fmu_kit::step_outcome;

class echo final : public cosim::fmu_kit::model {
 public:
  echo() {
    add(0, causality::local, &time_);
    add(1, causality::input, &u_);
    add(2, causality::output, &y_);
    add(3, causality::parameter, &fail_at_);
  }

  bool initialize(double t0, std::string& /*why*/) override {
    time_ = t0;
    y_ = u_;
    return true;
  }

  step_outcome step(double t, double t_end, bool /*stop_at_events*/) noexcept override {
    step_outcome r;
    if (t >= fail_at_) {
      r.what = step_outcome::kind::failed;
      char why[96];
      std::snprintf(why, sizeof why, "echo refuses to step from t = %g on (fail_at)", fail_at_);
      r.message = why;
      return r;
    }
    time_ = t_end;
    y_ = u_;
    r.reached = t_end;
    return r;
  }

 private:
  double time_ = 0.0;
  double u_ = 0.0, y_ = 0.0;
  double fail_at_ = 1e300;
};

}  // namespace

namespace cosim::fmu_kit {
std::unique_ptr<model> make_model() {
  return std::make_unique<echo>();
}
const char* const model_token = "{5e1c7a02-93d4-4b6e-8f21-0c9d3e7b4a15}";
}  // namespace cosim::fmu_kit
