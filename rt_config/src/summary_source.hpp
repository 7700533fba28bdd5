#pragma once
// `cosim run DIR/summary.json`: the system a finished run ran, read back from the
// "config"."system_toml" member its summary keeps (config_echo.hpp).
#include <string>

namespace cosim::config {

/// True when `path` names a JSON file (a run's summary.json).
bool is_summary_path(const std::string& path);
/// The system file text of the summary at `path`; throws cosim::error (config_value) naming
/// the file when it cannot be read, is not JSON or has no config.system_toml.
std::string read_summary_system(const std::string& path);

}  // namespace cosim::config
