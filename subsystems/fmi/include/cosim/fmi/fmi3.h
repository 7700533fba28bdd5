/* FMI 3.0 declarations for loading and exporting co-simulation FMUs.
 *
 * Written for this project from the FMI 3.0.x specification (Modelica Association, published under
 * the 2-Clause BSD licence): the platform types, status and kind enums, callback types and the
 * function types of the common and co-simulation interfaces, with the names and argument orders
 * the standard fixes (an FMU's binary exports exactly these symbol names). Model-exchange and
 * scheduled-execution-only functions are left out: the project neither loads nor exports them.
 *
 * Usage: a loader resolves `fmi3Xxx` with dlsym and casts to `fmi3XxxTYPE*`; an exporter defines
 * the functions declared at the end (they carry FMI3_Export so they stay visible in a shared
 * library built with -fvisibility=hidden). */
#ifndef COSIM_FMI_FMI3_H
#define COSIM_FMI_FMI3_H

#include <stddef.h>
#include <stdint.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define fmi3Version "3.0"

/* Platform types (fmi3PlatformTypes.h). */
typedef void* fmi3Instance;
typedef void* fmi3InstanceEnvironment;
typedef void* fmi3FMUState;
typedef uint32_t fmi3ValueReference;
typedef float fmi3Float32;
typedef double fmi3Float64;
typedef int8_t fmi3Int8;
typedef uint8_t fmi3UInt8;
typedef int16_t fmi3Int16;
typedef uint16_t fmi3UInt16;
typedef int32_t fmi3Int32;
typedef uint32_t fmi3UInt32;
typedef int64_t fmi3Int64;
typedef uint64_t fmi3UInt64;
typedef bool fmi3Boolean;
typedef char fmi3Char;
typedef const fmi3Char* fmi3String;
typedef uint8_t fmi3Byte;
typedef const fmi3Byte* fmi3Binary;
typedef bool fmi3Clock;

#define fmi3True true
#define fmi3False false
#define fmi3ClockActive true
#define fmi3ClockInactive false

typedef enum { fmi3OK, fmi3Warning, fmi3Discard, fmi3Error, fmi3Fatal } fmi3Status;

typedef enum { fmi3ModelExchange, fmi3CoSimulation, fmi3ScheduledExecution } fmi3Type;

typedef enum {
  fmi3Independent,
  fmi3Constant,
  fmi3Fixed,
  fmi3Tunable,
  fmi3Discrete,
  fmi3Dependent
} fmi3DependencyKind;

typedef enum {
  fmi3IntervalNotYetKnown,
  fmi3IntervalUnchanged,
  fmi3IntervalChanged
} fmi3IntervalQualifier;

/* Callbacks. */
typedef void (*fmi3LogMessageCallback)(fmi3InstanceEnvironment instanceEnvironment,
                                       fmi3Status status, fmi3String category, fmi3String message);
typedef void (*fmi3ClockUpdateCallback)(fmi3InstanceEnvironment instanceEnvironment);
typedef void (*fmi3IntermediateUpdateCallback)(
    fmi3InstanceEnvironment instanceEnvironment, fmi3Float64 intermediateUpdateTime,
    fmi3Boolean intermediateVariableSetRequested, fmi3Boolean intermediateVariableGetAllowed,
    fmi3Boolean intermediateStepFinished, fmi3Boolean canReturnEarly,
    fmi3Boolean* earlyReturnRequested, fmi3Float64* earlyReturnTime);
typedef void (*fmi3LockPreemptionCallback)(void);
typedef void (*fmi3UnlockPreemptionCallback)(void);

/* Inquire version, set debug logging. */
typedef const char* fmi3GetVersionTYPE(void);
typedef fmi3Status fmi3SetDebugLoggingTYPE(fmi3Instance instance, fmi3Boolean loggingOn,
                                           size_t nCategories, const fmi3String categories[]);

