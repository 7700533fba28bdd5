#pragma once
// One FMU instance as fmu_subsystem calls it, whatever the FMI version (private to
// subsystems/fmi/src). The FMI 2 adapter (fmi2_instance.cpp) and the FMI 3 adapter
// (fmi3_instance.cpp) translate each call to their version's function, its argument types
// (fmi2Boolean is an int, fmi3Boolean a bool; FMI 3 passes value counts) and its step
// protocol (FMI 2: doStep and the status queries after fmi2Discard; FMI 3: events, early
// returns, terminateSimulation), so the subsystem holds no version branch.
//
// Values go in and out as the subsystem keeps them: reals as double, integers as int32,
// booleans as char 0/1. Every call returns the FMI status as an int (FMI 2 and 3 number
// them alike up to Fatal). Value and step calls are allocation-free.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "cosim/fmi/fmu_subsystem.hpp"
#include "fmu_api.hpp"

namespace cosim::fmi {

/// The FMI functions and flags of one version, by name, for messages.
struct fmi_names {
  const char* instantiate;  // fmi2Instantiate / fmi3InstantiateCoSimulation
  const char* set_debug_logging;
  const char* get_real;
  const char* get_integer;
  const char* get_boolean;
  const char* get_string;
  const char* set_real;
  const char* set_integer;
  const char* set_boolean;
  const char* set_string;
  const char* set_real_inputs;  // "fmi2SetReal (inputs)"
  const char* set_integer_inputs;
  const char* set_boolean_inputs;
  const char* string_functions;  // "fmi2SetString / fmi2GetString"
  const char* get_output_derivatives;
  const char* get_directional;
  const char* nonfinite_partial;  // "fmi2GetDirectionalDerivative gave a non-finite ..."
  const char* get_state;
  const char* set_state;
  const char* save_state;     // get_state, saving the state for iterative coupling
  const char* restore_state;  // set_state, rolling back for iterative coupling
  const char* termination;    // what the destructor calls, for the crash guard
  const char* state_flag;     // canGetAndSetFMUstate / canGetAndSetFMUState
  const char* directional_flag;
};

/// The start and stop times told to the FMU (stop: none for an open-ended run).
struct experiment_times {
  bool tolerance_defined = false;
  double tolerance = 0.0;
  double start = 0.0;
  std::optional<double> stop;
};

class fmu_instance {
 public:
  fmu_instance(fmu_subsystem& owner, fmu_subsystem::api& api) noexcept : owner_(owner), api_(api) {}
  virtual ~fmu_instance() = default;
  fmu_instance(const fmu_instance&) = delete;
  fmu_instance& operator=(const fmu_instance&) = delete;

  // ---- setup (not real-time)

  [[nodiscard]] virtual const fmi_names& names() const noexcept = 0;
  /// "fmi2Discard", "fmi3Error", ...
  [[nodiscard]] virtual const char* status_text(int status) const noexcept = 0;
  /// Resolves the version's functions from the binary into the api table (throws
  /// cosim::error listing the missing ones).
  virtual void resolve(const loaded_fmu& fmu, bool event_mode, bool output_derivatives) = 0;
  /// Why the binary does not match modelDescription.xml (its reported version, its types
  /// platform), or "".
  [[nodiscard]] virtual std::string binary_mismatch(const model_description& md) const = 0;
  [[nodiscard]] virtual bool has_string_functions() const noexcept = 0;
  [[nodiscard]] virtual bool has_debug_logging() const noexcept = 0;
  [[nodiscard]] virtual bool has_directional() const noexcept = 0;
  /// Instantiates the FMU in co-simulation mode with logging on; false if it returned NULL.
  virtual bool instantiate(const loaded_fmu& fmu, const std::string& name, bool event_mode,
                           bool early_return) = 0;
  [[nodiscard]] bool instantiated() const noexcept { return handle_ != nullptr; }
  /// Forgets the instance without calling the FMU (after fmiFatal nothing may be called).
  void abandon() noexcept { handle_ = nullptr; }
  /// Setup (FMI 2), initialisation mode with the parameters set in it, its end, and (FMI 3
  /// with event mode) the events initialisation leaves pending. Throws cosim::error naming
  /// the call.
  virtual void initialize(const experiment_times& e) = 0;
  virtual int set_debug_logging(bool on, std::size_t n, const char* const* categories) = 0;
  virtual int set_string(std::uint32_t vr, const char* value) noexcept = 0;
  virtual int get_string(std::uint32_t vr, const char** value) noexcept = 0;
  /// Terminate (when `initialized`) and free the instance; none after.
  virtual void end(bool initialized) noexcept = 0;

