#pragma once
// Units of SSP 1.0 (Sect. 5.5 ssc:Unit): value in SI = factor * value + offset, with the
// exponents of kg m s A K mol cd rad; read from <Units> and used to convert bound parameter
// values into their connector's unit (private to rt_config's SSP import).
#include <array>
#include <map>
#include <string>

#include "ssp/ssp_xml.hpp"

namespace cosim::config::ssp {

struct unit_def {
  std::array<int, 8> exponents{};
  double factor = 1.0;
  double offset = 0.0;
};
using unit_table = std::map<std::string, unit_def>;

/// Adds the <ssc:Unit> elements of `units` (an ssd:Units or ssv:Units) to `out`; throws
/// cosim::error naming the file, line and attribute of a bad or repeated one.
void read_units(const xml_file& f, const pugi::xml_node& units, unit_table& out);

/// The unit `name`: from `own` (a parameter set's units; may be null), else from `shared`
/// (the description's). Null if neither defines it.
[[nodiscard]] const unit_def* find_unit(const unit_table* own, const unit_table& shared,
                                        const std::string& name);

/// True when a value converts between the two: the same base-unit exponents.
[[nodiscard]] bool convertible(const unit_def& from, const unit_def& to) noexcept;

/// `v` in unit `from` as a value in unit `to` (convertible): through SI.
[[nodiscard]] double convert(double v, const unit_def& from, const unit_def& to) noexcept;

}  // namespace cosim::config::ssp
