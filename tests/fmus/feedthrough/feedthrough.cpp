// Pure feedthrough y = gain * u: no state, the output depends on the input at the same time
// (ModelStructure: y depends on u), for algebraic-loop detection and evaluation-order tests.
// The local u_sets counts the importer's sets of u (the importer sends only changed inputs).
// Directional derivative d y / d u = gain, NaN from the time bad_partial_from on (a faulty
// FMU, for the importer's stop).
// Built as feedthrough_fmi2 and feedthrough_fmi3.
#include <cmath>

#include "fmu_model.hpp"

namespace {

using cosim::fmu_kit::causality;
using cosim::fmu_kit::step_outcome;

class feedthrough final : public cosim::fmu_kit::model {
 public:
  feedthrough() {
    add(0, causality::local, &time_);
    add(1, causality::input, &u_);
    add(2, causality::output, &y_);
    add(3, causality::parameter, &gain_);
    add(4, causality::local, &u_sets_);
    add(5, causality::parameter, &bad_partial_from_);
  }

  bool initialize(double t0, std::string& why) override {
    if (!std::isfinite(gain_)) {
      why = "gain must be finite";
      return false;
    }
    time_ = t0;
    calculate();
    return true;
  }

  step_outcome step(double /*t*/, double t_end, bool /*stop_at_events*/) noexcept override {
    time_ = t_end;
    step_outcome r;
    r.reached = t_end;
    return r;
  }

  void calculate() noexcept override { y_ = gain_ * u_; }
  // d y / d u = gain (NaN from bad_partial_from on); nothing else depends on an input.
  bool partial(std::uint32_t out, std::uint32_t in, double& value) const noexcept override {
    if (out != 2 || in != 1) return false;
    value = time_ >= bad_partial_from_ ? std::nan("") : gain_;
    return true;
  }
  void on_set(std::uint32_t vr) noexcept override {
    if (vr == 1) ++u_sets_;
  }

 private:
  double time_ = 0.0;
  double u_ = 0.0, y_ = 0.0;
  double gain_ = 2.0;
  double bad_partial_from_ = 1e300;
  std::int32_t u_sets_ = 0;
};

}  // namespace

namespace cosim::fmu_kit {
std::unique_ptr<model> make_model() {
  return std::make_unique<feedthrough>();
}
const char* const model_token = "{a7b3c9d1-0e4f-4a28-b6c5-1d8e2f9a0b04}";
}  // namespace cosim::fmu_kit
