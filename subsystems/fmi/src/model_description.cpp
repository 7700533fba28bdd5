// modelDescription.xml (FMI 2.0 Sect. 2.2, FMI 3.0 Sect. 2.4) with pugixml. Only what an
// importer of co-simulation FMUs uses is read; anything malformed in that part is an error
// naming the FMU, the line and the attribute.
#include "cosim/fmi/model_description.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <pugixml.hpp>
#include <sstream>
#include <string>

#include "cosim/runtime/error.hpp"

namespace cosim::fmi {

namespace {

class reader {
 public:
  reader(std::string_view xml, const std::string& where) : xml_(xml), where_(where) {}

  [[noreturn]] void fail(const pugi::xml_node& at, const std::string& why) const {
    std::string pos = "modelDescription.xml";
    if (at) pos += ":" + std::to_string(line_of(at.offset_debug()));
    throw error(errc::model, where_ + ": " + pos + ": " + why);
  }

  [[nodiscard]] std::size_t line_of(std::ptrdiff_t offset) const {
    if (offset < 0) return 0;
    const auto end = xml_.begin() + std::min<std::ptrdiff_t>(offset, std::ssize(xml_));
    return 1 + static_cast<std::size_t>(std::count(xml_.begin(), end, '\n'));
  }

  // xs:double: decimal, exponent, INF, -INF, NaN.
  [[nodiscard]] std::optional<double> opt_double(const pugi::xml_node& n, const char* attr) const {
    const pugi::xml_attribute a = n.attribute(attr);
    if (!a) return std::nullopt;
    std::string_view s = a.value();
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
    if (s == "INF") return HUGE_VAL;
    if (s == "-INF") return -HUGE_VAL;
    if (!s.empty() && s.front() == '+') s.remove_prefix(1);
    double v = 0.0;
    const auto res = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || res.ec != std::errc{} || res.ptr != s.data() + s.size())
      fail(n, std::string("attribute ") + attr + "=\"" + a.value() + "\" is not a number");
    return v;
  }

  [[nodiscard]] std::optional<bool> opt_bool(const pugi::xml_node& n, const char* attr) const {
    const pugi::xml_attribute a = n.attribute(attr);
    if (!a) return std::nullopt;
    const std::string_view s = a.value();
    if (s == "true" || s == "1") return true;
    if (s == "false" || s == "0") return false;
    fail(n, std::string("attribute ") + attr + "=\"" + a.value() +
                "\" is not a boolean (true, false, 1, 0)");
  }

  [[nodiscard]] std::optional<std::uint64_t> opt_unsigned(const pugi::xml_node& n,
                                                          const char* attr) const {
    const pugi::xml_attribute a = n.attribute(attr);
    if (!a) return std::nullopt;
    const std::string_view s = a.value();
    std::uint64_t v = 0;
    const auto res = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || res.ec != std::errc{} || res.ptr != s.data() + s.size())
      fail(n, std::string("attribute ") + attr + "=\"" + a.value() +
                  "\" is not a non-negative integer");
    return v;
  }

  [[nodiscard]] std::string required(const pugi::xml_node& n, const char* attr) const {
    const pugi::xml_attribute a = n.attribute(attr);
    if (!a || a.value()[0] == '\0')
      fail(n, std::string("<") + n.name() + "> needs the attribute " + attr);
    return a.value();
  }

