#pragma once
// summary.json's "config": the keys to_json (scenario.cpp) does not write itself.
#include "cosim/rt_config/scenario.hpp"

namespace cosim {
class json_writer;
}

namespace cosim::config {

/// Inside "run": ring_capacity, lock_memory, require_realtime, timing_csv, trace.
void write_run_settings_json(json_writer& j, const scenario& sc);
/// "threads", "watchdog", "drivers", with remote subsystems "hosts" and "dds", and
/// "system_toml" (the scenario as the system file `cosim run --print-system` prints).
void write_runtime_config_json(json_writer& j, const scenario& sc);

}  // namespace cosim::config
