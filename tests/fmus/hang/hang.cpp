// Hang: an FMU whose doStep does not return, to test the supervisor (a stop decided while a
// model is stuck must still reach the bench, keep the rows and end the process). Parameter
// `hang_in`: 0 never (y = t), 1 sleeps for ever, 2 spins for ever at full CPU (on a SCHED_FIFO
// thread only a higher priority preempts it), 3 sleeps `sleep_s` once; each in the first
// doStep that would end after `hang_at` [s]; 4 sleeps for ever in initialisation
// (fmi2ExitInitializationMode). Built as hang_fmi2.
#include <time.h>

#include <atomic>
#include <string>

#include "fmu_model.hpp"

namespace {

using cosim::fmu_kit::causality;
using cosim::fmu_kit::step_outcome;

class hang final : public cosim::fmu_kit::model {
 public:
  hang() {
    add(0, causality::output, &y_);
    add(1, causality::parameter, &hang_in_);
    add(2, causality::parameter, &hang_at_);
    add(3, causality::parameter, &sleep_s_);
  }

  bool initialize(double t0, std::string& /*why*/) override {
    if (hang_in_ == 4)
      for (;;) sleep_for(3600.0);
    y_ = t0;
    return true;
  }

  step_outcome step(double /*t*/, double t_end, bool /*stop_at_events*/) noexcept override {
    if (!hung_ && t_end > hang_at_) {
      hung_ = true;
      if (hang_in_ == 1)
        for (;;) sleep_for(3600.0);
      if (hang_in_ == 2) {
        // An atomic load the compiler must repeat: the loop is not undefined behaviour.
        static std::atomic<bool> never{false};
        while (!never.load(std::memory_order_relaxed)) {
        }
      }
      if (hang_in_ == 3) sleep_for(sleep_s_);
    }
    y_ = t_end;
    step_outcome r;
    r.reached = t_end;
    return r;
  }

 private:
  static void sleep_for(double s) noexcept {
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(s);
    ts.tv_nsec = static_cast<long>((s - static_cast<double>(ts.tv_sec)) * 1e9);
    while (nanosleep(&ts, &ts) != 0) {
    }
  }

  double y_ = 0.0;
  std::int32_t hang_in_ = 0;
  double hang_at_ = 0.5;
  double sleep_s_ = 2.0;
  bool hung_ = false;
};

}  // namespace

namespace cosim::fmu_kit {
std::unique_ptr<model> make_model() {
  return std::make_unique<hang>();
}
const char* const model_token = "{5b8e1f0a-7c2d-4e93-a6b1-3d9f4c2e8a15}";
}  // namespace cosim::fmu_kit