  // Whitespace-separated unsigned integers (ModelStructure dependencies).
  [[nodiscard]] std::vector<std::uint64_t> list(const pugi::xml_node& n, const char* attr) const {
    std::vector<std::uint64_t> out;
    const std::string_view s = n.attribute(attr).value();
    std::size_t i = 0;
    while (i < s.size()) {
      if (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
        ++i;
        continue;
      }
      std::uint64_t v = 0;
      const auto res = std::from_chars(s.data() + i, s.data() + s.size(), v);
      if (res.ec != std::errc{})
        fail(n, std::string("attribute ") + attr + "=\"" + std::string(s) +
                    "\" is not a list of non-negative integers");
      i = static_cast<std::size_t>(res.ptr - s.data());
      if (i < s.size() && s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r')
        fail(n, std::string("attribute ") + attr + "=\"" + std::string(s) +
                    "\" is not a list of non-negative integers");
      out.push_back(v);
    }
    return out;
  }

 private:
  std::string_view xml_;
  const std::string& where_;
};

causality parse_causality(const reader& r, const pugi::xml_node& n, int major) {
  const pugi::xml_attribute a = n.attribute("causality");
  if (!a) return causality::local;
  const std::string_view s = a.value();
  if (s == "parameter") return causality::parameter;
  if (s == "calculatedParameter") return causality::calculated_parameter;
  if (s == "input") return causality::input;
  if (s == "output") return causality::output;
  if (s == "local") return causality::local;
  if (s == "independent") return causality::independent;
  if (major >= 3 && s == "structuralParameter") return causality::structural_parameter;
  r.fail(n, "causality=\"" + std::string(s) +
                "\" is not one of parameter, calculatedParameter, input, output, local, "
                "independent" +
                (major >= 3 ? ", structuralParameter" : ""));
}

variability parse_variability(const reader& r, const pugi::xml_node& n, variability def) {
  const pugi::xml_attribute a = n.attribute("variability");
  if (!a) return def;
  const std::string_view s = a.value();
  if (s == "constant") return variability::constant;
  if (s == "fixed") return variability::fixed;
  if (s == "tunable") return variability::tunable;
  if (s == "discrete") return variability::discrete;
  if (s == "continuous") return variability::continuous;
  r.fail(n, "variability=\"" + std::string(s) +
                "\" is not one of constant, fixed, tunable, discrete, continuous");
}

struct type_entry {
  const char* fmi2;
  const char* fmi3;
  var_type type;
};
constexpr type_entry type_table[] = {
    {"Real", "Float64", var_type::real},
    {"Integer", "Int32", var_type::integer},
    {"Boolean", "Boolean", var_type::boolean},
    {"String", "String", var_type::string},
    {"Enumeration", "Enumeration", var_type::enumeration},
    {nullptr, "Float32", var_type::float32},
    {nullptr, "Int8", var_type::int8},
    {nullptr, "UInt8", var_type::uint8},
    {nullptr, "Int16", var_type::int16},
    {nullptr, "UInt16", var_type::uint16},
    {nullptr, "UInt32", var_type::uint32},
    {nullptr, "Int64", var_type::int64},
    {nullptr, "UInt64", var_type::uint64},
    {nullptr, "Binary", var_type::binary},
    {nullptr, "Clock", var_type::clock},
};

std::optional<var_type> type_of(std::string_view element, int major) {
  for (const auto& e : type_table) {
    const char* n = major >= 3 ? e.fmi3 : e.fmi2;
    if (n != nullptr && element == n) return e.type;
  }
  return std::nullopt;
}

// Start/min/max of the value-carrying node (FMI 2: the type child, FMI 3: the variable).
void read_values(const reader& r, const pugi::xml_node& n, variable& v) {
  if (const pugi::xml_attribute s = n.attribute("start")) v.start_text = s.value();
  if (v.is_array) return;  // a list of start values; listed as text only
  switch (v.type) {
    case var_type::real:
    case var_type::float32:
    case var_type::integer:
    case var_type::int8:
    case var_type::uint8:
    case var_type::int16:
    case var_type::uint16:
    case var_type::uint32:
    case var_type::int64:
    case var_type::uint64:
    case var_type::enumeration:
      v.start = r.opt_double(n, "start");
      v.min = r.opt_double(n, "min");
      v.max = r.opt_double(n, "max");
      break;
    case var_type::boolean:
      if (const auto b = r.opt_bool(n, "start")) v.start = *b ? 1.0 : 0.0;
      break;
    case var_type::string:
    case var_type::binary:
    case var_type::clock:
      break;
  }
}

// FMI 2 ScalarVariable: attributes on the variable, type and values on its one child.
variable read_fmi2_variable(const reader& r, const pugi::xml_node& sv,
                            const std::map<std::string, std::string>& type_units) {
  variable v;
  v.name = r.required(sv, "name");
  const auto vr = r.opt_unsigned(sv, "valueReference");
  if (!vr || *vr > 0xffffffffULL)
    r.fail(sv, "variable \"" + v.name + "\" needs a valueReference (32-bit unsigned integer)");
  v.value_reference = static_cast<std::uint32_t>(*vr);
  v.description = sv.attribute("description").value();
  v.causal = parse_causality(r, sv, 2);
  v.variab = parse_variability(r, sv, variability::continuous);
  pugi::xml_node child;
  for (pugi::xml_node c = sv.first_child(); c; c = c.next_sibling()) {
    if (c.type() != pugi::node_element) continue;
    if (type_of(c.name(), 2)) {
      child = c;
      break;
    }
  }
  if (!child)
    r.fail(sv, "variable \"" + v.name +
                   "\" has no type element (Real, Integer, Boolean, String or Enumeration)");
  v.type = *type_of(child.name(), 2);
  v.declared_type = child.attribute("declaredType").value();
  v.unit = child.attribute("unit").value();
  if (v.unit.empty() && !v.declared_type.empty()) {
    const auto it = type_units.find(v.declared_type);
    if (it != type_units.end()) v.unit = it->second;
  }
  read_values(r, child, v);
  return v;
}

// FMI 3: the element name is the type; attributes carry everything.
variable read_fmi3_variable(const reader& r, const pugi::xml_node& e, var_type t,
                            const std::map<std::string, std::string>& type_units) {
  variable v;
  v.type = t;
  v.name = r.required(e, "name");
  const auto vr = r.opt_unsigned(e, "valueReference");
  if (!vr || *vr > 0xffffffffULL)
    r.fail(e, "variable \"" + v.name + "\" needs a valueReference (32-bit unsigned integer)");
  v.value_reference = static_cast<std::uint32_t>(*vr);
  v.description = e.attribute("description").value();
  v.causal = parse_causality(r, e, 3);
  // FMI 3.0 Sect. 2.4.7.4: continuous is the default for floats only.
  const bool is_float = t == var_type::real || t == var_type::float32;
  v.variab = parse_variability(r, e, is_float ? variability::continuous : variability::discrete);
  v.declared_type = e.attribute("declaredType").value();
  v.unit = e.attribute("unit").value();
  if (v.unit.empty() && !v.declared_type.empty()) {
    const auto it = type_units.find(v.declared_type);
    if (it != type_units.end()) v.unit = it->second;
  }
  v.is_array = static_cast<bool>(e.child("Dimension"));
  read_values(r, e, v);
  return v;
}

bool valid_identifier(const std::string& s) {
  if (s.empty() || (std::isalpha(static_cast<unsigned char>(s[0])) == 0 && s[0] != '_'))
    return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
  });
}

}  // namespace

