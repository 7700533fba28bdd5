#pragma once
// The model side of the test FMUs built in the tree: a model declares its variables by value
// reference and implements the step; fmi2_export.cpp / fmi3_export.cpp turn it into the FMI
// 2.0 / 3.0 co-simulation C interface (one of them is linked into each FMU). Each FMU's
// source defines make_model() and model_token (the guid / instantiationToken of its
// modelDescription.xml).
//
// Time: the exporter passes the importer's communication point and step; a model may keep
// its own time (the bouncing ball does, so that an event time survives the importer's
// rounding of lastSuccessfulTime).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cosim::fmu_kit {

/// real: double (FMI 2 Real, FMI 3 Float64); integer: std::int32_t (FMI 2 Integer and
/// Enumeration, FMI 3 Int32); the others only in FMI 3 (int64 also for its Enumeration).
enum class var_type {
  real,
  integer,
  boolean,
  text,
  float32,
  int8,
  uint8,
  int16,
  uint16,
  uint32,
  int64,
  uint64
};
enum class causality { parameter, input, output, local };

struct variable {
  std::uint32_t vr = 0;
  var_type type = var_type::real;
  causality causal = causality::local;
  void* value = nullptr;  // the model's double, std::int32_t, bool, std::string, float, ...
};

struct step_outcome {
  enum class kind {
    completed,  // reached t_end
    event,      // stopped at an event at `reached`; the importer handles it in event mode
    terminate,  // the model ends the simulation at `reached` (FMI 2 fmi2Discard +
                // fmi2Terminated, FMI 3 terminateSimulation)
    discard,    // the step could not be completed but the model goes on: nothing of it was
                // taken (FMI 2 fmi2Discard without fmi2Terminated, FMI 3 fmi3Discard without
                // terminateSimulation); the importer may retry a shorter step
    failed      // the step could not be computed; `message` says why
  };
  kind what = kind::completed;
  double reached = 0.0;
  std::string message;
};

/// A copy of a model's state (FMU state, canGetAndSetFMUstate): everything step(),
/// calculate() and the importer's sets change. Each model that saves its state derives its
/// own type; the exporter keeps it behind an fmi2FMUstate / fmi3FMUState.
class model_state {
 public:
  model_state() = default;
  model_state(const model_state&) = delete;
  model_state& operator=(const model_state&) = delete;
  virtual ~model_state() = default;
};

/// The usual model_state: a copy of a model's state struct T.
template <typename T>
struct state_copy final : model_state {
  T value{};
};

/// Copies `from` into s (allocated on the first call); false if s holds another type.
template <typename T>
bool save_copy(const T& from, std::unique_ptr<model_state>& s, std::string& why) {
  if (!s) s = std::make_unique<state_copy<T>>();
  auto* c = dynamic_cast<state_copy<T>*>(s.get());
  if (c == nullptr) {
    why = "the state was made by another model";
    return false;
  }
  c->value = from;
  return true;
}
template <typename T>
bool restore_copy(const model_state& s, T& to, std::string& why) {
  const auto* c = dynamic_cast<const state_copy<T>*>(&s);
  if (c == nullptr) {
    why = "the state was made by another model";
    return false;
  }
  to = c->value;
  return true;
}

class model {
 public:
  model() = default;
  model(const model&) = delete;
  model& operator=(const model&) = delete;
  virtual ~model() = default;

  [[nodiscard]] const std::vector<variable>& variables() const noexcept { return vars_; }
  /// The variable with value reference vr, or nullptr. Constant time: a get or set of one
  /// value costs what it would in a generated FMU.
  [[nodiscard]] const variable* find(std::uint32_t vr) const noexcept {
    if (vr >= by_vr_.size() || by_vr_[vr] == none) return nullptr;
    return &vars_[by_vr_[vr]];
  }

