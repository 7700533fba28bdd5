#pragma once
// An FMI 2.0 / 3.0 co-simulation FMU as a cosim::subsystem.
//
// Code: construction and life cycle in src/fmu_subsystem.cpp, parameters in
// fmu_parameters.cpp, the run (inputs, steps, outputs, stops) in fmu_step.cpp, rollback in
// fmu_state.cpp, partial derivatives in fmu_partials.cpp, the feedthrough probe in
// fmu_probe.cpp. Every FMI call goes through one instance interface (src/fmu_instance.hpp)
// with an adapter per version (fmi2_instance.cpp, fmi3_instance.cpp).
//
// Ports: the FMU's scalar input and output variables of type Real/Float64, Integer/Int32 or
// Boolean (as doubles; booleans 0/1), with their units, role signal; an output is direct
// feedthrough when ModelStructure says it depends on an input (or lists no dependencies).
// Variables (recordable): the outputs and locals of those types; a local is fetched from the
// FMU only once the system records it (record_variable), outputs at every communication point.
//
// Life cycle: the constructor instantiates the FMU and sets the given parameters (only those:
// the others keep the binary's own values, which may differ from the declared starts);
// start_experiment() (the system builder calls it with the run's length) sets up the
// experiment, sets the parameters again after fmi2SetupExperiment (FMI 2: some FMUs reset
// them there) and in initialisation mode, where tools set them, and leaves initialisation,
// so a model that fails there stops the run before anything is written; it then reads the
// set values back and warns (or, refuse_changed_parameters, throws) where the FMU changed
// one. initialize(t0) does it if nobody did. step(t, h) sets
// the connected inputs from in(i, t) (unconnected ones keep their start values; only values
// that changed since the last set go to the FMU, in one call per type), calls doStep(t, h) and, for
// FMI 3 with event mode, handles the events it reports (event mode, updateDiscreteStates until
// settled, step mode), continuing an early return to t + h. An FMU that ends the simulation
// (terminateSimulation, fmi2Discard) raises stop_cause::model_end in the run's stop source (the run
// completes, the message names the FMU); fmiError/fmiFatal raise model_error; either way that step
// returns false. An FMU that ends the simulation exactly at the end of the macro step (its
// last successful time) completed that step: it returns true, its outputs there are read, and
// the next step returns false raising model_end, so the run keeps that communication point.
// A get that fails (fmiError) at a communication point gives non-finite outputs, so the step
// that led there fails: the run ends at its start with model_error naming the call. steps(t, h, k)
// does the k steps in one loop, setting held (zero-order hold) inputs once. update_outputs(t) reads
// outputs and recorded variables in one get call per type. A doStep past the experiment's stop time
// is never issued. The destructor terminates and frees the instance (on every exit path) and prints
// the FMU's log messages.
//
// Output derivatives: with maxOutputDerivativeOrder m >= 1, every continuous real output port
// declares derivative_order min(m, 4) and output_derivatives(o) gives d^i/dt^i, i = 1..that
// order, at the last update_outputs time (fmi2GetRealOutputDerivatives /
// fmi3GetOutputDerivatives, one call for all outputs, made only when an extrapolating
// consumer asks), so the consumer's extrapolation is their Taylor polynomial.
//
// Rollback (iterative coupling, offline only; canGetAndSetFMUstate): prepare_state() has the
// FMU allocate one state with fmi2GetFMUstate / fmi3GetFMUState (before the run);
// save_state() overwrites it with another Get on the same handle, restore_state() sets it
// with fmi2SetFMUstate / fmi3SetFMUState and sends every connected input again at the next
// step. Whatever the FMU allocates inside those calls is its own business. An error status
// stops the run (model_error, the message names the FMU and the call). The handle is freed
// (fmi2FreeFMUstate / fmi3FreeFMUState) with the instance.
//
// FMU time = the default experiment's startTime (0 if none) + (t - t0), each communication
// point from its integer ticks and each step h = t_next - t of two such points, so that t + h
// of one step is the next step's t and the last step ends on the declared stop time bit for
// bit (FMUs that refuse to step past their stop time complete).
//
// Not real-time safe: an FMU may allocate or take unbounded time (realtime_safe() false).
// The FMU's log callback may run on a real-time thread: it copies the message into a
// preallocated lock-free ring; drain_log() prints them from a non-real-time place.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cosim/fmi/fmi2.h"
#include "cosim/fmi/fmu_file.hpp"
#include "cosim/runtime/comm_time.hpp"
#include "cosim/runtime/spsc_ring.hpp"
#include "cosim/runtime/subsystem.hpp"

