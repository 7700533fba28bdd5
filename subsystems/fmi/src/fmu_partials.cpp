// Partial derivatives of an FMU's outputs with respect to its inputs, for the feedthrough
// correction (feedthrough_correction.hpp), from the FMU's directional derivatives (FMI 2.0
// Sect. 3.2.1, FMI 3.0 Sect. 3.2.1).
#include <cmath>
#include <limits>
#include <string>

#include "cosim/fmi/fmu_subsystem.hpp"
#include "fmu_instance.hpp"

namespace cosim::fmi {

fmu_subsystem::partial_gap fmu_subsystem::missing_for_partial(std::size_t o,
                                                              std::size_t i) const noexcept {
  const model_description& md = fmu_->file().md;
  if (!md.cosim || !md.cosim->provides_directional_derivatives) return partial_gap::undeclared;
  if (!inst_->has_directional()) return partial_gap::not_exported;
  const auto continuous_real = [](const variable& v) {
    return v.type == var_type::real && v.variab == variability::continuous && !v.is_array;
  };
  if (!continuous_real(md.variables[output_var_[o]])) return partial_gap::output_type;
  if (!continuous_real(md.variables[input_var_[i]])) return partial_gap::input_type;
  return partial_gap::none;
}

bool fmu_subsystem::provides_partial(std::size_t o, std::size_t i) const noexcept {
  return output_depends_on(o, i) && missing_for_partial(o, i) == partial_gap::none;
}

std::string fmu_subsystem::partial_refusal(std::size_t o, std::size_t i) const {
  const model_description& md = fmu_->file().md;
  const char* flag = names_->directional_flag;
  const auto not_real = [&](std::size_t k) {
    return "FMU '" + where_ + "': '" + md.variables[k].name +
           "' is not a continuous Real (Float64) scalar, which directional derivatives need";
  };
  switch (missing_for_partial(o, i)) {
    case partial_gap::undeclared:
      return "FMU '" + where_ + "' does not declare " + flag + " in its modelDescription.xml";
    case partial_gap::not_exported:
      return "FMU '" + where_ + "' declares " + flag + ", but its binary does not export " +
             names_->get_directional;
    case partial_gap::output_type:
      return not_real(output_var_[o]);
    case partial_gap::input_type:
      return not_real(input_var_[i]);
    case partial_gap::none:
      break;
  }
  return {};
}

double fmu_subsystem::do_output_partial(std::size_t o, std::size_t i) noexcept {
  // d y / d u with seed 1 at the current communication point: allowed after a completed
  // step; the inputs were set at that point (update_outputs).
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  // Also at the point where the FMU ended the simulation after completing its step.
  if ((phase_ != phase::initialized && phase_ != phase::terminated) ||
      (stop_ != fmu_stop::none && !end_pending_))
    return nan;
  const model_description& md = fmu_->file().md;
  const std::uint32_t out = md.variables[output_var_[o]].value_reference;
  const std::uint32_t in = md.variables[input_var_[i]].value_reference;
  const double seed = 1.0;
  double d = nan;
  const int st = inst_->get_directional(out, in, seed, &d);
  if (st > fmi2Warning) {
    (void)fail_call(names_->get_directional, st, fmu_time(comm_t_));
    return nan;
  }
  if (!std::isfinite(d))
    (void)fail(fmu_stop::failed, names_->nonfinite_partial, no_fmu_status, fmu_time(comm_t_));
  return d;
}

}  // namespace cosim::fmi
