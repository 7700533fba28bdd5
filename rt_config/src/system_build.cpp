// system_spec -> cosim::system. The order is fixed so that a preset builds exactly the
// system its model built before it became a preset: resolve parameters, apply the
// initialisation steps, create the subsystems, bind sources, connect, bond, record.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include "cosim/fmi/fmu_subsystem.hpp"
#include "cosim/rt_config/driver_wiring.hpp"
#include "cosim/rt_config/type_registry.hpp"
#include "cosim/runtime/csv_writer.hpp"
#include "cosim/subsystems/crane2_model.hpp"
#include "cosim/subsystems/manoeuvre.hpp"
#include "cosim/subsystems/test_input.hpp"
#include "dds_config.hpp"
#include "fmu_types.hpp"
#include "system_file.hpp"

namespace cosim::config {

void fail(const origin& o, const std::string& key, const std::string& why) {
  throw error(errc::config_value, o.where_of(key) + ": " + key + ": " + why);
}

namespace {

class constant_signal final : public signal_source {
 public:
  explicit constant_signal(double v) noexcept : v_(v) {}
  [[nodiscard]] double value(time_point /*t*/) const noexcept override { return v_; }

 private:
  double v_;
};

/// A column of a CSV file (first column: time [s], increasing), linearly interpolated and
/// held beyond its ends. Read once at setup; value() only searches.
class csv_signal final : public signal_source {
 public:
  csv_signal(std::vector<double> t, std::vector<double> v) : t_(std::move(t)), v_(std::move(v)) {}
  [[nodiscard]] double value(time_point tp) const noexcept override {
    const double t = to_seconds(tp);
    if (t <= t_.front()) return v_.front();
    if (t >= t_.back()) return v_.back();
    const auto it = std::upper_bound(t_.begin(), t_.end(), t);
    const auto i = static_cast<std::size_t>(it - t_.begin());
    const double w = (t - t_[i - 1]) / (t_[i] - t_[i - 1]);
    return v_[i - 1] + w * (v_[i] - v_[i - 1]);
  }

 private:
  std::vector<double> t_, v_;
};

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream is(line);
  while (std::getline(is, cur, ',')) {
    while (!cur.empty() && (cur.back() == '\r' || cur.back() == ' ')) cur.pop_back();
    while (!cur.empty() && cur.front() == ' ') cur.erase(cur.begin());
    out.push_back(cur);
  }
  return out;
}

std::unique_ptr<signal_source> read_csv_signal(const scenario& sc, const source_decl& d,
                                               const std::string& spec) {
  const std::string key = d.at.key + ".signal";
  const auto colon = spec.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == spec.size())
    fail(d.at, key, "\"csv:" + spec + "\" must be \"csv:FILE:COLUMN\"");
  std::filesystem::path file = spec.substr(0, colon);
  const std::string column = spec.substr(colon + 1);
  if (file.is_relative()) file = std::filesystem::path(sc.file).parent_path() / file;
  std::ifstream in(file);
  if (!in) fail(d.at, key, "cannot read " + file.string());
  std::string line;
  std::getline(in, line);
  const auto header = csv_header_fields(line);  // RFC 4180 quotes, as results.csv writes them
  const auto c = std::find(header.begin(), header.end(), column);
  if (header.empty() || c == header.end())
    fail(d.at, key, file.string() + " has no column \"" + column + "\" (first line: " + line + ")");
  const auto ci = static_cast<std::size_t>(c - header.begin());
  std::vector<double> t, v;
  for (std::size_t row = 2; std::getline(in, line); ++row) {
    if (line.empty()) continue;
    const auto cells = split_csv(line);
    double tv = 0.0, vv = 0.0;
    try {
      if (cells.size() <= ci) throw std::invalid_argument("short row");
      std::size_t n1 = 0, n2 = 0;
      tv = std::stod(cells[0], &n1);
      vv = std::stod(cells[ci], &n2);
      if (n1 != cells[0].size() || n2 != cells[ci].size()) throw std::invalid_argument("junk");
    } catch (const std::exception&) {
      fail(d.at, key, file.string() + ":" + std::to_string(row) + ": not a number row: " + line);
    }
    if (!std::isfinite(tv) || !std::isfinite(vv) || (!t.empty() && !(tv > t.back())))
      fail(d.at, key,
           file.string() + ":" + std::to_string(row) +
               ": times must be finite and increasing, values finite: " + line);
    t.push_back(tv);
    v.push_back(vv);
  }
  if (t.empty()) fail(d.at, key, file.string() + " has no rows");
  return std::make_unique<csv_signal>(std::move(t), std::move(v));
}

