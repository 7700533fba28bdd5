#pragma once
// The FMI functions an fmu_subsystem calls, resolved from the FMU's binary (private to
// subsystems/fmi/src: fmu_subsystem.cpp and fmu_state.cpp share it).
#include <string>
#include <type_traits>

#include "cosim/fmi/fmi2.h"
#include "cosim/fmi/fmi3.h"
#include "cosim/fmi/fmu_subsystem.hpp"
#include "cosim/runtime/error.hpp"

namespace cosim::fmi {

/// A failure the importer detected itself (the FMU's calls all returned OK): its message
/// names no status.
inline constexpr int no_fmu_status = -1;

struct fmu_subsystem::api {
  // FMI 2.0
  fmi2GetTypesPlatformTYPE* get_types_platform2 = nullptr;
  fmi2GetVersionTYPE* get_version2 = nullptr;
  fmi2InstantiateTYPE* instantiate2 = nullptr;
  fmi2SetDebugLoggingTYPE* set_debug_logging2 = nullptr;
  fmi2FreeInstanceTYPE* free_instance2 = nullptr;
  fmi2SetupExperimentTYPE* setup_experiment2 = nullptr;
  fmi2EnterInitializationModeTYPE* enter_initialization2 = nullptr;
  fmi2ExitInitializationModeTYPE* exit_initialization2 = nullptr;
  fmi2TerminateTYPE* terminate2 = nullptr;
  fmi2GetRealTYPE* get_real2 = nullptr;
  fmi2GetIntegerTYPE* get_integer2 = nullptr;
  fmi2GetBooleanTYPE* get_boolean2 = nullptr;
  fmi2SetRealTYPE* set_real2 = nullptr;
  fmi2SetIntegerTYPE* set_integer2 = nullptr;
  fmi2SetBooleanTYPE* set_boolean2 = nullptr;
  fmi2GetStringTYPE* get_string2 = nullptr;  // optional: String parameters need them
  fmi2SetStringTYPE* set_string2 = nullptr;
  fmi2DoStepTYPE* do_step2 = nullptr;
  fmi2GetBooleanStatusTYPE* get_boolean_status2 = nullptr;
  fmi2GetRealStatusTYPE* get_real_status2 = nullptr;                    // optional
  fmi2GetRealOutputDerivativesTYPE* get_output_derivatives2 = nullptr;  // maxOutputDerivativeOrder
  fmi2GetDirectionalDerivativeTYPE* get_directional2 = nullptr;  // providesDirectionalDerivative
  fmi2GetFMUstateTYPE* get_fmu_state2 = nullptr;                 // canGetAndSetFMUstate
  fmi2SetFMUstateTYPE* set_fmu_state2 = nullptr;
  fmi2FreeFMUstateTYPE* free_fmu_state2 = nullptr;
  // FMI 3.0
  fmi3GetVersionTYPE* get_version3 = nullptr;
  fmi3InstantiateCoSimulationTYPE* instantiate3 = nullptr;
  fmi3SetDebugLoggingTYPE* set_debug_logging3 = nullptr;
  fmi3FreeInstanceTYPE* free_instance3 = nullptr;
  fmi3EnterInitializationModeTYPE* enter_initialization3 = nullptr;
  fmi3ExitInitializationModeTYPE* exit_initialization3 = nullptr;
  fmi3TerminateTYPE* terminate3 = nullptr;
  fmi3GetFloat64TYPE* get_float64 = nullptr;
  fmi3GetInt32TYPE* get_int32 = nullptr;
  fmi3GetBooleanTYPE* get_boolean3 = nullptr;
  fmi3SetFloat64TYPE* set_float64 = nullptr;
  fmi3SetInt32TYPE* set_int32 = nullptr;
  fmi3SetBooleanTYPE* set_boolean3 = nullptr;
  fmi3GetStringTYPE* get_string3 = nullptr;  // optional: String parameters need them
  fmi3SetStringTYPE* set_string3 = nullptr;
  // The other number types (fmu_typed_values.cpp); optional here, required by a variable
  // of the type (FMI 3.0 asks every FMU to export them; not every FMU does).
  fmi3GetFloat32TYPE* get_float32 = nullptr;
  fmi3SetFloat32TYPE* set_float32 = nullptr;
  fmi3GetInt8TYPE* get_int8 = nullptr;
  fmi3SetInt8TYPE* set_int8 = nullptr;
  fmi3GetUInt8TYPE* get_uint8 = nullptr;
  fmi3SetUInt8TYPE* set_uint8 = nullptr;
  fmi3GetInt16TYPE* get_int16 = nullptr;
  fmi3SetInt16TYPE* set_int16 = nullptr;
  fmi3GetUInt16TYPE* get_uint16 = nullptr;
  fmi3SetUInt16TYPE* set_uint16 = nullptr;
  fmi3GetUInt32TYPE* get_uint32 = nullptr;
  fmi3SetUInt32TYPE* set_uint32 = nullptr;
  fmi3GetInt64TYPE* get_int64 = nullptr;
  fmi3SetInt64TYPE* set_int64 = nullptr;
  fmi3GetUInt64TYPE* get_uint64 = nullptr;
  fmi3SetUInt64TYPE* set_uint64 = nullptr;
  fmi3DoStepTYPE* do_step3 = nullptr;
  fmi3EnterEventModeTYPE* enter_event_mode3 = nullptr;
  fmi3UpdateDiscreteStatesTYPE* update_discrete_states3 = nullptr;
  fmi3EnterStepModeTYPE* enter_step_mode3 = nullptr;
  fmi3GetOutputDerivativesTYPE* get_output_derivatives3 = nullptr;  // maxOutputDerivativeOrder
  fmi3GetDirectionalDerivativeTYPE* get_directional3 = nullptr;  // providesDirectionalDerivatives
  fmi3GetFMUStateTYPE* get_fmu_state3 = nullptr;                 // canGetAndSetFMUState
  fmi3SetFMUStateTYPE* set_fmu_state3 = nullptr;
  fmi3FreeFMUStateTYPE* free_fmu_state3 = nullptr;
  /// The state functions the binary lacks (empty: all there), for state_refusal().
  std::string missing_state;

