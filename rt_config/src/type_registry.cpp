#include "cosim/rt_config/type_registry.hpp"

#include <cmath>

#include "cosim/runtime/error.hpp"
#include "cosim/runtime/json_writer.hpp"
#include "fmu_types.hpp"
#include "type_registry_detail.hpp"

namespace cosim::config {

namespace {

template <class T>
const T& get_kind(const param_set& p, const std::string& name) {
  const auto it = p.find(name);
  // A factory asks only for declared parameters, and resolve_parameters fills them all.
  COSIM_DEMAND(it != p.end());
  const T* v = std::get_if<T>(&it->second);
  COSIM_DEMAND(v != nullptr);
  return *v;
}

std::string quoted(const std::string& s) {
  return "\"" + s + "\"";
}

std::string range_text(const param_decl& d) {
  const bool lo = std::isfinite(d.min), hi = std::isfinite(d.max);
  if (lo && hi)
    return (d.min_exclusive ? "> " : "from ") + format_double(d.min) +
           (d.min_exclusive ? " and <= " : " to ") + format_double(d.max);
  if (lo) return std::string(d.min_exclusive ? "> " : ">= ") + format_double(d.min);
  if (hi) return "<= " + format_double(d.max);
  return "any finite number";
}

bool in_range(const param_decl& d, double v) {
  if (!std::isfinite(v)) return false;
  if (d.min_exclusive ? !(v > d.min) : !(v >= d.min)) return false;
  return v <= d.max;
}

}  // namespace

double real_param(const param_set& p, const std::string& name) {
  return get_kind<double>(p, name);
}
std::int64_t int_param(const param_set& p, const std::string& name) {
  return get_kind<std::int64_t>(p, name);
}
bool bool_param(const param_set& p, const std::string& name) {
  return get_kind<bool>(p, name);
}
const std::string& text_param(const param_set& p, const std::string& name) {
  return get_kind<std::string>(p, name);
}
const std::vector<double>& reals_param(const param_set& p, const std::string& name) {
  return get_kind<std::vector<double>>(p, name);
}
const std::vector<std::string>& texts_param(const param_set& p, const std::string& name) {
  return get_kind<std::vector<std::string>>(p, name);
}

const subsystem_decl* system_spec::find(const std::string& name) const {
  for (const auto& s : subsystems)
    if (s.name == name) return &s;
  return nullptr;
}

const char* to_string(param_kind k) noexcept {
  switch (k) {
    case param_kind::real:
      return "number";
    case param_kind::integer:
      return "integer";
    case param_kind::boolean:
      return "boolean";
    case param_kind::text:
      return "string";
    case param_kind::reals:
      return "array of numbers";
    case param_kind::texts:
      return "array of strings";
  }
  return "number";
}

const std::vector<subsystem_type>& subsystem_types() {
  static const std::vector<subsystem_type> all = [] {
    std::vector<subsystem_type> v = crane_subsystem_types();
    for (auto& t : oscillator_subsystem_types()) v.push_back(std::move(t));
    return v;
  }();
  return all;
}

std::deque<subsystem_type>& added_subsystem_types() {
  static std::deque<subsystem_type> added;
  return added;
}

std::vector<const subsystem_type*> all_subsystem_types() {
  std::vector<const subsystem_type*> out;
  for (const auto& t : subsystem_types()) out.push_back(&t);
  for (const auto& t : added_subsystem_types()) out.push_back(&t);
  return out;
}

const subsystem_type* find_subsystem_type(const std::string& name) {
  if (const auto path = fmu_path_of(name)) return fmu_subsystem_type(*path);
  for (const subsystem_type* t : all_subsystem_types())
    if (t->name == name) return t;
  return nullptr;
}

const std::vector<init_type>& init_types() {
  static const std::vector<init_type> all = [] {
    std::vector<init_type> v = crane_init_types();
    for (auto& t : oscillator_init_types()) v.push_back(std::move(t));
    return v;
  }();
  return all;
}

const init_type* find_init_type(const std::string& name) {
  for (const auto& t : init_types())
    if (t.name == name) return &t;
  return nullptr;
}

param_set resolve_parameters(const subsystem_type& t, const param_set& given,
                             const std::string& where, const std::string& key,
                             const std::map<std::string, std::string>* where_of) {
  for (const auto& [name, v] : given) {
    bool known = false;
    for (const auto& d : t.parameters) known = known || d.name == name;
    if (!known) {
      std::string list;
      for (const auto& d : t.parameters) list += (list.empty() ? "" : ", ") + d.name;
      throw error(errc::config_key, where + ": " + key + "." + name + ": type " + quoted(t.name) +
                                        " has no parameter " + quoted(name) +
                                        " (parameters: " + (list.empty() ? "none" : list) +
                                        "; see `cosim types " + t.name + "`)");
    }
  }
  param_set out;
  for (const auto& d : t.parameters) {
    const std::string k = key + "." + d.name;
    const auto it = given.find(d.name);
    param_value v = it != given.end() ? it->second : d.def;
    // A NaN default means "not given, the model keeps its own value" (an FMU parameter
    // without start): nothing to check.
    if (it == given.end() && std::holds_alternative<double>(v) && std::isnan(std::get<double>(v))) {
      out[d.name] = v;
      continue;
    }
    auto bad = [&](const std::string& why) {
      std::string at = where;
      if (where_of != nullptr)
        if (const auto own = where_of->find(d.name); own != where_of->end()) at = own->second;
      throw error(errc::config_value,
                  at + ": " + k + ": " + why + " (see `cosim types " + t.name + "`)");
    };
    if (it != given.end() && !d.not_settable.empty()) bad(d.not_settable);
    // Integers are numbers too (TOML `m = 1`).
    if (d.kind == param_kind::real && std::holds_alternative<std::int64_t>(v))
      v = static_cast<double>(std::get<std::int64_t>(v));
    const bool kind_ok =
        (d.kind == param_kind::real && std::holds_alternative<double>(v)) ||
        (d.kind == param_kind::integer && std::holds_alternative<std::int64_t>(v)) ||
        (d.kind == param_kind::boolean && std::holds_alternative<bool>(v)) ||
        (d.kind == param_kind::text && std::holds_alternative<std::string>(v)) ||
        (d.kind == param_kind::reals && std::holds_alternative<std::vector<double>>(v)) ||
        (d.kind == param_kind::texts && std::holds_alternative<std::vector<std::string>>(v));
    if (!kind_ok) bad(std::string("expected ") + to_string(d.kind));
    auto check_number = [&](double x) {
      if (!in_range(d, x))
        bad("value " + format_double(x) + " is out of range: allowed " + range_text(d) +
            (d.unit.empty() ? "" : " [" + d.unit + "]"));
    };
    if (const double* x = std::get_if<double>(&v)) check_number(*x);
    if (const std::int64_t* x = std::get_if<std::int64_t>(&v))
      check_number(static_cast<double>(*x));
    if (const auto* xs = std::get_if<std::vector<double>>(&v))
      for (double x : *xs) check_number(x);
    if (const std::string* s = std::get_if<std::string>(&v); s != nullptr && !d.choices.empty()) {
      bool ok = false;
      std::string list;
      for (const auto& c : d.choices) {
        ok = ok || c == *s;
        list += (list.empty() ? "" : ", ") + c;
      }
      if (!ok) bad("value " + quoted(*s) + " is not one of: " + list);
    }
    out[d.name] = std::move(v);
  }
  return out;
}

}  // namespace cosim::config
