#pragma once
// A first-order lag, tau y' + y = K u, as a cosim subsystem type written outside the cosim
// tree against the installed plugin API (cosim/rt_config/plugin.hpp).
#include <cosim/rt_config/plugin.hpp>

namespace my_models {

/// "my.first_order_lag": input u [1], output y [1] (no direct feedthrough), variable y.
/// Integrators: "exact" (the input held over each internal step: exact for a piecewise
/// constant input) and "euler" (forward Euler).
cosim::config::subsystem_type first_order_lag_type();

}  // namespace my_models
