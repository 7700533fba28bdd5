#pragma once
// Reading a system file's open description (system_file.cpp), and building a system from
// a system_spec (system_build.cpp). Internal to rt_config.
#include <string>
#include <vector>

#include "cosim/rt_config/config_reader.hpp"
#include "cosim/rt_config/scenario.hpp"

namespace cosim::config {

/// Throws cosim::error (config_value) naming where `key` of `o` is, the key and why.
[[noreturn]] void fail(const origin& o, const std::string& key, const std::string& why);

/// Elements of the array of tables `key` ([[key]] sections); 0 when absent.
std::size_t array_size(config_reader& r, const std::string& key);
/// Keys of table `key` other than `allowed` are refused, listing what is allowed here
/// (check_all_read would report them too, without the list).
void only_keys(config_reader& r, const std::string& key, const std::vector<std::string>& allowed);
/// Where table `key` and each of its keys are.
origin table_origin(config_reader& r, const std::string& key);

/// Reads [subsystems.NAME] type and parameters into sc.system (in file order) and returns
/// the names. Step, integrator and multirate keys are read by the scenario reader.
std::vector<std::string> read_system_subsystems(config_reader& r, scenario& sc);

/// Reads [[initialization]], [[connections]], [[bonds]], [[sources]] and [output].
void read_system_rest(config_reader& r, scenario& sc);

/// Builds sc.system into b.sys: resolved parameters, initialisation steps, subsystems,
/// sources, connections, bonds, recorded columns; checks completeness and algebraic loops.
void build_system(const scenario& sc, built_scenario& b);

/// Per-connection extrapolation / hold of sc.system, after the [coupling] defaults.
void apply_connection_orders(const scenario& sc, built_scenario& b);

/// Energy-based correction (energy_correction.hpp) from [coupling], [[bonds]] and
/// [[connections]] energy_correction; refuses a connection outside every bond.
void apply_energy_correction(const scenario& sc, built_scenario& b);
/// coupling.feedthrough_correction and [[connections]] feedthrough_correction
/// (feedthrough_correction.hpp); refused outside plain single-machine Jacobi.
void apply_feedthrough_correction(const scenario& sc, built_scenario& b);

}  // namespace cosim::config
