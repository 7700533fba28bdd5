// [drivers.<name>] sections of a scenario: UDP input and output drivers.
#include <spdlog/spdlog.h>

#include <cmath>
#include <limits>

#include "cosim/drivers/udp_backend.hpp"
#include "cosim/drivers/udp_driver.hpp"
#include "cosim/rt_config/driver_wiring.hpp"
#include "cosim/rt_config/model_registry.hpp"
#include "cosim/runtime/json_writer.hpp"
#include "cosim/runtime/rt_thread.hpp"

namespace cosim::config {

namespace {

// A driver's time limit: counted in whole nanoseconds (64 bits) on its I/O path, so it must
// neither round to 0 (every datagram late) nor overflow (the limit silently gone).
void check_seconds(config_reader& r, const std::string& key, double v) {
  check_positive(r, key, v);
  if (v > 1e9) r.fail(key, "must be at most 1e9 s");
  if (to_duration(v).count() == 0) r.fail(key, "must be at least 1 ns (it rounds to 0)");
}

/// `endpoint`: an address datagrams go to or must come from (a `to`, a `peers` entry), where
/// port 0 and the wildcard / broadcast addresses match or reach nothing: every send would
/// fail, or every datagram be rejected, without a word.
void check_address(config_reader& r, const std::string& key, const std::string& text,
                   bool endpoint = false) {
  sockaddr_in a{};
  if (!drivers::parse_udp_address(text, a))
    r.fail(key, "\"" + text +
                    "\" must be an IPv4 \"host:port\" address (a numeric address or a name "
                    "that resolves to one)");
  if (!endpoint) return;
  if (a.sin_port == 0)
    r.fail(key, "\"" + text + "\": port 0 names no peer; give the device's port");
  if (a.sin_addr.s_addr == htonl(INADDR_ANY) || a.sin_addr.s_addr == htonl(INADDR_BROADCAST))
    r.fail(key,
           "\"" + text + "\": 0.0.0.0 and 255.255.255.255 name no single device; give its address");
}

/// A value the driver itself puts on a channel (fail-safe output, initial input) must be one
/// the channel allows: finite and within [min, max].
void check_in_range(config_reader& r, const std::string& key, const std::vector<double>& v,
                    const std::vector<drivers::channel_config>& channels) {
  for (std::size_t i = 0; i < v.size() && i < channels.size(); ++i) {
    const drivers::channel_config& c = channels[i];
    if (!std::isfinite(v[i]) || v[i] < c.min || v[i] > c.max)
      r.fail(key, "value " + std::to_string(i + 1) + " (" + format_double(v[i]) + ", channel \"" +
                      c.name + "\") must be finite and within min .. max = " +
                      format_double(c.min) + " .. " + format_double(c.max));
  }
}

/// `auth` and `key_file`: authenticated unless the scenario says auth = "none"; the key
/// file must exist, hold 64 hex digits and be private to its owner.
void read_driver_auth(config_reader& r, const std::string& base, drivers::driver_config& d) {
  const std::string auth = r.opt_string(base + ".auth").value_or("hmac-sha512-256");
  check_choice(r, base + ".auth", auth, {"hmac-sha512-256", "none"});
  if (auth == "none") {
    d.auth = drivers::driver_auth::none;
    if (r.has(base + ".key_file"))
      r.fail(base + ".key_file", "is not used with auth = \"none\" (remove one of the two)");
    return;
  }
  d.auth = drivers::driver_auth::hmac_sha512_256;
  const auto file = r.opt_string(base + ".key_file");
  if (!file || file->empty())
    r.fail(base + ".key_file",
           "is required: bench datagrams are authenticated with a shared key (create one with "
           "`cosim-device keygen FILE`, give the same FILE to the device with --key), or set " +
               base + ".auth = \"none\" for an unauthenticated bench");
  try {
    d.key = drivers::read_key_file(*file, base + ".key_file");
  } catch (const error& e) {
    throw error(errc::config_value, r.where(base + ".key_file") + ": " + e.what());
  }
  d.key_file = *file;
}

std::vector<double> per_channel(config_reader& r, const std::string& key, std::size_t n,
                                double dflt) {
  auto v = r.opt_double_list(key);
  if (!v) return std::vector<double>(n, dflt);
  if (v->size() != n) r.fail(key, "must have one value per channel (" + std::to_string(n) + ")");
  return *v;
}

}  // namespace

void read_drivers(config_reader& r, scenario& sc) {
  for (const std::string& name : r.table_keys("drivers")) {
    const std::string base = "drivers." + name;
    if (sc.subsystems.count(name) != 0) r.fail(base, "a subsystem with this name already exists");
    drivers::driver_config d;
    d.name = name;
    const std::string dir = r.get_string(base + ".direction");
    check_choice(r, base + ".direction", dir, {"input", "output"});
    d.direction =
        dir == "input" ? drivers::driver_direction::input : drivers::driver_direction::output;
    d.backend = r.opt_string(base + ".backend").value_or("asio");
    check_choice(r, base + ".backend", d.backend, {"asio", "io_uring"});
    if (d.backend == "io_uring" && !drivers::uring_available())
      r.fail(base + ".backend", "io_uring is not available: cosim was built without liburing");
    d.bind = r.opt_string(base + ".bind").value_or(d.bind);
    check_address(r, base + ".bind", d.bind);
    const std::string type =
        r.opt_string(base + ".type")
            .value_or(d.direction == drivers::driver_direction::input ? "command"
                                                                      : "valve_command");
    check_choice(r, base + ".type", type, {"command", "valve_command", "valve_feedback"});
    d.type = type == "command"         ? drivers::message_type::command
             : type == "valve_command" ? drivers::message_type::valve_command
                                       : drivers::message_type::valve_feedback;
    auto channels = r.opt_string_list(base + ".channels");
    if (!channels || channels->empty() || channels->size() > drivers::max_channels)
      r.fail(base + ".channels", "must list 1 to 16 channel names");
    for (std::size_t i = 0; i < channels->size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if ((*channels)[i] == (*channels)[j])
          r.fail(base + ".channels", "\"" + (*channels)[i] +
                                         "\" is named twice (each channel is one port, " +
                                         base.substr(8) + "." + (*channels)[i] + ")");
    const std::size_t n = channels->size();
    const auto mins = per_channel(r, base + ".min", n, -std::numeric_limits<double>::infinity());
    const auto maxs = per_channel(r, base + ".max", n, std::numeric_limits<double>::infinity());
    // The wire carries bare numbers; the unit makes the channel's port connect only to ports
    // of the same unit, like every other connection (default "1": a command, an opening).
    std::vector<std::string> units(n, "1");
    if (r.has(base + ".units")) {
      const auto u = r.opt_string_list(base + ".units");
      if (!u || u->size() != n)
        r.fail(base + ".units", "must list one unit per channel (" + std::to_string(n) +
                                    "), e.g. [\"m\"] or [\"1\"]");
      for (const auto& x : *u)
        if (x.empty() || x.find_first_of(" \t[],") != std::string::npos)
          r.fail(base + ".units", "\"" + x + "\" is not a unit (e.g. \"m\", \"Pa\", \"1\")");
      units = *u;
    }
    for (std::size_t i = 0; i < n; ++i) {
      drivers::channel_config c;
      c.name = (*channels)[i];
      c.unit = units[i];
      c.min = mins[i];
      c.max = maxs[i];
      if (!(c.min <= c.max)) r.fail(base + ".min", "must not exceed max");
      d.channels.push_back(c);
    }
    if (d.direction == drivers::driver_direction::input) {
      auto peers = r.opt_string_list(base + ".peers");
      if (!peers || peers->empty())
        r.fail(base + ".peers",
               "an input driver needs an allowlist of senders, e.g. peers = [\"127.0.0.1:5601\"]");
      for (const auto& p : *peers) check_address(r, base + ".peers", p, true);
      d.peers = *peers;
      if (r.has(base + ".initial")) {
        const auto init = per_channel(r, base + ".initial", n, 0.0);
        check_in_range(r, base + ".initial", init, d.channels);
        for (std::size_t i = 0; i < n; ++i) {
          d.channels[i].initial = init[i];
          d.channels[i].initial_set = true;
        }
      }
      if (auto v = r.opt_double(base + ".stale_after")) {
        check_seconds(r, base + ".stale_after", *v);
        d.stale_after = *v;
      }
      if (auto v = r.opt_double(base + ".stop_after")) {
        check_seconds(r, base + ".stop_after", *v);
        d.stop_after = *v;
      }
      if (d.stop_after < d.stale_after) r.fail(base + ".stop_after", "must be >= stale_after");
      if (auto v = r.opt_double(base + ".startup_timeout")) {
        check_seconds(r, base + ".startup_timeout", *v);
        d.startup_timeout = *v;
      }
    } else {
      d.to = r.get_string(base + ".to");
      check_address(r, base + ".to", d.to, true);
      auto from = r.opt_string_list(base + ".from");
      if (!from || from->size() != n)
        r.fail(base + ".from", "must name the \"subsystem.port\" feeding each channel");
      const auto safe = per_channel(r, base + ".safe_value", n, 0.0);
      // Given or not (default 0): what goes out on a stop must be a value the device accepts.
      check_in_range(r, base + ".safe_value", safe, d.channels);
      for (std::size_t i = 0; i < n; ++i) {
        d.channels[i].from = (*from)[i];
        d.channels[i].safe_value = safe[i];
      }
      if (auto v = r.opt_int(base + ".safe_repeats")) {
        if (*v < 1 || *v > 1000) r.fail(base + ".safe_repeats", "must be 1-1000");
        d.safe_repeats = static_cast<int>(*v);
      }
    }
    d.lockstep = sc.run.mode == run_mode::lockstep;
    if (auto v = r.opt_double(base + ".lockstep_timeout")) {
      // Wall-clock wait for one answer: a device that does not keep up for this long is
      // gone, and a CI job must not hang on it for minutes.
      if (!std::isfinite(*v) || *v < 1e-3 || *v > 60.0)
        r.fail(base + ".lockstep_timeout",
               "must be between 0.001 and 60 [s], got " + format_double(*v));
      d.lockstep_timeout = *v;
    }
    read_driver_auth(r, base, d);
    if (auto cpu = r.opt_int(base + ".cpu")) {
      if (*cpu < -1 || *cpu >= online_cpu_count()) r.fail(base + ".cpu", "no such CPU");
      d.cpu = static_cast<int>(*cpu);
    }
    if (auto prio = r.opt_int(base + ".priority")) {
      if (*prio < 1 || *prio > 99) r.fail(base + ".priority", "SCHED_FIFO priority must be 1-99");
      d.priority = static_cast<int>(*prio);
    }
    subsystem_config s;
    s.step = sc.run.macro_step;
    s.integrator = "udp";
    sc.subsystems[name] = s;
    sc.run.order.push_back(name);
    sc.drivers.push_back(std::move(d));
  }
}

void read_events(config_reader& r, scenario& sc) {
  const toml::array* events = r.table().get_as<toml::array>("events");
  if (events == nullptr) return;
  for (std::size_t i = 0; i < events->size(); ++i) {
    const std::string key = "events[" + std::to_string(i) + "]";
    const double t = r.get_double(key + ".time");
    if (!std::isfinite(t) || t < 0.0 || t > sc.run.duration)
      r.fail(key + ".time",
             "must be a time in [0, run.duration = " + format_double(sc.run.duration) + "] s");
    const std::string action = r.get_string(key + ".action");
    check_choice(r, key + ".action", action, {"silence", "drop"});
    const std::string name = r.get_string(key + ".driver");
    drivers::driver_config* d = nullptr;
    for (auto& c : sc.drivers)
      if (c.name == name && c.direction == drivers::driver_direction::input) d = &c;
    if (d == nullptr)
      r.fail(key + ".driver", "no input driver named '" + name + "' ([drivers." + name +
                                  "] with direction = \"input\")");
    if (d->silence_at >= 0.0)
      r.fail(key + ".driver", "driver '" + name + "' is already silenced by an earlier event");
    d->silence_at = t;
    if (action == "drop") {
      const std::int64_t n = r.get_int(key + ".count");
      if (n < 1 || n > 1'000'000'000) r.fail(key + ".count", "must be 1 to 1e9 values");
      d->silence_count = n;
    }
    sc.events.push_back({t, action, name});
  }
}

void add_drivers(const scenario& sc, built_scenario& b) {
  for (const auto& d : sc.drivers) {
    bool present = false;
    for (std::size_t i = 0; i < b.sys.size(); ++i)
      if (b.sys.at(i).name() == d.name) present = true;
    if (present) continue;
    if (d.auth == drivers::driver_auth::none)
      spdlog::warn(
          "drivers.{}.auth = \"none\": its datagrams are not authenticated; any host on the bench "
          "network can forge or replay them (recorded in summary.json, unauthenticated_drivers)",
          d.name);
    auto drv = drivers::make_driver(d);
    b.sys.add(std::move(drv));
    if (d.direction == drivers::driver_direction::output) {
      for (const auto& ch : d.channels) {
        try {
          b.sys.connect(ch.from, d.name + "." + ch.name);
        } catch (const error& e) {
          throw error(errc::config_value, "drivers." + d.name + ".from: " + e.what());
        }
      }
    }
  }
}

void read_signal_source(config_reader& r, scenario& sc, const std::string& key) {
  const std::string full = "model." + key;
  const std::string v = r.opt_string(full).value_or("manoeuvre");
  if (v != "manoeuvre" && (v.rfind("driver:", 0) != 0 || v.find('.') == std::string::npos))
    r.fail(full, "must be \"manoeuvre\" or \"driver:<name>.<channel>\"");
  sc.options[key] = v;
}

bool connect_driver_source(const scenario& sc, built_scenario& b, const std::string& key,
                           const std::string& target, double initial) {
  const auto it = sc.options.find(key);
  if (it == sc.options.end() || it->second.rfind("driver:", 0) != 0) return false;
  try {
    connect_driver_channel(sc, b, it->second.substr(7), target, initial);
  } catch (const error& e) {
    throw error(errc::config_value, "model." + key + " = \"" + it->second + "\": " + e.what());
  }
  return true;
}

void connect_driver_channel(const scenario& sc, built_scenario& b, const std::string& ref,
                            const std::string& target, double initial) {
  const auto dot = ref.find('.');
  COSIM_INPUT_CHECK(dot != std::string::npos && dot > 0 && dot + 1 < ref.size(), errc::config_value,
                    "\"driver:" + ref + "\" must be driver:NAME.CHANNEL");
  const std::string drv = ref.substr(0, dot);
  const std::string channel = ref.substr(dot + 1);
  // The scenario says which subsystems are input drivers (their names are unique).
  bool is_input = false;
  for (const auto& d : sc.drivers)
    is_input = is_input || (d.name == drv && d.direction == drivers::driver_direction::input);
  COSIM_INPUT_CHECK(
      is_input, errc::config_value,
      "no input driver named '" + drv + "' ([drivers." + drv + "] with direction = \"input\")");
  add_drivers(sc, b);
  subsystem& in = b.sys.at(b.sys.index_of(drv));
  const std::size_t ch = in.find_output(channel);
  COSIM_INPUT_CHECK(ch != subsystem::npos, errc::config_value,
                    "driver '" + drv + "' has no channel '" + channel + "'");
  in.set_default_start(ch, initial);
  b.sys.connect(ref, target);
}

std::vector<key_doc> driver_keys() {
  return {
      {"drivers.<name>.direction",
       "input (device channels become outputs) or output (inputs are sent)"},
      {"drivers.<name>.backend", "asio (default) or io_uring (needs liburing)"},
      {"drivers.<name>.bind", "local UDP address host:port (port 0: any)"},
      {"drivers.<name>.peers", "input: allowlist of sender addresses [\"host:port\", ...]"},
      {"drivers.<name>.to", "output: destination host:port"},
      {"drivers.<name>.type", "message type: command, valve_command, valve_feedback"},
      {"drivers.<name>.channels", "channel names (ports), in wire order"},
      {"drivers.<name>.units", "per-channel unit of the port (default \"1\"), e.g. [\"m\"]"},
      {"drivers.<name>.min / max", "per-channel range; values outside are clamped and counted"},
      {"drivers.<name>.initial", "input: per-channel value before the first packet"},
      {"drivers.<name>.from", "output: \"subsystem.port\" per channel"},
      {"drivers.<name>.safe_value", "output: per-channel fail-safe value"},
      {"drivers.<name>.safe_repeats", "output: how often the safe values are sent on a stop"},
      {"drivers.<name>.stale_after",
       "input: no fresh packet for this long [s]: hold last value, count"},
      {"drivers.<name>.lockstep_timeout",
       "run.mode = \"lockstep\": longest wait for the device's answer to one macro step [s] "
       "(default 1, 0.001-60); past it the run stops (lockstep_device)"},
      {"drivers.<name>.stop_after",
       "input: no fresh packet for this long [s]: safety stop stale_input"},
      {"drivers.<name>.startup_timeout", "input: longest wait for the first packet [s]"},
      {"drivers.<name>.auth",
       "hmac-sha512-256 (default: keyed MAC, sessions, replay window) or none (unauthenticated "
       "version 1, reported in summary.json and on the dashboard)"},
      {"drivers.<name>.key_file",
       "file with the driver's 256-bit key (64 hex digits, mode 0600; cosim-device keygen FILE)"},
      {"drivers.<name>.cpu / priority", "I/O thread placement"},
  };
}

}  // namespace cosim::config