/* Creation and destruction. */
typedef fmi3Instance fmi3InstantiateCoSimulationTYPE(
    fmi3String instanceName, fmi3String instantiationToken, fmi3String resourcePath,
    fmi3Boolean visible, fmi3Boolean loggingOn, fmi3Boolean eventModeUsed,
    fmi3Boolean earlyReturnAllowed, const fmi3ValueReference requiredIntermediateVariables[],
    size_t nRequiredIntermediateVariables, fmi3InstanceEnvironment instanceEnvironment,
    fmi3LogMessageCallback logMessage, fmi3IntermediateUpdateCallback intermediateUpdate);
typedef void fmi3FreeInstanceTYPE(fmi3Instance instance);

/* Initialisation, events, termination. */
typedef fmi3Status fmi3EnterInitializationModeTYPE(fmi3Instance instance,
                                                   fmi3Boolean toleranceDefined,
                                                   fmi3Float64 tolerance, fmi3Float64 startTime,
                                                   fmi3Boolean stopTimeDefined,
                                                   fmi3Float64 stopTime);
typedef fmi3Status fmi3ExitInitializationModeTYPE(fmi3Instance instance);
typedef fmi3Status fmi3EnterEventModeTYPE(fmi3Instance instance);
typedef fmi3Status fmi3TerminateTYPE(fmi3Instance instance);
typedef fmi3Status fmi3ResetTYPE(fmi3Instance instance);

/* Getting and setting variable values. */
#define COSIM_FMI3_GET_SET(NAME, T)                                                               \
  typedef fmi3Status fmi3Get##NAME##TYPE(fmi3Instance instance,                                   \
                                         const fmi3ValueReference valueReferences[],              \
                                         size_t nValueReferences, T values[], size_t nValues);    \
  typedef fmi3Status fmi3Set##NAME##TYPE(                                                         \
      fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences, \
      const T values[], size_t nValues);
COSIM_FMI3_GET_SET(Float32, fmi3Float32)
COSIM_FMI3_GET_SET(Float64, fmi3Float64)
COSIM_FMI3_GET_SET(Int8, fmi3Int8)
COSIM_FMI3_GET_SET(UInt8, fmi3UInt8)
COSIM_FMI3_GET_SET(Int16, fmi3Int16)
COSIM_FMI3_GET_SET(UInt16, fmi3UInt16)
COSIM_FMI3_GET_SET(Int32, fmi3Int32)
COSIM_FMI3_GET_SET(UInt32, fmi3UInt32)
COSIM_FMI3_GET_SET(Int64, fmi3Int64)
COSIM_FMI3_GET_SET(UInt64, fmi3UInt64)
COSIM_FMI3_GET_SET(Boolean, fmi3Boolean)
COSIM_FMI3_GET_SET(String, fmi3String)
#undef COSIM_FMI3_GET_SET
typedef fmi3Status fmi3GetBinaryTYPE(fmi3Instance instance,
                                     const fmi3ValueReference valueReferences[],
                                     size_t nValueReferences, size_t valueSizes[],
                                     fmi3Binary values[], size_t nValues);
typedef fmi3Status fmi3SetBinaryTYPE(fmi3Instance instance,
                                     const fmi3ValueReference valueReferences[],
                                     size_t nValueReferences, const size_t valueSizes[],
                                     const fmi3Binary values[], size_t nValues);
typedef fmi3Status fmi3GetClockTYPE(fmi3Instance instance,
                                    const fmi3ValueReference valueReferences[],
                                    size_t nValueReferences, fmi3Clock values[]);
typedef fmi3Status fmi3SetClockTYPE(fmi3Instance instance,
                                    const fmi3ValueReference valueReferences[],
                                    size_t nValueReferences, const fmi3Clock values[]);

/* Variable dependency information. */
typedef fmi3Status fmi3GetNumberOfVariableDependenciesTYPE(fmi3Instance instance,
                                                           fmi3ValueReference valueReference,
                                                           size_t* nDependencies);