  /// Resolves every function the importer calls; the error lists all missing ones.
  void resolve(const loaded_fmu& fmu, bool event_mode, bool output_derivatives) {
    std::string missing;
    auto need = [&](auto*& f, const char* name, bool required = true) {
      // dlsym returns an object pointer; POSIX guarantees it converts to a function pointer.
      f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(fmu.symbol(name));
      if (f == nullptr && required) missing += (missing.empty() ? "" : ", ") + std::string(name);
    };
    if (fmu.file().md.fmi_major == 2) {
      need(get_types_platform2, "fmi2GetTypesPlatform");
      need(get_version2, "fmi2GetVersion");
      need(instantiate2, "fmi2Instantiate");
      // Optional: only log_categories needs it (set_log_categories names it when missing).
      need(set_debug_logging2, "fmi2SetDebugLogging", false);
      need(free_instance2, "fmi2FreeInstance");
      need(setup_experiment2, "fmi2SetupExperiment");
      need(enter_initialization2, "fmi2EnterInitializationMode");
      need(exit_initialization2, "fmi2ExitInitializationMode");
      need(terminate2, "fmi2Terminate");
      need(get_real2, "fmi2GetReal");
      need(get_integer2, "fmi2GetInteger");
      need(get_boolean2, "fmi2GetBoolean");
      need(set_real2, "fmi2SetReal");
      need(set_integer2, "fmi2SetInteger");
      need(set_boolean2, "fmi2SetBoolean");
      need(get_string2, "fmi2GetString", false);
      need(set_string2, "fmi2SetString", false);
      need(do_step2, "fmi2DoStep");
      need(get_boolean_status2, "fmi2GetBooleanStatus");
      need(get_real_status2, "fmi2GetRealStatus", false);
      need(get_output_derivatives2, "fmi2GetRealOutputDerivatives", output_derivatives);
      // Optional: only the feedthrough correction needs it (provides_partial() says no).
      need(get_directional2, "fmi2GetDirectionalDerivative", false);
      // Optional: only an iterative run needs them (state_refusal() names the missing ones).
      need(get_fmu_state2, "fmi2GetFMUstate", false);
      need(set_fmu_state2, "fmi2SetFMUstate", false);
      need(free_fmu_state2, "fmi2FreeFMUstate", false);
    } else {
      need(get_version3, "fmi3GetVersion");
      need(instantiate3, "fmi3InstantiateCoSimulation");
      need(set_debug_logging3, "fmi3SetDebugLogging", false);
      need(free_instance3, "fmi3FreeInstance");
      need(enter_initialization3, "fmi3EnterInitializationMode");
      need(exit_initialization3, "fmi3ExitInitializationMode");
      need(terminate3, "fmi3Terminate");
      need(get_float64, "fmi3GetFloat64");
      need(get_int32, "fmi3GetInt32");
      need(get_boolean3, "fmi3GetBoolean");
      need(set_float64, "fmi3SetFloat64");
      need(set_int32, "fmi3SetInt32");
      need(set_boolean3, "fmi3SetBoolean");
      need(get_string3, "fmi3GetString", false);
      need(set_string3, "fmi3SetString", false);
      need(do_step3, "fmi3DoStep");
      need(get_float32, "fmi3GetFloat32", false);
      need(set_float32, "fmi3SetFloat32", false);
      need(get_int8, "fmi3GetInt8", false);
      need(set_int8, "fmi3SetInt8", false);
      need(get_uint8, "fmi3GetUInt8", false);
      need(set_uint8, "fmi3SetUInt8", false);
      need(get_int16, "fmi3GetInt16", false);
      need(set_int16, "fmi3SetInt16", false);
      need(get_uint16, "fmi3GetUInt16", false);
      need(set_uint16, "fmi3SetUInt16", false);
      need(get_uint32, "fmi3GetUInt32", false);
      need(set_uint32, "fmi3SetUInt32", false);
      need(get_int64, "fmi3GetInt64", false);
      need(set_int64, "fmi3SetInt64", false);
      need(get_uint64, "fmi3GetUInt64", false);
      need(set_uint64, "fmi3SetUInt64", false);
      need(enter_event_mode3, "fmi3EnterEventMode", event_mode);
      need(update_discrete_states3, "fmi3UpdateDiscreteStates", event_mode);
      need(enter_step_mode3, "fmi3EnterStepMode", event_mode);
      need(get_output_derivatives3, "fmi3GetOutputDerivatives", output_derivatives);
      need(get_directional3, "fmi3GetDirectionalDerivative", false);
      need(get_fmu_state3, "fmi3GetFMUState", false);
      need(set_fmu_state3, "fmi3SetFMUState", false);
      need(free_fmu_state3, "fmi3FreeFMUState", false);
    }
    auto note = [&](bool present, const char* name) {
      if (!present) missing_state += (missing_state.empty() ? "" : ", ") + std::string(name);
    };
    if (fmu.file().md.fmi_major == 2) {
      note(get_fmu_state2 != nullptr, "fmi2GetFMUstate");
      note(set_fmu_state2 != nullptr, "fmi2SetFMUstate");
      note(free_fmu_state2 != nullptr, "fmi2FreeFMUstate");
    } else {
      note(get_fmu_state3 != nullptr, "fmi3GetFMUState");
      note(set_fmu_state3 != nullptr, "fmi3SetFMUState");
      note(free_fmu_state3 != nullptr, "fmi3FreeFMUState");
    }
    if (!missing.empty())
      throw error(errc::model, fmu.file().path + ": its binary " +
                                   binary_path_in_fmu(fmu.file().md) +
                                   " does not export the FMI functions " + missing);
  }
};

}  // namespace cosim::fmi