  /// Leaving initialisation mode at t0: build the state from the parameters and the inputs'
  /// current values. Returns false with `why` set on bad parameters.
  virtual bool initialize(double t0, std::string& why) = 0;
  /// Advance from the communication point t to t_end. stop_at_events: the importer handles
  /// events (FMI 3 event mode with early return); else the model handles them inside the
  /// step.
  virtual step_outcome step(double t, double t_end, bool stop_at_events) noexcept = 0;
  /// FMI 3 event mode: apply the discrete change the last `event` outcome stopped at.
  virtual void handle_event() noexcept {}
  /// Outputs from the state and the inputs' current values; called before a get after a set
  /// or a step.
  virtual void calculate() noexcept {}
  /// The importer set variable vr (after the value was stored).
  virtual void on_set(std::uint32_t /*vr*/) noexcept {}
  /// fmi2SetupExperiment was called. Some tools' FMUs reset their parameters to their
  /// defaults here; a model imitating them does so in this hook.
  virtual void on_setup_experiment() noexcept {}
  /// True: doStep refuses any step ending after the stop time given to the experiment, by
  /// however little (as some tools' FMUs do); false: a relative slack of 1e-9 is allowed.
  [[nodiscard]] virtual bool exact_stop_time() const noexcept { return false; }
  /// Why a get of variable vr fails now (it returns fmi2Error / fmi3Error, logging this), or
  /// nullptr when it may be read.
  [[nodiscard]] virtual const char* get_refusal(std::uint32_t /*vr*/) const noexcept {
    return nullptr;
  }
  /// fmi2Terminate / fmi3Terminate: the importer ends the simulation.
  virtual void terminate() noexcept {}
  /// FMU state: copy the model's state into `s` (made by this model's previous get_state,
  /// or null: allocate one). False if the model cannot (its modelDescription.xml then says
  /// canGetAndSetFMUstate="false") or, with `why` set, not now.
  virtual bool get_state(std::unique_ptr<model_state>& /*s*/, std::string& why) const {
    why = "this model does not save its state";
    return false;
  }
  /// Return to a state from get_state. False with `why` set if it cannot.
  virtual bool set_state(const model_state& /*s*/, std::string& why) {
    why = "this model does not save its state";
    return false;
  }
  /// d output(out_vr) / d input(in_vr) at the current time, from the state and the inputs as
  /// last set (after calculate()); false if the model does not provide it (its
  /// modelDescription.xml then says providesDirectionalDerivative(s)="false").
  virtual bool partial(std::uint32_t /*out_vr*/, std::uint32_t /*in_vr*/,
                       double& /*value*/) const noexcept {
    return false;
  }
  /// d^order output / dt^order at the current time; false if the model does not provide it.
  virtual bool output_derivative(std::uint32_t /*vr*/, int /*order*/,
                                 double& /*value*/) const noexcept {
    return false;
  }

 protected:
  void add(std::uint32_t vr, causality c, double* v) { add({vr, var_type::real, c, v}); }
  void add(std::uint32_t vr, causality c, std::int32_t* v) { add({vr, var_type::integer, c, v}); }
  void add(std::uint32_t vr, causality c, bool* v) { add({vr, var_type::boolean, c, v}); }
  void add(std::uint32_t vr, causality c, std::string* v) { add({vr, var_type::text, c, v}); }
  void add(std::uint32_t vr, causality c, float* v) { add({vr, var_type::float32, c, v}); }
  void add(std::uint32_t vr, causality c, std::int8_t* v) { add({vr, var_type::int8, c, v}); }
  void add(std::uint32_t vr, causality c, std::uint8_t* v) { add({vr, var_type::uint8, c, v}); }
  void add(std::uint32_t vr, causality c, std::int16_t* v) { add({vr, var_type::int16, c, v}); }
  void add(std::uint32_t vr, causality c, std::uint16_t* v) { add({vr, var_type::uint16, c, v}); }
  void add(std::uint32_t vr, causality c, std::uint32_t* v) { add({vr, var_type::uint32, c, v}); }
  void add(std::uint32_t vr, causality c, std::int64_t* v) { add({vr, var_type::int64, c, v}); }
  void add(std::uint32_t vr, causality c, std::uint64_t* v) { add({vr, var_type::uint64, c, v}); }

 private:
  static constexpr std::size_t none = static_cast<std::size_t>(-1);
  void add(const variable& v) {
    if (v.vr >= by_vr_.size()) by_vr_.resize(v.vr + 1, none);
    by_vr_[v.vr] = vars_.size();
    vars_.push_back(v);
  }

  std::vector<variable> vars_;
  std::vector<std::size_t> by_vr_;  // value reference -> index into vars_
};

/// Defined by each FMU.
std::unique_ptr<model> make_model();
extern const char* const model_token;

/// out = J seed, J = d unknowns / d knowns from m.partial (FMI 2.0 / 3.0 directional
/// derivatives of scalar variables). False with `why` naming the first missing derivative.
inline bool directional_derivative(const model& m, const std::uint32_t* unknowns, std::size_t nu,
                                   const std::uint32_t* knowns, std::size_t nk, const double* seed,
                                   double* out, std::string& why) {
  for (std::size_t u = 0; u < nu; ++u) {
    out[u] = 0.0;
    for (std::size_t k = 0; k < nk; ++k) {
      double d = 0.0;
      if (!m.partial(unknowns[u], knowns[k], d)) {
        why = "no derivative of value reference " + std::to_string(unknowns[u]) +
              " with respect to " + std::to_string(knowns[k]);
        return false;
      }
      out[u] += d * seed[k];
    }
  }
  return true;
}

}  // namespace cosim::fmu_kit
