// The FMI 3.0 adapter of fmu_instance (fmu_instance.hpp): calls follow the state machine of
// FMI 3.0 Sect. 4.2 (instantiate, set parameters, enter/exit initialisation, [event mode,
// step mode,] doStep..., terminate, free).
#include <cstdio>
#include <memory>
#include <string>

#include "cosim/fmi/fmi3.h"
#include "cosim/fmi/status.hpp"
#include "cosim/runtime/error.hpp"
#include "fmu_instance.hpp"
#include "fmu_text.hpp"
#include "fmu_typed_values.hpp"

namespace cosim::fmi {

namespace {

// Bounds on loops the FMU drives, so a misbehaving FMU cannot hang a step forever.
constexpr int max_event_iterations = 1000;
constexpr int max_early_returns = 100000;

void log3_callback(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category,
                   fmi3String message) {
  if (env == nullptr) return;
  static_cast<fmu_subsystem*>(env)->log_message(static_cast<int>(status), category, message);
}

constexpr fmi_names fmi3_names{
    "fmi3InstantiateCoSimulation",
    "fmi3SetDebugLogging",
    "fmi3GetFloat64",
    "fmi3GetInt32",
    "fmi3GetBoolean",
    "fmi3GetString",
    "fmi3SetFloat64",
    "fmi3SetInt32",
    "fmi3SetBoolean",
    "fmi3SetString",
    "fmi3SetFloat64 (inputs)",
    "fmi3SetInt32 (inputs)",
    "fmi3SetBoolean (inputs)",
    "fmi3SetString / fmi3GetString",
    "fmi3GetOutputDerivatives",
    "fmi3GetDirectionalDerivative",
    "fmi3GetDirectionalDerivative gave a non-finite derivative",
    "fmi3GetFMUState",
    "fmi3SetFMUState",
    "fmi3GetFMUState (saving the state for iterative coupling)",
    "fmi3SetFMUState (rolling back for iterative coupling)",
    "termination (fmi3Terminate, fmi3FreeInstance)",
    "canGetAndSetFMUState",
    "providesDirectionalDerivatives",
};

class fmi3_instance final : public fmu_instance {
 public:
  using fmu_instance::fmu_instance;

  const fmi_names& names() const noexcept override { return fmi3_names; }
  const char* status_text(int status) const noexcept override {
    return status_name(static_cast<fmi3Status>(status));
  }

