// The FMI 2.0 adapter of fmu_instance (fmu_instance.hpp): calls follow the state machine of
// FMI 2.0 Sect. 4.2.4 (instantiate, set parameters, setup experiment, enter/exit
// initialisation, doStep..., terminate, free).
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cosim/fmi/fmi2.h"
#include "cosim/fmi/status.hpp"
#include "cosim/runtime/error.hpp"
#include "fmu_instance.hpp"
#include "fmu_text.hpp"
#include "fmu_typed_values.hpp"

namespace cosim::fmi {

namespace {

void log2_callback(fmi2ComponentEnvironment env, fmi2String /*instance*/, fmi2Status status,
                   fmi2String category, fmi2String message, ...) {
  if (env == nullptr) return;
  // FMI 2.0 Sect. 2.1.5: message is a printf format with the variable arguments.
  char text[sizeof(fmu_log_record::text)];
  va_list ap;
  va_start(ap, message);
  // NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start above initialises it
  std::vsnprintf(text, sizeof text, message != nullptr ? message : "", ap);
  va_end(ap);
  static_cast<fmu_subsystem*>(env)->log_message(static_cast<int>(status), category, text);
}

// FMI 2.0 Sect. 2.1.5: calloc semantics (the standard library's functions are not
// addressable in C++20, hence these wrappers).
void* allocate2(std::size_t n, std::size_t size) {
  return std::calloc(n, size);
}
void free2(void* p) {
  std::free(p);
}

constexpr fmi_names fmi2_names{
    "fmi2Instantiate",
    "fmi2SetDebugLogging",
    "fmi2GetReal",
    "fmi2GetInteger",
    "fmi2GetBoolean",
    "fmi2GetString",
    "fmi2SetReal",
    "fmi2SetInteger",
    "fmi2SetBoolean",
    "fmi2SetString",
    "fmi2SetReal (inputs)",
    "fmi2SetInteger (inputs)",
    "fmi2SetBoolean (inputs)",
    "fmi2SetString / fmi2GetString",
    "fmi2GetRealOutputDerivatives",
    "fmi2GetDirectionalDerivative",
    "fmi2GetDirectionalDerivative gave a non-finite derivative",
    "fmi2GetFMUstate",
    "fmi2SetFMUstate",
    "fmi2GetFMUstate (saving the state for iterative coupling)",
    "fmi2SetFMUstate (rolling back for iterative coupling)",
    "termination (fmi2Terminate, fmi2FreeInstance)",
    "canGetAndSetFMUstate",
    "providesDirectionalDerivative",
};

class fmi2_instance final : public fmu_instance {
 public:
  using fmu_instance::fmu_instance;

  const fmi_names& names() const noexcept override { return fmi2_names; }
  const char* status_text(int status) const noexcept override {
    return status_name(static_cast<fmi2Status>(status));
  }

  void resolve(const loaded_fmu& fmu, bool /*event_mode*/, bool output_derivatives) override {
    fmu_subsystem::api& a = api_;
    symbol_resolver need(fmu);
    need(a.get_types_platform2, "fmi2GetTypesPlatform");
    need(a.get_version2, "fmi2GetVersion");
    need(a.instantiate2, "fmi2Instantiate");
    // Optional: only log_categories needs it (set_log_categories names it when missing).
    need(a.set_debug_logging2, "fmi2SetDebugLogging", false);
    need(a.free_instance2, "fmi2FreeInstance");
    need(a.setup_experiment2, "fmi2SetupExperiment");
    need(a.enter_initialization2, "fmi2EnterInitializationMode");
    need(a.exit_initialization2, "fmi2ExitInitializationMode");
    need(a.terminate2, "fmi2Terminate");
    need(a.get_real2, "fmi2GetReal");
    need(a.get_integer2, "fmi2GetInteger");
    need(a.get_boolean2, "fmi2GetBoolean");
    need(a.set_real2, "fmi2SetReal");
    need(a.set_integer2, "fmi2SetInteger");
    need(a.set_boolean2, "fmi2SetBoolean");
    need(a.get_string2, "fmi2GetString", false);
    need(a.set_string2, "fmi2SetString", false);
    need(a.do_step2, "fmi2DoStep");
    need(a.get_boolean_status2, "fmi2GetBooleanStatus");
    need(a.get_real_status2, "fmi2GetRealStatus", false);
    need(a.get_output_derivatives2, "fmi2GetRealOutputDerivatives", output_derivatives);
    // Optional: only the feedthrough correction needs it (provides_partial() says no).
    need(a.get_directional2, "fmi2GetDirectionalDerivative", false);
    // Optional: only an iterative run needs them (state_refusal() names the missing ones).
    need(a.get_fmu_state2, "fmi2GetFMUstate", false);
    need(a.set_fmu_state2, "fmi2SetFMUstate", false);
    need(a.free_fmu_state2, "fmi2FreeFMUstate", false);
    a.note_missing_state(a.get_fmu_state2 != nullptr, "fmi2GetFMUstate");
    a.note_missing_state(a.set_fmu_state2 != nullptr, "fmi2SetFMUstate");
    a.note_missing_state(a.free_fmu_state2 != nullptr, "fmi2FreeFMUstate");
    need.require_all();
  }

