#pragma once
// Model keys shared by the crane models (crane, crane2): the coupling interface
// (direct or RIM, 001 Sect. 3) and the valve command, a named manoeuvre or one of the
// test inputs of 002 Eqs. (12)-(15).
#include <string>
#include <vector>

#include "cosim/rt_config/config_reader.hpp"
#include "cosim/rt_config/scenario.hpp"
#include "cosim/subsystems/rim_hydraulics.hpp"

namespace cosim::config::crane_keys {

/// model.interface ("direct" | "rim"), model.force_output ("sample" | "mean", RIM only)
/// and model.rim_sync ("reset" | "project", RIM only). `rim_unavailable` is empty when the model
/// can provide M-tilde and f-tilde in this configuration, else the reason it cannot (the error
/// names model.interface).
void read_interface(config_reader& r, scenario& sc, const std::string& rim_unavailable);

/// model.manoeuvre: one of `named` or step | ramp | impulse | sine, with model.test_amplitude,
/// model.test_time, model.test_width and model.test_frequency for the test inputs.
void read_manoeuvre(config_reader& r, scenario& sc, const std::vector<std::string>& named);

[[nodiscard]] bool is_test_input(const scenario& sc);

[[nodiscard]] rim::interface_kind interface_of(const scenario& sc);
/// model.rim_sync = "project": the multibody follows the RIM's interface state. Throws
/// cosim::error naming the key unless the scheme lets the RIM step first.
[[nodiscard]] bool rim_follows(const scenario& sc);

/// Keys documented for --help / README.
std::vector<key_doc> docs(const std::string& named_manoeuvres);

}  // namespace cosim::config::crane_keys