  void resolve(const loaded_fmu& fmu, bool event_mode, bool output_derivatives) override {
    fmu_subsystem::api& a = api_;
    symbol_resolver need(fmu);
    need(a.get_version3, "fmi3GetVersion");
    need(a.instantiate3, "fmi3InstantiateCoSimulation");
    need(a.set_debug_logging3, "fmi3SetDebugLogging", false);
    need(a.free_instance3, "fmi3FreeInstance");
    need(a.enter_initialization3, "fmi3EnterInitializationMode");
    need(a.exit_initialization3, "fmi3ExitInitializationMode");
    need(a.terminate3, "fmi3Terminate");
    need(a.get_float64, "fmi3GetFloat64");
    need(a.get_int32, "fmi3GetInt32");
    need(a.get_boolean3, "fmi3GetBoolean");
    need(a.set_float64, "fmi3SetFloat64");
    need(a.set_int32, "fmi3SetInt32");
    need(a.set_boolean3, "fmi3SetBoolean");
    need(a.get_string3, "fmi3GetString", false);
    need(a.set_string3, "fmi3SetString", false);
    need(a.do_step3, "fmi3DoStep");
    need(a.get_float32, "fmi3GetFloat32", false);
    need(a.set_float32, "fmi3SetFloat32", false);
    need(a.get_int8, "fmi3GetInt8", false);
    need(a.set_int8, "fmi3SetInt8", false);
    need(a.get_uint8, "fmi3GetUInt8", false);
    need(a.set_uint8, "fmi3SetUInt8", false);
    need(a.get_int16, "fmi3GetInt16", false);
    need(a.set_int16, "fmi3SetInt16", false);
    need(a.get_uint16, "fmi3GetUInt16", false);
    need(a.set_uint16, "fmi3SetUInt16", false);
    need(a.get_uint32, "fmi3GetUInt32", false);
    need(a.set_uint32, "fmi3SetUInt32", false);
    need(a.get_int64, "fmi3GetInt64", false);
    need(a.set_int64, "fmi3SetInt64", false);
    need(a.get_uint64, "fmi3GetUInt64", false);
    need(a.set_uint64, "fmi3SetUInt64", false);
    need(a.enter_event_mode3, "fmi3EnterEventMode", event_mode);
    need(a.update_discrete_states3, "fmi3UpdateDiscreteStates", event_mode);
    need(a.enter_step_mode3, "fmi3EnterStepMode", event_mode);
    need(a.get_output_derivatives3, "fmi3GetOutputDerivatives", output_derivatives);
    need(a.get_directional3, "fmi3GetDirectionalDerivative", false);
    need(a.get_fmu_state3, "fmi3GetFMUState", false);
    need(a.set_fmu_state3, "fmi3SetFMUState", false);
    need(a.free_fmu_state3, "fmi3FreeFMUState", false);
    a.note_missing_state(a.get_fmu_state3 != nullptr, "fmi3GetFMUState");
    a.note_missing_state(a.set_fmu_state3 != nullptr, "fmi3SetFMUState");
    a.note_missing_state(a.free_fmu_state3 != nullptr, "fmi3FreeFMUState");
    need.require_all();
  }

  std::string binary_mismatch(const model_description& md) const override {
    const char* version = api_.get_version3();
    if (version == nullptr || version[0] != '3')
      return std::string("its binary reports FMI version \"") +
             (version != nullptr ? version : "(null)") + "\", modelDescription.xml says \"" +
             md.fmi_version + "\"";
    return {};
  }

  bool has_string_functions() const noexcept override {
    return api_.set_string3 != nullptr && api_.get_string3 != nullptr;
  }
  bool has_debug_logging() const noexcept override { return api_.set_debug_logging3 != nullptr; }
  bool has_directional() const noexcept override { return api_.get_directional3 != nullptr; }

  bool instantiate(const loaded_fmu& fmu, const std::string& name, bool event_mode,
                   bool early_return) override {
    const std::string path = fmu.resource_path();
    handle_ = api_.instantiate3(name.c_str(), fmu.file().md.token.c_str(), path.c_str(), fmi3False,
                                fmi3True, event_mode, early_return, nullptr, 0, &owner_,
                                &log3_callback, nullptr);
    return handle_ != nullptr;
  }

  void initialize(const experiment_times& e) override {
    // The parameters again in initialisation mode, where tools set them (FMI 3.0
    // Sect. 2.4.7 allows it for parameters, whose initial is "exact").
    check(api_.enter_initialization3(handle_, e.tolerance_defined, e.tolerance, e.start,
                                     e.stop.has_value(), e.stop.value_or(0.0)),
          "fmi3EnterInitializationMode");
    set_parameters();
    check(api_.exit_initialization3(handle_), "fmi3ExitInitializationMode");
    mark_initialized();
    // FMI 3.0 Sect. 4.2.2: with eventModeUsed, initialisation ends in event mode.
    if (event_mode_used() && !settle_events(e.start, false))
      throw_error(std::string(stop_message()));
  }

  int set_debug_logging(bool on, std::size_t n, const char* const* categories) override {
    return api_.set_debug_logging3(handle_, on, n, categories);
  }
  int set_string(std::uint32_t vr, const char* value) noexcept override {
    return api_.set_string3(handle_, &vr, 1, &value, 1);
  }
  int get_string(std::uint32_t vr, const char** value) noexcept override {
    return api_.get_string3(handle_, &vr, 1, value, 1);
  }

