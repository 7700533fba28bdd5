#pragma once
// `cosim worker SYSTEM --subsystem NAME` (docs/distributed.md): builds the system exactly
// as the master does, but with every subsystem local, and serves subsystem NAME (declared
// host = "dds" or "process") to the master's proxy over DDS.
#include <string>

#include "cosim/dds/remote.hpp"
#include "cosim/rt_config/scenario.hpp"

namespace cosim::config {

/// Throws cosim::error (exit 2) if NAME is not a remote subsystem of `sc`.
dds::worker_outcome serve_worker(scenario sc, const std::string& name, const stop_source* stop);

/// The program a host = "process" subsystem's worker runs as `PROGRAM worker ...`: the
/// environment's COSIM_WORKER_EXE if set, else the one set here (cosim's main sets
/// /proc/self/exe: the running cosim). Empty: none, and such a subsystem is refused.
void set_worker_program(const std::string& path);
std::string worker_program();

}  // namespace cosim::config
