// `cosim run X --print-system`: a scenario (a preset or a system file) written back as a
// system file that runs to the same result. Numbers are printed shortest-round-trip, so
// reading the file back gives the same doubles bit for bit.
#include <charconv>
#include <cmath>
#include <filesystem>
#include <sstream>

#include "cosim/rt_config/scenario.hpp"
#include "cosim/rt_config/type_registry.hpp"
#include "dds_config.hpp"
#include "fmu_types.hpp"
#include "iteration_keys.hpp"

namespace cosim::config {

namespace {

std::string num(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (std::isnan(v)) return "nan";
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, res.ptr);
  // A TOML float needs a fraction or an exponent.
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string str(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", static_cast<unsigned>(c));
      out += esc;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// Bare TOML key when possible, else quoted.
std::string key(const std::string& k) {
  bool bare = !k.empty();
  for (char c : k)
    bare = bare && (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-');
  return bare ? k : str(k);
}

std::string strs(const std::vector<std::string>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + str(v[i]);
  return s + "]";
}

std::string nums(const std::vector<double>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + num(v[i]);
  return s + "]";
}

std::string value(const param_value& v) {
  struct visitor {
    std::string operator()(double x) const { return num(x); }
    std::string operator()(std::int64_t x) const { return std::to_string(x); }
    std::string operator()(bool x) const { return x ? "true" : "false"; }
    std::string operator()(const std::string& x) const { return str(x); }
    std::string operator()(const std::vector<double>& x) const { return nums(x); }
    std::string operator()(const std::vector<std::string>& x) const { return strs(x); }
  };
  return std::visit(visitor{}, v);
}

// "csv:FILE:COLUMN" with FILE made absolute (it is relative to the scenario's folder), as an
// FMU's path: the printed file may be run from elsewhere (a summary.json's system_toml).
std::string absolute_csv(const scenario& sc, const std::string& signal) {
  if (signal.rfind("csv:", 0) != 0) return signal;
  const auto colon = signal.rfind(':');
  if (colon <= 4) return signal;
  const std::filesystem::path file = signal.substr(4, colon - 4);
  if (!file.is_relative()) return signal;
  const std::filesystem::path abs =
      std::filesystem::absolute(std::filesystem::path(sc.file).parent_path() / file)
          .lexically_normal();
  return "csv:" + abs.string() + signal.substr(colon);
}

void print_drivers(std::ostringstream& o, const scenario& sc) {
  for (const auto& d : sc.drivers) {
    const bool input = d.direction == drivers::driver_direction::input;
    o << "\n[drivers." << key(d.name) << "]\n";
    o << "direction = " << str(input ? "input" : "output") << "\n";
    o << "backend = " << str(d.backend) << "\n";
    o << "bind = " << str(d.bind) << "\n";
    o << "type = "
      << str(d.type == drivers::message_type::command         ? "command"
             : d.type == drivers::message_type::valve_command ? "valve_command"
                                                              : "valve_feedback")
      << "\n";
    std::vector<std::string> names, units, from;
    std::vector<double> mins, maxs, initial, safe;
    bool any_min = false, any_max = false, any_initial = false, any_unit = false;
    for (const auto& c : d.channels) {
      names.push_back(c.name);
      units.push_back(c.unit);
      any_unit = any_unit || c.unit != "1";
      mins.push_back(c.min);
      maxs.push_back(c.max);
      any_min = any_min || std::isfinite(c.min);
      any_max = any_max || std::isfinite(c.max);
      initial.push_back(c.initial);
      any_initial = any_initial || c.initial_set;
      safe.push_back(c.safe_value);
      from.push_back(c.from);
    }
    o << "channels = " << strs(names) << "\n";
    if (any_unit) o << "units = " << strs(units) << "\n";
    if (any_min) o << "min = " << nums(mins) << "\n";
    if (any_max) o << "max = " << nums(maxs) << "\n";
    if (input) {
      o << "peers = " << strs(d.peers) << "\n";
      if (any_initial) o << "initial = " << nums(initial) << "\n";
      o << "stale_after = " << num(d.stale_after) << "\n";
      o << "stop_after = " << num(d.stop_after) << "\n";
      o << "startup_timeout = " << num(d.startup_timeout) << "\n";
    } else {
      o << "to = " << str(d.to) << "\n";
      o << "from = " << strs(from) << "\n";
      o << "safe_value = " << nums(safe) << "\n";
      o << "safe_repeats = " << d.safe_repeats << "\n";
    }
    if (d.auth == drivers::driver_auth::none)
      o << "auth = \"none\"\n";
    else
      o << "key_file = " << str(d.key_file) << "\n";
    if (d.cpu != -1) o << "cpu = " << d.cpu << "\n";
    if (d.priority != 0) o << "priority = " << d.priority << "\n";
  }
}

}  // namespace

std::string system_toml(const scenario& sc) {
  std::ostringstream o;
  o << "# " << (sc.preset ? "Expanded from " : "Written back from ") << sc.file;
  if (sc.preset) o << " (preset model.name = " << str(sc.model) << ")";
  o << " by `cosim run --print-system`.\n# It runs to the same results.csv as the original.\n";

  if (!sc.plugins.empty()) o << "\nplugins = " << strs(sc.plugins) << "\n";
  o << "\n[run]\n";
  o << "mode = " << str(to_string(sc.run.mode)) << "\n";
  o << "duration = " << num(sc.run.duration) << "\n";
  o << "macro_step = " << num(sc.run.macro_step) << "\n";
  o << "scheme = " << str(to_string(sc.run.scheme)) << "\n";
  // run.sync resolves to this order (004 Sect. 2.1); drivers are appended by [drivers.*].
  std::vector<std::string> order;
  for (const auto& n : sc.run.order) {
    bool driver = false;
    for (const auto& d : sc.drivers) driver = driver || d.name == n;
    if (!driver) order.push_back(n);
  }
  if (sc.run.fast_step) {
    // The sync decides which subsystem runs ahead, so it is written instead of the order.
    o << "delivery = \"fast-step\"\n";
    if (sc.run.table1_timing) o << "fast_step_timing = \"table1\"\n";
    o << "sync = "
      << str(sc.run.sync == scheme::sync::slowest_first ? "slowest-first" : "fastest-first")
      << "\n";
  } else {
    o << "order = " << strs(order) << "\n";
  }
  if (sc.run.output_interval > 0.0)
    o << "output_interval = " << num(sc.run.output_interval) << "\n";
  o << iteration_keys::toml(sc.run.iteration);
  if (sc.rt.ring_capacity != realtime_config{}.ring_capacity)
    o << "ring_capacity = " << sc.rt.ring_capacity << "\n";
  if (!sc.rt.lock_memory) o << "lock_memory = false\n";
  if (sc.rt.require_realtime) o << "require_realtime = true\n";
  if (sc.rt.timing_csv) o << "timing_csv = true\n";
  if (sc.rt.trace) o << "trace = true\n";

  o << "\n[coupling]\nextrapolation = " << sc.coupling.extrapolation << "\n";
  if (sc.coupling.energy_correction) o << "energy_correction = true\n";
  if (sc.coupling.feedthrough_correction) o << "feedthrough_correction = true\n";
  if (sc.coupling.energy_correction_method != "remove")
    o << "energy_correction_method = " << str(sc.coupling.energy_correction_method) << "\n";
  if (!sc.coupling.order.empty()) {
    o << "\n[coupling.order]\n";
    for (const auto& [ref, ord] : sc.coupling.order) o << str(ref) << " = " << ord << "\n";
  }
  if (std::isfinite(sc.safety.energy_residual_limit) ||
      std::isfinite(sc.safety.residual_power_limit)) {
    o << "\n[safety]\n";
    if (std::isfinite(sc.safety.energy_residual_limit))
      o << "energy_residual_limit = " << num(sc.safety.energy_residual_limit) << "\n";
    if (std::isfinite(sc.safety.residual_power_limit))
      o << "residual_power_limit = " << num(sc.safety.residual_power_limit) << "\n";
  }

  for (const auto& d : sc.system.subsystems) {
    o << "\n[subsystems." << key(d.name) << "]\n";
    if (const auto path = fmu_path_of(d.type))
      o << "fmu = " << str(*path) << "\n";  // absolute: the file may be elsewhere
    else
      o << "type = " << str(d.type) << "\n";
    const auto it = sc.subsystems.find(d.name);
    if (it != sc.subsystems.end()) {
      const subsystem_config& c = it->second;
      // The step only when it is not what the type would choose for this H.
      const subsystem_type* t = find_subsystem_type(d.type);
      bool print_step = c.step_set || t == nullptr;
      if (!print_step) {
        const param_set p = resolve_parameters(*t, d.parameters, d.at.where, d.at.key);
        print_step = to_duration(t->default_step(sc.run.macro_step, p)) != to_duration(c.step);
      }
      if (print_step) o << "step = " << num(c.step) << "\n";
      o << "integrator = " << str(c.integrator) << "\n";
      if (c.smoothing) o << "smoothing = true\n";
      if (c.non_matching) o << "non_matching = true\n";
      if (c.refuse_changed_parameters) o << "changed_parameters = \"refuse\"\n";
      if (c.no_feedthrough) o << "no_feedthrough = true\n";
      if (c.probe_feedthrough) o << "probe_feedthrough = true\n";
      if (c.remote) o << "host = \"" << (c.process ? "process" : "dds") << "\"\n";
      if (c.log_categories) {
        o << "log_categories = [";
        for (std::size_t k = 0; k < c.log_categories->size(); ++k)
          o << (k == 0 ? "" : ", ") << str((*c.log_categories)[k]);
        o << "]\n";
      }
    }
    if (!d.parameters.empty()) {
      o << "\n[subsystems." << key(d.name) << ".parameters]\n";
      for (const auto& [k, v] : d.parameters) o << key(k) << " = " << value(v) << "\n";
    }
  }
  for (const auto& in : sc.system.initialization) {
    o << "\n[[initialization]]\ntype = " << str(in.type) << "\n";
    for (const auto& [role, sub] : in.roles) o << key(role) << " = " << str(sub) << "\n";
  }
  for (const auto& c : sc.system.connections) {
    o << "\n[[connections]]\nfrom = " << str(c.from) << "\nto = " << str(c.to) << "\n";
    if (c.extrapolation) o << "extrapolation = " << *c.extrapolation << "\n";
    if (c.hold) o << "hold = true\n";
    if (c.energy_correction)
      o << "energy_correction = " << (*c.energy_correction ? "true" : "false") << "\n";
    if (c.feedthrough_correction)
      o << "feedthrough_correction = " << (*c.feedthrough_correction ? "true" : "false") << "\n";
  }
  for (const auto& b : sc.system.bonds) {
    o << "\n[[bonds]]\nname = " << str(b.name) << "\nterms = [\n";
    for (const auto& t : b.terms) {
      o << "  { effort = " << str(t.effort) << ", flow = " << str(t.flow);
      if (t.gain != 1.0) o << ", gain = " << num(t.gain);
      o << " },\n";
    }
    o << "]\n";
    if (b.energy_correction) o << "energy_correction = true\n";
  }
  for (const auto& s : sc.system.sources) {
    o << "\n[[sources]]\nto = " << str(s.to) << "\nsignal = " << str(absolute_csv(sc, s.signal))
      << "\n";
    for (const auto& [k, v] : s.args) o << key(k) << " = " << num(v) << "\n";
  }
  if (!sc.system.record.empty()) {
    o << "\n[output]\nrecord = [\n";
    for (const auto& r : sc.system.record) {
      if (r.as.empty())
        o << "  " << str(r.ref) << ",\n";
      else
        o << "  { ref = " << str(r.ref) << ", as = " << str(r.as) << " },\n";
    }
    o << "]\n";
  }
  for (const alarm_config& a : sc.alarms) {
    const alarm_spec& s = a.spec;
    o << "\n[[alarms]]\nname = " << str(s.name) << "\nvariable = " << str(s.variable) << "\n";
    if (std::isfinite(s.min)) o << "min = " << num(s.min) << "\n";
    if (std::isfinite(s.max)) o << "max = " << num(s.max) << "\n";
    if (std::isfinite(s.rate_max)) o << "rate_max = " << num(s.rate_max) << "\n";
    if (s.debounce.count() > 0) o << "debounce = " << num(to_seconds(s.debounce)) << "\n";
    o << "action = " << str(to_string(s.action)) << "\n";
  }

  for (const auto& [name, t] : sc.rt.threads) {
    const thread_setup def{};
    if (t.cpu == def.cpu && t.priority == def.priority && t.stack_size == def.stack_size &&
        t.budget_s == def.budget_s)
      continue;
    o << "\n[threads." << key(name) << "]\n";
    if (t.cpu != def.cpu) o << "cpu = " << t.cpu << "\n";
    if (t.priority != def.priority) o << "priority = " << t.priority << "\n";
    if (t.stack_size != def.stack_size) o << "stack_size = " << t.stack_size << "\n";
    if (t.budget_s != def.budget_s) o << "budget = " << num(t.budget_s) << "\n";
  }
  const watchdog_setup wd{};
  const watchdog_setup& w = sc.rt.watchdog;
  if (w.cpu != wd.cpu || w.priority != wd.priority || w.max_overruns != wd.max_overruns ||
      w.leak_steps != wd.leak_steps || w.grace_ns != wd.grace_ns) {
    o << "\n[watchdog]\n";
    if (w.cpu != wd.cpu) o << "cpu = " << w.cpu << "\n";
    if (w.priority != wd.priority) o << "priority = " << w.priority << "\n";
    if (w.max_overruns != wd.max_overruns) o << "max_overruns = " << w.max_overruns << "\n";
    if (w.leak_steps != wd.leak_steps) o << "leak_steps = " << w.leak_steps << "\n";
    if (w.grace_ns != wd.grace_ns) o << "grace = " << num(to_seconds(duration{w.grace_ns})) << "\n";
  }
  print_drivers(o, sc);
  o << dds_toml(sc);
  return o.str();
}

}  // namespace cosim::config