  void end(bool initialized) noexcept override {
    if (handle_ == nullptr) return;
    if (initialized) (void)api_.terminate3(handle_);
    api_.free_instance3(handle_);
    handle_ = nullptr;
  }

  void reserve_booleans(std::size_t n) override {
    if (n <= capacity_) return;
    bools_ = std::make_unique<bool[]>(n);  // std::vector<bool> has no data()
    capacity_ = n;
  }
  int get_real(const std::uint32_t* vrs, std::size_t n, double* dst) noexcept override {
    return api_.get_float64(handle_, vrs, n, dst, n);
  }
  int get_integer(const std::uint32_t* vrs, std::size_t n, std::int32_t* dst) noexcept override {
    return api_.get_int32(handle_, vrs, n, dst, n);
  }
  int get_boolean(const std::uint32_t* vrs, std::size_t n, char* dst) noexcept override {
    const fmi3Status st = api_.get_boolean3(handle_, vrs, n, bools_.get(), n);
    if (st <= fmi3Warning)
      for (std::size_t j = 0; j < n; ++j) dst[j] = bools_[j] ? 1 : 0;
    return st;
  }
  int set_real(const std::uint32_t* vrs, std::size_t n, const double* src) noexcept override {
    return api_.set_float64(handle_, vrs, n, src, n);
  }
  int set_integer(const std::uint32_t* vrs, std::size_t n,
                  const std::int32_t* src) noexcept override {
    return api_.set_int32(handle_, vrs, n, src, n);
  }
  int set_boolean(const std::uint32_t* vrs, std::size_t n, const char* src) noexcept override {
    for (std::size_t j = 0; j < n; ++j) bools_[j] = src[j] != 0;
    return api_.set_boolean3(handle_, vrs, n, bools_.get(), n);
  }
  double typed_as_sent(var_type type, double v) const noexcept override {
    return cosim::fmi::typed_as_sent<3>(type, v);
  }
  int get_typed(typed_group& g, double* dst, const char*& call) noexcept override {
    return typed_get<3>(api_, handle_, g, dst, call);
  }
  int set_typed(typed_group& g, const double* src, bool all, const char*& call) noexcept override {
    return typed_set<3>(api_, handle_, g, src, all, call);
  }

  bool step(double tc, double h, bool rollback) noexcept override {
    // The common case (a full step, no event) without the early-return loop's bookkeeping.
    fmi3Boolean event = false, terminate = false, early = false;
    fmi3Float64 last = tc + h;
    const fmi3Status st =
        api_.do_step3(handle_, tc, h, !rollback, &event, &terminate, &early, &last);
    if ((st == fmi3OK || st == fmi3Warning) && !event && !terminate && !early) [[likely]]
      return true;
    return step_rest(tc, h, rollback, st, event, terminate, early, last);
  }

  int get_output_derivatives(const std::uint32_t* vrs, std::size_t n, const std::int32_t* orders,
                             double* values) noexcept override {
    return api_.get_output_derivatives3(handle_, vrs, n, orders, values, n);
  }
  int get_directional(std::uint32_t out, std::uint32_t in, double seed,
                      double* d) noexcept override {
    return api_.get_directional3(handle_, &out, 1, &in, 1, &seed, 1, d, 1);
  }
  int get_state(void** state) noexcept override { return api_.get_fmu_state3(handle_, state); }
  int set_state(void* state) noexcept override { return api_.set_fmu_state3(handle_, state); }
  int free_state(void** state) noexcept override { return api_.free_fmu_state3(handle_, state); }