typedef fmi3Status fmi3GetVariableDependenciesTYPE(
    fmi3Instance instance, fmi3ValueReference dependent, size_t elementIndicesOfDependent[],
    fmi3ValueReference independents[], size_t elementIndicesOfIndependents[],
    fmi3DependencyKind dependencyKinds[], size_t nDependencies);

/* FMU state. */
typedef fmi3Status fmi3GetFMUStateTYPE(fmi3Instance instance, fmi3FMUState* FMUState);
typedef fmi3Status fmi3SetFMUStateTYPE(fmi3Instance instance, fmi3FMUState FMUState);
typedef fmi3Status fmi3FreeFMUStateTYPE(fmi3Instance instance, fmi3FMUState* FMUState);
typedef fmi3Status fmi3SerializedFMUStateSizeTYPE(fmi3Instance instance, fmi3FMUState FMUState,
                                                  size_t* size);
typedef fmi3Status fmi3SerializeFMUStateTYPE(fmi3Instance instance, fmi3FMUState FMUState,
                                             fmi3Byte serializedState[], size_t size);
typedef fmi3Status fmi3DeserializeFMUStateTYPE(fmi3Instance instance,
                                               const fmi3Byte serializedState[], size_t size,
                                               fmi3FMUState* FMUState);

/* Partial derivatives. */
typedef fmi3Status fmi3GetDirectionalDerivativeTYPE(
    fmi3Instance instance, const fmi3ValueReference unknowns[], size_t nUnknowns,
    const fmi3ValueReference knowns[], size_t nKnowns, const fmi3Float64 seed[], size_t nSeed,
    fmi3Float64 sensitivity[], size_t nSensitivity);
typedef fmi3Status fmi3GetAdjointDerivativeTYPE(fmi3Instance instance,
                                                const fmi3ValueReference unknowns[],
                                                size_t nUnknowns, const fmi3ValueReference knowns[],
                                                size_t nKnowns, const fmi3Float64 seed[],
                                                size_t nSeed, fmi3Float64 sensitivity[],
                                                size_t nSensitivity);

/* Configuration mode. */
typedef fmi3Status fmi3EnterConfigurationModeTYPE(fmi3Instance instance);
typedef fmi3Status fmi3ExitConfigurationModeTYPE(fmi3Instance instance);

/* Clocks. */
typedef fmi3Status fmi3GetIntervalDecimalTYPE(fmi3Instance instance,
                                              const fmi3ValueReference valueReferences[],
                                              size_t nValueReferences, fmi3Float64 intervals[],
                                              fmi3IntervalQualifier qualifiers[]);
typedef fmi3Status fmi3GetIntervalFractionTYPE(fmi3Instance instance,
                                               const fmi3ValueReference valueReferences[],
                                               size_t nValueReferences, fmi3UInt64 counters[],
                                               fmi3UInt64 resolutions[],
                                               fmi3IntervalQualifier qualifiers[]);
typedef fmi3Status fmi3GetShiftDecimalTYPE(fmi3Instance instance,
                                           const fmi3ValueReference valueReferences[],
                                           size_t nValueReferences, fmi3Float64 shifts[]);
typedef fmi3Status fmi3GetShiftFractionTYPE(fmi3Instance instance,
                                            const fmi3ValueReference valueReferences[],
                                            size_t nValueReferences, fmi3UInt64 counters[],
                                            fmi3UInt64 resolutions[]);
typedef fmi3Status fmi3SetIntervalDecimalTYPE(fmi3Instance instance,
                                              const fmi3ValueReference valueReferences[],
                                              size_t nValueReferences,
                                              const fmi3Float64 intervals[]);
typedef fmi3Status fmi3SetIntervalFractionTYPE(fmi3Instance instance,
                                               const fmi3ValueReference valueReferences[],
                                               size_t nValueReferences, const fmi3UInt64 counters[],
                                               const fmi3UInt64 resolutions[]);
