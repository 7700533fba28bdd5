#pragma once
// The FMI 3.0 number types other than Float64 / Int32 / Boolean (Float32, Int8 ... UInt64,
// Enumeration as Int64) and FMI 2.0 Enumeration (as Integer): exchanged as doubles, one
// get/set call per type (private to subsystems/fmi/src). Real, Integer/Int32 and Boolean
// keep their own paths in fmu_subsystem.cpp.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "cosim/fmi/fmu_subsystem.hpp"
#include "cosim/fmi/model_description.hpp"

namespace cosim::fmi {

/// v as an Integer / Int32: rounded to nearest, ties away from zero, saturated (NaN -> 0).
[[nodiscard]] inline std::int32_t to_int32(double v) noexcept {
  if (!(v == v)) return 0;
  if (v >= 2147483647.0) return std::numeric_limits<std::int32_t>::max();
  if (v <= -2147483648.0) return std::numeric_limits<std::int32_t>::min();
  return static_cast<std::int32_t>(std::lround(v));
}

/// True for the types this file exchanges (see above).
[[nodiscard]] constexpr bool is_typed_other(var_type t) noexcept {
  return is_supported(t) && t != var_type::real && t != var_type::integer && t != var_type::boolean;
}

/// Adds variable `vr` at `slot` to the group of its type in `groups` (made on first use).
/// Setup only.
void add_typed(std::vector<typed_group>& groups, var_type type, std::uint32_t vr, std::size_t slot);

/// The FMI functions a group needs that the binary lacks ("" if none): "fmi3GetFloat32,
/// fmi3SetFloat32". `set` also asks for the set function.
[[nodiscard]] std::string typed_missing(const fmu_subsystem::api& a, int major, var_type type,
                                        bool set);

/// Why `v` cannot be a value of the integer type `type` ("" if it can, and always for
/// Float32): "is not an integer", "is outside the Int8 range -128 .. 127".
[[nodiscard]] std::string typed_value_problem(var_type type, int major, double v);

// The value and call functions take the FMI major version (2 or 3) as a template argument:
// each adapter instantiates its own, so no version is tested while running.

/// v as the FMU receives it in `type`: what typed_set sends for v, as a double.
template <int Major>
[[nodiscard]] double typed_as_sent(var_type type, double v) noexcept;

/// Gets the group's values and writes value j to dst[slots[j]]. Returns the FMI status;
/// `call` names the function. Allocation-free.
template <int Major>
int typed_get(const fmu_subsystem::api& a, void* instance, typed_group& g, double* dst,
              const char*& call) noexcept;

/// Sends value src[slots[j]] of each entry whose bits differ from the last sent (every entry
/// when `all`), converted to the type: integers rounded to nearest, ties away from zero (as
/// Integer/Int32 inputs and Booleans), and saturated at the type's range (NaN -> 0),
/// Float32 rounded. Returns the FMI status. Allocation-free.
template <int Major>
int typed_set(const fmu_subsystem::api& a, void* instance, typed_group& g, const double* src,
              bool all, const char*& call) noexcept;

}  // namespace cosim::fmi
