// FMI 3.0 co-simulation interface of a test FMU over a fmu_kit::model (fmu_model.hpp).
//
// Event mode (FMI 3.0 Sect. 4.2): with eventModeUsed the FMU leaves initialisation into event
// mode and the importer calls fmi3UpdateDiscreteStates and fmi3EnterStepMode before the first
// step. When the importer also allows early return, a step stops at the model's event:
// eventHandlingNeeded, earlyReturn, lastSuccessfulTime = the event time; the importer then
// calls fmi3EnterEventMode, fmi3UpdateDiscreteStates (which applies the event) and
// fmi3EnterStepMode. Without event mode (or without early return) the model handles its
// events inside the step. A model ending the simulation sets terminateSimulation (with
// fmi3Discard when the step did not reach its end).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <memory>
#include <string>

#include "cosim/fmi/fmi3.h"
#include "fmu_model.hpp"

namespace {

using cosim::fmu_kit::causality;
using cosim::fmu_kit::model;
using cosim::fmu_kit::step_outcome;
using cosim::fmu_kit::var_type;
using cosim::fmu_kit::variable;

enum class mode { instantiated, initialization, event, step, terminated, error };

struct instance {
  std::string name;
  fmi3LogMessageCallback logger = nullptr;
  fmi3InstanceEnvironment env = nullptr;
  bool logging = false;
  bool event_mode_used = false;
  bool early_return_allowed = false;
  std::unique_ptr<model> m;
  mode state = mode::instantiated;
  double start_time = 0.0;
  bool stop_time_defined = false;
  double stop_time = 0.0;
  bool event_pending = false;  // the last step stopped at an event not yet handled
  bool terminated = false;     // the model asked to end the simulation
  double terminated_at = 0.0;
  bool dirty = true;  // outputs must be recalculated before the next get
};

// Behind an fmi3FMUState: the model's state and the instance's own.
struct saved_state {
  const instance* owner = nullptr;
  std::unique_ptr<cosim::fmu_kit::model_state> m;
  mode state = mode::instantiated;
  bool event_pending = false;
  bool terminated = false;
  double terminated_at = 0.0;
};

instance* self(fmi3Instance c) noexcept {
  return static_cast<instance*>(c);
}

void log(const instance& i, fmi3Status s, const char* category, const std::string& msg) noexcept {
  // Errors are always reported; the rest only with logging on.
  if (i.logger != nullptr && (i.logging || s >= fmi3Discard))
    i.logger(i.env, s, category, msg.c_str());
}

fmi3Status fail(instance& i, const std::string& msg) noexcept {
  log(i, fmi3Error, "logStatusError", msg);
  return fmi3Error;
}

const variable* lookup(instance& i, fmi3ValueReference vr, var_type t, const char* fn) noexcept {
  const variable* v = i.m->find(vr);
  if (v == nullptr || v->type != t) {
    fail(i,
         std::string(fn) + ": no variable of this type with value reference " + std::to_string(vr));
    return nullptr;
  }
  return v;
}

bool settable(instance& i, const variable& v, const char* fn) noexcept {
  if (v.causal == causality::input) return true;
  if (v.causal == causality::parameter &&
      (i.state == mode::instantiated || i.state == mode::initialization))
    return true;
  fail(i, std::string(fn) + ": value reference " + std::to_string(v.vr) +
              (v.causal == causality::parameter ? " is a fixed parameter: set it before "
                                                  "fmi3ExitInitializationMode"
                                                : " is not an input or parameter"));
  return false;
}

bool running(const instance& i) noexcept {
  return i.state == mode::step || i.state == mode::event || i.state == mode::terminated;
}

void refresh(instance& i) noexcept {
  if (i.dirty && running(i)) {
    i.m->calculate();
    i.dirty = false;
  }
}

bool scalar_counts(instance& i, size_t nvr, size_t n, const char* fn) noexcept {
  if (nvr == n) return true;
  fail(i, std::string(fn) + ": " + std::to_string(n) + " values for " + std::to_string(nvr) +
              " scalar variables");
  return false;
}

template <typename Fmi, typename Own>
fmi3Status get(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, Fmi values[], size_t n,
               var_type t, const char* fn) noexcept {
  instance& i = *self(c);
  if (!scalar_counts(i, nvr, n, fn)) return fmi3Error;
  refresh(i);
  for (size_t k = 0; k < nvr; ++k) {
    if (const char* why = i.m->get_refusal(vr[k]); why != nullptr)
      return fail(i, std::string(fn) + ": " + why);
    const variable* v = lookup(i, vr[k], t, fn);
    if (v == nullptr) return fmi3Error;
    values[k] = static_cast<Fmi>(*static_cast<const Own*>(v->value));
  }
  return fmi3OK;
}

template <typename Fmi, typename Own>
fmi3Status set(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, const Fmi values[],
               size_t n, var_type t, const char* fn) noexcept {
  instance& i = *self(c);
  if (!scalar_counts(i, nvr, n, fn)) return fmi3Error;
  for (size_t k = 0; k < nvr; ++k) {
    const variable* v = lookup(i, vr[k], t, fn);
    if (v == nullptr || !settable(i, *v, fn)) return fmi3Error;
    *static_cast<Own*>(v->value) = static_cast<Own>(values[k]);
    i.m->on_set(vr[k]);
  }
  i.dirty = true;
  return fmi3OK;
}

fmi3Status unsupported(fmi3Instance c, const char* fn) noexcept {
  return fail(*self(c), std::string(fn) + " is not supported by this FMU");
}

fmi3Status no_such_type(fmi3Instance c, const char* fn, size_t nvr) noexcept {
  if (nvr == 0) return fmi3OK;
  return fail(*self(c), std::string(fn) + ": this FMU has no variables of this type");
}

}  // namespace

