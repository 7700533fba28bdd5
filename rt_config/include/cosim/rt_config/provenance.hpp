#pragma once
// Where and with what a run ran, for summary.json: the software (version.hpp), the host
// (name, kernel, PREEMPT_RT, CPU model, isolated CPUs) and the start time. Kept with the
// results so that a bench run can be traced and judged later without the machine.
#include <chrono>
#include <filesystem>
#include <string>

namespace cosim {
class json_writer;
}

namespace cosim::config {

struct host_info {
  std::string hostname;        // /proc/sys/kernel/hostname
  std::string kernel_release;  // /proc/sys/kernel/osrelease, e.g. "6.1.0-18-rt-amd64"
  std::string kernel_version;  // /proc/sys/kernel/version, e.g. "#1 SMP PREEMPT_RT ..."
  bool preempt_rt = false;     // /sys/kernel/realtime = 1, or PREEMPT_RT in the version
  std::string cpu_model;       // first "model name" of /proc/cpuinfo ("" if none)
  std::string isolated_cpus;   // /sys/devices/system/cpu/isolated, e.g. "2-3" ("" if none)
};

/// Reads the host below `root` ("/" for this machine; a test hands a directory laid out
/// like /proc and /sys). A file that cannot be read leaves its field empty.
host_info read_host_info(const std::filesystem::path& root = "/");

/// UTC, ISO 8601 to the millisecond: "2026-11-28T09:58:45.123Z".
std::string utc_iso8601(std::chrono::system_clock::time_point t);

/// "software": {version, commit, build_type, compiler}.
void write_software_json(json_writer& j);
/// "host": {hostname, kernel, kernel_version, preempt_rt, cpu_model, isolated_cpus}.
void write_host_json(json_writer& j, const host_info& h);

}  // namespace cosim::config