struct port_ref {
  std::size_t sub = 0;
  std::size_t port = 0;
};

std::string ports_list(const subsystem& s, bool inputs) {
  std::string list;
  const std::size_t n = inputs ? s.input_count() : s.output_count();
  for (std::size_t i = 0; i < n; ++i) {
    const port_desc& p = inputs ? s.input(i).desc() : s.output_desc(i);
    list += (list.empty() ? "" : ", ") + p.name + (p.unit.empty() ? "" : " [" + p.unit + "]");
  }
  return list.empty() ? "none" : list;
}

port_ref find_port(const system& sys, const origin& o, const std::string& key,
                   const std::string& ref, bool input) {
  const auto dot = ref.find('.');
  if (dot == std::string::npos) fail(o, key, "\"" + ref + "\" must be \"subsystem.port\"");
  const std::string sub = ref.substr(0, dot), port = ref.substr(dot + 1);
  port_ref p;
  bool found = false;
  for (std::size_t i = 0; i < sys.size(); ++i)
    if (sys.at(i).name() == sub) {
      p.sub = i;
      found = true;
    }
  if (!found) fail(o, key, "\"" + ref + "\": unknown subsystem '" + sub + "'");
  const subsystem& s = sys.at(p.sub);
  p.port = input ? s.find_input(port) : s.find_output(port);
  if (p.port == subsystem::npos) {
    const std::string why = s.not_exchanged(port);
    fail(o, key,
         "\"" + ref + "\": subsystem '" + sub + "' has no " + (input ? "input" : "output") + " '" +
             port + "'" +
             (why.empty() ? " (" + std::string(input ? "inputs" : "outputs") + ": " +
                                ports_list(s, input) + ")"
                          : ": " + why));
  }
  return p;
}

std::string ref_of(const system& sys, std::size_t sub, std::size_t port, bool input) {
  const subsystem& s = sys.at(sub);
  return s.name() + "." + (input ? s.input(port).desc().name : s.output_desc(port).name);
}