extern "C" {

const char* fmi3GetVersion(void) {
  return fmi3Version;
}

fmi3Status fmi3SetDebugLogging(fmi3Instance c, fmi3Boolean loggingOn, size_t /*nCategories*/,
                               const fmi3String /*categories*/[]) {
  self(c)->logging = loggingOn;
  return fmi3OK;
}

fmi3Instance fmi3InstantiateCoSimulation(
    fmi3String instanceName, fmi3String instantiationToken, fmi3String /*resourcePath*/,
    fmi3Boolean /*visible*/, fmi3Boolean loggingOn, fmi3Boolean eventModeUsed,
    fmi3Boolean earlyReturnAllowed, const fmi3ValueReference /*requiredIntermediateVariables*/[],
    size_t nRequiredIntermediateVariables, fmi3InstanceEnvironment instanceEnvironment,
    fmi3LogMessageCallback logMessage, fmi3IntermediateUpdateCallback /*intermediateUpdate*/) {
  auto i = std::make_unique<instance>();
  try {
    i->name = instanceName != nullptr ? instanceName : "";
    i->logger = logMessage;
    i->env = instanceEnvironment;
    i->logging = loggingOn;
    i->event_mode_used = eventModeUsed;
    i->early_return_allowed = earlyReturnAllowed;
    if (instantiationToken == nullptr ||
        std::strcmp(instantiationToken, cosim::fmu_kit::model_token) != 0) {
      fail(*i, std::string("fmi3InstantiateCoSimulation: instantiationToken \"") +
                   (instantiationToken != nullptr ? instantiationToken : "") +
                   "\" is not this FMU's \"" + cosim::fmu_kit::model_token + "\"");
      return nullptr;
    }
    if (nRequiredIntermediateVariables != 0) {
      fail(*i, "fmi3InstantiateCoSimulation: this FMU provides no intermediate variables");
      return nullptr;
    }
    i->m = cosim::fmu_kit::make_model();
  } catch (const std::exception& e) {
    fail(*i, std::string("fmi3InstantiateCoSimulation: ") + e.what());
    return nullptr;
  }
  return i.release();
}

void fmi3FreeInstance(fmi3Instance c) {
  delete self(c);
}

fmi3Status fmi3EnterInitializationMode(fmi3Instance c, fmi3Boolean /*toleranceDefined*/,
                                       fmi3Float64 /*tolerance*/, fmi3Float64 startTime,
                                       fmi3Boolean stopTimeDefined, fmi3Float64 stopTime) {
  instance& i = *self(c);
  if (i.state != mode::instantiated)
    return fail(i, "fmi3EnterInitializationMode: not after instantiate");
  i.start_time = startTime;
  i.stop_time_defined = stopTimeDefined;
  i.stop_time = stopTime;
  i.state = mode::initialization;
  return fmi3OK;
}

fmi3Status fmi3ExitInitializationMode(fmi3Instance c) {
  instance& i = *self(c);
  if (i.state != mode::initialization)
    return fail(i, "fmi3ExitInitializationMode: not in initialisation mode");
  std::string why;
  if (!i.m->initialize(i.start_time, why)) {
    i.state = mode::error;
    return fail(i, "initialisation failed: " + why);
  }
  i.state = i.event_mode_used ? mode::event : mode::step;
  i.dirty = true;
  return fmi3OK;
}

fmi3Status fmi3EnterEventMode(fmi3Instance c) {
  instance& i = *self(c);
  if (!i.event_mode_used)
    return fail(i, "fmi3EnterEventMode: instantiated with eventModeUsed = false");
  if (i.state != mode::step) return fail(i, "fmi3EnterEventMode: not in step mode");
  i.state = mode::event;
  return fmi3OK;
}

fmi3Status fmi3Terminate(fmi3Instance c) {
  instance& i = *self(c);
  if (!running(i)) return fail(i, "fmi3Terminate: not in step or event mode");
  i.m->terminate();
  i.state = mode::terminated;
  return fmi3OK;
}

fmi3Status fmi3Reset(fmi3Instance c) {
  instance& i = *self(c);
  try {
    i.m = cosim::fmu_kit::make_model();
  } catch (const std::exception& e) {
    return fail(i, std::string("fmi3Reset: ") + e.what());
  }
  i.state = mode::instantiated;
  i.event_pending = false;
  i.terminated = false;
  i.dirty = true;
  return fmi3OK;
}

fmi3Status fmi3GetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                          fmi3Float64 values[], size_t n) {
  return get<fmi3Float64, double>(c, vr, nvr, values, n, var_type::real, "fmi3GetFloat64");
}
fmi3Status fmi3GetInt32(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                        fmi3Int32 values[], size_t n) {
  return get<fmi3Int32, std::int32_t>(c, vr, nvr, values, n, var_type::integer, "fmi3GetInt32");
}
fmi3Status fmi3GetBoolean(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                          fmi3Boolean values[], size_t n) {
  return get<fmi3Boolean, bool>(c, vr, nvr, values, n, var_type::boolean, "fmi3GetBoolean");
}
fmi3Status fmi3GetString(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                         fmi3String values[], size_t n) {
  instance& i = *self(c);
  if (!scalar_counts(i, nvr, n, "fmi3GetString")) return fmi3Error;
  for (size_t k = 0; k < nvr; ++k) {
    const variable* v = lookup(i, vr[k], var_type::text, "fmi3GetString");
    if (v == nullptr) return fmi3Error;
    values[k] = static_cast<const std::string*>(v->value)->c_str();
  }
  return fmi3OK;
}