typedef fmi3Status fmi3SetShiftDecimalTYPE(fmi3Instance instance,
                                           const fmi3ValueReference valueReferences[],
                                           size_t nValueReferences, const fmi3Float64 shifts[]);
typedef fmi3Status fmi3SetShiftFractionTYPE(fmi3Instance instance,
                                            const fmi3ValueReference valueReferences[],
                                            size_t nValueReferences, const fmi3UInt64 counters[],
                                            const fmi3UInt64 resolutions[]);
typedef fmi3Status fmi3EvaluateDiscreteStatesTYPE(fmi3Instance instance);
typedef fmi3Status fmi3UpdateDiscreteStatesTYPE(
    fmi3Instance instance, fmi3Boolean* discreteStatesNeedUpdate, fmi3Boolean* terminateSimulation,
    fmi3Boolean* nominalsOfContinuousStatesChanged, fmi3Boolean* valuesOfContinuousStatesChanged,
    fmi3Boolean* nextEventTimeDefined, fmi3Float64* nextEventTime);

/* Co-simulation. */
typedef fmi3Status fmi3EnterStepModeTYPE(fmi3Instance instance);
typedef fmi3Status fmi3GetOutputDerivativesTYPE(fmi3Instance instance,
                                                const fmi3ValueReference valueReferences[],
                                                size_t nValueReferences, const fmi3Int32 orders[],
                                                fmi3Float64 values[], size_t nValues);
typedef fmi3Status fmi3DoStepTYPE(fmi3Instance instance, fmi3Float64 currentCommunicationPoint,
                                  fmi3Float64 communicationStepSize,
                                  fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                                  fmi3Boolean* eventHandlingNeeded,
                                  fmi3Boolean* terminateSimulation, fmi3Boolean* earlyReturn,
                                  fmi3Float64* lastSuccessfulTime);

/* Prototypes for an exporter (and for type-checking a loader's symbol table). */
#if defined(_WIN32)
#define FMI3_Export __declspec(dllexport)
#else
#define FMI3_Export __attribute__((visibility("default")))
#endif

