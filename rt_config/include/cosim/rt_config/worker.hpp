#pragma once
// `cosim worker SYSTEM --subsystem NAME` (docs/distributed.md): builds the system exactly
// as the master does, but with every subsystem local, and serves subsystem NAME (declared
// host = "dds") to the master's proxy over DDS.
#include <string>

#include "cosim/dds/remote.hpp"
#include "cosim/rt_config/scenario.hpp"

namespace cosim::config {

/// Throws cosim::error (exit 2) if NAME is not a remote subsystem of `sc`.
dds::worker_outcome serve_worker(scenario sc, const std::string& name, const stop_source* stop);

}  // namespace cosim::config