namespace cosim::fmi {

class fmu_instance;  // one instance behind a version's adapter (src/fmu_instance.hpp)
struct fmi_names;

/// A parameter value for the variable md.variables[variable] (integers and booleans as
/// doubles; a String parameter's in `text`).
struct parameter_value {
  std::size_t variable = 0;
  double value = 0.0;
  std::optional<std::string> text;
};

/// Values of one FMI type other than Real/Float64, Integer/Int32 and Boolean (Float32,
/// Int8 ... UInt64, Enumeration), exchanged in one get/set call (fmu_typed_values.cpp).
struct typed_group {
  var_type type = var_type::float32;
  std::vector<std::uint32_t> vrs;
  std::vector<std::size_t> slots;       // where each value comes from / goes to
  std::vector<double> last;             // inputs: the values last sent
  std::vector<std::uint32_t> send_vrs;  // inputs: the changed ones
  std::vector<std::uint64_t> buf;       // the values in the FMI type (8 bytes each at most)

  /// Sizes the buffers for the entries added so far. Setup only (allocates).
  void size_buffers() {
    last.assign(vrs.size(), 0.0);
    send_vrs.assign(vrs.size(), 0);
    buf.assign(vrs.size() + 1, 0);
  }
};

/// Why an FMU subsystem ended the run (step() returned false).
enum class fmu_stop {
  none,
  terminated,  // the FMU asked to end the simulation (FMI 3 terminateSimulation, FMI 2
               // fmi2Discard with fmi2Terminated)
  discarded,   // the FMU could not compute the step (fmi2Discard / fmi3Discard)
  failed,      // fmiError / fmiFatal, or a call the FMU refused
  stop_time,   // the next step would end after the experiment's stop time
};
[[nodiscard]] const char* to_string(fmu_stop s) noexcept;

/// One FMU log message, copied into the ring as it arrives.
struct fmu_log_record {
  int status = 0;  // fmi2Status / fmi3Status value
  std::array<char, 40> category{};
  std::array<char, 472> text{};
};

class fmu_subsystem final : public subsystem {
 public:
  /// Instantiates the FMU and sets `parameters`. Throws cosim::error naming the FMU (and the
  /// variable) when a function is missing, instantiation fails or a value is refused.
  /// With `instantiate` false it only describes the FMU (ports, variables; its binary is
  /// loaded and checked, no instance is made, `parameters` are not used): the template of a
  /// proxy whose FMU lives in a worker process (host = "process"); it cannot be run.
  fmu_subsystem(std::string name, std::shared_ptr<loaded_fmu> fmu,
                const std::vector<parameter_value>& parameters, bool instantiate = true);
  ~fmu_subsystem() override;

  /// fmi2/3SetDebugLogging: only these log categories (none: logging off). Without a call
  /// the FMU logs as it does with logging on. Before start_experiment; throws cosim::error
  /// naming the FMU when the FMU refuses or lacks the function.
  void set_log_categories(const std::vector<std::string>& categories);

