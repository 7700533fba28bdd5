// FMI 2.0 co-simulation interface of a test FMU over a fmu_kit::model (fmu_model.hpp).
//
// States of the standard's co-simulation state machine that matter here: instantiated
// (parameters and inputs may be set), initialisation mode, step mode, terminated, and
// error (after fmi2Error from doStep only fmi2FreeInstance / fmi2Reset make sense). A doStep
// that ends with the model terminating returns fmi2Discard; fmi2GetBooleanStatus
// (fmi2Terminated) then says true and fmi2GetRealStatus(fmi2LastSuccessfulTime) how far the
// step got (FMI 2.0.x Sect. 4.2.3).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "cosim/fmi/fmi2.h"
#include "fmu_model.hpp"

namespace {

using cosim::fmu_kit::causality;
using cosim::fmu_kit::model;
using cosim::fmu_kit::step_outcome;
using cosim::fmu_kit::var_type;
using cosim::fmu_kit::variable;

enum class mode { instantiated, initialization, step, terminated, error };

struct instance {
  std::string name;
  fmi2CallbackLogger logger = nullptr;
  fmi2ComponentEnvironment env = nullptr;
  bool logging = false;
  std::vector<std::string> categories;  // fmi2SetDebugLogging's; empty: all
  std::unique_ptr<model> m;
  mode state = mode::instantiated;
  double start_time = 0.0;
  bool stop_time_defined = false;
  double stop_time = 0.0;
  double time = 0.0;
  double last_successful_time = 0.0;
  bool terminated = false;  // the model asked to end the simulation
  bool dirty = true;        // outputs must be recalculated before the next get
};

// Behind an fmi2FMUstate: the model's state and the instance's own.
struct saved_state {
  const instance* owner = nullptr;
  std::unique_ptr<cosim::fmu_kit::model_state> m;
  mode state = mode::instantiated;
  double time = 0.0;
  double last_successful_time = 0.0;
  bool terminated = false;
};

instance* self(fmi2Component c) noexcept {
  return static_cast<instance*>(c);
}

void log(const instance& i, fmi2Status s, const char* category, const std::string& msg) noexcept {
#ifdef COSIM_KIT_LOG_AS_ASKED
  // As many exported FMUs do: nothing unless the importer turned logging on, then only the
  // categories it asked for.
  const bool wanted =
      i.logging && (i.categories.empty() || std::find(i.categories.begin(), i.categories.end(),
                                                      category) != i.categories.end());
#else
  // Errors are always reported; the rest only with logging on.
  const bool wanted = i.logging || s >= fmi2Discard;
#endif
  if (i.logger != nullptr && wanted)
    i.logger(i.env, i.name.c_str(), s, category, "%s", msg.c_str());
}

fmi2Status fail(instance& i, const std::string& msg) noexcept {
  log(i, fmi2Error, "logStatusError", msg);
  return fmi2Error;
}

// Values of the model's variables, with checks on type and on when a variable may be set.
const variable* lookup(instance& i, fmi2ValueReference vr, var_type t, const char* fn) noexcept {
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
                                                  "fmi2ExitInitializationMode"
                                                : " is not an input or parameter"));
  return false;
}

void refresh(instance& i) noexcept {
  if (i.dirty && (i.state == mode::step || i.state == mode::terminated)) {
    i.m->calculate();
    i.dirty = false;
  }
}

template <typename Fmi, typename Own>
fmi2Status get(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, Fmi value[], var_type t,
               const char* fn) noexcept {
  instance& i = *self(c);
  refresh(i);
  for (size_t k = 0; k < nvr; ++k) {
    if (const char* why = i.m->get_refusal(vr[k]); why != nullptr)
      return fail(i, std::string(fn) + ": " + why);
    const variable* v = lookup(i, vr[k], t, fn);
    if (v == nullptr) return fmi2Error;
    value[k] = static_cast<Fmi>(*static_cast<const Own*>(v->value));
  }
  return fmi2OK;
}

template <typename Fmi, typename Own>
fmi2Status set(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const Fmi value[],
               var_type t, const char* fn) noexcept {
  instance& i = *self(c);
  for (size_t k = 0; k < nvr; ++k) {
    const variable* v = lookup(i, vr[k], t, fn);
    if (v == nullptr || !settable(i, *v, fn)) return fmi2Error;
    *static_cast<Own*>(v->value) = static_cast<Own>(value[k]);
    i.m->on_set(vr[k]);
  }
  i.dirty = true;
  return fmi2OK;
}

fmi2Status unsupported(fmi2Component c, const char* fn) noexcept {
  return fail(*self(c), std::string(fn) + " is not supported by this FMU (capability flag false)");
}

}  // namespace

