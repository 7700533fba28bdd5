#pragma once
// Default internal steps of the crane subsystem types (types_crane.cpp), shared with the
// crane and crane2 presets' subsystem lists so both give the same step. Internal to
// rt_config.

namespace cosim::config::crane_steps {

/// h_M = H (003 Sect. 5).
double multibody(double H);
/// h_H = min(H, 0.2 ms), the largest step <= 0.2 ms dividing H exactly (003 Sect. 5: the
/// forward-Euler limit; 001 Sect. 5.1: h_S = 0.2 ms).
double hydraulics(double H);

}  // namespace cosim::config::crane_steps
