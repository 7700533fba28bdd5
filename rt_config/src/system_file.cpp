// Reads the open system description of a system file: [subsystems.NAME] (type, step,
// integrator, parameters), [[initialization]], [[connections]], [[bonds]], [[sources]]
// and [output] record (docs/systems.md). Every error names file, line, key and value.
#include "system_file.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "cosim/rt_config/type_registry.hpp"
#include "cosim/runtime/extrapolation.hpp"
#include "fmu_types.hpp"

namespace cosim::config {

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& e : v) s += (s.empty() ? "" : ", ") + e;
  return s;
}

std::string known_types() {
  std::vector<std::string> names;
  for (const subsystem_type* t : all_subsystem_types()) names.push_back(t->name);
  return join(names);
}

// TOML value -> param_value (numbers, integers, booleans, strings, arrays of numbers or of
// strings); anything else fails naming the key.
param_value to_param(config_reader& r, const std::string& key, const toml::node& n) {
  if (const auto* v = n.as_floating_point()) return v->get();
  if (const auto* v = n.as_integer()) return v->get();
  if (const auto* v = n.as_boolean()) return v->get();
  if (const auto* v = n.as_string()) return v->get();
  if (const auto* a = n.as_array()) {
    if (a->empty()) return std::vector<double>{};
    if ((*a)[0].is_string()) {
      std::vector<std::string> out;
      for (const auto& e : *a) {
        if (!e.is_string()) r.fail(key, "an array parameter holds only strings or only numbers");
        out.push_back(e.as_string()->get());
      }
      return out;
    }
    std::vector<double> out;
    for (const auto& e : *a) {
      if (e.is_floating_point())
        out.push_back(e.as_floating_point()->get());
      else if (e.is_integer())
        out.push_back(static_cast<double>(e.as_integer()->get()));
      else
        r.fail(key, "an array parameter holds only strings or only numbers");
    }
    return out;
  }
  r.fail(key, "a parameter is a number, boolean, string or an array of numbers or strings");
}

// "subsystem.port" with both parts non-empty.
void check_ref(config_reader& r, const std::string& key, const std::string& ref) {
  const auto dot = ref.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == ref.size())
    r.fail(key, "must name a port as \"subsystem.port\"");
}

}  // namespace

std::size_t array_size(config_reader& r, const std::string& key) {
  const toml::node* n = r.table().at_path(key).node();
  if (n == nullptr) return 0;
  const toml::array* a = n->as_array();
  if (a == nullptr || !a->is_array_of_tables())
    r.fail(key, "must be an array of tables ([[" + key + "]] sections)");
  return a->size();
}

void only_keys(config_reader& r, const std::string& key, const std::vector<std::string>& allowed) {
  const toml::node* n = r.table().at_path(key).node();
  if (n == nullptr || !n->is_table()) return;
  for (const auto& [k, v] : *n->as_table()) {
    const std::string name(k.str());
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end())
      throw error(errc::config_key, r.where(key + "." + name) + ": unknown key '" + key + "." +
                                        name + "' (allowed: " + join(allowed) + ")");
  }
}

origin table_origin(config_reader& r, const std::string& key) {
  origin o(r.where(key), key);
  if (const toml::node* n = r.table().at_path(key).node(); n != nullptr && n->is_table())
    for (const auto& [k, v] : *n->as_table())
      o.keys[std::string(k.str())] = r.where(key + "." + std::string(k.str()));
  return o;
}