fmi3Status fmi3SetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                          const fmi3Float64 values[], size_t n) {
  return set<fmi3Float64, double>(c, vr, nvr, values, n, var_type::real, "fmi3SetFloat64");
}
fmi3Status fmi3SetInt32(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                        const fmi3Int32 values[], size_t n) {
  return set<fmi3Int32, std::int32_t>(c, vr, nvr, values, n, var_type::integer, "fmi3SetInt32");
}
fmi3Status fmi3SetBoolean(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                          const fmi3Boolean values[], size_t n) {
  return set<fmi3Boolean, bool>(c, vr, nvr, values, n, var_type::boolean, "fmi3SetBoolean");
}
fmi3Status fmi3SetString(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                         const fmi3String values[], size_t n) {
  instance& i = *self(c);
  if (!scalar_counts(i, nvr, n, "fmi3SetString")) return fmi3Error;
  try {
    for (size_t k = 0; k < nvr; ++k) {
      const variable* v = lookup(i, vr[k], var_type::text, "fmi3SetString");
      if (v == nullptr || !settable(i, *v, "fmi3SetString")) return fmi3Error;
      *static_cast<std::string*>(v->value) = values[k] != nullptr ? values[k] : "";
      i.m->on_set(vr[k]);
    }
  } catch (const std::exception& e) {
    return fail(i, std::string("fmi3SetString: ") + e.what());
  }
  i.dirty = true;
  return fmi3OK;
}

