#include "cosim/rt_config/provenance.hpp"

#include <ctime>
#include <fstream>
#include <sstream>

#include "cosim/runtime/json_writer.hpp"
#include "cosim/runtime/version.hpp"

namespace cosim::config {

namespace {

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

std::string read_trimmed(const std::filesystem::path& p) {
  std::ifstream in(p);
  if (!in) return {};
  std::ostringstream s;
  s << in.rdbuf();
  return trim(s.str());
}

}  // namespace

host_info read_host_info(const std::filesystem::path& root) {
  host_info h;
  h.hostname = read_trimmed(root / "proc/sys/kernel/hostname");
  h.kernel_release = read_trimmed(root / "proc/sys/kernel/osrelease");
  h.kernel_version = read_trimmed(root / "proc/sys/kernel/version");
  // As `cosim doctor` decides: the RT kernel's flag file, or its version string.
  h.preempt_rt = read_trimmed(root / "sys/kernel/realtime") == "1" ||
                 h.kernel_version.find("PREEMPT_RT") != std::string::npos;
  h.isolated_cpus = read_trimmed(root / "sys/devices/system/cpu/isolated");
  std::ifstream cpuinfo(root / "proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos || trim(line.substr(0, colon)) != "model name") continue;
    h.cpu_model = trim(line.substr(colon + 1));
    break;
  }
  return h;
}

std::string utc_iso8601(std::chrono::system_clock::time_point t) {
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm utc{};
  gmtime_r(&secs, &utc);
  char buf[40];
  const std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(buf + n, sizeof buf - n, ".%03lldZ", static_cast<long long>(ms % 1000));
  return buf;
}

void write_software_json(json_writer& j) {
  const build_info& b = build();
  j.key("software").begin_object();
  j.key("version").value(b.version);
  j.key("commit").value(b.commit);
  j.key("build_type").value(b.build_type);
  j.key("compiler").value(b.compiler);
  j.end_object();
}

void write_host_json(json_writer& j, const host_info& h) {
  j.key("host").begin_object();
  j.key("hostname").value(h.hostname);
  j.key("kernel").value(h.kernel_release);
  j.key("kernel_version").value(h.kernel_version);
  j.key("preempt_rt").value(h.preempt_rt);
  j.key("cpu_model").value(h.cpu_model);
  j.key("isolated_cpus").value(h.isolated_cpus);
  j.end_object();
}

}  // namespace cosim::config
