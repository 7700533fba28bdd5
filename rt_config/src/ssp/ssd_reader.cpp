// SSP 1.0 System Structure Description: the description, its system, components and
// connectors, the FMUs they name, the default experiment, and the system file they give
// (ssd_reader.hpp).
#include "ssp/ssd_reader.hpp"

#include <algorithm>
#include <cctype>
#include <type_traits>
#include <variant>

#include "fmu_types.hpp"

namespace cosim::config::ssp {

const connector* find_connector(const std::vector<connector>& cs, std::string_view name) {
  for (const auto& c : cs)
    if (c.name == name) return &c;
  return nullptr;
}

std::string connector_names(const std::vector<connector>& cs) {
  std::vector<std::string> names;
  names.reserve(cs.size());
  for (const auto& c : cs) names.push_back(c.name);
  return names.empty() ? "none" : join(names);
}

/// `ssd`: the description's path; `shown`: its name in messages; `package_dir`: the folder
/// an .ssp was unpacked into ("" for a bare .ssd), which relative URIs may not leave.
ssd_reader::ssd_reader(const std::string& ssd, std::string shown, std::string package_dir,
                       std::string package_shown)
    : package_dir_(std::move(package_dir)), package_shown_(std::move(package_shown)) {
  files_.push_back(std::make_unique<xml_file>(ssd, std::move(shown)));
}

toml::table ssd_reader::read() {
  const xml_file& f = *files_.front();
  const pugi::xml_node root = f.root();
  if (!is(root, ns_ssd, "SystemStructureDescription"))
    f.fail(root, "",
           "not a System Structure Description: the root element must be "
           "SystemStructureDescription in namespace " +
               std::string(ns_ssd),
           errc::config_syntax);
  const std::string version = f.required(root, "version");
  if (version != "1.0") f.fail(root, "version", "only SSP 1.0 descriptions are read");
  pugi::xml_node system, experiment;
  // Units first: parameter values refer to them wherever they are.
  for (const pugi::xml_node& c : elements(root))
    if (is(c, ns_ssd, "Units")) read_units(f, c, units_);
  for (const pugi::xml_node& c : elements(root)) {
    if (is(c, ns_ssd, "System")) {
      if (system) f.fail(c, "name", "a description has one top-level <ssd:System>");
      system = c;
    } else if (is(c, ns_ssd, "DefaultExperiment")) {
      experiment = c;
    } else if (is(c, ns_ssd, "Units") || is(c, ns_ssd, "Enumerations") || is_presentation(c)) {
      // Units read above; enumerations only serve Enumeration connectors, refused below.
    } else {
      f.unsupported(c, "unknown element of <SystemStructureDescription>");
    }
  }
  if (!system) f.fail(root, "", "has no <ssd:System>");
  read_system(f, system);
  check_fmus(f);
  resolve_parameters_of_components();
  read_connections(f, connections_);
  read_experiment(f, experiment);
  if (!macro_step_ && tool_step_) {  // a system annotation without a DefaultExperiment
    macro_step_ = tool_step_;
    macro_step_from_ = tool_step_from_;
  }
  if (!macro_step_) {
    std::string declared;
    for (const auto& c : components_)
      if (const auto h = c.file->md.experiment.step_size; h && *h > 0.0) {
        macro_step_ = std::min(macro_step_.value_or(*h), *h);  // the finest of the FMUs'
        declared += (declared.empty() ? "" : ", ") + c.name + ": " + shortest(*h) + " s";
      }
    if (macro_step_)
      macro_step_from_ = "the finest DefaultExperiment stepSize of its FMUs (" + declared +
                         "); the description has no fixed-step annotation";
  }
  return table();
}

void ssd_reader::read_system(const xml_file& f, const pugi::xml_node& sys) {
  pugi::xml_node bindings, elems, conns;
  for (const pugi::xml_node& c : elements(sys)) {
    if (is(c, ns_ssd, "Connectors")) {
      system_connectors_ = read_connectors(f, c);
    } else if (is(c, ns_ssd, "ParameterBindings")) {
      bindings = c;
    } else if (is(c, ns_ssd, "Elements")) {
      elems = c;
    } else if (is(c, ns_ssd, "Connections")) {
      conns = c;
    } else if (is(c, ns_ssd, "SignalDictionaries")) {
      // Definitions only; a <SignalDictionaryReference> using one is refused below.
    } else if (is(c, ns_ssd, "Annotations")) {
      read_system_annotations(f, c);
    } else if (!is_presentation(c)) {
      f.unsupported(c, "unknown element of <ssd:System>");
    }
  }
  if (elems)
    for (const pugi::xml_node& e : elements(elems)) {
      if (is(e, ns_ssd, "Component")) {
        read_component(f, e);
      } else if (is(e, ns_ssd, "System")) {
        f.unsupported(e,
                      "nested systems (the runtime runs one flat system; move the "
                      "components of \"" +
                          std::string(e.attribute("name").value()) +
                          "\" into the top-level system)");
      } else if (is(e, ns_ssd, "SignalDictionaryReference")) {
        f.unsupported(e, "signal dictionaries (connect the components directly)");
      } else {
        f.unsupported(e, "unknown element of <ssd:Elements>");
      }
    }
  if (components_.empty()) f.fail(sys, "name", "the system has no <ssd:Component>");
  if (bindings) system_bindings_ = read_bindings(f, bindings);
  connections_ = conns;
}

std::vector<connector> ssd_reader::read_connectors(const xml_file& f, const pugi::xml_node& list) {
  static const std::vector<std::string> kinds{
      "input",    "output", "parameter", "calculatedParameter", "structuralParameter",
      "constant", "local",  "inout",     "unspecified"};
  std::vector<connector> out;
  for (const pugi::xml_node& c : elements(list)) {
    if (!is(c, ns_ssd, "Connector")) {
      if (is_presentation(c)) continue;
      f.unsupported(c, "expected <ssd:Connector>");
    }
    connector k;
    k.at = c;
    k.name = f.required(c, "name");
    k.kind = f.required(c, "kind");
    if (std::find(kinds.begin(), kinds.end(), k.kind) == kinds.end())
      f.fail(c, "kind", "must be one of: " + join(kinds));
    if (find_connector(out, k.name) != nullptr) f.fail(c, "name", "connector declared twice");
    for (const pugi::xml_node& t : elements(c)) {
      const std::string_view l = local_name(t);
      if (namespace_of(t) == ns_ssc && (l == "Real" || l == "Integer" || l == "Boolean" ||
                                        l == "String" || l == "Enumeration" || l == "Binary")) {
        if (!k.type.empty()) f.fail(t, "", "a connector has one type");
        k.type = std::string(l);
        if (l == "Real") k.unit = t.attribute("unit").value();
      } else if (!is_presentation(t)) {
        f.unsupported(t,
                      "unknown element of <ssd:Connector> (array dimensions and clocks "
                      "are SSP 2.0)");
      }
    }
    out.push_back(std::move(k));
  }
  return out;
}

void ssd_reader::read_component(const xml_file& f, const pugi::xml_node& e) {
  component c;
  c.at = e;
  c.name = f.required(e, "name");
  // The name becomes a subsystem name and the first part of "NAME.VARIABLE" references.
  if (c.name.find('.') != std::string::npos)
    f.fail(e, "name",
           "a component name may not contain '.' (it separates component and "
           "variable in connections and columns)");
  for (const auto& o : components_)
    if (o.name == c.name) f.fail(e, "name", "two elements of the system have this name");
  const std::string type = e.attribute("type") ? e.attribute("type").value() : fmu_mime;
  if (type != fmu_mime)
    f.unsupported(e, "component type=" + in_quotes(type) + " (only FMUs, " + fmu_mime +
                         ", are run; nested SSP/SSD components are not)");
  const std::string impl =
      e.attribute("implementation") ? e.attribute("implementation").value() : "any";
  if (impl != "any" && impl != "CoSimulation")
    f.fail(e, "implementation", "only co-simulation FMUs run here (allowed: any, CoSimulation)",
           errc::config_key);
  if (!e.attribute("source"))
    f.fail(e, "source", "a component without a source has no implementation to run");
  c.fmu = resolve(f, e, "source");
  pugi::xml_node bindings;
  for (const pugi::xml_node& k : elements(e)) {
    if (is(k, ns_ssd, "Connectors")) {
      c.connectors = read_connectors(f, k);
    } else if (is(k, ns_ssd, "ParameterBindings")) {
      bindings = k;
    } else if (!is_presentation(k)) {
      f.unsupported(k, "unknown element of <ssd:Component>");
    }
  }
  components_.push_back(std::move(c));
  if (bindings) components_.back().bindings = read_bindings(f, bindings);
}

// A relative URI (SSP 1.0: resolved against the SSD) or a file: URI, as an absolute path
// to an existing file.
std::string ssd_reader::resolve(const xml_file& f, const pugi::xml_node& n, const char* attr) {
  const std::string uri = n.attribute(attr).value();
  if (uri.find_first_of("?#") != std::string::npos)
    f.fail(n, attr,
           "URI queries and fragments are not supported (a relative path, e.g. "
           "\"resources/model.fmu\")",
           errc::config_key);
  std::string path;
  const auto colon = uri.find(':');
  const bool has_scheme = colon != std::string::npos && colon > 0 &&
                          std::isalpha(static_cast<unsigned char>(uri[0])) && uri.find('/') > colon;
  if (has_scheme) {
    if (lower(uri.substr(0, colon)) != "file" || uri.compare(colon, 3, "://") != 0)
      f.fail(n, attr, "only relative URIs and file:// URIs are read", errc::config_key);
    // SSP 1.0 Sect. 7: a package is self-contained; a file URI names a file outside it.
    if (!package_dir_.empty())
      f.fail(n, attr,
             "a file URI points outside the package " + package_shown_ +
                 ", which may only use its own files (a relative URI, e.g. "
                 "\"resources/model.fmu\")",
             errc::config_key);
    std::string rest = uri.substr(colon + 3);
    if (rest.rfind("localhost/", 0) == 0) rest = rest.substr(9);
    if (rest.empty() || rest.front() != '/')
      f.fail(n, attr, "a file URI names a local absolute path (file:///...)", errc::config_key);
    const auto decoded = percent_decode(rest);
    if (!decoded) f.fail(n, attr, "bad percent-encoding");
    path = *decoded;
  } else {
    const auto decoded = percent_decode(uri);
    if (!decoded) f.fail(n, attr, "bad percent-encoding");
    if (decoded->empty()) f.fail(n, attr, "empty");
    if (decoded->front() == '/')
      f.fail(n, attr,
             "a relative URI does not start with '/' (use file:///... for an "
             "absolute path)");
    path = (f.dir() / *decoded).lexically_normal().string();
    if (!package_dir_.empty()) {
      // Inside a package a relative URI must stay inside it (SSP 1.0 Sect. 7).
      const std::string base = (fs::path(package_dir_) / "").lexically_normal().string();
      if (path.rfind(base, 0) != 0) f.fail(n, attr, "leaves the package " + package_shown_);
    }
  }
  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (ec || !fs::exists(st))
    f.fail(n, attr, "no such file" + (package_dir_.empty() ? ": " + path : " in " + package_shown_),
           errc::io);
  if (!fs::is_regular_file(st)) f.fail(n, attr, "not a regular file: " + path, errc::io);
  return fs::absolute(fs::path(path), ec).lexically_normal().string();
}

// Each component's FMU (its modelDescription.xml), and its declared connectors against the
// FMU's variables: SSP 1.0 Sect. 5.3.3, names must match and kinds match causalities.
void ssd_reader::check_fmus(const xml_file& f) {
  for (auto& c : components_) {
    try {
      c.file = fmi::read_fmu(c.fmu);
      fmi::require_cosimulation(*c.file);
    } catch (const error& e) {
      f.fail(c.at, "source", e.what(), e.code());
    }
    const fmi::model_description& md = c.file->md;
    for (const connector& k : c.connectors) {
      const std::size_t i = md.find(k.name);
      if (i == fmi::model_description::npos)
        f.fail(k.at, "name",
               "the FMU of component " + in_quotes(c.name) + " has no variable of that name (" +
                   variable_list(md) + ")");
      const fmi::variable& v = md.variables[i];
      if (!kind_matches(k.kind, v))
        f.fail(k.at, "kind",
               "the FMU's variable has causality " + in_quotes(fmi::to_string(v.causal)) +
                   " (and variability " + in_quotes(fmi::to_string(v.variab)) + ")");
      if (!k.type.empty() && k.type != ssp_type(v.type))
        f.fail(k.at, "name",
               "declared " + k.type + ", but the FMU's variable is " +
                   fmi::type_name(v.type, md.fmi_major));
      if (!k.unit.empty() && !v.unit.empty() && k.unit != v.unit)
        f.fail(k.at, "name",
               "declared in unit " + in_quotes(k.unit) + ", but the FMU's variable is in " +
                   in_quotes(v.unit) + " (the runtime does not convert units)");
    }
  }
}

bool ssd_reader::kind_matches(const std::string& kind, const fmi::variable& v) {
  using fmi::causality;
  if (kind == "input") return v.causal == causality::input;
  if (kind == "output") return v.causal == causality::output;
  if (kind == "parameter") return v.causal == causality::parameter;
  if (kind == "calculatedParameter") return v.causal == causality::calculated_parameter;
  if (kind == "structuralParameter") return v.causal == causality::structural_parameter;
  if (kind == "local") return v.causal == causality::local;
  if (kind == "constant") return v.variab == fmi::variability::constant;
  return false;  // inout, unspecified: no FMU variable is either
}

// The SSP connector type of an FMU variable type (SSP 1.0 ssc:Real ... for FMI 2.0; FMI 3.0
// Float64 and Int32 are the same numbers).
std::string ssd_reader::ssp_type(fmi::var_type t) {
  switch (t) {
    case fmi::var_type::real:
    case fmi::var_type::float32:
      return "Real";
    case fmi::var_type::boolean:
      return "Boolean";
    case fmi::var_type::string:
      return "String";
    case fmi::var_type::enumeration:
      return "Enumeration";
    case fmi::var_type::binary:
      return "Binary";
    case fmi::var_type::clock:
      return "Clock";
    default:
      return "Integer";
  }
}

// "inputs: u; outputs: y; parameters: gain" (at most 20 names each).
std::string ssd_reader::variable_list(const fmi::model_description& md) {
  std::string out;
  for (const auto& [c, label] : {std::pair{fmi::causality::input, "inputs"},
                                 {fmi::causality::output, "outputs"},
                                 {fmi::causality::parameter, "parameters"}}) {
    std::vector<std::string> names;
    for (const auto& v : md.variables)
      if (v.causal == c) names.push_back(v.name);
    if (names.size() > 20) {
      names.resize(20);
      names.emplace_back("...");
    }
    out += (out.empty() ? "" : "; ") + std::string(label) + ": " +
           (names.empty() ? "none" : join(names));
  }
  return out;
}

void ssd_reader::read_experiment(const xml_file& f, const pugi::xml_node& e) {
  if (!e) return;
  const double start = f.opt_double(e, "startTime").value_or(0.0);
  if (start != 0.0)
    f.fail(e, "startTime", "runs start at t = 0 (give startTime=\"0\", stopTime = the duration)",
           errc::config_key);
  if (const auto stop = f.opt_double(e, "stopTime")) {
    if (!(*stop > start)) f.fail(e, "stopTime", "must be after startTime");
    duration_ = *stop - start;
  }
  for (const pugi::xml_node& list : elements(e)) {
    if (local_name(list) != "Annotations")
      f.unsupported(list, "unknown element of <ssd:DefaultExperiment>");
    for (const pugi::xml_node& a : elements(list)) {
      if (is(a, ns_ssc, "Annotation") &&
          std::string_view(a.attribute("type").value()) == osp_annotation) {
        read_osp_algorithm(f, a);
        continue;
      }
      if (!is(a, ns_ssc, "Annotation") ||
          std::string_view(a.attribute("type").value()) != run_annotation)
        continue;  // another tool's annotation
      for (const pugi::xml_node& r : elements(a)) {
        if (local_name(r) != "Run")
          f.unsupported(r, std::string("unknown element of the ") + run_annotation +
                               " annotation (expected <Run macroStep=\"H\"/>)");
        for (const pugi::xml_attribute& at : r.attributes())
          if (std::string_view(at.name()) != "macroStep" &&
              std::string_view(at.name()).rfind("xmlns", 0) != 0)
            f.fail(r, at.name(), "unknown attribute (allowed: macroStep)", errc::config_key);
        if (!r.attribute("macroStep")) f.fail(r, "macroStep", "required");
        macro_step_ = *f.opt_double(r, "macroStep");
        if (!(*macro_step_ > 0.0)) f.fail(r, "macroStep", "must be positive [s]");
        macro_step_from_ = f.where(r, "macroStep");
      }
    }
  }
  // cosim's own annotation wins over another tool's fixed step.
  if (!macro_step_ && tool_step_) {
    macro_step_ = tool_step_;
    macro_step_from_ = tool_step_from_;
  }
}

// A step annotation of another master's fixed-step algorithm, taken as the macro step.
void ssd_reader::take_tool_step(const xml_file& f, const pugi::xml_node& n, const char* attr) {
  const double h = *f.opt_double(n, attr);
  if (!(h > 0.0)) f.fail(n, attr, "must be positive [s]");
  if (tool_step_ && *tool_step_ != h)
    f.fail(n, attr,
           "another fixed-step annotation gives " + shortest(*tool_step_) + " s (" +
               tool_step_from_ + "); give one, or the cosim.run annotation");
  tool_step_ = h;
  tool_step_from_ = f.where(n, attr);
}

// Open Simulation Platform (libcosim): <ssc:Annotation type="com.opensimulationplatform">
// <osp:Algorithm><osp:FixedStepAlgorithm baseStepSize="H"/></osp:Algorithm> in the
// DefaultExperiment (stepSize in its older form).
void ssd_reader::read_osp_algorithm(const xml_file& f, const pugi::xml_node& a) {
  for (const pugi::xml_node& alg : elements(a)) {
    if (local_name(alg) != "Algorithm") continue;  // other OSP settings
    for (const pugi::xml_node& x : elements(alg)) {
      if (local_name(x) != "FixedStepAlgorithm")
        f.unsupported(x,
                      "master algorithms other than FixedStepAlgorithm (this runtime "
                      "steps at a fixed macro step)");
      const char* attr = x.attribute("baseStepSize") ? "baseStepSize" : "stepSize";
      if (!x.attribute(attr)) f.fail(x, "baseStepSize", "required");
      take_tool_step(f, x, attr);
    }
  }
}

// OMSimulator: <ssc:Annotation type="org.openmodelica"> in the system's annotations, with
// <oms:SimulationInformation><oms:FixedStepMaster stepSize="H"/>.
void ssd_reader::read_system_annotations(const xml_file& f, const pugi::xml_node& list) {
  for (const pugi::xml_node& a : elements(list)) {
    if (!is(a, ns_ssc, "Annotation") ||
        std::string_view(a.attribute("type").value()) != oms_annotation)
      continue;
    for (const pugi::xml_node& outer : elements(a))
      for (const pugi::xml_node& info : elements(outer))
        if (local_name(info) == "SimulationInformation")
          for (const pugi::xml_node& m : elements(info))
            if (local_name(m) == "FixedStepMaster" && m.attribute("stepSize"))
              take_tool_step(f, m, "stepSize");
  }
}

toml::table ssd_reader::table() const {
  toml::table root;
  toml::table run;
  if (duration_) run.insert("duration", *duration_);
  if (macro_step_) run.insert("macro_step", *macro_step_);
  // The components' order in the description (the subsystem tables come out sorted).
  toml::array order;
  for (const auto& c : components_) order.push_back(c.name);
  run.insert("order", std::move(order));
  root.insert("run", std::move(run));

  toml::table subs;
  for (std::size_t i = 0; i < components_.size(); ++i) {
    toml::table s;
    s.insert("type", fmu_type_name(components_[i].fmu));
    if (!params_[i].empty()) {
      toml::table p;
      for (const auto& entry : params_[i]) {
        const std::string& name = entry.first;
        // Bindings hold numbers, booleans and strings only (read_parameter_set).
        std::visit(
            [&p, &name](const auto& x) {
              using T = std::decay_t<decltype(x)>;
              if constexpr (std::is_same_v<T, double> || std::is_same_v<T, std::int64_t> ||
                            std::is_same_v<T, bool> || std::is_same_v<T, std::string>)
                p.insert(name, x);
            },
            entry.second);
      }
      s.insert("parameters", std::move(p));
    }
    subs.insert(components_[i].name, std::move(s));
  }
  root.insert("subsystems", std::move(subs));

  if (!connections_out_.empty()) {
    toml::array a;
    for (const auto& [from, to] : connections_out_)
      a.push_back(toml::table{{"from", from}, {"to", to}});
    root.insert("connections", std::move(a));
  }
  if (!sources_out_.empty()) {
    toml::array a;
    for (const auto& [to, signal] : sources_out_)
      a.push_back(toml::table{{"to", to}, {"signal", signal}});
    root.insert("sources", std::move(a));
  }
  // Every output of every component (the FMU's, declared as connectors or not).
  toml::array record;
  for (const auto& c : components_)
    for (const auto& v : c.file->md.variables)
      if (v.causal == fmi::causality::output && !v.is_array && fmi::is_supported(v.type))
        record.push_back(c.name + "." + v.name);
  for (const auto& [ref, as] : system_outputs_)
    record.push_back(toml::table{{"ref", ref}, {"as", as}});
  if (!record.empty()) root.insert("output", toml::table{{"record", std::move(record)}});
  return root;
}

}  // namespace cosim::config::ssp
