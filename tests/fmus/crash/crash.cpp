// Crash: an FMU that crashes the process on purpose, to test the importer's crash guard
// (subsystems/fmi/include/cosim/fmi/crash_guard.hpp). Parameter `crash_in`: 0 never (the
// output y = t then), 1 a null-pointer write in initialisation (fmi2ExitInitializationMode),
// 2 abort() there. Built as crash_fmi2.
#include <cstdlib>
#include <string>

#include "fmu_model.hpp"

namespace {

using cosim::fmu_kit::causality;
using cosim::fmu_kit::step_outcome;

class crash final : public cosim::fmu_kit::model {
 public:
  crash() {
    add(0, causality::output, &y_);
    add(1, causality::parameter, &crash_in_);
  }

  bool initialize(double t0, std::string& /*why*/) override {
    if (crash_in_ == 1) {
      // A volatile store through a pointer read at run time: the compiler must emit it
      // (a plain null write is undefined behaviour it may drop).
      volatile int* volatile p = nullptr;
      *p = 1;
    }
    if (crash_in_ == 2) std::abort();
    y_ = t0;
    return true;
  }

  step_outcome step(double /*t*/, double t_end, bool /*stop_at_events*/) noexcept override {
    y_ = t_end;
    step_outcome r;
    r.reached = t_end;
    return r;
  }

 private:
  double y_ = 0.0;
  std::int32_t crash_in_ = 0;
};

}  // namespace

namespace cosim::fmu_kit {
std::unique_ptr<model> make_model() {
  return std::make_unique<crash>();
}
const char* const model_token = "{0c5d2e71-4f3a-4b8e-9d16-7a2e5c9b3f07}";
}  // namespace cosim::fmu_kit
