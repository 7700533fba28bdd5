#pragma once
// [dds] and remote subsystems (host = "dds"; docs/distributed.md): reading, printing back,
// and the options a proxy or worker gets.
#include <string>
#include <vector>

#include "cosim/dds/remote.hpp"
#include "cosim/rt_config/config_reader.hpp"
#include "cosim/rt_config/scenario.hpp"

namespace cosim::config {

/// Reads [dds] into sc.dds and refuses what remote subsystems cannot do (after the
/// subsystems and run.delivery are read).
void read_dds(config_reader& r, scenario& sc);
/// [dds] as system-file lines (nothing when no subsystem is remote and [dds] is default).
std::string dds_toml(const scenario& sc);
std::vector<key_doc> dds_keys();
/// Warns once per process (spdlog) when remote subsystems run without [dds.security].
void warn_unauthenticated_dds(const scenario& sc);
/// The proxy's / worker's options: [dds], with the macro step as DDS deadline.
dds::remote_options remote_options_of(const scenario& sc);
/// host = "process": starts `cosim worker` for subsystem `name` with the scenario's file and
/// --set overrides, in a partition of its own (set into `o`), loopback-only when it can.
std::unique_ptr<dds::worker_process> start_worker(const scenario& sc, const std::string& name,
                                                  dds::remote_options& o);

}  // namespace cosim::config