  std::string binary_mismatch(const model_description& md) const override {
    const char* version = api_.get_version2();
    if (version == nullptr || version[0] != '2')
      return std::string("its binary reports FMI version \"") +
             (version != nullptr ? version : "(null)") + "\", modelDescription.xml says \"" +
             md.fmi_version + "\"";
    const char* platform = api_.get_types_platform2();
    if (platform == nullptr || std::strcmp(platform, fmi2TypesPlatform) != 0)
      return std::string("its binary uses types platform \"") +
             (platform != nullptr ? platform : "(null)") + "\", not \"default\"";
    return {};
  }

  bool has_string_functions() const noexcept override {
    return api_.set_string2 != nullptr && api_.get_string2 != nullptr;
  }
  bool has_debug_logging() const noexcept override { return api_.set_debug_logging2 != nullptr; }
  bool has_directional() const noexcept override { return api_.get_directional2 != nullptr; }

  bool instantiate(const loaded_fmu& fmu, const std::string& name, bool /*event_mode*/,
                   bool /*early_return*/) override {
    callbacks_.reset(
        new fmi2CallbackFunctions{&log2_callback, &allocate2, &free2, nullptr, &owner_});
    const std::string uri = fmu.resource_uri();
    // Logging on: the FMU's messages go to the log ring (log2_callback), and the reason for
    // a failed call reaches the stop message; log_categories narrows them.
    handle_ = api_.instantiate2(name.c_str(), fmi2CoSimulation, fmu.file().md.token.c_str(),
                                uri.c_str(), callbacks_.get(), fmi2False, fmi2True);
    return handle_ != nullptr;
  }

  void initialize(const experiment_times& e) override {
    // The parameters again after the setup (some FMUs reset them there) and in
    // initialisation mode, where tools set them (FMI 2.0 Sect. 2.2.7 allows both for
    // parameters, whose initial is "exact").
    check(api_.setup_experiment2(handle_, e.tolerance_defined ? fmi2True : fmi2False, e.tolerance,
                                 e.start, e.stop ? fmi2True : fmi2False, e.stop.value_or(0.0)),
          "fmi2SetupExperiment");
    set_parameters();
    check(api_.enter_initialization2(handle_), "fmi2EnterInitializationMode");
    set_parameters();
    check(api_.exit_initialization2(handle_), "fmi2ExitInitializationMode");
  }

  int set_debug_logging(bool on, std::size_t n, const char* const* categories) override {
    return api_.set_debug_logging2(handle_, on ? fmi2True : fmi2False, n, categories);
  }
  int set_string(std::uint32_t vr, const char* value) noexcept override {
    return api_.set_string2(handle_, &vr, 1, &value);
  }
  int get_string(std::uint32_t vr, const char** value) noexcept override {
    return api_.get_string2(handle_, &vr, 1, value);
  }

  void end(bool initialized) noexcept override {
    if (handle_ == nullptr) return;
    if (initialized) (void)api_.terminate2(handle_);
    api_.free_instance2(handle_);
    handle_ = nullptr;
  }