std::vector<std::string> read_system_subsystems(config_reader& r, scenario& sc) {
  const toml::node* root = r.table().at_path("subsystems").node();
  if (root == nullptr || !root->is_table() || root->as_table()->empty())
    r.fail("subsystems", "a system file needs at least one [subsystems.NAME] table");
  // toml++ keeps keys sorted; the file's order (by line) is the system's order.
  std::vector<std::pair<std::int64_t, std::string>> by_line;
  for (const auto& [k, v] : *root->as_table()) {
    const std::string name(k.str());
    if (!v.is_table()) r.fail("subsystems." + name, "must be a table [subsystems.NAME]");
    // Names are the first part of every "NAME.VARIABLE" reference: a '.' in one would make
    // references ambiguous. Said here with the table's line, because a quoted name with a
    // '.' is no key path the reader can point at, and an unquoted one ([subsystems.a.b])
    // is TOML for a subsystem 'a' holding a table 'b', which would fail further on as 'a'
    // having no type.
    const auto& sub = *v.as_table();
    const bool typed = sub.contains("type") || sub.contains("fmu");
    std::string dotted;
    if (name.find('.') != std::string::npos) {
      dotted = name;
    } else if (!typed) {
      for (const auto& [ck, cv] : sub)
        if (cv.is_table() && (cv.as_table()->contains("type") || cv.as_table()->contains("fmu")))
          dotted = name + "." + std::string(ck.str());
    }
    if (!dotted.empty() || name.empty()) {
      std::string fixed = dotted.empty() ? std::string("NAME") : dotted;
      std::replace(fixed.begin(), fixed.end(), '.', '_');
      throw error(errc::config_value, r.file() + ":" + std::to_string(v.source().begin.line) +
                                          ": subsystem name '" + dotted +
                                          "': a subsystem name may not be empty or contain '.' "
                                          "(it is the NAME of NAME.VARIABLE references); write "
                                          "e.g. [subsystems." +
                                          fixed + "]");
    }
    by_line.emplace_back(v.source().begin.line, name);
  }
  std::stable_sort(by_line.begin(), by_line.end());
  std::vector<std::string> names;
  for (const auto& [line, name] : by_line) {
    const std::string key = "subsystems." + name;
    subsystem_decl d;
    d.name = name;
    d.at = table_origin(r, key);
    // `fmu = "PATH"` (relative to the file) instead of `type`: the type "fmu:ABSOLUTE".
    const bool fmu = r.has(key + ".fmu");
    if (fmu == r.has(key + ".type"))
      r.fail(key, "needs exactly one of type = \"REGISTERED TYPE\" or fmu = \"FILE.fmu\"");
    const subsystem_type* t = nullptr;
    if (fmu) {
      std::filesystem::path p = r.get_string(key + ".fmu");
      if (p.is_relative())
        p = std::filesystem::absolute(std::filesystem::path(sc.file).parent_path() / p);
      d.type = fmu_type_name(p.lexically_normal().string());
      try {
        t = find_subsystem_type(d.type);
      } catch (const error& e) {
        r.fail(key + ".fmu", e.what());
      }
    } else {
      d.type = r.get_string(key + ".type");
      t = find_subsystem_type(d.type);
    }
    if (t == nullptr)
      r.fail(key + ".type",
             "unknown subsystem type (known: " + known_types() + "; `cosim types` describes them)");
    std::map<std::string, std::string> param_where;  // each value's line, or --set
    if (const toml::node* p = r.table().at_path(key + ".parameters").node()) {
      if (!p->is_table()) r.fail(key + ".parameters", "must be a table of parameters");
      for (const auto& [k, v] : *p->as_table()) {
        const std::string pk = key + ".parameters." + std::string(k.str());
        d.parameters[std::string(k.str())] = to_param(r, pk, v);
        param_where[std::string(k.str())] = r.where(pk);
        r.ignore(pk);
      }
      r.ignore(key + ".parameters");
    }
    // Checked here, with the line, as well as when built.
    (void)resolve_parameters(*t, d.parameters, r.where(key + ".parameters"), key + ".parameters",
                             &param_where);
    only_keys(
        r, key,
        {"type", "fmu", "step", "integrator", "smoothing", "non_matching", "host", "parameters",
         "log_categories", "changed_parameters", "no_feedthrough", "probe_feedthrough"});
    if (r.has(key + ".log_categories") && !is_fmu_type(d.type))
      r.fail(key + ".log_categories",
             "only an FMU subsystem has log categories (fmi2/3SetDebugLogging)");
    names.push_back(name);
    sc.system.subsystems.push_back(std::move(d));
  }
  return names;
}

