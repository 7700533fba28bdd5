// Crash: an FMU that crashes the process on purpose, to test the importer's crash guard
// (subsystems/fmi/include/cosim/fmi/crash_guard.hpp) and out-of-process FMUs (host =
// "process": the worker dies, the master stops safely). Parameter `crash_in`: 0 never (the
// output y = t then), 1 a null-pointer write in initialisation (fmi2ExitInitializationMode),
// 2 abort() there, 3 a null-pointer write in the first doStep that would end after
// `crash_at` [s], 4 abort() there; 5 no crash, but every fmi2GetReal of y once y (= t) is
// past crash_at returns fmi2Error; 6 a null-pointer write in fmi2Terminate, 7 one in
// fmi2FreeInstance. Built as crash_fmi2.
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
    add(2, causality::parameter, &crash_at_);
  }

  bool initialize(double t0, std::string& /*why*/) override {
    if (crash_in_ == 1) null_write();
    if (crash_in_ == 2) std::abort();
    y_ = t0;
    return true;
  }

  step_outcome step(double /*t*/, double t_end, bool /*stop_at_events*/) noexcept override {
    if (crash_in_ == 3 && t_end > crash_at_) null_write();
    if (crash_in_ == 4 && t_end > crash_at_) std::abort();
    y_ = t_end;
    step_outcome r;
    r.reached = t_end;
    return r;
  }

  [[nodiscard]] const char* get_refusal(std::uint32_t vr) const noexcept override {
    return crash_in_ == 5 && vr == 0 && y_ > crash_at_ ? "crash: y past crash_at cannot be read"
                                                       : nullptr;
  }

  void terminate() noexcept override {
    if (crash_in_ == 6) null_write();
  }

  crash(const crash&) = delete;
  crash& operator=(const crash&) = delete;
  // fmi2FreeInstance deletes the model.
  ~crash() override {
    if (crash_in_ == 7) null_write();
  }

 private:
  // A volatile store through a pointer read at run time: the compiler must emit it (a plain
  // null write is undefined behaviour it may drop).
  static void null_write() noexcept {
    volatile int* volatile p = nullptr;
    *p = 1;
  }

  double y_ = 0.0;
  std::int32_t crash_in_ = 0;
  double crash_at_ = 0.5;
};

}  // namespace

namespace cosim::fmu_kit {
std::unique_ptr<model> make_model() {
  return std::make_unique<crash>();
}
const char* const model_token = "{0c5d2e71-4f3a-4b8e-9d16-7a2e5c9b3f07}";
}  // namespace cosim::fmu_kit
