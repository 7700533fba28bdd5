#pragma once
// What the importer needs from an FMU's modelDescription.xml (FMI 2.0 and 3.0): version,
// names, the co-simulation capabilities, the default experiment, the scalar variables with
// causality, variability, type, unit, start/min/max, and which outputs depend on inputs
// (ModelStructure). Parsing never throws anything but cosim::error, whose message names the
// FMU (the `where` given to parse_model_description).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cosim::fmi {

enum class causality {
  parameter,
  calculated_parameter,
  input,
  output,
  local,
  independent,
  structural_parameter
};
enum class variability { constant, fixed, tunable, discrete, continuous };

/// A variable's type as declared. real is FMI 2 Real and FMI 3 Float64; integer is FMI 2
/// Integer and FMI 3 Int32. The importer exchanges real, integer and boolean (as doubles);
/// every other type is listed (cosim inspect) but refused where it would be used.
enum class var_type {
  real,
  integer,
  boolean,
  string,
  float32,
  int8,
  uint8,
  int16,
  uint16,
  uint32,
  int64,
  uint64,
  enumeration,
  binary,
  clock
};

[[nodiscard]] const char* to_string(causality c) noexcept;
[[nodiscard]] const char* to_string(variability v) noexcept;
/// The element name of the type in the FMU's own FMI version ("Real" / "Float64").
[[nodiscard]] const char* type_name(var_type t, int fmi_major) noexcept;
/// Exchanged as doubles: every number type, boolean, enumeration (Int64 values can lose
/// digits beyond 2^53).
[[nodiscard]] constexpr bool is_supported(var_type t) noexcept {
  return t != var_type::string && t != var_type::binary && t != var_type::clock;
}

struct variable {
  std::string name;
  std::uint32_t value_reference = 0;
  causality causal = causality::local;
  variability variab = variability::continuous;
  var_type type = var_type::real;
  std::string declared_type;  // TypeDefinitions name, "" if none
  std::string unit;           // own unit, else the declared type's; "" if none
  std::string description;
  /// Start, min, max of a number or boolean (true = 1); start_text keeps the start as
  /// written (strings and types the importer does not exchange).
  std::optional<double> start, min, max;
  std::optional<std::string> start_text;
  /// FMI 3 arrays (a <Dimension> child): listed, refused where used.
  bool is_array = false;
};

/// A port, recorded variable or settable parameter of the importer: a single value of a
/// supported type (no array, string, binary or clock).
[[nodiscard]] inline bool is_exchanged(const variable& v) noexcept {
  return !v.is_array && is_supported(v.type);
}

struct cosimulation {
  std::string model_identifier;
  bool can_handle_variable_communication_step_size = false;
  bool can_get_and_set_fmu_state = false;
  bool can_be_instantiated_only_once_per_process = false;
  bool needs_execution_tool = false;
  int max_output_derivative_order = 0;
  /// providesDirectionalDerivative (FMI 2) / providesDirectionalDerivatives (FMI 3).
  bool provides_directional_derivatives = false;
  bool provides_intermediate_update = false;     // FMI 3
  bool has_event_mode = false;                   // FMI 3
  bool might_return_early_from_do_step = false;  // FMI 3
};

struct default_experiment {
  std::optional<double> start_time, stop_time, tolerance, step_size;
};

struct output_dependencies {
  std::size_t variable = 0;  // index into model_description::variables
  /// Indices of the variables it depends on; nullopt: not given, i.e. on all of them.
  std::optional<std::vector<std::size_t>> depends_on;
};

struct model_description {
  std::string fmi_version;  // as written, "2.0" / "3.0"
  int fmi_major = 2;
  std::string model_name;
  std::string token;  // FMI 2 guid, FMI 3 instantiationToken
  std::string description;
  std::string generation_tool;
  bool model_exchange = false;  // declared (never used by this importer)
  std::optional<cosimulation> cosim;
  default_experiment experiment;
  std::vector<variable> variables;
  std::vector<output_dependencies> outputs;  // ModelStructure outputs

  /// Index of the variable named `name`, or npos.
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
  [[nodiscard]] std::size_t find(std::string_view name) const noexcept;
  /// True if output variable `index` depends on an input at the same time (direct
  /// feedthrough): its listed dependencies name an input, or none are listed (all).
  [[nodiscard]] bool feedthrough(std::size_t index) const noexcept;
  /// True if output variable `output` depends on variable `input` at the same time (its
  /// ModelStructure dependencies list it, or list none, or the output is not listed).
  [[nodiscard]] bool depends_on(std::size_t output, std::size_t input) const noexcept;
  /// True if output variable `output` is listed with its dependencies (possibly none);
  /// false if FMI's "depends on every input" applies because nothing is declared.
  [[nodiscard]] bool dependencies_declared(std::size_t output) const noexcept;
};

/// Parses modelDescription.xml text. `where` names the FMU in every message ("crane.fmu").
/// Throws cosim::error(errc::model).
[[nodiscard]] model_description parse_model_description(std::string_view xml,
                                                        const std::string& where);

/// The binary inside the FMU for this platform: "binaries/linux64/ID.so" (FMI 2) or
/// "binaries/x86_64-linux/ID.so" (FMI 3).
[[nodiscard]] std::string binary_path_in_fmu(const model_description& md);

}  // namespace cosim::fmi
