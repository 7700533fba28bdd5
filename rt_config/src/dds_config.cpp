#include "dds_config.hpp"

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <sstream>

#include "cosim/rt_config/model_registry.hpp"
#include "cosim/rt_config/worker.hpp"
#include "cosim/runtime/json_writer.hpp"

namespace cosim::config {

namespace {

// Cyclone maps a domain id to UDP ports 7400 + 250 * domain + ...; 230 is its largest id.
constexpr std::int64_t max_domain = 230;
// Each tolerated miss leaves one more command in flight: the topics keep max_missed + 1.
constexpr std::int64_t max_missed_limit = 1000;

void read_seconds(config_reader& r, const std::string& key, double& out) {
  if (auto v = r.opt_double(key)) {
    check_positive(r, key, *v);
    if (*v > 3600.0) r.fail(key, "must be at most 3600 s");
    // Waits are counted in whole nanoseconds: 0 would mean "no wait at all".
    if (to_duration(*v).count() == 0) r.fail(key, "must be at least 1 ns (it rounds to 0)");
    out = *v;
  }
}

}  // namespace

void read_dds(config_reader& r, scenario& sc) {
  dds_config& d = sc.dds;
  if (auto v = r.opt_int("dds.domain")) {
    if (*v < 0 || *v > max_domain)
      r.fail("dds.domain", "must be an integer from 0 to 230 (a Cyclone DDS domain id)");
    d.domain = *v;
  }
  if (auto v = r.opt_string("dds.partition")) {
    if (v->empty() || v->find_first_of("*?[]\\") != std::string::npos)
      r.fail("dds.partition", "must be a non-empty name without wildcards (*?[]\\)");
    d.partition = *v;
  }
  read_seconds(r, "dds.lease", d.lease);
  read_seconds(r, "dds.timeout", d.timeout);
  read_seconds(r, "dds.discovery_timeout", d.discovery_timeout);
  if (auto v = r.opt_int("dds.max_missed")) {
    if (*v < 0 || *v > max_missed_limit)
      r.fail("dds.max_missed", "must be an integer from 0 to 1000 (consecutive missed replies)");
    d.max_missed = *v;
  }
  if (auto v = r.opt_bool("dds.shared_memory")) d.shared_memory = *v;
  bool any = false;
  for (const auto& [name, c] : sc.subsystems) any = any || c.remote;
  if (!any) return;
  const std::string where = sc.preset ? "" : "subsystems.";
  for (const auto& [name, c] : sc.subsystems) {
    if (!c.remote) continue;
    // Fast-step delivery keeps several samples per interval in dense histories; the command
    // carries the newest sample of each input only.
    if (sc.run.fast_step)
      r.fail(where + name + ".host", std::string(c.process ? "\"process\"" : "\"dds\"") +
                                         " cannot be used with run.delivery = \"fast-step\"");
  }
}

std::string dds_toml(const scenario& sc) {
  const dds_config def{};
  const dds_config& d = sc.dds;
  bool any = false;
  for (const auto& [name, c] : sc.subsystems) any = any || c.remote;
  if (!any && d.domain == def.domain && d.partition == def.partition && d.lease == def.lease &&
      d.timeout == def.timeout && d.discovery_timeout == def.discovery_timeout &&
      d.max_missed == def.max_missed && d.shared_memory == def.shared_memory)
    return {};
  std::ostringstream o;
  o.precision(17);
  o << "\n[dds]\ndomain = " << d.domain << "\npartition = \"" << d.partition << "\"\n"
    << "lease = " << d.lease << "\ntimeout = " << d.timeout
    << "\ndiscovery_timeout = " << d.discovery_timeout << "\n";
  if (d.max_missed != def.max_missed) o << "max_missed = " << d.max_missed << "\n";
  if (d.shared_memory) o << "shared_memory = true\n";
  return o.str();
}

std::vector<key_doc> dds_keys() {
  return {
      {"dds.domain", "DDS domain id of remote subsystems, 0-230 (default 0)"},
      {"dds.partition", "DDS partition of their step topics (default \"cosim\")"},
      {"dds.lease", "liveliness lease [s] of master and worker (default 1): remote_lost"},
      {"dds.timeout", "longest wait for one reply in the run [s] (default 5): remote_deadline"},
      {"dds.discovery_timeout",
       "wait for the worker, and for its initialize/start replies [s] (default 30)"},
      {"dds.max_missed",
       "consecutive replies later than dds.timeout held at the last reply, 0-1000 (default 0): "
       "then remote_deadline"},
      {"dds.shared_memory",
       "true: Cyclone's iceoryx shared memory between processes on one host (iox-roudi "
       "must run; no deadline QoS) (default false)"},
  };
}

dds::remote_options remote_options_of(const scenario& sc) {
  dds::remote_options o;
  o.domain = static_cast<std::uint32_t>(sc.dds.domain);
  o.partition = sc.dds.partition;
  o.lease_ns = to_duration(sc.dds.lease).count();
  o.timeout_ns = to_duration(sc.dds.timeout).count();
  o.discovery_timeout_ns = to_duration(sc.dds.discovery_timeout).count();
  o.max_missed = sc.dds.max_missed;
  o.deadline_ns = to_duration(sc.run.macro_step).count();
  o.shared_memory = sc.dds.shared_memory;
  return o;
}

std::unique_ptr<dds::worker_process> start_worker(const scenario& sc, const std::string& name,
                                                  dds::remote_options& o) {
  namespace fs = std::filesystem;
  const std::string key = (sc.preset ? "" : "subsystems.") + name + ".host";
  const std::string program = worker_program();
  if (program.empty())
    throw error(errc::config_value,
                sc.file + ": " + key +
                    " = \"process\": this program cannot start `cosim worker` (run it with "
                    "`cosim run`, or set COSIM_WORKER_EXE to the cosim program)");
  std::error_code ec;
  if (!fs::is_regular_file(sc.file, ec))
    throw error(errc::config_value, sc.file + ": " + key +
                                        " = \"process\": the worker reads the system from its "
                                        "file, and this system is not read from a file");
  // A partition of its own per worker: runs on one machine (and the workers of one run)
  // never see each other's samples.
  static std::atomic<int> started{0};
  o.partition = "cosim-proc-" + std::to_string(::getpid()) + "-" + std::to_string(++started);
  dds::process_spec p;
  p.program = program;
  p.argv0 = "cosim";
  p.args = {"worker", fs::absolute(sc.file).string(), "--subsystem", name};
  for (const std::string& s : sc.sets) p.args.insert(p.args.end(), {"--set", s});
  p.args.insert(p.args.end(), {"--set", "dds.partition=" + o.partition});
  // Loopback only, unless the user configured Cyclone (then both follow CYCLONEDDS_URI) or a
  // host = "dds" worker elsewhere shares the master's domain.
  bool all_process = true;
  for (const auto& [n, c] : sc.subsystems) all_process = all_process && (!c.remote || c.process);
  const char* uri = std::getenv("CYCLONEDDS_URI");  // NOLINT(concurrency-mt-unsafe): read only
  if (all_process && (uri == nullptr || *uri == '\0')) {
    o.cyclone_config = dds::loopback_config();
    p.env.push_back("CYCLONEDDS_URI=" + o.cyclone_config);
  }
  p.log_prefix = "[worker " + name + "] ";
  return std::make_unique<dds::worker_process>(p);
}

}  // namespace cosim::config