// Algebraic loops: output o of S depends on output p of T when o has direct feedthrough
// and an input of S is fed by T.p. Gauss-Seidel, and the iterative schemes built on its
// order, cannot order a cycle: its outputs at t need each other at t. Jacobi needs no order
// (every subsystem reads the others' last outputs), so it runs such a system.
void check_loops(const scenario& sc, const system& sys) {
  if (sc.run.scheme == scheme_kind::jacobi && !sc.run.iteration.enabled()) return;
  struct node {
    std::size_t sub, out;
  };
  std::vector<node> nodes;
  std::vector<std::size_t> first(sys.size() + 1, 0);
  for (std::size_t s = 0; s < sys.size(); ++s) {
    first[s] = nodes.size();
    for (std::size_t o = 0; o < sys.at(s).output_count(); ++o) nodes.push_back({s, o});
  }
  first[sys.size()] = nodes.size();
  auto id = [&](std::size_t s, std::size_t o) { return first[s] + o; };
  std::vector<std::vector<std::size_t>> deps(nodes.size());  // node -> nodes it needs now
  for (const connection& c : sys.connections()) {
    const subsystem& consumer = sys.at(c.to);
    for (std::size_t o = 0; o < consumer.output_count(); ++o)
      if (consumer.output_depends_on(o, c.input)) deps[id(c.to, o)].push_back(id(c.from, c.output));
  }
  std::vector<int> state(nodes.size(), 0);  // 0 new, 1 on stack, 2 done
  std::vector<std::size_t> stack;
  std::function<void(std::size_t)> visit = [&](std::size_t n) {
    state[n] = 1;
    stack.push_back(n);
    for (std::size_t m : deps[n]) {
      if (state[m] == 1) {
        std::string path, subs;
        std::vector<std::string> seen;  // names, compared whole ("BA" does not hide "A")
        const auto start = std::find(stack.begin(), stack.end(), m);
        for (auto it = start; it != stack.end(); ++it) {
          const std::string name = sys.at(nodes[*it].sub).name();
          path += ref_of(sys, nodes[*it].sub, nodes[*it].out, false) + " <- ";
          if (std::find(seen.begin(), seen.end(), name) == seen.end()) {
            seen.push_back(name);
            subs += (subs.empty() ? "" : ", ") + name;
          }
        }
        path += ref_of(sys, nodes[m].sub, nodes[m].out, false);
        // An FMU output listing no dependencies is only assumed to depend on its inputs.
        std::string assumed, assumed_keys;
        bool any_fmu = false;
        for (auto it = start; it != stack.end(); ++it) {
          const auto* f = dynamic_cast<const fmi::fmu_subsystem*>(&sys.at(nodes[*it].sub));
          any_fmu = any_fmu || f != nullptr;
          if (f == nullptr || !f->feedthrough_assumed(nodes[*it].out)) continue;
          assumed +=
              (assumed.empty() ? "" : ", ") + ref_of(sys, nodes[*it].sub, nodes[*it].out, false);
          const std::string k = "subsystems." + f->name() + ".no_feedthrough = true";
          if (assumed_keys.find(k) == std::string::npos)
            assumed_keys += (assumed_keys.empty() ? "" : ", ") + k;
        }
        std::string remedy =
            any_fmu ? " Use run.scheme = \"jacobi\" (it needs no order), or a subsystem without "
                      "direct feedthrough"
                    : " Break it with a state output on one side, or a subsystem without direct "
                      "feedthrough";
        if (!assumed.empty())
          remedy = " The direct feedthrough of " + assumed +
                   " is ASSUMED, not declared: the FMU's modelDescription.xml lists no "
                   "dependencies for such an output, which FMI 2.0 reads as depending on every "
                   "input. Where there is none, declare it with " +
                   assumed_keys +
                   " (probe_feedthrough = true checks it at start-up), or use run.scheme = "
                   "\"jacobi\", which needs no order";
        const subsystem_decl* d = sc.system.find(sys.at(nodes[m].sub).name());
        throw error(errc::config_value,
                    (d != nullptr ? d->at.where + ": " + d->at.key : sc.file) +
                        ": algebraic loop between subsystems " + subs +
                        ": outputs with direct feedthrough need each other at the same time (" +
                        path + "); run.scheme = \"" + to_string(sc.run.scheme) + "\"" +
                        (sc.run.iteration.enabled() ? " with iteration" : "") +
                        " cannot order it." + remedy);
      }
      if (state[m] == 0) visit(m);
    }
    stack.pop_back();
    state[n] = 2;
  };
  for (std::size_t n = 0; n < nodes.size(); ++n)
    if (state[n] == 0) visit(n);
}

// Connection index of "a.b -> c.d" in sys, or fails.
std::size_t connection_of(const system& sys, const origin& o, const std::string& key,
                          const std::string& text) {
  // "a.x -> b.y", spaces around the arrow optional.
  const auto arrow = text.find("->");
  if (arrow == std::string::npos)
    fail(o, key, "\"" + text + "\" must be \"subsystem.output -> subsystem.input\"");
  auto trim = [](const std::string& v) {
    const auto b = v.find_first_not_of(" \t");
    const auto e = v.find_last_not_of(" \t");
    return b == std::string::npos ? std::string() : v.substr(b, e - b + 1);
  };
  const std::string from = trim(text.substr(0, arrow)), to = trim(text.substr(arrow + 2));
  const port_ref a = find_port(sys, o, key, from, false);
  const port_ref b = find_port(sys, o, key, to, true);
  for (std::size_t i = 0; i < sys.connections().size(); ++i) {
    const connection& c = sys.connections()[i];
    if (c.from == a.sub && c.output == a.port && c.to == b.sub && c.input == b.port) return i;
  }
  fail(o, key, "\"" + text + "\" is not one of the [[connections]]");
}

