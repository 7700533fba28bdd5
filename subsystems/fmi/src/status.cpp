#include "cosim/fmi/status.hpp"

namespace cosim::fmi {

const char* status_name(fmi2Status s) noexcept {
  switch (s) {
    case fmi2OK:
      return "fmi2OK";
    case fmi2Warning:
      return "fmi2Warning";
    case fmi2Discard:
      return "fmi2Discard";
    case fmi2Error:
      return "fmi2Error";
    case fmi2Fatal:
      return "fmi2Fatal";
    case fmi2Pending:
      return "fmi2Pending";
  }
  return "unknown fmi2Status";
}

const char* status_name(fmi3Status s) noexcept {
  switch (s) {
    case fmi3OK:
      return "fmi3OK";
    case fmi3Warning:
      return "fmi3Warning";
    case fmi3Discard:
      return "fmi3Discard";
    case fmi3Error:
      return "fmi3Error";
    case fmi3Fatal:
      return "fmi3Fatal";
  }
  return "unknown fmi3Status";
}

}  // namespace cosim::fmi
