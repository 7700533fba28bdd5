#include "dds_config.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <sstream>

#include <spdlog/spdlog.h>
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

using security_files = dds_config::security_files;

// [dds.security]'s keys, each with where its value goes.
struct security_key {
  const char* name;
  std::string security_files::*file;
  const char* doc;
};
const std::vector<security_key>& security_keys() {
  static const std::vector<security_key> keys = {
      {"identity_ca", &security_files::identity_ca,
       "CA certificate (PEM) that signed every identity of the bench"},
      {"identity_certificate", &security_files::identity_certificate,
       "this process's identity certificate (PEM; a worker sets its own with --set)"},
      {"private_key", &security_files::private_key,
       "the identity's private key (PEM, mode 0600; a worker sets its own with --set)"},
      {"permissions_ca", &security_files::permissions_ca,
       "CA certificate (PEM) that signed governance and permissions"},
      {"governance", &security_files::governance,
       "signed governance document (S/MIME, tools/scripts/cosim_pki.sh)"},
      {"permissions", &security_files::permissions,
       "signed permissions document (S/MIME, tools/scripts/cosim_pki.sh)"},
  };
  return keys;
}

// [dds.security]: all six files or none; each relative to the system file, existing and
// readable; the private key private to its owner.
void read_security(config_reader& r, dds_config& d) {
  bool any = false;
  for (const security_key& k : security_keys())
    any = any || r.has(std::string("dds.security.") + k.name);
  if (!any) return;
  const std::filesystem::path base = std::filesystem::path(r.file()).parent_path();
  for (const security_key& k : security_keys()) {
    const std::string key = std::string("dds.security.") + k.name;
    const auto v = r.opt_string(key);
    if (!v || v->empty())
      r.fail(key.substr(0, key.rfind('.')),
             std::string("needs ") + k.name +
                 " too: DDS Security takes identity_ca, identity_certificate, private_key, "
                 "permissions_ca, governance and permissions (tools/scripts/cosim_pki.sh "
                 "creates them)");
    std::filesystem::path path = *v;
    if (path.is_relative()) path = base / path;
    path = std::filesystem::absolute(path).lexically_normal();
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
      r.fail(key, path.string() + ": " +
                      std::strerror(errno));  // NOLINT(concurrency-mt-unsafe): setup, one thread
    if (!S_ISREG(st.st_mode)) r.fail(key, path.string() + ": not a regular file");
    if (::access(path.c_str(), R_OK) != 0) r.fail(key, path.string() + ": cannot be read");
    if (k.file == &security_files::private_key && (st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
      char mode[8];
      std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
      r.fail(key, path.string() + ": the private key is accessible to group or others (mode " +
                      mode + "); chmod 600 " + path.string());
    }
    d.security.*k.file = path.string();
  }
}

}  // namespace

// Set in the environment of the workers a master starts, once it has warned.
constexpr const char* warned_env = "COSIM_DDS_UNAUTHENTICATED_WARNED";

void warn_unauthenticated_dds(const scenario& sc) {
  bool any = false, all_process = true;
  for (const auto& [name, c] : sc.subsystems) {
    any = any || c.remote;
    all_process = all_process && (!c.remote || c.process);
  }
  if (!any || !sc.dds.security.identity_ca.empty()) return;
  // Once per process: a sweep builds the system again for every run. A worker the master
  // started itself (host = "process") leaves it to the master.
  static std::atomic<bool> warned{false};
  if (warned.exchange(true)) return;
  // NOLINTNEXTLINE(concurrency-mt-unsafe): read only, set by the master before the exec
  if (const char* e = std::getenv(warned_env); e != nullptr && *e == '1') return;
  spdlog::warn(
      "DDS traffic of remote subsystems is not authenticated (no [dds.security]): anyone {} "
      "on DDS domain {} can read every step and forge commands and replies; see "
      "docs/distributed.md, \"Security\"",
      all_process ? "on this machine" : "on the network", sc.dds.domain);
}

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
  read_security(r, d);
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
      d.max_missed == def.max_missed && d.shared_memory == def.shared_memory &&
      d.security.identity_ca.empty())
    return {};
  std::ostringstream o;
  o.precision(17);
  o << "\n[dds]\ndomain = " << d.domain << "\npartition = \"" << d.partition << "\"\n"
    << "lease = " << d.lease << "\ntimeout = " << d.timeout
    << "\ndiscovery_timeout = " << d.discovery_timeout << "\n";
  if (d.max_missed != def.max_missed) o << "max_missed = " << d.max_missed << "\n";
  if (d.shared_memory) o << "shared_memory = true\n";
  if (!d.security.identity_ca.empty()) {
    o << "\n[dds.security]\n";
    for (const security_key& k : security_keys())
      o << k.name << " = " << toml::value<std::string>(d.security.*k.file) << "\n";
  }
  return o.str();
}

std::vector<key_doc> dds_keys() {
  std::vector<key_doc> keys = {
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
  for (const security_key& k : security_keys())
    keys.push_back({std::string("dds.security.") + k.name,
                    std::string("DDS Security: ") + k.doc +
                        "; relative to the system file; all six keys or none"});
  return keys;
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
  o.macro_step_ns = to_duration(sc.run.macro_step).count();
  const dds_config::security_files& f = sc.dds.security;
  o.security = {f.identity_ca,    f.identity_certificate, f.private_key,
                f.permissions_ca, f.governance,           f.permissions};
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
  if (sc.dds.security.identity_ca.empty()) p.env.push_back(std::string(warned_env) + "=1");
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
  warn_unauthenticated_dds(sc);
  // The same build as the master's (parameters, initialisation, orders, corrections, step),
  // with the real subsystem in place of the proxy.
  for (auto& [n, c] : sc.subsystems) c.remote = c.process = false;
  const std::unique_ptr<built_scenario> b = build(sc);
  return dds::serve_subsystem(b->sys.at(b->sys.index_of(name)), o, stop);
}

}  // namespace cosim::config