#include "cosim/rt_config/worker.hpp"

namespace cosim::config {

namespace {
std::mutex program_mutex;
std::string program_path;  // set_worker_program
}  // namespace

void set_worker_program(const std::string& path) {
  const std::lock_guard<std::mutex> lock(program_mutex);
  program_path = path;
}

std::string worker_program() {
  // NOLINTNEXTLINE(concurrency-mt-unsafe): read only
  if (const char* env = std::getenv("COSIM_WORKER_EXE"); env != nullptr && *env != '\0') return env;
  const std::lock_guard<std::mutex> lock(program_mutex);
  return program_path;
}

dds::worker_outcome serve_worker(scenario sc, const std::string& name, const stop_source* stop) {
  const auto it = sc.subsystems.find(name);
  if (it == sc.subsystems.end()) {
    std::string names;
    for (const auto& [n, c] : sc.subsystems) names += (names.empty() ? "" : ", ") + n;
    throw error(errc::config_value, sc.file + ": --subsystem " + name +
                                        ": no such subsystem (subsystems: " + names + ")");
  }
  if (!it->second.remote)
    throw error(errc::config_value, sc.file + ": --subsystem " + name + ": subsystems." + name +
                                        ".host is not \"dds\" or \"process\" (the master "
                                        "runs it itself)");
  const dds::remote_options o = remote_options_of(sc);
  // The same build as the master's (parameters, initialisation, orders, corrections, step),
  // with the real subsystem in place of the proxy.
  for (auto& [n, c] : sc.subsystems) c.remote = c.process = false;
  const std::unique_ptr<built_scenario> b = build(sc);
  return dds::serve_subsystem(b->sys.at(b->sys.index_of(name)), o, stop);
}

}  // namespace cosim::config