  /// Set up the experiment (stop time = start + run_length_s when given, else open ended),
  /// enter and exit initialisation. Throws cosim::error naming the FMU.
  void start_experiment(std::optional<double> run_length_s);
  /// A parameter the FMU changed during initialisation stops start_experiment (else: a
  /// warning). Before start_experiment.
  void refuse_changed_parameters(bool refuse) noexcept { refuse_changed_ = refuse; }
  /// Outputs whose ModelStructure lists no dependencies (FMI 2.0: "may depend on every
  /// input") are taken as without direct feedthrough, as the user declares: output_depends_on
  /// says so (their port descriptions keep the assumption). Before the subsystem is connected.
  void declare_no_feedthrough();
  /// True if output o's direct feedthrough is assumed, not declared: the FMU lists no
  /// dependencies for it (and it was not declared without).
  [[nodiscard]] bool feedthrough_assumed(std::size_t o) const noexcept;
  struct probe_result {
    std::string text;    // one line per input: which outputs moved, and by how much
    bool moved = false;  // some output moved: it has direct feedthrough
  };
  /// After start_experiment: sets each Real input a little off its value, reads the Real
  /// outputs whose dependencies are undeclared without a step, and restores the input (and
  /// the FMU's state, where it can get and set it). Throws cosim::error naming the FMU when
  /// a call fails.
  [[nodiscard]] probe_result probe_feedthrough();

  [[nodiscard]] bool realtime_safe() const noexcept override { return false; }
  /// Inputs are set before each doStep (and before outputs are read at a communication point).
  [[nodiscard]] bool reads_inputs_at_step_starts() const noexcept override { return true; }
  /// The value last set into the FMU, in its type (an Int8 input fed 300 received 127).
  [[nodiscard]] double do_received_input(std::size_t i, time_point t) const noexcept override;
  /// From the ModelStructure dependencies of modelDescription.xml.
  [[nodiscard]] bool output_depends_on(std::size_t o, std::size_t i) const noexcept override;
  /// For a continuous Real (Float64) output depending on a continuous Real input, when the
  /// FMU provides directional derivatives (and exports the function).
  [[nodiscard]] bool provides_partial(std::size_t o, std::size_t i) const noexcept override;
  [[nodiscard]] std::string partial_refusal(std::size_t o, std::size_t i) const override;
  /// Why this FMU cannot roll back: canGetAndSetFMUstate not declared, or its binary lacks
  /// the state functions.
  [[nodiscard]] std::string state_refusal() const override;
  [[nodiscard]] std::string not_exchanged(const std::string& variable_name) const override;

  [[nodiscard]] const model_description& description() const noexcept { return fmu_->file().md; }
  /// Why the last step failed, and a message naming the FMU, the call and the time.
  [[nodiscard]] fmu_stop stop_kind() const noexcept { return stop_; }
  [[nodiscard]] std::string_view stop_message() const noexcept { return stop_text_.data(); }

  /// Prints queued FMU log messages through spdlog (not from a real-time thread).
  void drain_log();
  /// Messages lost because the ring was full.
  [[nodiscard]] std::uint64_t log_drops() const noexcept { return log_.drops(); }

  /// The FMI functions resolved from the binary: opaque here, defined in src/fmu_api.hpp
  /// (public for the typed value helpers there).
  struct api;

  // Called by the FMU (C callbacks); public for them only.
  void log_message(int status, const char* category, const char* text) noexcept;

 private:
  // The adapters drive the version's step protocol and report through fail() and
  // end_simulation(); fmu_instance forwards those to them (fmu_subsystem.cpp).
  friend class fmu_instance;

  // The constructor's steps, in order (fmu_subsystem.cpp, fmu_parameters.cpp).
  void check_variables(const model_description& md);
  void check_binary(const model_description& md);
  void add_ports(const model_description& md);
  void check_typed_functions(const model_description& md);
  void instantiate_fmu();
  void take_parameters(const std::vector<parameter_value>& parameters);

