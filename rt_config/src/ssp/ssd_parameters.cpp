// SSP 1.0 parameter bindings: inline and file parameter sets (.ssv), merged from component
// to system level and converted to the connectors' units (ssd_reader.hpp).
#include <variant>

#include "ssp/ssd_reader.hpp"

namespace cosim::config::ssp {

bound_values ssd_reader::read_bindings(const xml_file& f, const pugi::xml_node& list) {
  bound_values out;  // later bindings take priority (SSP 1.0 Sect. 5.3.6)
  for (const pugi::xml_node& b : elements(list)) {
    if (!is(b, ns_ssd, "ParameterBinding")) {
      if (is_presentation(b)) continue;
      f.unsupported(b, "expected <ssd:ParameterBinding>");
    }
    const std::string type = b.attribute("type") ? b.attribute("type").value() : parameter_set_mime;
    if (type != parameter_set_mime)
      f.fail(b, "type", std::string("only parameter sets (") + parameter_set_mime + ") are read",
             errc::config_key);
    const std::string base = b.attribute("sourceBase") ? b.attribute("sourceBase").value() : "SSD";
    if (base != "SSD")
      f.fail(b, "sourceBase", "only \"SSD\" is read (a parameter file inside the component is not)",
             errc::config_key);
    const std::string prefix = b.attribute("prefix").value();
    pugi::xml_node inline_values;
    for (const pugi::xml_node& c : elements(b)) {
      if (is(c, ns_ssd, "ParameterValues")) {
        inline_values = c;
      } else if (is(c, ns_ssd, "ParameterMapping")) {
        f.unsupported(c,
                      "parameter mappings (name the FMU's parameters in the parameter set "
                      "itself)");
      } else if (!is_presentation(c)) {
        f.unsupported(c, "unknown element of <ssd:ParameterBinding>");
      }
    }
    const bool has_source = static_cast<bool>(b.attribute("source"));
    if (has_source == static_cast<bool>(inline_values))
      f.fail(b, "source", "a binding has either a source or an inline <ssd:ParameterValues>");
    const xml_file* sf = &f;
    pugi::xml_node set;
    if (has_source) {
      const std::string path = resolve(f, b, "source");
      files_.push_back(std::make_unique<xml_file>(path, shown_path(path)));
      sf = files_.back().get();
      set = sf->root();
      if (!is(set, ns_ssv, "ParameterSet"))
        sf->fail(set, "",
                 "not a parameter set: the root element must be ParameterSet in "
                 "namespace " +
                     std::string(ns_ssv),
                 errc::config_syntax);
    } else {
      for (const pugi::xml_node& c : elements(inline_values)) {
        if (!is(c, ns_ssv, "ParameterSet"))
          f.unsupported(c,
                        "expected one <ssv:ParameterSet> (namespace " + std::string(ns_ssv) + ")");
        if (set) f.fail(c, "", "<ssd:ParameterValues> holds one <ssv:ParameterSet>");
        set = c;
      }
      if (!set) f.fail(inline_values, "", "holds no <ssv:ParameterSet>");
    }
    // The prefix turns a component's set into hierarchical names at system level.
    for (auto& [name, v] : read_parameter_set(*sf, set))
      out.insert_or_assign(prefix + name, std::move(v));
  }
  return out;
}

bound_values ssd_reader::read_parameter_set(const xml_file& f, const pugi::xml_node& set) {
  const std::string version = f.required(set, "version");
  if (version != "1.0") f.fail(set, "version", "only SSP 1.0 parameter sets are read");
  unit_tables_.push_back(std::make_unique<unit_table>());
  unit_table* units = unit_tables_.back().get();
  for (const pugi::xml_node& c : elements(set))
    if (is(c, ns_ssv, "Units")) read_units(f, c, *units);
  bound_values out;
  for (const pugi::xml_node& c : elements(set)) {
    if (is(c, ns_ssv, "Units") || is(c, ns_ssv, "Enumerations") || is_presentation(c)) continue;
    if (!is(c, ns_ssv, "Parameters")) f.unsupported(c, "unknown element of <ssv:ParameterSet>");
    for (const pugi::xml_node& p : elements(c)) {
      if (!is(p, ns_ssv, "Parameter")) {
        if (is_presentation(p)) continue;
        f.unsupported(p, "expected <ssv:Parameter>");
      }
      const std::string name = f.required(p, "name");
      if (out.count(name) != 0) f.fail(p, "name", "parameter given twice in this set");
      bound_value bv;
      bv.units = units;
      bv.file = &f;
      bv.at = p;
      bool typed = false;
      for (const pugi::xml_node& t : elements(p)) {
        if (is_presentation(t)) continue;
        if (typed) f.fail(t, "", "a parameter has one value");
        typed = true;
        bv.value_at = t;
        if (is(t, ns_ssv, "Real")) {
          if (!t.attribute("value")) f.fail(t, "value", "required");
          bv.value = *f.opt_double(t, "value");
          bv.unit = t.attribute("unit").value();
        } else if (is(t, ns_ssv, "Integer")) {
          bv.value = f.to_int(t, "value");
        } else if (is(t, ns_ssv, "Boolean")) {
          if (!t.attribute("value")) f.fail(t, "value", "required");
          bv.value = *f.opt_bool(t, "value");
        } else if (is(t, ns_ssv, "String")) {
          if (!t.attribute("value")) f.fail(t, "value", "required");
          bv.value = std::string(t.attribute("value").value());
        } else if (is(t, ns_ssv, "Enumeration") || is(t, ns_ssv, "Binary")) {
          f.unsupported(t,
                        "enumeration and binary parameter values (FMU parameters of type "
                        "Real, Integer, Boolean and String are set)");
        } else {
          f.unsupported(t, "unknown element of <ssv:Parameter>");
        }
      }
      if (!typed) f.fail(p, "name", "has no value (<ssv:Real>, <ssv:Integer>, ...)");
      out.emplace(name, std::move(bv));
    }
  }
  return out;
}

// "x.ssp!/resources/p.ssv" for a file inside the package, else the path.
std::string ssd_reader::shown_path(const std::string& path) const {
  if (package_dir_.empty()) return path;
  return package_shown_ + "!/" + fs::path(path).lexically_relative(package_dir_).string();
}

// Component parameters: the component's bindings, overridden by the system's bindings
// ("COMPONENT.NAME"; SSP 1.0 Sect. 5.3.6: higher levels take precedence); units converted
// to the connector's.
void ssd_reader::resolve_parameters_of_components() {
  std::vector<bound_values> merged;
  for (const auto& c : components_) merged.push_back(c.bindings);
  for (auto& [name, v] : system_bindings_) {
    const auto dot = name.find('.');
    std::size_t i = components_.size();
    if (dot != std::string::npos)
      for (std::size_t k = 0; k < components_.size(); ++k)
        if (components_[k].name == name.substr(0, dot)) i = k;
    if (i < components_.size()) {
      merged[i].insert_or_assign(name.substr(dot + 1), v);
      continue;
    }
    if (find_connector(system_connectors_, name) != nullptr) {
      system_values_.insert_or_assign(name, v);
      continue;
    }
    std::vector<std::string> names;
    for (const auto& c : components_) names.push_back(c.name);
    v.file->fail(v.at, "name",
                 "names neither a system connector nor COMPONENT.PARAMETER of a component "
                 "of this system (components: " +
                     join(names) + "; system connectors: " + connector_names(system_connectors_) +
                     "; a binding's prefix=\"COMPONENT.\" applies a component's set)");
  }
  params_.resize(components_.size());
  for (std::size_t i = 0; i < components_.size(); ++i)
    for (auto& [name, v] : merged[i]) {
      // SSP 1.0 would ignore a name the FMU does not have; a typo then silently keeps the
      // default, so it is refused here.
      const component& c = components_[i];
      const fmi::model_description& md = c.file->md;
      const std::size_t vi = md.find(name);
      if (vi == fmi::model_description::npos)
        v.file->fail(v.at, "name",
                     "the FMU of component " + in_quotes(c.name) +
                         " has no variable of that name (" + variable_list(md) + ")");
      const fmi::variable& var = md.variables[vi];
      if (var.causal != fmi::causality::parameter || var.variab == fmi::variability::constant)
        v.file->fail(v.at, "name",
                     "sets " + c.name + "." + name + ", which the FMU declares with causality " +
                         in_quotes(fmi::to_string(var.causal)) + " and variability " +
                         in_quotes(fmi::to_string(var.variab)) +
                         "; only (non-constant) parameters are set");
      if (var.is_array || !fmi::is_supported(var.type))
        v.file->fail(v.at, "name",
                     "sets " + c.name + "." + name + " of type " +
                         fmi::type_name(var.type, md.fmi_major) + (var.is_array ? " (array)" : "") +
                         "; only number, Boolean and Enumeration parameters are set");
      const connector* k = find_connector(c.connectors, name);
      params_[i][name] =
          value_in(v, k != nullptr && !k->unit.empty() ? k->unit : var.unit, ssp_type(var.type));
    }
}

// The bound value in the connector's unit, checked against its declared type.
param_value ssd_reader::value_in(const bound_value& v, const std::string& unit,
                                 const std::string& type) {
  const char* kind = std::holds_alternative<double>(v.value)         ? "Real"
                     : std::holds_alternative<std::int64_t>(v.value) ? "Integer"
                     : std::holds_alternative<bool>(v.value)         ? "Boolean"
                                                                     : "String";
  if (!type.empty() && type != kind)
    v.file->fail(v.value_at, "", std::string("a ") + kind + " value for a " + type);
  if (v.unit.empty() || unit.empty() || v.unit == unit) return v.value;
  const unit_def* from = find_unit(v.units, units_, v.unit);
  const unit_def* to = find_unit(v.units, units_, unit);
  if (from == nullptr || to == nullptr || !convertible(*from, *to))
    v.file->fail(v.value_at, "unit",
                 "cannot be converted to the connector's unit " + in_quotes(unit) +
                     (from == nullptr || to == nullptr
                          ? " (define both as <ssc:Unit> in the description's or the "
                            "parameter set's <Units>)"
                          : " (different base units)"));
  return convert(std::get<double>(v.value), *from, *to);
}

}  // namespace cosim::config::ssp