FMI3_Export fmi3GetVersionTYPE fmi3GetVersion;
FMI3_Export fmi3SetDebugLoggingTYPE fmi3SetDebugLogging;
FMI3_Export fmi3InstantiateCoSimulationTYPE fmi3InstantiateCoSimulation;
FMI3_Export fmi3FreeInstanceTYPE fmi3FreeInstance;
FMI3_Export fmi3EnterInitializationModeTYPE fmi3EnterInitializationMode;
FMI3_Export fmi3ExitInitializationModeTYPE fmi3ExitInitializationMode;
FMI3_Export fmi3EnterEventModeTYPE fmi3EnterEventMode;
FMI3_Export fmi3TerminateTYPE fmi3Terminate;
FMI3_Export fmi3ResetTYPE fmi3Reset;
FMI3_Export fmi3GetFloat32TYPE fmi3GetFloat32;
FMI3_Export fmi3GetFloat64TYPE fmi3GetFloat64;
FMI3_Export fmi3GetInt8TYPE fmi3GetInt8;
FMI3_Export fmi3GetUInt8TYPE fmi3GetUInt8;
FMI3_Export fmi3GetInt16TYPE fmi3GetInt16;
FMI3_Export fmi3GetUInt16TYPE fmi3GetUInt16;
FMI3_Export fmi3GetInt32TYPE fmi3GetInt32;
FMI3_Export fmi3GetUInt32TYPE fmi3GetUInt32;
FMI3_Export fmi3GetInt64TYPE fmi3GetInt64;
FMI3_Export fmi3GetUInt64TYPE fmi3GetUInt64;
FMI3_Export fmi3GetBooleanTYPE fmi3GetBoolean;
FMI3_Export fmi3GetStringTYPE fmi3GetString;
FMI3_Export fmi3GetBinaryTYPE fmi3GetBinary;
FMI3_Export fmi3GetClockTYPE fmi3GetClock;
FMI3_Export fmi3SetFloat32TYPE fmi3SetFloat32;
FMI3_Export fmi3SetFloat64TYPE fmi3SetFloat64;
FMI3_Export fmi3SetInt8TYPE fmi3SetInt8;
FMI3_Export fmi3SetUInt8TYPE fmi3SetUInt8;
FMI3_Export fmi3SetInt16TYPE fmi3SetInt16;
FMI3_Export fmi3SetUInt16TYPE fmi3SetUInt16;
FMI3_Export fmi3SetInt32TYPE fmi3SetInt32;
FMI3_Export fmi3SetUInt32TYPE fmi3SetUInt32;
FMI3_Export fmi3SetInt64TYPE fmi3SetInt64;
FMI3_Export fmi3SetUInt64TYPE fmi3SetUInt64;
FMI3_Export fmi3SetBooleanTYPE fmi3SetBoolean;
FMI3_Export fmi3SetStringTYPE fmi3SetString;
FMI3_Export fmi3SetBinaryTYPE fmi3SetBinary;
FMI3_Export fmi3SetClockTYPE fmi3SetClock;
FMI3_Export fmi3GetNumberOfVariableDependenciesTYPE fmi3GetNumberOfVariableDependencies;
FMI3_Export fmi3GetVariableDependenciesTYPE fmi3GetVariableDependencies;
FMI3_Export fmi3GetFMUStateTYPE fmi3GetFMUState;
FMI3_Export fmi3SetFMUStateTYPE fmi3SetFMUState;
FMI3_Export fmi3FreeFMUStateTYPE fmi3FreeFMUState;
FMI3_Export fmi3SerializedFMUStateSizeTYPE fmi3SerializedFMUStateSize;
FMI3_Export fmi3SerializeFMUStateTYPE fmi3SerializeFMUState;
FMI3_Export fmi3DeserializeFMUStateTYPE fmi3DeserializeFMUState;
FMI3_Export fmi3GetDirectionalDerivativeTYPE fmi3GetDirectionalDerivative;
FMI3_Export fmi3GetAdjointDerivativeTYPE fmi3GetAdjointDerivative;
FMI3_Export fmi3EnterConfigurationModeTYPE fmi3EnterConfigurationMode;
FMI3_Export fmi3ExitConfigurationModeTYPE fmi3ExitConfigurationMode;
FMI3_Export fmi3GetIntervalDecimalTYPE fmi3GetIntervalDecimal;
FMI3_Export fmi3GetIntervalFractionTYPE fmi3GetIntervalFraction;
FMI3_Export fmi3GetShiftDecimalTYPE fmi3GetShiftDecimal;
FMI3_Export fmi3GetShiftFractionTYPE fmi3GetShiftFraction;
FMI3_Export fmi3SetIntervalDecimalTYPE fmi3SetIntervalDecimal;
FMI3_Export fmi3SetIntervalFractionTYPE fmi3SetIntervalFraction;
FMI3_Export fmi3SetShiftDecimalTYPE fmi3SetShiftDecimal;
FMI3_Export fmi3SetShiftFractionTYPE fmi3SetShiftFraction;
FMI3_Export fmi3EvaluateDiscreteStatesTYPE fmi3EvaluateDiscreteStates;
FMI3_Export fmi3UpdateDiscreteStatesTYPE fmi3UpdateDiscreteStates;
FMI3_Export fmi3EnterStepModeTYPE fmi3EnterStepMode;
FMI3_Export fmi3GetOutputDerivativesTYPE fmi3GetOutputDerivatives;
FMI3_Export fmi3DoStepTYPE fmi3DoStep;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* COSIM_FMI_FMI3_H */
