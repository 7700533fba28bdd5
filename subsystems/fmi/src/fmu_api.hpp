#pragma once
// The FMI functions an fmu_subsystem calls, resolved from the FMU's binary by the version's
// adapter (fmi2_instance.cpp, fmi3_instance.cpp; private to subsystems/fmi/src).
#include <string>

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

  /// Notes a state function the binary lacks (`present` false), for state_refusal().
  void note_missing_state(bool present, const char* name) {
    if (!present) missing_state += (missing_state.empty() ? "" : ", ") + std::string(name);
  }
};

/// Looks FMI functions up in an FMU's binary, listing the required ones it lacks.
class symbol_resolver {
 public:
  explicit symbol_resolver(const loaded_fmu& fmu) noexcept : fmu_(fmu) {}

  template <class F>
  void operator()(F*& f, const char* name, bool required = true) {
    // dlsym returns an object pointer; POSIX guarantees it converts to a function pointer.
    f = reinterpret_cast<F*>(fmu_.symbol(name));
    if (f == nullptr && required) missing_ += (missing_.empty() ? "" : ", ") + std::string(name);
  }

  /// Throws cosim::error naming the binary and every missing required function.
  void require_all() const {
    if (!missing_.empty())
      throw error(errc::model, fmu_.file().path + ": its binary " +
                                   binary_path_in_fmu(fmu_.file().md) +
                                   " does not export the FMI functions " + missing_);
  }

 private:
  const loaded_fmu& fmu_;
  std::string missing_;
};

}  // namespace cosim::fmi