// The other number types (tests/fmus/typed). T is a type name, which parentheses would break.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define COSIM_FMU_TYPE(NAME, T, OWN, KIND)                                                        \
  fmi3Status fmi3Get##NAME(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, T values[], \
                           size_t n) {                                                            \
    return get<T, OWN>(c, vr, nvr, values, n, var_type::KIND, "fmi3Get" #NAME);                   \
  }                                                                                               \
  fmi3Status fmi3Set##NAME(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,             \
                           const T values[], size_t n) {                                          \
    return set<T, OWN>(c, vr, nvr, values, n, var_type::KIND, "fmi3Set" #NAME);                   \
  }
COSIM_FMU_TYPE(Float32, fmi3Float32, float, float32)
COSIM_FMU_TYPE(Int8, fmi3Int8, std::int8_t, int8)
COSIM_FMU_TYPE(UInt8, fmi3UInt8, std::uint8_t, uint8)
COSIM_FMU_TYPE(Int16, fmi3Int16, std::int16_t, int16)
COSIM_FMU_TYPE(UInt16, fmi3UInt16, std::uint16_t, uint16)
COSIM_FMU_TYPE(UInt32, fmi3UInt32, std::uint32_t, uint32)
COSIM_FMU_TYPE(Int64, fmi3Int64, std::int64_t, int64)
COSIM_FMU_TYPE(UInt64, fmi3UInt64, std::uint64_t, uint64)
#undef COSIM_FMU_TYPE
// NOLINTEND(bugprone-macro-parentheses)

fmi3Status fmi3GetBinary(fmi3Instance c, const fmi3ValueReference[], size_t nvr, size_t[],
                         fmi3Binary[], size_t) {
  return no_such_type(c, "fmi3GetBinary", nvr);
}
fmi3Status fmi3SetBinary(fmi3Instance c, const fmi3ValueReference[], size_t nvr, const size_t[],
                         const fmi3Binary[], size_t) {
  return no_such_type(c, "fmi3SetBinary", nvr);
}
fmi3Status fmi3GetClock(fmi3Instance c, const fmi3ValueReference[], size_t nvr, fmi3Clock[]) {
  return no_such_type(c, "fmi3GetClock", nvr);
}
fmi3Status fmi3SetClock(fmi3Instance c, const fmi3ValueReference[], size_t nvr, const fmi3Clock[]) {
  return no_such_type(c, "fmi3SetClock", nvr);
}

fmi3Status fmi3GetNumberOfVariableDependencies(fmi3Instance c, fmi3ValueReference, size_t*) {
  return unsupported(c, "fmi3GetNumberOfVariableDependencies");
}
fmi3Status fmi3GetVariableDependencies(fmi3Instance c, fmi3ValueReference, size_t[],
                                       fmi3ValueReference[], size_t[], fmi3DependencyKind[],
                                       size_t) {
  return unsupported(c, "fmi3GetVariableDependencies");
}

// FMI 3.0 Sect. 2.2.6.4: *FMUState == NULL allocates a new state, else the given one (made
// by this FMU) is overwritten; a model without state support refuses (its description says
// canGetAndSetFMUState="false").
fmi3Status fmi3GetFMUState(fmi3Instance c, fmi3FMUState* FMUState) {
  instance& i = *self(c);
  if (FMUState == nullptr) return fail(i, "fmi3GetFMUState: FMUState is NULL");
  if (i.state == mode::error) return fail(i, "fmi3GetFMUState: the instance is in error");
  try {
    std::unique_ptr<saved_state> fresh;
    saved_state* s = static_cast<saved_state*>(*FMUState);
    if (s == nullptr) {
      fresh = std::make_unique<saved_state>();
      s = fresh.get();
    } else if (s->owner != &i) {
      return fail(i, "fmi3GetFMUState: the state belongs to another instance");
    }
    std::string why;
    if (!i.m->get_state(s->m, why)) return fail(i, "fmi3GetFMUState: " + why);
    s->owner = &i;
    s->state = i.state;
    s->event_pending = i.event_pending;
    s->terminated = i.terminated;
    s->terminated_at = i.terminated_at;
    if (fresh) *FMUState = fresh.release();
  } catch (const std::exception& e) {
    return fail(i, std::string("fmi3GetFMUState: ") + e.what());
  }
  return fmi3OK;
}
fmi3Status fmi3SetFMUState(fmi3Instance c, fmi3FMUState FMUState) {
  instance& i = *self(c);
  const saved_state* s = static_cast<const saved_state*>(FMUState);
  if (s == nullptr || s->owner != &i || !s->m)
    return fail(i, "fmi3SetFMUState: not a state of this instance");
  std::string why;
  if (!i.m->set_state(*s->m, why)) return fail(i, "fmi3SetFMUState: " + why);
  i.state = s->state;
  i.event_pending = s->event_pending;
  i.terminated = s->terminated;
  i.terminated_at = s->terminated_at;
  i.dirty = true;
  return fmi3OK;
}
fmi3Status fmi3FreeFMUState(fmi3Instance c, fmi3FMUState* FMUState) {
  if (FMUState == nullptr) return fail(*self(c), "fmi3FreeFMUState: FMUState is NULL");
  delete static_cast<saved_state*>(*FMUState);
  *FMUState = nullptr;
  return fmi3OK;
}
fmi3Status fmi3SerializedFMUStateSize(fmi3Instance c, fmi3FMUState, size_t*) {
  return unsupported(c, "fmi3SerializedFMUStateSize");
}
fmi3Status fmi3SerializeFMUState(fmi3Instance c, fmi3FMUState, fmi3Byte[], size_t) {
  return unsupported(c, "fmi3SerializeFMUState");
}
fmi3Status fmi3DeserializeFMUState(fmi3Instance c, const fmi3Byte[], size_t, fmi3FMUState*) {
  return unsupported(c, "fmi3DeserializeFMUState");
}

fmi3Status fmi3GetDirectionalDerivative(fmi3Instance c, const fmi3ValueReference unknowns[],
                                        size_t nUnknowns, const fmi3ValueReference knowns[],
                                        size_t nKnowns, const fmi3Float64 seed[], size_t nSeed,
                                        fmi3Float64 sensitivity[], size_t nSensitivity) {
  // sensitivity = J seed for scalar variables (FMI 3.0 Sect. 3.2.1).
  instance& i = *self(c);
  if (!scalar_counts(i, nKnowns, nSeed, "fmi3GetDirectionalDerivative") ||
      !scalar_counts(i, nUnknowns, nSensitivity, "fmi3GetDirectionalDerivative"))
    return fmi3Error;
  refresh(i);
  std::string why;
  if (!cosim::fmu_kit::directional_derivative(*i.m, unknowns, nUnknowns, knowns, nKnowns, seed,
                                              sensitivity, why))
    return fail(i, "fmi3GetDirectionalDerivative: " + why);
  return fmi3OK;
}
fmi3Status fmi3GetAdjointDerivative(fmi3Instance c, const fmi3ValueReference[], size_t,
                                    const fmi3ValueReference[], size_t, const fmi3Float64[], size_t,
                                    fmi3Float64[], size_t) {
  return unsupported(c, "fmi3GetAdjointDerivative");
}

fmi3Status fmi3EnterConfigurationMode(fmi3Instance c) {
  return unsupported(c, "fmi3EnterConfigurationMode");
}
fmi3Status fmi3ExitConfigurationMode(fmi3Instance c) {
  return unsupported(c, "fmi3ExitConfigurationMode");
}

fmi3Status fmi3GetIntervalDecimal(fmi3Instance c, const fmi3ValueReference[], size_t nvr,
                                  fmi3Float64[], fmi3IntervalQualifier[]) {
  return no_such_type(c, "fmi3GetIntervalDecimal", nvr);
}
fmi3Status fmi3GetIntervalFraction(fmi3Instance c, const fmi3ValueReference[], size_t nvr,
                                   fmi3UInt64[], fmi3UInt64[], fmi3IntervalQualifier[]) {
  return no_such_type(c, "fmi3GetIntervalFraction", nvr);
}
fmi3Status fmi3GetShiftDecimal(fmi3Instance c, const fmi3ValueReference[], size_t nvr,
                               fmi3Float64[]) {
  return no_such_type(c, "fmi3GetShiftDecimal", nvr);
}
fmi3Status fmi3GetShiftFraction(fmi3Instance c, const fmi3ValueReference[], size_t nvr,
                                fmi3UInt64[], fmi3UInt64[]) {
  return no_such_type(c, "fmi3GetShiftFraction", nvr);
}
fmi3Status fmi3SetIntervalDecimal(fmi3Instance c, const fmi3ValueReference[], size_t nvr,
                                  const fmi3Float64[]) {
  return no_such_type(c, "fmi3SetIntervalDecimal", nvr);
}
fmi3Status fmi3SetIntervalFraction(fmi3Instance c, const fmi3ValueReference[], size_t nvr,
                                   const fmi3UInt64[], const fmi3UInt64[]) {
  return no_such_type(c, "fmi3SetIntervalFraction", nvr);
}
fmi3Status fmi3SetShiftDecimal(fmi3Instance c, const fmi3ValueReference[], size_t nvr,
                               const fmi3Float64[]) {
  return no_such_type(c, "fmi3SetShiftDecimal", nvr);
}
fmi3Status fmi3SetShiftFraction(fmi3Instance c, const fmi3ValueReference[], size_t nvr,
                                const fmi3UInt64[], const fmi3UInt64[]) {
  return no_such_type(c, "fmi3SetShiftFraction", nvr);
}

fmi3Status fmi3EvaluateDiscreteStates(fmi3Instance c) {
  return unsupported(c, "fmi3EvaluateDiscreteStates");
}

fmi3Status fmi3UpdateDiscreteStates(fmi3Instance c, fmi3Boolean* discreteStatesNeedUpdate,
                                    fmi3Boolean* terminateSimulation,
                                    fmi3Boolean* nominalsOfContinuousStatesChanged,
                                    fmi3Boolean* valuesOfContinuousStatesChanged,
                                    fmi3Boolean* nextEventTimeDefined, fmi3Float64* nextEventTime) {
  instance& i = *self(c);
  if (i.state != mode::event) return fail(i, "fmi3UpdateDiscreteStates: not in event mode");
  const bool changed = i.event_pending;
  if (i.event_pending) {
    i.m->handle_event();
    i.event_pending = false;
    i.dirty = true;
  }
  // One update settles every event of these models.
  *discreteStatesNeedUpdate = false;
  *terminateSimulation = false;
  *nominalsOfContinuousStatesChanged = false;
  *valuesOfContinuousStatesChanged = changed;
  *nextEventTimeDefined = false;
  *nextEventTime = 0.0;
  return fmi3OK;
}

fmi3Status fmi3EnterStepMode(fmi3Instance c) {
  instance& i = *self(c);
  if (i.state != mode::event) return fail(i, "fmi3EnterStepMode: not in event mode");
  i.state = mode::step;
  return fmi3OK;
}

fmi3Status fmi3GetOutputDerivatives(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                                    const fmi3Int32 orders[], fmi3Float64 values[], size_t n) {
  instance& i = *self(c);
  if (!scalar_counts(i, nvr, n, "fmi3GetOutputDerivatives")) return fmi3Error;
  refresh(i);
  for (size_t k = 0; k < nvr; ++k)
    if (!i.m->output_derivative(vr[k], orders[k], values[k]))
      return fail(i, "fmi3GetOutputDerivatives: no derivative of order " +
                         std::to_string(orders[k]) + " for value reference " +
                         std::to_string(vr[k]));
  return fmi3OK;
}

fmi3Status fmi3DoStep(fmi3Instance c, fmi3Float64 currentCommunicationPoint,
                      fmi3Float64 communicationStepSize,
                      fmi3Boolean /*noSetFMUStatePriorToCurrentPoint*/,
                      fmi3Boolean* eventHandlingNeeded, fmi3Boolean* terminateSimulation,
                      fmi3Boolean* earlyReturn, fmi3Float64* lastSuccessfulTime) {
  instance& i = *self(c);
  *eventHandlingNeeded = false;
  *terminateSimulation = false;
  *earlyReturn = false;
  *lastSuccessfulTime = currentCommunicationPoint;
  if (i.state != mode::step)
    return fail(i, i.state == mode::event ? "fmi3DoStep: in event mode (fmi3EnterStepMode first)"
                                          : "fmi3DoStep: not in step mode");
  if (i.terminated) {
    *terminateSimulation = true;
    *lastSuccessfulTime = i.terminated_at;
    return fail(
        i, "fmi3DoStep: the FMU ended the simulation at t = " + std::to_string(i.terminated_at));
  }
  const double t_end = currentCommunicationPoint + communicationStepSize;
  if (!(communicationStepSize >= 0.0) || !std::isfinite(t_end))
    return fail(i, "fmi3DoStep: communicationStepSize " + std::to_string(communicationStepSize) +
                       " must be >= 0");
  if (i.stop_time_defined && t_end > i.stop_time + 1e-9 * std::max(1.0, std::abs(i.stop_time)))
    return fail(i, "fmi3DoStep: the step to t = " + std::to_string(t_end) +
                       " passes the stop time " + std::to_string(i.stop_time) +
                       " given to fmi3EnterInitializationMode");
  // An unhandled event (the importer ignored eventHandlingNeeded) is not raised again: the
  // model goes on as if it had not happened, as a real FMU would.
  i.event_pending = false;
  const bool stop_at_events = i.event_mode_used && i.early_return_allowed;
  const step_outcome r = i.m->step(currentCommunicationPoint, t_end, stop_at_events);
  i.dirty = true;
  switch (r.what) {
    case step_outcome::kind::completed:
      *lastSuccessfulTime = t_end;
      return fmi3OK;
    case step_outcome::kind::event:
      *eventHandlingNeeded = true;
      *earlyReturn = r.reached < t_end;
      *lastSuccessfulTime = r.reached;
      i.event_pending = true;
      return fmi3OK;
    case step_outcome::kind::terminate:
      *terminateSimulation = true;
      *lastSuccessfulTime = r.reached;
      i.terminated = true;
      i.terminated_at = r.reached;
      log(i, r.reached < t_end ? fmi3Discard : fmi3OK, "logStatusDiscard", r.message);
      return r.reached < t_end ? fmi3Discard : fmi3OK;
    case step_outcome::kind::discard:
      *lastSuccessfulTime = currentCommunicationPoint;
      log(i, fmi3Discard, "logStatusDiscard", r.message);
      return fmi3Discard;
    case step_outcome::kind::failed:
      break;
  }
  i.state = mode::error;
  return fail(i,
              "fmi3DoStep at t = " + std::to_string(currentCommunicationPoint) + ": " + r.message);
}

}  // extern "C"