  void reserve_booleans(std::size_t n) override {
    if (bools_.size() < n) bools_.assign(n, fmi2False);
  }
  int get_real(const std::uint32_t* vrs, std::size_t n, double* dst) noexcept override {
    return api_.get_real2(handle_, vrs, n, dst);
  }
  int get_integer(const std::uint32_t* vrs, std::size_t n, std::int32_t* dst) noexcept override {
    return api_.get_integer2(handle_, vrs, n, dst);
  }
  int get_boolean(const std::uint32_t* vrs, std::size_t n, char* dst) noexcept override {
    const fmi2Status st = api_.get_boolean2(handle_, vrs, n, bools_.data());
    if (st <= fmi2Warning)
      for (std::size_t j = 0; j < n; ++j) dst[j] = bools_[j] != fmi2False ? 1 : 0;
    return st;
  }
  int set_real(const std::uint32_t* vrs, std::size_t n, const double* src) noexcept override {
    return api_.set_real2(handle_, vrs, n, src);
  }
  int set_integer(const std::uint32_t* vrs, std::size_t n,
                  const std::int32_t* src) noexcept override {
    return api_.set_integer2(handle_, vrs, n, src);
  }
  int set_boolean(const std::uint32_t* vrs, std::size_t n, const char* src) noexcept override {
    for (std::size_t j = 0; j < n; ++j) bools_[j] = src[j] != 0 ? fmi2True : fmi2False;
    return api_.set_boolean2(handle_, vrs, n, bools_.data());
  }
  double typed_as_sent(var_type type, double v) const noexcept override {
    return cosim::fmi::typed_as_sent<2>(type, v);
  }
  int get_typed(typed_group& g, double* dst, const char*& call) noexcept override {
    return typed_get<2>(api_, handle_, g, dst, call);
  }
  int set_typed(typed_group& g, const double* src, bool all, const char*& call) noexcept override {
    return typed_set<2>(api_, handle_, g, src, all, call);
  }

  bool step(double tc, double h, bool rollback) noexcept override {
    // With rollback the importer may set a state before tc (FMI 2.0 Sect. 4.2.2).
    const fmi2Status st = api_.do_step2(handle_, tc, h, rollback ? fmi2False : fmi2True);
    if (st == fmi2OK || st == fmi2Warning) [[likely]]
      return true;
    return step_failed(st, tc, h);
  }

  int get_output_derivatives(const std::uint32_t* vrs, std::size_t n, const std::int32_t* orders,
                             double* values) noexcept override {
    return api_.get_output_derivatives2(handle_, vrs, n, orders, values);
  }
  int get_directional(std::uint32_t out, std::uint32_t in, double seed,
                      double* d) noexcept override {
    return api_.get_directional2(handle_, &out, 1, &in, 1, &seed, d);
  }
  int get_state(void** state) noexcept override { return api_.get_fmu_state2(handle_, state); }
  int set_state(void* state) noexcept override { return api_.set_fmu_state2(handle_, state); }
  int free_state(void** state) noexcept override { return api_.free_fmu_state2(handle_, state); }

 private:
  [[gnu::cold, gnu::noinline]] bool step_failed(fmi2Status st, double tc, double h) noexcept {
    if (st == fmi2Discard) {
      // FMI 2.0 Sect. 4.2.3: after fmi2Discard, fmi2Terminated tells whether the model wants
      // the simulation to end (then at fmi2LastSuccessfulTime).
      fmi2Boolean terminated = fmi2False;
      if (api_.get_boolean_status2(handle_, fmi2Terminated, &terminated) <= fmi2Warning &&
          terminated != fmi2False) {
        fmi2Real last = tc;
        if (api_.get_real_status2 != nullptr)
          (void)api_.get_real_status2(handle_, fmi2LastSuccessfulTime, &last);
        return end_simulation("fmi2DoStep returned fmi2Discard, fmi2Terminated", st, last);
      }
      mark_terminated();
      char what[160];
      std::snprintf(what, sizeof what, "fmi2DoStep over h = %s s", num_text(h).data());
      return fail(fmu_stop::discarded, what, st, tc);
    }
    mark_failed(st);
    return fail(fmu_stop::failed, "fmi2DoStep", st, tc);
  }

  std::unique_ptr<const fmi2CallbackFunctions> callbacks_;  // outlives the instance
  std::vector<fmi2Boolean> bools_;                          // booleans in fmi2Boolean
};

}  // namespace

std::unique_ptr<fmu_instance> make_fmi2_instance(fmu_subsystem& owner, fmu_subsystem::api& api) {
  return std::make_unique<fmi2_instance>(owner, api);
}

}  // namespace cosim::fmi
