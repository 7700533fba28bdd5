#pragma once
// The [run] keys of iterative coupling (000 Sect. 2.3; executor.hpp iteration_options):
// run.iterations, run.iteration_tolerance = {rel, abs}, run.relaxation (a number, "aitken"
// or "iqn"), run.relaxation_initial, run.iqn_reuse, run.on_no_convergence.
#include <string>
#include <vector>

#include "cosim/rt_config/config_reader.hpp"
#include "cosim/rt_config/scenario.hpp"
#include "cosim/runtime/json_writer.hpp"

namespace cosim::config::iteration_keys {

/// Reads the keys into sc.run.iteration; refuses iterations in threaded/realtime mode and
/// with drivers (after read_drivers).
void read(config_reader& r, scenario& sc);
/// The resolved keys in summary.json's config.run (nothing when iterations are off).
void write_json(json_writer& j, const iteration_options& o);
/// The keys as [run] lines of a system file (nothing when iterations are off).
std::string toml(const iteration_options& o);
std::vector<key_doc> docs();

}  // namespace cosim::config::iteration_keys