  // ---- values, steps, derivatives and states (allocation-free)

  /// The scratch for booleans in the version's type holds n values. Setup only.
  virtual void reserve_booleans(std::size_t n) = 0;
  virtual int get_real(const std::uint32_t* vrs, std::size_t n, double* dst) noexcept = 0;
  virtual int get_integer(const std::uint32_t* vrs, std::size_t n, std::int32_t* dst) noexcept = 0;
  virtual int get_boolean(const std::uint32_t* vrs, std::size_t n, char* dst) noexcept = 0;
  virtual int set_real(const std::uint32_t* vrs, std::size_t n, const double* src) noexcept = 0;
  virtual int set_integer(const std::uint32_t* vrs, std::size_t n,
                          const std::int32_t* src) noexcept = 0;
  virtual int set_boolean(const std::uint32_t* vrs, std::size_t n, const char* src) noexcept = 0;
  /// The other number types (fmu_typed_values.hpp): v as the FMU receives it in `type`.
  [[nodiscard]] virtual double typed_as_sent(var_type type, double v) const noexcept = 0;
  virtual int get_typed(typed_group& g, double* dst, const char*& call) noexcept = 0;
  virtual int set_typed(typed_group& g, const double* src, bool all,
                        const char*& call) noexcept = 0;
  /// One communication step from FMU time tc over h (rollback: the importer may set an
  /// earlier state). False when the run stops at it; the reason is recorded in the owner.
  virtual bool step(double tc, double h, bool rollback) noexcept = 0;
  virtual int get_output_derivatives(const std::uint32_t* vrs, std::size_t n,
                                     const std::int32_t* orders, double* values) noexcept = 0;
  virtual int get_directional(std::uint32_t out, std::uint32_t in, double seed,
                              double* d) noexcept = 0;
  virtual int get_state(void** state) noexcept = 0;
  virtual int set_state(void* state) noexcept = 0;
  virtual int free_state(void** state) noexcept = 0;

 protected:
  // The owner's failure bookkeeping, for the adapters' step protocols (fmu_subsystem.cpp).
  bool fail(fmu_stop kind, const char* what, int status, double t) noexcept;
  bool end_simulation(const char* what, int status, double last) noexcept;
  /// After a call that returned `st` > Warning: the instance is in error (or fatal) state.
  void mark_failed(int st) noexcept;
  void mark_error() noexcept;
  void mark_terminated() noexcept;
  void mark_initialized() noexcept;
  [[nodiscard]] bool event_mode_used() const noexcept;
  [[nodiscard]] bool early_return_allowed() const noexcept;
  /// Throws cosim::error naming the call and status unless st <= Warning.
  void check(int st, const char* call);
  /// The parameters the user set, again (fmu_subsystem::set_parameters).
  void set_parameters();
  [[noreturn]] void throw_error(const std::string& what);
  [[nodiscard]] std::string_view stop_message() const noexcept { return owner_.stop_message(); }

  fmu_subsystem& owner_;
  fmu_subsystem::api& api_;
  void* handle_ = nullptr;  // fmi2Component / fmi3Instance
};

/// The adapters (fmi2_instance.cpp, fmi3_instance.cpp).
[[nodiscard]] std::unique_ptr<fmu_instance> make_fmi2_instance(fmu_subsystem& owner,
                                                               fmu_subsystem::api& api);
[[nodiscard]] std::unique_ptr<fmu_instance> make_fmi3_instance(fmu_subsystem& owner,
                                                               fmu_subsystem::api& api);

}  // namespace cosim::fmi