 private:
  /// Event mode until the discrete states settle, then step mode (entering event mode first
  /// when coming from step mode).
  bool settle_events(double t, bool from_step_mode) noexcept {
    if (from_step_mode) {
      const fmi3Status st = api_.enter_event_mode3(handle_);
      if (st > fmi3Warning) {
        mark_failed(st);
        return fail(fmu_stop::failed, "fmi3EnterEventMode", st, t);
      }
    }
    // FMI 3.0 Sect. 3.2.5: repeat until no discrete state needs another update.
    for (int k = 0; k < max_event_iterations; ++k) {
      fmi3Boolean again = false, terminate = false, nominals = false, values = false,
                  next_defined = false;
      fmi3Float64 next = 0.0;
      const fmi3Status st = api_.update_discrete_states3(handle_, &again, &terminate, &nominals,
                                                         &values, &next_defined, &next);
      if (st > fmi3Warning) {
        mark_failed(st);
        return fail(st == fmi3Discard ? fmu_stop::discarded : fmu_stop::failed,
                    "fmi3UpdateDiscreteStates", st, t);
      }
      if (terminate) return end_simulation("fmi3UpdateDiscreteStates: terminateSimulation", st, t);
      if (!again) {
        const fmi3Status s2 = api_.enter_step_mode3(handle_);
        if (s2 > fmi3Warning) {
          mark_failed(s2);
          return fail(fmu_stop::failed, "fmi3EnterStepMode", s2, t);
        }
        return true;
      }
    }
    mark_error();
    return fail(fmu_stop::failed, "fmi3UpdateDiscreteStates kept asking for another iteration",
                no_fmu_status, t);
  }

  /// After the first doStep reported anything but a plain full step: its outcome, then
  /// doStep again to t + h after each early return.
  [[gnu::noinline]] bool step_rest(double tc, double h, bool rollback, fmi3Status st0, bool event0,
                                   bool terminate0, bool early0, double last0) noexcept {
    const double end = tc + h;
    double cur = tc;
    for (int k = 0; k < max_early_returns; ++k) {
      fmi3Boolean event = event0, terminate = terminate0, early = early0;
      fmi3Float64 last = last0;
      fmi3Status st = st0;
      const double step = k == 0 ? h : end - cur;
      if (k > 0) {
        event = terminate = early = false;
        last = end;
        st = api_.do_step3(handle_, cur, step, !rollback, &event, &terminate, &early, &last);
      }
      if (st == fmi3Error || st == fmi3Fatal) {
        mark_failed(st);
        return fail(fmu_stop::failed, "fmi3DoStep", st, cur);
      }
      // FMI 3.0 Sect. 4.2.1: a discarded step reached lastSuccessfulTime only.
      if (terminate)
        return end_simulation("fmi3DoStep: terminateSimulation", st,
                              early || st == fmi3Discard ? last : end);
      if (st == fmi3Discard) {
        mark_terminated();
        char what[160];
        std::snprintf(what, sizeof what, "fmi3DoStep over h = %s s", num_text(step).data());
        return fail(fmu_stop::discarded, what, st, cur);
      }
      const double reached = early ? last : end;
      // An ignored event would lose e.g. a bouncing ball's bounce.
      if (event && event_mode_used() && !settle_events(reached, true)) return false;
      if (!early || !(reached < end)) return true;
      if (!early_return_allowed()) {
        mark_error();
        return fail(fmu_stop::failed,
                    "fmi3DoStep returned early although earlyReturnAllowed was "
                    "false",
                    no_fmu_status, reached);
      }
      if (!(reached > cur)) {
        mark_error();
        return fail(fmu_stop::failed, "fmi3DoStep returned early without advancing", no_fmu_status,
                    cur);
      }
      cur = reached;
    }
    mark_error();
    return fail(fmu_stop::failed, "fmi3DoStep kept returning early", no_fmu_status, cur);
  }

  std::unique_ptr<bool[]> bools_;  // booleans in fmi3Boolean
  std::size_t capacity_ = 0;
};

}  // namespace

std::unique_ptr<fmu_instance> make_fmi3_instance(fmu_subsystem& owner, fmu_subsystem::api& api) {
  return std::make_unique<fmi3_instance>(owner, api);
}

}  // namespace cosim::fmi