  void do_initialize(time_point t0) override;
  void do_start(stop_source& stop) override;
  void do_stop(bool fail_safe) noexcept override;
  bool do_step(time_point t, duration h) noexcept override;
  bool do_steps(time_point t, duration h, std::int64_t k) noexcept override;
  void do_update_outputs(time_point t) noexcept override;
  void do_record_variable(std::size_t v) override;
  std::span<const double> do_output_derivatives(std::size_t o) noexcept override;
  double do_output_partial(std::size_t o, std::size_t i) noexcept override;
  bool do_can_save_state() const noexcept override;
  void do_prepare_state() override;
  bool do_save_state() noexcept override;
  bool do_restore_state() noexcept override;

  /// Values exchanged with the FMU, grouped by type for one get/set call each.
  struct value_group {
    std::vector<std::uint32_t> vrs;
    std::vector<std::size_t> slots;  // where each value goes in / comes from
  };

  /// What keeps provides_partial(o, i) false besides the dependency (fmu_partials.cpp).
  enum class partial_gap { none, undeclared, not_exported, output_type, input_type };
  [[nodiscard]] partial_gap missing_for_partial(std::size_t o, std::size_t i) const noexcept;

  /// Every communication point from its own ticks, so steps chain exactly and the last one
  /// ends at the stop time declared to the FMU (comm_time.hpp).
  [[nodiscard]] double fmu_time(time_point t) const noexcept {
    return comm_time(fmu_start_, t - t0_);
  }
  void set_inputs(time_point t) noexcept;
  /// The values fetched at every communication point: outputs and recorded locals.
  void build_fetch_groups();
  bool get_values() noexcept;
  bool get_values_all() noexcept;
  bool fail_stop_time(time_point t, duration h) noexcept;
  /// Records why the run stops (first cause only); returns false for `return fail(...)`.
  bool fail(fmu_stop kind, const char* what, int status, double t) noexcept;
  /// A call that returned `st` > Warning: the error state it leaves, and fail() (discarded
  /// for fmiDiscard, else failed).
  bool fail_call(const char* call, int st, double t) noexcept;
  /// After a call that returned `st`: fmiError / fmiFatal leave the instance in that state.
  void note_status(int st) noexcept;
  /// The FMU asked to end the simulation at FMU time `last` (`what`: how it said so). True
  /// if that is the end of the macro step being computed: the step is complete, its values
  /// stand, and the run ends at the next step (model_end raised there).
  bool end_simulation(const char* what, int status, double last) noexcept;
  /// A step after the FMU ended or failed: false, raising a pending end.
  bool refuse_step() noexcept;
  void end_instance() noexcept;
  /// One parameter as the user set it, checked against its type; set by set_parameters().
  struct set_value {
    std::size_t variable = 0;
    double value = 0.0;
    std::optional<std::string> text;
  };
  void set_parameters();
  /// After initialisation: the values the FMU holds for the set parameters.
  void check_parameters_kept();
  void raise_stop() noexcept;
  [[noreturn]] void throw_error(const std::string& what);

  std::shared_ptr<loaded_fmu> fmu_;
  std::unique_ptr<api> api_;
  std::unique_ptr<fmu_instance> inst_;  // the version's adapter, holding the instance
  const fmi_names* names_ = nullptr;    // its functions' names, for messages
  const std::string& where_;            // the FMU's path, for messages
  int major_ = 2;                       // for type names in messages
  bool event_mode_used_ = false;
  bool early_return_allowed_ = false;
  bool counted_instance_ = false;

  enum class phase { instantiated, initialized, terminated, error, fatal };
  phase phase_ = phase::instantiated;
  time_point t0_{};
  double fmu_start_ = 0.0;
  std::optional<duration> run_length_;      // the experiment's length, when known
  time_point stop_at_ = time_point::max();  // t0 + run length: no step ends after it
  std::optional<double> stop_fmu_;          // its stop time in FMU time, as told to the FMU
  bool started_ = false;
  bool stepped_ = false;
  std::vector<set_value> params_;  // the parameters the user set, in the order given
  bool refuse_changed_ = false;
  bool no_feedthrough_ = false;  // declare_no_feedthrough()