const char* to_string(causality c) noexcept {
  switch (c) {
    case causality::parameter:
      return "parameter";
    case causality::calculated_parameter:
      return "calculatedParameter";
    case causality::input:
      return "input";
    case causality::output:
      return "output";
    case causality::local:
      return "local";
    case causality::independent:
      return "independent";
    case causality::structural_parameter:
      return "structuralParameter";
  }
  return "local";
}

const char* to_string(variability v) noexcept {
  switch (v) {
    case variability::constant:
      return "constant";
    case variability::fixed:
      return "fixed";
    case variability::tunable:
      return "tunable";
    case variability::discrete:
      return "discrete";
    case variability::continuous:
      return "continuous";
  }
  return "continuous";
}

const char* type_name(var_type t, int fmi_major) noexcept {
  for (const auto& e : type_table)
    if (e.type == t) return fmi_major >= 3 || e.fmi2 == nullptr ? e.fmi3 : e.fmi2;
  return "?";
}

std::size_t model_description::find(std::string_view name) const noexcept {
  for (std::size_t i = 0; i < variables.size(); ++i)
    if (variables[i].name == name) return i;
  return npos;
}

bool model_description::depends_on(std::size_t output, std::size_t input) const noexcept {
  for (const auto& o : outputs) {
    if (o.variable != output) continue;
    if (!o.depends_on) return true;  // "depends on all"
    return std::find(o.depends_on->begin(), o.depends_on->end(), input) != o.depends_on->end();
  }
  return true;  // not listed: assume the worst
}

