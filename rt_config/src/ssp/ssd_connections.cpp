// SSP 1.0 connections between components, and the system's own connectors as external ports
// (ssd_reader.hpp).
#include <variant>

#include "ssp/ssd_reader.hpp"

namespace cosim::config::ssp {

ssd_reader::end_point ssd_reader::end_of(const xml_file& f, const pugi::xml_node& c,
                                         const char* elem_attr, const char* conn_attr) {
  end_point e;
  const std::string conn = f.required(c, conn_attr);
  if (c.attribute(elem_attr)) {
    const std::string elem = c.attribute(elem_attr).value();
    for (const auto& k : components_)
      if (k.name == elem) e.comp = &k;
    if (e.comp == nullptr) {
      std::vector<std::string> names;
      for (const auto& k : components_) names.push_back(k.name);
      f.fail(c, elem_attr,
             "no component of this system has that name (components: " + join(names) + ")");
    }
    e.conn = find_connector(e.comp->connectors, conn);
    if (e.conn == nullptr)
      f.fail(c, conn_attr,
             "component " + in_quotes(elem) +
                 " declares no connector of that name (its "
                 "<ssd:Connectors>: " +
                 connector_names(e.comp->connectors) +
                 "; SSP 1.0 Sect. 5.3.3: connected connectors are declared)");
  } else {
    e.conn = find_connector(system_connectors_, conn);
    if (e.conn == nullptr)
      f.fail(c, conn_attr,
             "the system declares no connector of that name (its <ssd:Connectors>: " +
                 connector_names(system_connectors_) + ")");
  }
  return e;
}

std::string ssd_reader::ref(const end_point& e) {
  return e.comp != nullptr ? e.comp->name + "." + e.conn->name : "system connector " + e.conn->name;
}

// The unit of a component's connector: as declared, else the FMU variable's.
std::string ssd_reader::unit_of(const end_point& e) {
  if (e.comp == nullptr || !e.conn->unit.empty()) return e.conn->unit;
  const fmi::model_description& md = e.comp->file->md;
  return md.variables[md.find(e.conn->name)].unit;
}

void ssd_reader::read_connections(const xml_file& f, const pugi::xml_node& conns) {
  if (!conns) return;
  std::map<std::string, pugi::xml_node> fed;  // "comp.input" -> the connection feeding it
  for (const pugi::xml_node& c : elements(conns)) {
    if (!is(c, ns_ssd, "Connection")) {
      if (is_presentation(c)) continue;
      f.unsupported(c, "expected <ssd:Connection>");
    }
    for (const char* a : {"startIndices", "endIndices"})
      if (c.attribute(a)) f.fail(c, a, "array connections are not supported", errc::config_key);
    for (const pugi::xml_node& t : elements(c)) {
      if (is_presentation(t)) continue;
      if (is(t, ns_ssc, "LinearTransformation") && f.opt_double(t, "factor").value_or(1.0) == 1.0 &&
          f.opt_double(t, "offset").value_or(0.0) == 0.0)
        continue;  // the identity
      f.unsupported(t,
                    "transformations on connections (the runtime passes values as they "
                    "are; only the identity LinearTransformation is accepted)");
    }
    end_point a = end_of(f, c, "startElement", "startConnector");
    end_point b = end_of(f, c, "endElement", "endConnector");
    // "start" and "end" say nothing about the direction; the kinds do (SSP 1.0 Sect. 5.3.4).
    if (a.comp == nullptr && b.comp == nullptr)
      f.unsupported(c, "a connection between two connectors of the system itself");
    if (a.comp != nullptr && b.comp != nullptr) {
      if (a.conn->kind == "input" && b.conn->kind == "output") std::swap(a, b);
      if (a.conn->kind != "output" || b.conn->kind != "input")
        f.fail(c, "startConnector",
               "connects " + ref(a) + " (kind " + a.conn->kind + ") and " + ref(b) + " (kind " +
                   b.conn->kind +
                   "); a connection runs from an output to an input "
                   "(parameter connections are not supported)",
               errc::config_key);
    } else {
      // An external port: the system's own connector, of the same kind as the component's.
      if (a.comp == nullptr) std::swap(a, b);  // a: the component's end
      if (a.conn->kind != b.conn->kind || (a.conn->kind != "input" && a.conn->kind != "output"))
        f.fail(c, a.comp == nullptr ? "endConnector" : "startConnector",
               "connects system connector " + in_quotes(b.conn->name) + " (kind " + b.conn->kind +
                   ") to " + ref(a) + " (kind " + a.conn->kind +
                   "); a system connector passes an input to inputs or an output from an "
                   "output",
               errc::config_key);
    }
    if (a.comp != nullptr && b.comp != nullptr) {
      check_units(f, c, a, b);
      feed(f, c, fed, ref(b));
      connections_out_.emplace_back(ref(a), ref(b));
    } else if (a.conn->kind == "output") {
      check_units(f, c, a, b);
      // The system's output is the component's: recorded as a column of that name.
      system_outputs_.emplace_back(ref(a), b.conn->name);
    } else {
      // The system's input: at top level only a bound value can feed it.
      const auto it = system_values_.find(b.conn->name);
      if (it == system_values_.end())
        f.fail(c, "",
               "system input " + in_quotes(b.conn->name) + " feeds " + ref(a) +
                   ", but nothing feeds the system input when the system runs on its "
                   "own: bind it to a value with a <ssd:ParameterBinding> of the "
                   "system, or remove the connection (" +
                   ref(a) + " then keeps the FMU's start value)");
      check_units(f, c, a, b);
      const param_value v = value_in(it->second, unit_of(a), ssp_type_of(a));
      double x = 0.0;
      if (const auto* d = std::get_if<double>(&v))
        x = *d;
      else if (const auto* i = std::get_if<std::int64_t>(&v))
        x = static_cast<double>(*i);
      else if (const auto* bo = std::get_if<bool>(&v))
        x = *bo ? 1.0 : 0.0;
      else
        it->second.file->fail(it->second.at, "name", "a String cannot feed an input");
      feed(f, c, fed, ref(a));
      sources_out_.emplace_back(ref(a), "constant:" + shortest(x));
    }
  }
}

void ssd_reader::feed(const xml_file& f, const pugi::xml_node& c,
                      std::map<std::string, pugi::xml_node>& fed, const std::string& input) {
  if (const auto it = fed.find(input); it != fed.end())
    f.fail(c, "",
           "input " + input + " is already fed by the connection at line " +
               std::to_string(f.line_of(it->second.offset_debug())) + "; an input is fed once");
  fed[input] = c;
}

std::string ssd_reader::ssp_type_of(const end_point& e) {
  const fmi::model_description& md = e.comp->file->md;
  return ssp_type(md.variables[md.find(e.conn->name)].type);
}

void ssd_reader::check_units(const xml_file& f, const pugi::xml_node& c, const end_point& a,
                             const end_point& b) {
  const std::string ua = unit_of(a), ub = unit_of(b);
  if (ua.empty() || ub.empty() || ua == ub) return;
  if (f.opt_bool(c, "suppressUnitConversion").value_or(false)) return;
  f.fail(c, "",
         ref(a) + " is in " + in_quotes(ua) + " and " + ref(b) + " in " + in_quotes(ub) +
             ": the runtime does not convert units on connections (give both the same "
             "unit, or suppressUnitConversion=\"true\" to pass the value as it is)",
         errc::config_key);
}

}  // namespace cosim::config::ssp