void read_system_rest(config_reader& r, scenario& sc) {
  system_spec& s = sc.system;
  auto subsystem_of = [&](const std::string& key, const std::string& ref) {
    check_ref(r, key, ref);
    std::string sub = ref.substr(0, ref.find('.'));
    if (s.find(sub) == nullptr) {
      std::vector<std::string> names;
      for (const auto& d : s.subsystems) names.push_back(d.name);
      // Driver channels are ports too ([drivers.NAME]).
      bool driver = false;
      for (const auto& d : sc.drivers) driver = driver || d.name == sub;
      if (!driver) r.fail(key, "unknown subsystem '" + sub + "' (subsystems: " + join(names) + ")");
    }
    return sub;
  };

  for (std::size_t i = 0, n = array_size(r, "initialization"); i < n; ++i) {
    const std::string key = "initialization[" + std::to_string(i) + "]";
    init_decl d;
    d.at = table_origin(r, key);
    d.type = r.get_string(key + ".type");
    const init_type* t = find_init_type(d.type);
    if (t == nullptr) {
      std::vector<std::string> names;
      for (const auto& it : init_types()) names.push_back(it.name);
      r.fail(key + ".type", "unknown initialisation (known: " + join(names) + ")");
    }
    std::vector<std::string> allowed{"type"};
    for (const auto& role : t->roles) {
      allowed.push_back(role.name);
      const std::string rk = key + "." + role.name;
      d.roles[role.name] = r.get_string(rk);
      const subsystem_decl* sub = s.find(d.roles[role.name]);
      if (sub == nullptr) r.fail(rk, "names no subsystem of this system");
      if (std::find(role.types.begin(), role.types.end(), sub->type) == role.types.end())
        r.fail(rk, "subsystem '" + sub->name + "' has type \"" + sub->type + "\"; role " +
                       role.name + " of " + t->name + " needs " + join(role.types));
    }
    only_keys(r, key, allowed);
    s.initialization.push_back(std::move(d));
  }

  for (std::size_t i = 0, n = array_size(r, "connections"); i < n; ++i) {
    const std::string key = "connections[" + std::to_string(i) + "]";
    connection_decl c;
    c.at = table_origin(r, key);
    c.from = r.get_string(key + ".from");
    (void)subsystem_of(key + ".from", c.from);
    c.to = r.get_string(key + ".to");
    (void)subsystem_of(key + ".to", c.to);
    if (auto e = r.opt_int(key + ".extrapolation")) {
      if (*e < 0 || *e > max_extrapolation_order)
        r.fail(key + ".extrapolation", "must be an integer from 0 to 4 (polynomial order)");
      c.extrapolation = static_cast<int>(*e);
    }
    c.hold = r.opt_bool(key + ".hold").value_or(false);
    if (c.hold && c.extrapolation.value_or(0) != 0)
      r.fail(key + ".hold", "holds the last value: it cannot also extrapolate with order " +
                                std::to_string(*c.extrapolation));
    c.energy_correction = r.opt_bool(key + ".energy_correction");
    c.feedthrough_correction = r.opt_bool(key + ".feedthrough_correction");
    only_keys(
        r, key,
        {"from", "to", "extrapolation", "hold", "energy_correction", "feedthrough_correction"});
    s.connections.push_back(std::move(c));
  }

  for (std::size_t i = 0, n = array_size(r, "bonds"); i < n; ++i) {
    const std::string key = "bonds[" + std::to_string(i) + "]";
    bond_decl b;
    b.at = table_origin(r, key);
    b.name = r.get_string(key + ".name");
    const std::size_t nt = array_size(r, key + ".terms");
    if (nt == 0) r.fail(key + ".terms", "a bond needs at least one {effort, flow} term");
    for (std::size_t j = 0; j < nt; ++j) {
      const std::string tk = key + ".terms[" + std::to_string(j) + "]";
      bond_term_decl t;
      t.effort = r.get_string(tk + ".effort");
      t.flow = r.get_string(tk + ".flow");
      for (const auto& [k, v] : {std::pair{"effort", t.effort}, {"flow", t.flow}})
        if (v.find("->") == std::string::npos)  // spaces around the arrow optional
          r.fail(tk + "." + k, "must name a connection as \"subsystem.output -> subsystem.input\"");
      if (auto g = r.opt_double(tk + ".gain")) {
        if (!std::isfinite(*g) || *g == 0.0) r.fail(tk + ".gain", "must be finite and non-zero");
        t.gain = *g;
      }
      only_keys(r, tk, {"effort", "flow", "gain"});
      b.terms.push_back(std::move(t));
    }
    b.energy_correction = r.opt_bool(key + ".energy_correction").value_or(false);
    only_keys(r, key, {"name", "terms", "energy_correction"});
    s.bonds.push_back(std::move(b));
  }

  for (std::size_t i = 0, n = array_size(r, "sources"); i < n; ++i) {
    const std::string key = "sources[" + std::to_string(i) + "]";
    source_decl src;
    src.at = table_origin(r, key);
    src.to = r.get_string(key + ".to");
    (void)subsystem_of(key + ".to", src.to);
    src.signal = r.get_string(key + ".signal");
    for (const char* a : {"amplitude", "time", "width", "frequency"})
      if (auto v = r.opt_double(key + "." + a)) src.args[a] = *v;
    only_keys(r, key, {"to", "signal", "amplitude", "time", "width", "frequency"});
    s.sources.push_back(std::move(src));
  }

  if (r.has("output")) {
    only_keys(r, "output", {"record"});
    const toml::node* rec = r.table().at_path("output.record").node();
    const toml::array* arr = rec != nullptr ? rec->as_array() : nullptr;
    if (rec != nullptr && arr == nullptr)
      r.fail("output.record", "must be an array of \"subsystem.variable\" or {ref, as} tables");
    if (arr != nullptr)
      for (std::size_t i = 0; i < arr->size(); ++i) {
        const std::string key = "output.record[" + std::to_string(i) + "]";
        record_decl d;
        d.where = r.where(key);
        if (const auto* str = (*arr)[i].as_string()) {
          d.ref = str->get();
        } else if ((*arr)[i].is_table()) {
          d.ref = r.get_string(key + ".ref");
          d.as = r.opt_string(key + ".as").value_or("");
          if (r.has(key + ".as") && d.as.find_first_not_of(' ') == std::string::npos)
            r.fail(key + ".as", "must name the column (it is empty)");
          only_keys(r, key, {"ref", "as"});
        } else {
          r.fail("output.record", "entry " + std::to_string(i + 1) +
                                      " must be \"subsystem.variable\" or {ref = ..., as = ...}");
        }
        (void)subsystem_of("output.record", d.ref);
        s.record.push_back(std::move(d));
      }
    r.ignore("output.record");
  }
  // The columns every results.csv has (docs/results.md): t first, the energy residual after
  // the records, and with iterative coupling the iteration count and defect.
  std::vector<std::string> columns = {"t", "dP", "dE", "sum_abs_dE", "iterations", "defect"};
  for (const auto& d : s.record) {
    const std::string c = d.as.empty() ? d.ref : d.as;
    if (c.find_first_of("\r\n") != std::string::npos)
      r.fail("output.record", "column name \"" + c + "\" (" + d.where + ") holds a line break");
    if (std::find(columns.begin(), columns.end(), c) != columns.end())
      r.fail("output.record", "column \"" + c + "\" (" + d.where +
                                  ") appears twice or is one results.csv always has (t, dP, dE, "
                                  "sum_abs_dE, iterations, defect); use `as` to rename it");
    columns.push_back(c);
  }
}

}  // namespace cosim::config