bool model_description::dependencies_declared(std::size_t output) const noexcept {
  for (const auto& o : outputs)
    if (o.variable == output) return o.depends_on.has_value();
  return false;
}

bool model_description::feedthrough(std::size_t index) const noexcept {
  const bool any_input = std::any_of(variables.begin(), variables.end(), [](const variable& v) {
    return v.causal == causality::input;
  });
  for (const auto& o : outputs) {
    if (o.variable != index) continue;
    if (!o.depends_on) return any_input;  // "depends on all"
    return std::any_of(o.depends_on->begin(), o.depends_on->end(),
                       [&](std::size_t d) { return variables[d].causal == causality::input; });
  }
  return any_input;  // not listed: assume the worst
}

model_description parse_model_description(std::string_view xml, const std::string& where) {
  const reader r(xml, where);
  pugi::xml_document doc;
  const pugi::xml_parse_result res = doc.load_buffer(xml.data(), xml.size());
  if (!res)
    throw error(errc::model, where +
                                 ": modelDescription.xml:" + std::to_string(r.line_of(res.offset)) +
                                 ": not well-formed XML: " + res.description());
  const pugi::xml_node root = doc.child("fmiModelDescription");
  if (!root)
    throw error(errc::model, where + ": modelDescription.xml: the root element is <" +
                                 std::string(doc.document_element().name()) +
                                 ">, not <fmiModelDescription>");
  model_description md;
  md.fmi_version = r.required(root, "fmiVersion");
  if (md.fmi_version.rfind("2.", 0) == 0)
    md.fmi_major = 2;
  else if (md.fmi_version.rfind("3.", 0) == 0)
    md.fmi_major = 3;
  else
    r.fail(root, "fmiVersion=\"" + md.fmi_version +
                     "\" is not supported (FMI 2.0 and 3.0 co-simulation FMUs are)");
  const int major = md.fmi_major;
  md.model_name = r.required(root, "modelName");
  md.token = r.required(root, major == 2 ? "guid" : "instantiationToken");
  md.description = root.attribute("description").value();
  md.generation_tool = root.attribute("generationTool").value();
  md.model_exchange = static_cast<bool>(root.child("ModelExchange"));

  if (const pugi::xml_node cs = root.child("CoSimulation")) {
    cosimulation c;
    c.model_identifier = r.required(cs, "modelIdentifier");
    if (!valid_identifier(c.model_identifier))
      r.fail(cs, "modelIdentifier=\"" + c.model_identifier +
                     "\" is not a valid C identifier (FMI: it names the binary and prefixes "
                     "its functions)");
    c.can_handle_variable_communication_step_size =
        r.opt_bool(cs, "canHandleVariableCommunicationStepSize").value_or(false);
    c.can_get_and_set_fmu_state =
        r.opt_bool(cs, major == 2 ? "canGetAndSetFMUstate" : "canGetAndSetFMUState")
            .value_or(false);
    c.can_be_instantiated_only_once_per_process =
        r.opt_bool(cs, "canBeInstantiatedOnlyOncePerProcess").value_or(false);
    c.needs_execution_tool = r.opt_bool(cs, "needsExecutionTool").value_or(false);
    const auto order = r.opt_unsigned(cs, "maxOutputDerivativeOrder").value_or(0);
    if (order > 100) r.fail(cs, "maxOutputDerivativeOrder=" + std::to_string(order) + " is absurd");
    c.max_output_derivative_order = static_cast<int>(order);
    c.provides_directional_derivatives =
        r.opt_bool(cs,
                   major == 2 ? "providesDirectionalDerivative" : "providesDirectionalDerivatives")
            .value_or(false);
    if (major >= 3) {
      c.provides_intermediate_update = r.opt_bool(cs, "providesIntermediateUpdate").value_or(false);
      c.has_event_mode = r.opt_bool(cs, "hasEventMode").value_or(false);
      c.might_return_early_from_do_step =
          r.opt_bool(cs, "mightReturnEarlyFromDoStep").value_or(false);
    }
    md.cosim = c;
  }

  if (const pugi::xml_node de = root.child("DefaultExperiment")) {
    md.experiment.start_time = r.opt_double(de, "startTime");
    md.experiment.stop_time = r.opt_double(de, "stopTime");
    md.experiment.tolerance = r.opt_double(de, "tolerance");
    md.experiment.step_size = r.opt_double(de, "stepSize");
    auto finite = [&](const std::optional<double>& v, const char* name) {
      if (v && !std::isfinite(*v))
        r.fail(de, std::string("DefaultExperiment ") + name + " must be finite");
    };
    finite(md.experiment.start_time, "startTime");
    finite(md.experiment.stop_time, "stopTime");
    finite(md.experiment.step_size, "stepSize");
    if (md.experiment.step_size && !(*md.experiment.step_size > 0.0))
      r.fail(de, "DefaultExperiment stepSize must be > 0");
    if (md.experiment.stop_time &&
        !(*md.experiment.stop_time > md.experiment.start_time.value_or(0.0)))
      r.fail(de, "DefaultExperiment stopTime must be after startTime");
  }

  // Units of declared types (a variable without its own unit inherits its type's).
  std::map<std::string, std::string> type_units;
  if (const pugi::xml_node td = root.child("TypeDefinitions")) {
    for (pugi::xml_node t = td.first_child(); t; t = t.next_sibling()) {
      if (t.type() != pugi::node_element) continue;
      if (major == 2) {
        const pugi::xml_node real = t.child("Real");
        if (real) type_units[t.attribute("name").value()] = real.attribute("unit").value();
      } else {
        type_units[t.attribute("name").value()] = t.attribute("unit").value();
      }
    }
  }

  const pugi::xml_node mv = root.child("ModelVariables");
  if (!mv) r.fail(root, "<fmiModelDescription> has no <ModelVariables>");
  std::vector<pugi::xml_node> nodes;
  for (pugi::xml_node e = mv.first_child(); e; e = e.next_sibling()) {
    if (e.type() != pugi::node_element) continue;
    if (major == 2) {
      if (std::string_view(e.name()) != "ScalarVariable")
        r.fail(e, "<ModelVariables> holds <ScalarVariable> elements, not <" +
                      std::string(e.name()) + ">");
      md.variables.push_back(read_fmi2_variable(r, e, type_units));
    } else {
      const auto t = type_of(e.name(), 3);
      if (!t) r.fail(e, "unknown variable element <" + std::string(e.name()) + ">");
      md.variables.push_back(read_fmi3_variable(r, e, *t, type_units));
    }
    nodes.push_back(e);
  }
  {
    std::map<std::string_view, std::size_t> seen;
    for (std::size_t i = 0; i < md.variables.size(); ++i)
      if (!seen.emplace(md.variables[i].name, i).second)
        r.fail(nodes[i], "variable name \"" + md.variables[i].name + "\" appears twice");
  }
  if (md.fmi_major >= 3) {
    // FMI 3.0 Sect. 2.4.7: value references are unique (FMI 2 allows aliases, which share
    // one within a base type). A shared one would set an input through an output.
    std::map<std::uint32_t, std::size_t> seen;
    for (std::size_t i = 0; i < md.variables.size(); ++i) {
      const auto [it, fresh] = seen.emplace(md.variables[i].value_reference, i);
      if (!fresh)
        r.fail(nodes[i], "valueReference " + std::to_string(md.variables[i].value_reference) +
                             " of \"" + md.variables[i].name + "\" is also that of \"" +
                             md.variables[it->second].name +
                             "\" (FMI 3.0 value references are unique)");
    }
  }

  if (const pugi::xml_node ms = root.child("ModelStructure")) {
    // dependenciesKind: one known kind per dependency, and only with dependencies (FMI 2.0
    // Sect. 2.2.8, FMI 3.0 Sect. 2.4.8); an output listed once.
    const auto check_output = [&](const pugi::xml_node& u, const output_dependencies& o) {
      for (const output_dependencies& seen : md.outputs)
        if (seen.variable == o.variable)
          r.fail(u, "output \"" + md.variables[o.variable].name +
                        "\" is listed twice in <ModelStructure>");
      const pugi::xml_attribute kinds = u.attribute("dependenciesKind");
      if (!kinds) return;
      if (!o.depends_on)
        r.fail(u, "dependenciesKind without dependencies (one kind per dependency)");
      std::size_t n = 0;
      std::istringstream words(kinds.value());
      for (std::string k; words >> k; ++n) {
        const bool known = k == "dependent" || k == "constant" || k == "fixed" || k == "tunable" ||
                           k == "discrete" || (major >= 3 && k == "independent");
        if (!known)
          r.fail(u, "dependenciesKind \"" + k +
                        "\" is not one of dependent, constant, fixed, "
                        "tunable, discrete" +
                        (major >= 3 ? ", independent" : ""));
      }
      if (n != o.depends_on->size())
        r.fail(u, "dependenciesKind lists " + std::to_string(n) + (n == 1 ? " kind" : " kinds") +
                      " for " + std::to_string(o.depends_on->size()) + " dependencies");
    };
    if (major == 2) {
      // Outputs/Unknown: index and dependencies are 1-based ScalarVariable indices.
      for (pugi::xml_node u = ms.child("Outputs").child("Unknown"); u;
           u = u.next_sibling("Unknown")) {
        const auto idx = r.opt_unsigned(u, "index");
        if (!idx || *idx < 1 || *idx > md.variables.size())
          r.fail(u, "<Unknown> index must be from 1 to " + std::to_string(md.variables.size()));
        output_dependencies o;
        o.variable = static_cast<std::size_t>(*idx - 1);
        if (u.attribute("dependencies")) {
          o.depends_on.emplace();
          for (std::uint64_t d : r.list(u, "dependencies")) {
            if (d < 1 || d > md.variables.size())
              r.fail(u, "dependency " + std::to_string(d) + " is not a variable index (1 to " +
                            std::to_string(md.variables.size()) + ")");
            o.depends_on->push_back(static_cast<std::size_t>(d - 1));
          }
        }
        check_output(u, o);
        md.outputs.push_back(std::move(o));
      }
    } else {
      // Output: valueReference and dependencies are value references.
      auto index_of_vr = [&](const pugi::xml_node& at, std::uint64_t vr) {
        std::size_t found = model_description::npos;
        for (std::size_t i = 0; i < md.variables.size(); ++i)
          if (md.variables[i].value_reference == vr &&
              (found == model_description::npos || md.variables[i].causal == causality::input))
            found = i;
        if (found == model_description::npos)
          r.fail(at, "valueReference " + std::to_string(vr) + " names no variable");
        return found;
      };
      for (pugi::xml_node u = ms.child("Output"); u; u = u.next_sibling("Output")) {
        const auto vr = r.opt_unsigned(u, "valueReference");
        if (!vr) r.fail(u, "<Output> needs a valueReference");
        output_dependencies o;
        o.variable = model_description::npos;
        for (std::size_t i = 0; i < md.variables.size(); ++i)
          if (md.variables[i].value_reference == *vr && md.variables[i].causal == causality::output)
            o.variable = i;
        if (o.variable == model_description::npos)
          r.fail(u, "<Output valueReference=\"" + std::to_string(*vr) +
                        "\"> names no output variable");
        if (u.attribute("dependencies")) {
          o.depends_on.emplace();
          for (std::uint64_t d : r.list(u, "dependencies"))
            o.depends_on->push_back(index_of_vr(u, d));
        }
        check_output(u, o);
        md.outputs.push_back(std::move(o));
      }
    }
  }
  return md;
}

std::string binary_path_in_fmu(const model_description& md) {
  const std::string id = md.cosim ? md.cosim->model_identifier : std::string("?");
  return (md.fmi_major >= 3 ? "binaries/x86_64-linux/" : "binaries/linux64/") + id + ".so";
}

}  // namespace cosim::fmi
