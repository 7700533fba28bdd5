#pragma once
// FMU subsystem types by name: the type of an FMU is "fmu:" + its absolute path (made and
// cached in types_fmu.cpp). The one place that knows that spelling.
#include <optional>
#include <string>
#include <string_view>

namespace cosim::config {

/// The type name of the FMU at `absolute_path`.
[[nodiscard]] std::string fmu_type_name(std::string_view absolute_path);
/// The FMU path `type` names, or nullopt when it names no FMU.
[[nodiscard]] std::optional<std::string> fmu_path_of(std::string_view type);
/// True when `type` names an FMU.
[[nodiscard]] bool is_fmu_type(std::string_view type) noexcept;

}  // namespace cosim::config
