// The parts of summary.json's "config" that echo the run-time settings (threads, watchdog,
// drivers, remote subsystems) and the whole system file: with them, the keys in force at the
// run are kept with its results, and `cosim run DIR/summary.json` runs the same system again.
#include "config_echo.hpp"

#include "cosim/runtime/json_writer.hpp"
#include "cosim/runtime/time.hpp"

namespace cosim::config {

void write_run_settings_json(json_writer& j, const scenario& sc) {
  j.key("ring_capacity").value(static_cast<std::int64_t>(sc.rt.ring_capacity));
  j.key("lock_memory").value(sc.rt.lock_memory);
  j.key("require_realtime").value(sc.rt.require_realtime);
  j.key("timing_csv").value(sc.rt.timing_csv);
  j.key("trace").value(sc.rt.trace);
}

void write_runtime_config_json(json_writer& j, const scenario& sc) {
  j.key("plugins").begin_array();
  for (const auto& p : sc.plugins) j.value(p);
  j.end_array();
  j.key("threads").begin_object();
  for (const auto& [name, t] : sc.rt.threads) {
    j.key(name).begin_object();
    j.key("cpu").value(t.cpu);
    j.key("priority").value(t.priority);
    j.key("stack_size").value(static_cast<std::int64_t>(t.stack_size));
    j.key("budget").value(t.budget_s);
    j.end_object();
  }
  j.end_object();
  const watchdog_setup& w = sc.rt.watchdog;
  j.key("watchdog").begin_object();
  j.key("cpu").value(w.cpu);
  j.key("priority").value(w.priority);
  j.key("max_overruns").value(w.max_overruns);
  j.key("leak_steps").value(w.leak_steps);
  j.key("grace").value(static_cast<double>(w.grace_ns) / 1e9);  // 0.3, not 0.30000000000000004
  j.end_object();
  j.key("drivers").begin_object();
  for (const auto& d : sc.drivers) {
    const bool input = d.direction == drivers::driver_direction::input;
    j.key(d.name).begin_object();
    j.key("direction").value(input ? "input" : "output");
    j.key("backend").value(d.backend);
    j.key("bind").value(d.bind);
    j.key("type").value(d.type == drivers::message_type::command         ? "command"
                        : d.type == drivers::message_type::valve_command ? "valve_command"
                                                                         : "valve_feedback");
    const auto per_channel = [&](const char* key, auto&& get) {
      j.key(key).begin_array();
      for (const auto& c : d.channels) j.value(get(c));
      j.end_array();
    };
    per_channel("channels", [](const drivers::channel_config& c) { return c.name; });
    per_channel("units", [](const drivers::channel_config& c) { return c.unit; });
    per_channel("min", [](const drivers::channel_config& c) { return c.min; });
    per_channel("max", [](const drivers::channel_config& c) { return c.max; });
    if (input) {
      j.key("peers").begin_array();
      for (const auto& p : d.peers) j.value(p);
      j.end_array();
      per_channel("initial", [](const drivers::channel_config& c) { return c.initial; });
      j.key("stale_after").value(d.stale_after);
      j.key("stop_after").value(d.stop_after);
      j.key("startup_timeout").value(d.startup_timeout);
    } else {
      j.key("to").value(d.to);
      per_channel("from", [](const drivers::channel_config& c) { return c.from; });
      per_channel("safe_value", [](const drivers::channel_config& c) { return c.safe_value; });
      j.key("safe_repeats").value(d.safe_repeats);
    }
    // The key file's path, never the key: the summary must not carry the secret.
    j.key("auth").value(d.auth == drivers::driver_auth::none ? "none" : "hmac-sha512-256");
    if (!d.key_file.empty()) j.key("key_file").value(d.key_file);
    j.key("cpu").value(d.cpu);
    j.key("priority").value(d.priority);
    j.end_object();
  }
  j.end_object();
  bool remote = false;
  for (const auto& [name, cfg] : sc.subsystems) remote = remote || cfg.remote;
  if (remote) {
    j.key("hosts").begin_object();
    for (const auto& [name, cfg] : sc.subsystems)
      if (cfg.remote) j.key(name).value(cfg.process ? "process" : "dds");
    j.end_object();
    j.key("dds").begin_object();
    j.key("domain").value(sc.dds.domain);
    j.key("partition").value(sc.dds.partition);
    j.key("lease").value(sc.dds.lease);
    j.key("timeout").value(sc.dds.timeout);
    j.key("discovery_timeout").value(sc.dds.discovery_timeout);
    j.key("max_missed").value(sc.dds.max_missed);
    j.key("shared_memory").value(sc.dds.shared_memory);
    // Whether the step topics were authenticated, access-controlled and encrypted.
    j.key("secured").value(!sc.dds.security.identity_ca.empty());
    j.end_object();
  }
  // Every key above and every other one, as the system file `--print-system` writes: it runs
  // to the same results.csv (`cosim run DIR/summary.json`).
  j.key("system_toml").value(system_toml(sc));
}

}  // namespace cosim::config
