#pragma once
// [drivers.<name>] sections: UDP driver subsystems (docs/drivers.md). Defined in
// driver_config.cpp.
#include "cosim/rt_config/config_reader.hpp"
#include "cosim/rt_config/scenario.hpp"

namespace cosim::config {

/// Reads and checks every [drivers.<name>] table into sc.drivers; adds each driver to
/// sc.subsystems (step = H) and to the end of sc.run.order.
void read_drivers(config_reader& r, scenario& sc);
/// [[events]] (docs/ci.md): after read_drivers. Only the driver fault "silence" so far.
void read_events(config_reader& r, scenario& sc);

/// Adds the driver subsystems (binding their sockets) and connects output drivers'
/// `from` ports. Idempotent: a model that needs a driver output during its own build
/// calls it first; build() calls it again after the model. Throws cosim::error naming
/// drivers.<name>.<key>.
void add_drivers(const scenario& sc, built_scenario& b);

/// Reads model.<key> = "manoeuvre" (default) | "driver:<name>.<channel>" into sc.options.
void read_signal_source(config_reader& r, scenario& sc, const std::string& key);

/// If sc.options[key] names a driver channel: adds the drivers, sets that channel's
/// value before the first packet to `initial` (unless the scenario set one) and connects
/// it to `target` ("subsystem.port"); returns true. Returns false for "manoeuvre".
bool connect_driver_source(const scenario& sc, built_scenario& b, const std::string& key,
                           const std::string& target, double initial);

/// Connects input driver channel "NAME.CHANNEL" to `target`, setting the channel's value
/// before the first packet to `initial` unless the scenario set one. Throws cosim::error.
void connect_driver_channel(const scenario& sc, built_scenario& b, const std::string& ref,
                            const std::string& target, double initial);

/// Keys for --help.
std::vector<key_doc> driver_keys();

}  // namespace cosim::config