extern "C" {

const char* fmi2GetTypesPlatform(void) {
  return fmi2TypesPlatform;
}

const char* fmi2GetVersion(void) {
  return fmi2Version;
}

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean loggingOn, size_t nCategories,
                               const fmi2String categories[]) {
  instance& i = *self(c);
  i.logging = loggingOn != fmi2False;
  try {
    i.categories.assign(categories, categories + nCategories);
  } catch (const std::exception& e) {
    return fail(i, std::string("fmi2SetDebugLogging: ") + e.what());
  }
  return fmi2OK;
}

fmi2Component fmi2Instantiate(fmi2String instanceName, fmi2Type fmuType, fmi2String fmuGUID,
                              fmi2String /*fmuResourceLocation*/,
                              const fmi2CallbackFunctions* functions, fmi2Boolean /*visible*/,
                              fmi2Boolean loggingOn) {
  if (functions == nullptr || functions->logger == nullptr) return nullptr;
  auto i = std::make_unique<instance>();
  try {
    i->name = instanceName != nullptr ? instanceName : "";
    i->logger = functions->logger;
    i->env = functions->componentEnvironment;
    i->logging = loggingOn != fmi2False;
    if (fmuType != fmi2CoSimulation) {
      fail(*i, "fmi2Instantiate: this FMU supports co-simulation only");
      return nullptr;
    }
    if (fmuGUID == nullptr || std::strcmp(fmuGUID, cosim::fmu_kit::model_token) != 0) {
      fail(*i, std::string("fmi2Instantiate: guid \"") + (fmuGUID != nullptr ? fmuGUID : "") +
                   "\" is not this FMU's \"" + cosim::fmu_kit::model_token + "\"");
      return nullptr;
    }
    i->m = cosim::fmu_kit::make_model();
  } catch (const std::exception& e) {
    fail(*i, std::string("fmi2Instantiate: ") + e.what());
    return nullptr;
  }
  return i.release();
}

void fmi2FreeInstance(fmi2Component c) {
  delete self(c);
}

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean /*toleranceDefined*/,
                               fmi2Real /*tolerance*/, fmi2Real startTime,
                               fmi2Boolean stopTimeDefined, fmi2Real stopTime) {
  instance& i = *self(c);
  if (i.state != mode::instantiated) return fail(i, "fmi2SetupExperiment: not after instantiate");
  i.start_time = startTime;
  i.stop_time_defined = stopTimeDefined != fmi2False;
  i.stop_time = stopTime;
  i.m->on_setup_experiment();
  return fmi2OK;
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c) {
  instance& i = *self(c);
  if (i.state != mode::instantiated)
    return fail(i, "fmi2EnterInitializationMode: not after instantiate / setup");
  i.state = mode::initialization;
  return fmi2OK;
}

fmi2Status fmi2ExitInitializationMode(fmi2Component c) {
  instance& i = *self(c);
  if (i.state != mode::initialization)
    return fail(i, "fmi2ExitInitializationMode: not in initialisation mode");
  std::string why;
  if (!i.m->initialize(i.start_time, why)) {
    i.state = mode::error;
    return fail(i, "initialisation failed: " + why);
  }
  i.time = i.start_time;
  i.last_successful_time = i.start_time;
  i.state = mode::step;
  i.dirty = true;
  return fmi2OK;
}

fmi2Status fmi2Terminate(fmi2Component c) {
  instance& i = *self(c);
  if (i.state != mode::step && i.state != mode::terminated)
    return fail(i, "fmi2Terminate: not in step mode");
  i.m->terminate();
  i.state = mode::terminated;
  return fmi2OK;
}

fmi2Status fmi2Reset(fmi2Component c) {
  instance& i = *self(c);
  try {
    i.m = cosim::fmu_kit::make_model();
  } catch (const std::exception& e) {
    return fail(i, std::string("fmi2Reset: ") + e.what());
  }
  i.state = mode::instantiated;
  i.terminated = false;
  i.dirty = true;
  return fmi2OK;
}

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                       fmi2Real value[]) {
  return get<fmi2Real, double>(c, vr, nvr, value, var_type::real, "fmi2GetReal");
}
fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                          fmi2Integer value[]) {
  return get<fmi2Integer, std::int32_t>(c, vr, nvr, value, var_type::integer, "fmi2GetInteger");
}
fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                          fmi2Boolean value[]) {
  return get<fmi2Boolean, bool>(c, vr, nvr, value, var_type::boolean, "fmi2GetBoolean");
}
fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                         fmi2String value[]) {
  instance& i = *self(c);
  for (size_t k = 0; k < nvr; ++k) {
    const variable* v = lookup(i, vr[k], var_type::text, "fmi2GetString");
    if (v == nullptr) return fmi2Error;
    value[k] = static_cast<const std::string*>(v->value)->c_str();
  }
  return fmi2OK;
}

fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                       const fmi2Real value[]) {
  return set<fmi2Real, double>(c, vr, nvr, value, var_type::real, "fmi2SetReal");
}
fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                          const fmi2Integer value[]) {
  return set<fmi2Integer, std::int32_t>(c, vr, nvr, value, var_type::integer, "fmi2SetInteger");
}
fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                          const fmi2Boolean value[]) {
  instance& i = *self(c);
  for (size_t k = 0; k < nvr; ++k) {
    const variable* v = lookup(i, vr[k], var_type::boolean, "fmi2SetBoolean");
    if (v == nullptr || !settable(i, *v, "fmi2SetBoolean")) return fmi2Error;
    *static_cast<bool*>(v->value) = value[k] != fmi2False;
    i.m->on_set(vr[k]);
  }
  i.dirty = true;
  return fmi2OK;
}
fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                         const fmi2String value[]) {
  instance& i = *self(c);
  try {
    for (size_t k = 0; k < nvr; ++k) {
      const variable* v = lookup(i, vr[k], var_type::text, "fmi2SetString");
      if (v == nullptr || !settable(i, *v, "fmi2SetString")) return fmi2Error;
      *static_cast<std::string*>(v->value) = value[k] != nullptr ? value[k] : "";
      i.m->on_set(vr[k]);
    }
  } catch (const std::exception& e) {
    return fail(i, std::string("fmi2SetString: ") + e.what());
  }
  i.dirty = true;
  return fmi2OK;
}

// FMI 2.0 Sect. 2.1.8: *FMUstate == NULL allocates a new state, else the given one (made
// by this FMU) is overwritten; a model without state support refuses (its description says
// canGetAndSetFMUstate="false").
fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate* FMUstate) {
  instance& i = *self(c);
  if (FMUstate == nullptr) return fail(i, "fmi2GetFMUstate: FMUstate is NULL");
  if (i.state == mode::error) return fail(i, "fmi2GetFMUstate: the instance is in error");
  try {
    std::unique_ptr<saved_state> fresh;
    saved_state* s = static_cast<saved_state*>(*FMUstate);
    if (s == nullptr) {
      fresh = std::make_unique<saved_state>();
      s = fresh.get();
    } else if (s->owner != &i) {
      return fail(i, "fmi2GetFMUstate: the state belongs to another instance");
    }
    std::string why;
    if (!i.m->get_state(s->m, why)) return fail(i, "fmi2GetFMUstate: " + why);
    s->owner = &i;
    s->state = i.state;
    s->time = i.time;
    s->last_successful_time = i.last_successful_time;
    s->terminated = i.terminated;
    if (fresh) *FMUstate = fresh.release();
  } catch (const std::exception& e) {
    return fail(i, std::string("fmi2GetFMUstate: ") + e.what());
  }
  return fmi2OK;
}
fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate FMUstate) {
  instance& i = *self(c);
  const saved_state* s = static_cast<const saved_state*>(FMUstate);
  if (s == nullptr || s->owner != &i || !s->m)
    return fail(i, "fmi2SetFMUstate: not a state of this instance");
  std::string why;
  if (!i.m->set_state(*s->m, why)) return fail(i, "fmi2SetFMUstate: " + why);
  i.state = s->state;
  i.time = s->time;
  i.last_successful_time = s->last_successful_time;
  i.terminated = s->terminated;
  i.dirty = true;
  return fmi2OK;
}
fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate* FMUstate) {
  if (FMUstate == nullptr) return fail(*self(c), "fmi2FreeFMUstate: FMUstate is NULL");
  delete static_cast<saved_state*>(*FMUstate);
  *FMUstate = nullptr;
  return fmi2OK;
}
fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate /*FMUstate*/,
                                      size_t* /*size*/) {
  return unsupported(c, "fmi2SerializedFMUstateSize");
}
fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate /*FMUstate*/,
                                 fmi2Byte /*serializedState*/[], size_t /*size*/) {
  return unsupported(c, "fmi2SerializeFMUstate");
}
fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte /*serializedState*/[],
                                   size_t /*size*/, fmi2FMUstate* /*FMUstate*/) {
  return unsupported(c, "fmi2DeSerializeFMUstate");
}
fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference vUnknown[],
                                        size_t nUnknown, const fmi2ValueReference vKnown[],
                                        size_t nKnown, const fmi2Real dvKnown[],
                                        fmi2Real dvUnknown[]) {
  // dvUnknown = J dvKnown, J the model's partial derivatives (FMI 2.0 Sect. 3.2.1).
  instance& i = *self(c);
  refresh(i);
  std::string why;
  if (!cosim::fmu_kit::directional_derivative(*i.m, vUnknown, nUnknown, vKnown, nKnown, dvKnown,
                                              dvUnknown, why))
    return fail(i, "fmi2GetDirectionalDerivative: " + why);
  return fmi2OK;
}

fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference /*vr*/[],
                                       size_t /*nvr*/, const fmi2Integer /*order*/[],
                                       const fmi2Real /*value*/[]) {
  return unsupported(c, "fmi2SetRealInputDerivatives");
}

fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                        const fmi2Integer order[], fmi2Real value[]) {
  instance& i = *self(c);
  refresh(i);
  for (size_t k = 0; k < nvr; ++k)
    if (!i.m->output_derivative(vr[k], order[k], value[k]))
      return fail(i, "fmi2GetRealOutputDerivatives: no derivative of order " +
                         std::to_string(order[k]) + " for value reference " +
                         std::to_string(vr[k]));
  return fmi2OK;
}

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real currentCommunicationPoint,
                      fmi2Real communicationStepSize,
                      fmi2Boolean /*noSetFMUStatePriorToCurrentPoint*/) {
  instance& i = *self(c);
  if (i.state != mode::step) return fail(i, "fmi2DoStep: not in step mode");
  if (i.terminated)
    return fail(i, "fmi2DoStep: the FMU ended the simulation at t = " +
                       std::to_string(i.last_successful_time));
  const double t_end = currentCommunicationPoint + communicationStepSize;
  if (!(communicationStepSize >= 0.0) || !std::isfinite(t_end))
    return fail(i, "fmi2DoStep: communicationStepSize " + std::to_string(communicationStepSize) +
                       " must be >= 0");
  if (i.stop_time_defined && i.m->exact_stop_time() && t_end > i.stop_time) {
    char text[128];
    std::snprintf(text, sizeof text, "Exceeded model finish time: %.17g > %.17g", t_end,
                  i.stop_time);
    return fail(i, text);
  }
  // The importer must not step past the stop time it announced (relative slack for its
  // decimal-to-binary rounding of the step).
  if (i.stop_time_defined && t_end > i.stop_time + 1e-9 * std::max(1.0, std::abs(i.stop_time)))
    return fail(i, "fmi2DoStep: the step to t = " + std::to_string(t_end) +
                       " passes the stop time " + std::to_string(i.stop_time) +
                       " given to fmi2SetupExperiment");
  const step_outcome r = i.m->step(currentCommunicationPoint, t_end, false);
  i.dirty = true;
  switch (r.what) {
    case step_outcome::kind::completed:
    case step_outcome::kind::event:  // cannot happen without event mode
      i.time = t_end;
      i.last_successful_time = t_end;
      return fmi2OK;
    case step_outcome::kind::terminate:
      i.time = r.reached;
      i.last_successful_time = r.reached;
      i.terminated = true;
      log(i, fmi2Discard, "logStatusDiscard", r.message);
      return fmi2Discard;
    case step_outcome::kind::discard:
      i.last_successful_time = currentCommunicationPoint;
      log(i, fmi2Discard, "logStatusDiscard", r.message);
      return fmi2Discard;
    case step_outcome::kind::failed:
      break;
  }
  i.state = mode::error;
  return fail(i,
              "fmi2DoStep at t = " + std::to_string(currentCommunicationPoint) + ": " + r.message);
}

fmi2Status fmi2CancelStep(fmi2Component c) {
  return unsupported(c, "fmi2CancelStep");
}

fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status* value) {
  if (s != fmi2DoStepStatus) return unsupported(c, "fmi2GetStatus for this status kind");
  *value = fmi2OK;  // doStep is synchronous: never pending
  return fmi2OK;
}

fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real* value) {
  if (s != fmi2LastSuccessfulTime) return unsupported(c, "fmi2GetRealStatus for this status kind");
  *value = self(c)->last_successful_time;
  return fmi2OK;
}

fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind /*s*/,
                                fmi2Integer* /*value*/) {
  return unsupported(c, "fmi2GetIntegerStatus");
}

fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean* value) {
  if (s != fmi2Terminated) return unsupported(c, "fmi2GetBooleanStatus for this status kind");
  *value = self(c)->terminated ? fmi2True : fmi2False;
  return fmi2OK;
}

fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind /*s*/, fmi2String* /*value*/) {
  return unsupported(c, "fmi2GetStringStatus");
}

}  // extern "C"
