#include "cosim/runtime/stop_source.hpp"

namespace cosim {

const char* to_string(stop_cause c) noexcept {
  switch (c) {
    case stop_cause::none:
      return "end_time";
    case stop_cause::operator_signal:
      return "operator_signal";
    case stop_cause::stale_input:
      return "stale_input";
    case stop_cause::deadline:
      return "deadline";
    case stop_cause::stall:
      return "stall";
    case stop_cause::energy_residual:
      return "energy_residual";
    case stop_cause::residual_power:
      return "residual_power";
    case stop_cause::non_finite:
      return "non_finite";
    case stop_cause::output_error:
      return "output_error";
    case stop_cause::error:
      return "error";
    case stop_cause::model_end:
      return "model_end";
    case stop_cause::model_error:
      return "model_error";
    case stop_cause::no_convergence:
      return "no_convergence";
    case stop_cause::remote_deadline:
      return "remote_deadline";
    case stop_cause::remote_lost:
      return "remote_lost";
    case stop_cause::alarm:
      return "alarm";
    case stop_cause::lockstep_device:
      return "lockstep_device";
  }
  return "error";
}

}  // namespace cosim