  // Inputs: port index -> variable; grouped by type among the connected ones.
  std::vector<std::size_t> input_var_;
  std::vector<std::size_t> connected_inputs_;
  value_group in_real_, in_int_, in_bool_;
  std::vector<typed_group> in_other_;
  std::vector<double> in_other_values_;  // per input port, for in_other_
  // Per input port: its group (0 none, 1 real, 2 integer, 3 boolean, 4 + k in_other_[k]) and
  // index in it, for do_received_input.
  std::vector<std::pair<std::size_t, std::size_t>> input_group_;
  // Shadow copies of the values last set (in group order), and the changed ones to send.
  std::vector<double> in_real_last_;
  std::vector<std::int32_t> in_int_last_;
  std::vector<char> in_bool_last_;
  std::vector<std::uint32_t> send_vrs_;
  std::vector<double> in_real_buf_;
  std::vector<std::int32_t> in_int_buf_;
  std::vector<char> in_bool_buf_;  // 0/1; the adapter converts to its version's type
  bool inputs_sent_ = false;       // the first set sends every connected input
  bool inputs_held_ = false;       // every connected input is zero-order hold
  bool any_input_ = false;         // some input is connected
  bool any_feedthrough_ = false;

  // Recorded values (outputs and locals) and where each output port reads from. all_*
  // hold every recordable variable, out_* the ones fetched (outputs and recorded locals).
  std::vector<double> values_;
  value_group all_real_, all_int_, all_bool_;
  std::vector<typed_group> all_other_, out_other_;
  std::vector<char> fetch_;         // per values_ slot: fetched at every communication point
  bool real_direct_ = false;        // out_real_'s slots are consecutive: get into values_ directly
  bool reals_only_direct_ = false;  // and nothing but reals is fetched: one get call
  value_group out_real_, out_int_, out_bool_;
  std::vector<double> out_real_buf_;
  std::vector<std::int32_t> out_int_buf_;
  std::vector<char> out_bool_buf_;
  std::vector<std::size_t> output_slot_;  // port -> values_ index
  std::vector<std::size_t> output_var_;   // port -> variable index

  // Output derivatives (maxOutputDerivativeOrder): per output port with derivatives, orders
  // 1..deriv_order_ at der_offset_[port] in der_values_ (npos: none); fetched in one call
  // when a consumer first asks after update_outputs.
  int deriv_order_ = 0;
  std::vector<std::size_t> der_offset_;
  std::vector<std::uint32_t> der_vrs_;
  std::vector<std::int32_t> der_orders_;  // fmi2Integer / fmi3Int32
  std::vector<double> der_values_;
  bool der_fetched_ = false;

  // Rollback (iterative coupling): one FMU state handle, allocated by the FMU in
  // prepare_state and overwritten by every save; the recorded values and the communication
  // time at the save.
  void* fmu_state_ = nullptr;  // fmi2FMUstate / fmi3FMUState
  bool rollback_ = false;      // doStep then says noSetFMUStatePriorToCurrentPoint = false
  std::vector<double> saved_values_;
  time_point comm_t_{};  // of the last update_outputs
  time_point saved_t_{};

  // The macro step do_steps is computing (its k steps), for an FMU that ends in it.
  time_point step_from_{}, step_to_{};
  bool end_pending_ = false;  // ended at step_to_: model_end is raised at the next step
  fmu_stop stop_ = fmu_stop::none;
  std::array<char, 1024> stop_text_{};
  stop_source* run_stop_ = nullptr;  // the run's, between start() and stop()

  spsc_ring<fmu_log_record> log_;
  std::string last_log_;  // the last warning or error the FMU logged, for exceptions
  std::array<char, 240> last_error_text_{};  // the last error it logged, for the stop reason
  std::uint64_t reported_drops_ = 0;
};

}  // namespace cosim::fmi
