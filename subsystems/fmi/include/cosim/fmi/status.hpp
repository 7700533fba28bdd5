#pragma once
// Names of FMI status values for messages ("fmi2DoStep returned fmi2Discard").
#include "cosim/fmi/fmi2.h"
#include "cosim/fmi/fmi3.h"

namespace cosim::fmi {

[[nodiscard]] const char* status_name(fmi2Status s) noexcept;
[[nodiscard]] const char* status_name(fmi3Status s) noexcept;

}  // namespace cosim::fmi