std::unique_ptr<signal_source> make_signal(const scenario& sc, const source_decl& d,
                                           const subsystem_type* type, const param_set* params,
                                           const std::string& input) {
  const std::string key = d.at.key + ".signal";
  const std::string& s = d.signal;
  // Manoeuvres and test inputs are offsets to the input's start value.
  auto start_value = [&]() {
    if (type != nullptr) {
      const auto it = type->start_params.find(input);
      if (it != type->start_params.end()) return real_param(*params, it->second);
      const auto is = type->input_starts.find(input);
      if (is != type->input_starts.end()) return is->second;
    }
    fail(d.at, key,
         "\"" + s + "\" moves an input around its start value, but " + d.to +
             " has none (only inputs with a start parameter, e.g. the crane's kappa, or an FMU "
             "input with a start value); use \"constant:VALUE\" or \"csv:FILE:COLUMN\"");
  };
  for (const auto& [k, v] : d.args)
    if (!std::isfinite(v)) fail(d.at, d.at.key + "." + k, "must be finite");
  crane::test_input_kind tk{};
  if (crane::parse_test_input(s, tk)) {
    crane::test_input_params p;
    p.v0 = start_value();
    // Defaults as the crane presets' model.test_* keys (002 Eqs. (12)-(15)).
    p.amplitude = d.args.count("amplitude") ? d.args.at("amplitude") : 0.01;
    p.t0 = d.args.count("time") ? d.args.at("time") : 0.5;
    p.width = d.args.count("width") ? d.args.at("width") : 0.1;
    p.frequency = d.args.count("frequency") ? d.args.at("frequency") : 2.0;
    if (p.t0 < 0.0) fail(d.at, d.at.key + ".time", "must be >= 0 [s]");
    if (!(p.width > 0.0)) fail(d.at, d.at.key + ".width", "must be > 0 [s]");
    if (!(p.frequency > 0.0)) fail(d.at, d.at.key + ".frequency", "must be > 0 [Hz]");
    return std::make_unique<crane::test_input>(tk, p);
  }
  if (!d.args.empty())
    fail(d.at, d.at.key + "." + d.args.begin()->first,
         "only applies to the test inputs step, ramp, impulse, sine");
  if (s.rfind("manoeuvre:", 0) == 0) {
    const std::string m = s.substr(10);
    if (m == "M1_kappa2") return std::make_unique<crane::kappa2_manoeuvre>(start_value());
    crane::manoeuvre_kind mk{};
    if (!crane::parse_manoeuvre(m, mk))
      fail(d.at, key,
           "unknown manoeuvre \"" + m +
               "\" (M1: 003 Eq. (19), M2: 003 Eq. (20), hold, M1_kappa2: 001 Eq. (35))");
    return std::make_unique<crane::manoeuvre>(mk, start_value());
  }
  if (s.rfind("constant:", 0) == 0) {
    const std::string v = s.substr(9);
    std::size_t n = 0;
    double x = 0.0;
    try {
      x = std::stod(v, &n);
    } catch (const std::exception&) {
      n = 0;
    }
    if (n == 0 || n != v.size() || !std::isfinite(x))
      fail(d.at, key, "\"" + s + "\": \"constant:VALUE\" needs a finite number");
    return std::make_unique<constant_signal>(x);
  }
  if (s.rfind("csv:", 0) == 0) return read_csv_signal(sc, d, s.substr(4));
  fail(d.at, key,
       "unknown signal \"" + s +
           "\" (manoeuvre:M1|M2|hold|M1_kappa2, step, ramp, impulse, sine, constant:VALUE, "
           "csv:FILE:COLUMN, driver:NAME.CHANNEL)");
}

}  // namespace

