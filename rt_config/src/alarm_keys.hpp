#pragma once
// [[alarms]] (alarm.hpp): limits on any results column or recorded variable, in scenario
// and system files alike.
#include <string>
#include <vector>

#include "cosim/rt_config/config_reader.hpp"
#include "cosim/rt_config/scenario.hpp"
#include "cosim/runtime/json_writer.hpp"

namespace cosim::config::alarm_keys {

/// Reads every [[alarms]] table into sc.alarms, after the system (sc.system) is known: a
/// variable is a results column, or a "subsystem.variable" that is then recorded too.
void read(config_reader& r, scenario& sc);
/// summary.json's config.alarms (nothing without alarms).
void write_json(json_writer& j, const std::vector<alarm_config>& alarms);
std::vector<key_doc> docs();

}  // namespace cosim::config::alarm_keys
