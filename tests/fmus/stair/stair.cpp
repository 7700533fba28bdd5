// Stair: an integer counter that steps by one every second, counter(t) = floor(t), and a
// real output level = counter. The model ends the simulation at T_end: steps up to T_end
// complete normally; a step that starts at or after T_end, or would pass it, stops at
// T_end and ends the simulation (FMI 2: fmi2Discard with fmi2Terminated and
// fmi2LastSuccessfulTime = T_end; FMI 3: terminateSimulation, lastSuccessfulTime =
// T_end, fmi3Discard when the step did not reach its end). A step longer than max_step is
// refused without ending the simulation (fmi2Discard without fmi2Terminated, fmi3Discard
// without terminateSimulation; the state stays at the step's start), as a model with an
// internal step limit does. With end_in_step, the step that reaches T_end (or passes it)
// ends the simulation itself: a step that ends exactly at T_end is complete (FMI 2:
// fmi2Discard, fmi2Terminated, fmi2LastSuccessfulTime = its end; FMI 3: fmi3OK with
// terminateSimulation), as FMUs do that announce their end with their last step. Built as
// stair_fmi2 and stair_fmi3.
#include <algorithm>
#include <cmath>
#include <string>

#include "fmu_model.hpp"

namespace {

using cosim::fmu_kit::causality;
using cosim::fmu_kit::step_outcome;

// Communication points come from decimal step sizes on the importer's clock: a time within
// this of a whole second counts as that second.
constexpr double time_slack = 1e-9;  // [s]

class stair final : public cosim::fmu_kit::model {
 public:
  stair() {
    add(0, causality::local, &time_);
    add(1, causality::output, &counter_);
    add(2, causality::output, &level_);
    add(3, causality::parameter, &t_end_);
    add(4, causality::parameter, &max_step_);
    add(5, causality::parameter, &end_in_step_);
  }

  bool initialize(double t0, std::string& why) override {
    if (!std::isfinite(t_end_)) {
      why = "T_end must be finite";
      return false;
    }
    set_time(t0);
    return true;
  }

  step_outcome step(double t, double t_end, bool /*stop_at_events*/) noexcept override {
    step_outcome r;
    if (t_end - t > max_step_ + time_slack) {
      r.what = step_outcome::kind::discard;
      r.reached = t;
      r.message = "stair: step of " + std::to_string(t_end - t) +
                  " s is longer than max_step = " + std::to_string(max_step_) + " s";
      return r;
    }
    const bool ends = end_in_step_ ? t_end >= t_end_ - time_slack
                                   : t >= t_end_ - time_slack || t_end > t_end_ + time_slack;
    if (ends) {
      // Ends at T_end: as far as the step got, never past T_end.
      set_time(std::max(t, std::min(t_end, t_end_)));
      r.what = step_outcome::kind::terminate;
      r.reached = time_;
      r.message = "stair: T_end = " + std::to_string(t_end_) + " s reached";
      return r;
    }
    set_time(t_end);
    r.reached = t_end;
    return r;
  }

 private:
  void set_time(double t) noexcept {
    time_ = t;
    counter_ = static_cast<std::int32_t>(std::floor(t + time_slack));
    level_ = counter_;
  }

  double time_ = 0.0;
  std::int32_t counter_ = 0;
  double level_ = 0.0;
  double t_end_ = 5.5;
  double max_step_ = 1e9;  // [s]
  bool end_in_step_ = false;
};

}  // namespace

namespace cosim::fmu_kit {
std::unique_ptr<model> make_model() {
  return std::make_unique<stair>();
}
const char* const model_token = "{6d3e0a5f-8b21-4c97-a4e2-9f0b1c7d3e03}";
}  // namespace cosim::fmu_kit