void build_system(const scenario& sc, built_scenario& b) {
  const system_spec& spec = sc.system;
  system& sys = b.sys;
  // 1. Parameters, resolved against each type's declarations.
  std::vector<const subsystem_type*> types;
  std::vector<param_set> params;
  for (const auto& d : spec.subsystems) {
    const subsystem_type* t = find_subsystem_type(d.type);
    if (t == nullptr) fail(d.at, d.at.key + ".type", "unknown subsystem type \"" + d.type + "\"");
    types.push_back(t);
    params.push_back(resolve_parameters(*t, d.parameters, d.at.where, d.at.key + ".parameters"));
  }
  auto index_of = [&](const std::string& name) {
    for (std::size_t i = 0; i < spec.subsystems.size(); ++i)
      if (spec.subsystems[i].name == name) return i;
    return spec.subsystems.size();
  };
  // 2. Initialisation steps spanning subsystems (e.g. 003 Sect. 1.3): they write start
  // values, which the file must then leave to them.
  for (const auto& in : spec.initialization) {
    const init_type* t = find_init_type(in.type);
    if (t == nullptr)
      fail(in.at, in.at.key + ".type", "unknown initialisation \"" + in.type + "\"");
    std::map<std::string, param_set*> by_role;
    for (const auto& role : t->roles) {
      const auto it = in.roles.find(role.name);
      if (it == in.roles.end()) fail(in.at, in.at.key + "." + role.name, "missing");
      const std::size_t i = index_of(it->second);
      if (i == spec.subsystems.size())
        fail(in.at, in.at.key + "." + role.name, "no subsystem named '" + it->second + "'");
      if (std::find(role.types.begin(), role.types.end(), spec.subsystems[i].type) ==
          role.types.end())
        fail(in.at, in.at.key + "." + role.name,
             "subsystem '" + it->second + "' has type \"" + spec.subsystems[i].type +
                 "\", not one this role accepts");
      for (const auto& pd : types[i]->parameters)
        if (pd.start_value && spec.subsystems[i].parameters.count(pd.name) != 0)
          fail(spec.subsystems[i].at, spec.subsystems[i].at.key + ".parameters." + pd.name,
               "is a start value that " + in.at.key + " (" + t->name +
                   ") computes; remove it, or remove that initialization");
      by_role[role.name] = &params[i];
    }
    try {
      t->apply(by_role);
    } catch (const error& e) {
      fail(in.at, in.at.key, std::string(t->name) + ": " + e.what());
    }
  }
  // 3. Subsystems, in the spec's order.
  for (std::size_t i = 0; i < spec.subsystems.size(); ++i) {
    const subsystem_decl& d = spec.subsystems[i];
    const auto it = sc.subsystems.find(d.name);
    const std::string integrator = it != sc.subsystems.end() && !it->second.integrator.empty()
                                       ? it->second.integrator
                                       : types[i]->integrators.front();
    prepare_options po;
    if (it != sc.subsystems.end()) {
      const subsystem_config& c = it->second;
      po.refuse_changed_parameters = c.refuse_changed_parameters;
      po.no_feedthrough = c.no_feedthrough;
      po.probe_feedthrough = c.probe_feedthrough;
      const char* fmu_key = c.refuse_changed_parameters ? "changed_parameters"
                            : c.no_feedthrough          ? "no_feedthrough"
                            : c.probe_feedthrough       ? "probe_feedthrough"
                                                        : nullptr;
      if (fmu_key != nullptr && !is_fmu_type(d.type))
        fail(d.at, d.at.key + "." + fmu_key,
             "applies to FMUs only, not to type \"" + d.type + "\"");
    }
    try {
      param_set given;
      if (types[i]->only_given_parameters) {
        for (const auto& [k, v] : params[i])
          if (d.parameters.count(k) != 0) given.emplace(k, v);
      }
      // host = "process": the model is made, started and ended in the worker only (a crash
      // anywhere in its life ends the worker, not this process); here only its description.
      const bool elsewhere =
          it != sc.subsystems.end() && it->second.process && static_cast<bool>(types[i]->describe);
      std::unique_ptr<subsystem> s =
          elsewhere ? types[i]->describe(d.name, po)
                    : types[i]->create(d.name, types[i]->only_given_parameters ? given : params[i],
                                       integrator);
      if (!elsewhere && it != sc.subsystems.end() && it->second.log_categories)
        if (auto* f = dynamic_cast<fmi::fmu_subsystem*>(s.get()))
          f->set_log_categories(*it->second.log_categories);
      // The run's length as the executors run it: whole macro steps of whole ticks (fill_plan),
      // so the stop time a model is told is where its last step ends.
      if (types[i]->prepare && !elsewhere) {
        const auto steps =
            static_cast<std::int64_t>(std::ceil(sc.run.duration / sc.run.macro_step - 1e-9));
        const duration length = steps * to_duration(sc.run.macro_step);
        po.run_length = static_cast<double>(length.count()) / 1e9;
        types[i]->prepare(*s, po);
      }
      // host = "dds": a proxy with its ports and variables; `cosim worker` builds the real
      // one from the same file (docs/distributed.md).
      if (it != sc.subsystems.end() && it->second.remote) {
        dds::remote_options o = remote_options_of(sc);
        o.setup_stop = b.setup_stop;
        warn_unauthenticated_dds(sc);
        std::unique_ptr<dds::worker_process> child;
        // host = "process": refused before a worker is started for nothing.
        if (const std::string why = dds::remote_refusal(*s); it->second.process && why.empty())
          child = start_worker(sc, d.name, o);
        s = dds::make_remote_proxy(*s, o, std::move(child));
      }
      sys.add(std::move(s));
    } catch (const error& e) {
      fail(d.at, d.at.key, e.what());
    }
  }
  // 4. Sources, then 5. connections (both feed inputs: an input fed twice fails here).
  for (const auto& d : spec.sources) {
    const port_ref p = find_port(sys, d.at, d.at.key + ".to", d.to, true);
    input_port& in = sys.at(p.sub).input(p.port);
    if (in.connected()) fail(d.at, d.at.key + ".to", "input " + d.to + " is fed twice");
    const std::size_t i = index_of(sys.at(p.sub).name());
    const subsystem_type* type = i < types.size() ? types[i] : nullptr;
    const param_set* ps = i < params.size() ? &params[i] : nullptr;
    if (d.signal.rfind("driver:", 0) == 0) {
      const auto st = type != nullptr ? type->start_params.find(in.desc().name)
                                      : decltype(type->start_params.end()){};
      double initial =
          type != nullptr && st != type->start_params.end() ? real_param(*ps, st->second) : 0.0;
      if (type != nullptr && st == type->start_params.end()) {
        const auto is = type->input_starts.find(in.desc().name);
        if (is != type->input_starts.end()) initial = is->second;
      }
      try {
        connect_driver_channel(sc, b, d.signal.substr(7), d.to, initial);
      } catch (const error& e) {
        // The driver is made here, at its first use: a message about one of its own keys
        // (a port in use) is not about this source.
        if (std::string_view(e.what()).rfind("drivers.", 0) == 0)
          throw error(e.code(), sc.file + ": " + e.what());
        fail(d.at, d.at.key + ".signal", e.what());
      }
      continue;
    }
    b.sources.push_back(make_signal(sc, d, type, ps, in.desc().name));
    in.bind_source(b.sources.back().get());
  }
  for (const auto& c : spec.connections) {
    const port_ref a = find_port(sys, c.at, c.at.key + ".from", c.from, false);
    const port_ref t = find_port(sys, c.at, c.at.key + ".to", c.to, true);
    const port_desc& out = sys.at(a.sub).output_desc(a.port);
    const input_port& in = sys.at(t.sub).input(t.port);
    if (!units_compatible(out.unit, in.desc().unit))
      fail(c.at, c.at.key + ".from",
           "cannot connect " + c.from + " [" + out.unit + "] to " + c.to + " [" + in.desc().unit +
               "]: units differ");
    if (in.connected()) fail(c.at, c.at.key + ".to", "input " + c.to + " is fed twice");
    const auto remote = sc.subsystems.find(sys.at(t.sub).name());
    if (out.derivative_order > 0 && remote != sc.subsystems.end() && remote->second.remote)
      fail(c.at, c.at.key + ".to",
           c.from +
               " gives time derivatives, which a remote subsystem (host = \"dds\") does "
               "not receive yet");
    sys.connect(c.from, c.to);
  }
  // 6. Power bonds: effort one way, flow back the other (000 Sect. 3.1). Each effort
  // connection is counted in one term of one bond (a flow may be shared by the terms of one
  // bond, e.g. two chamber pressures with one piston rate); counted twice, δP and δE would
  // be doubled and a safety limit trip at half the real residual.
  std::vector<std::string> effort_in(sys.connections().size());  // "bond terms[k]" using it
  for (std::size_t bi = 0; bi < spec.bonds.size(); ++bi) {
    const auto& bd = spec.bonds[bi];
    for (std::size_t a = 0; a < bi; ++a)
      if (spec.bonds[a].name == bd.name)
        fail(bd.at, bd.at.key + ".name", "\"" + bd.name + "\" names two bonds");
    power_bond bond;
    bond.name = bd.name;
    for (std::size_t j = 0; j < bd.terms.size(); ++j) {
      const std::string tk = bd.at.key + ".terms[" + std::to_string(j) + "]";
      const bond_term_decl& td = bd.terms[j];
      bond_term t;
      t.effort = connection_of(sys, bd.at, tk + ".effort", td.effort);
      t.flow = connection_of(sys, bd.at, tk + ".flow", td.flow);
      t.gain = td.gain;
      const connection& e = sys.connections()[t.effort];
      const connection& f = sys.connections()[t.flow];
      if (e.from != f.to || e.to != f.from)
        fail(bd.at, tk,
             "effort \"" + td.effort + "\" and flow \"" + td.flow +
                 "\" do not pair up: the flow must run back from the effort's consumer to its "
                 "producer (000 Sect. 3.1)");
      // Ports that declare a role must be used in it (FMU ports declare none: signal).
      const port_role e_out = sys.at(e.from).output_desc(e.output).role;
      const port_role e_in = sys.at(e.to).input(e.input).desc().role;
      const port_role f_out = sys.at(f.from).output_desc(f.output).role;
      const port_role f_in = sys.at(f.to).input(f.input).desc().role;
      if (e_out == port_role::flow || e_in == port_role::flow || f_out == port_role::effort ||
          f_in == port_role::effort)
        fail(bd.at, tk,
             "effort \"" + td.effort + "\" and flow \"" + td.flow +
                 "\": a port declared as a flow is used as the effort, or one declared as an "
                 "effort as the flow (swapped?); `cosim types` lists each port's role");
      const std::string here = "bond \"" + bd.name + "\" terms[" + std::to_string(j) + "]";
      if (!effort_in[t.effort].empty())
        fail(bd.at, tk + ".effort",
             "\"" + td.effort + "\" is already the effort of " + effort_in[t.effort] +
                 ": each coupling belongs to one bond term, or its residual is counted twice");
      effort_in[t.effort] = here;
      bond.terms.push_back(t);
    }
    sys.add_bond(std::move(bond));
  }
  // 7. Recorded columns.
  for (std::size_t i = 0; i < spec.record.size(); ++i) {
    const record_decl& r = spec.record[i];
    const std::string where = (r.where.empty() ? sc.file : r.where) + ": " +
                              (r.key.empty() ? "output.record[" + std::to_string(i) + "]" : r.key) +
                              " = \"" + r.ref + "\": ";
    try {
      sys.add_probe(r.as.empty() ? r.ref : r.as, r.ref);
    } catch (const error& e) {
      throw error(errc::config_value, where + e.what());
    }
    // A subsystem on its own time grid reads its inputs at its grid times only: at a row's
    // time there is no value it sees.
    const probe& p = sys.probes().back();
    const auto cfg = sc.subsystems.find(sys.at(p.subsystem).name());
    if (p.input && cfg != sc.subsystems.end() &&
        (cfg->second.non_matching || (sc.run.fast_step && cfg->second.step > sc.run.macro_step)))
      throw error(errc::config_value,
                  where + "'" + cfg->first +
                      "' steps on its own time grid (non_matching or fast-step delivery) and "
                      "reads its inputs only there, not at the rows' times; record the output "
                      "that feeds it instead");
  }
  add_drivers(sc, b);  // no-op for drivers a source already added
  // Every input fed, and no loop a non-iterative scheme cannot order.
  std::string unfed, where = sc.file;
  for (std::size_t s = 0; s < sys.size(); ++s)
    for (std::size_t i = 0; i < sys.at(s).input_count(); ++i)
      if (!sys.at(s).input(i).connected()) {
        if (index_of(sys.at(s).name()) < types.size() &&
            types[index_of(sys.at(s).name())]->unfed_inputs_keep_start) {
          sys.at(s).input(i).keep_start();  // the executors accept it
          continue;
        }
        if (unfed.empty() && index_of(sys.at(s).name()) < spec.subsystems.size()) {
          const origin& o = spec.subsystems[index_of(sys.at(s).name())].at;
          where = o.where + ": " + o.key;
        }
        unfed += (unfed.empty() ? "" : ", ") + ref_of(sys, s, i, true);
      }
  if (!unfed.empty())
    throw error(errc::config_value,
                where + ": input" + (unfed.find(',') != std::string::npos ? "s " : " ") + unfed +
                    " fed by nothing: add a [[connections]] or [[sources]] "
                    "entry for each");
  check_loops(sc, sys);
}

void apply_connection_orders(const scenario& sc, built_scenario& b) {
  for (const auto& c : sc.system.connections) {
    if (!c.hold && !c.extrapolation) continue;
    const connection& cn = b.sys.connections()[b.sys.connection_to(c.to)];
    b.sys.at(cn.to).input(cn.input).set_order(c.hold ? 0 : *c.extrapolation);
  }
}

}  // namespace cosim::config
