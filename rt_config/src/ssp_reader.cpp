// SSP 1.0 import: SystemStructure.ssd (inside an .ssp zip, or a bare .ssd) and its parameter
// sets (.ssv, inline or files) read into the system file they stand for (ssp_reader.hpp).
// Only what keeps the meaning is accepted: anything the runtime cannot do as written
// (nested systems, signal dictionaries, parameter mappings, connection transformations,
// array connectors, unit conversions on connections, other component kinds) is refused with
// the file, line, element and attribute.
#include "ssp_reader.hpp"

#include <stdlib.h>  // mkdtemp
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>
#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <pugixml.hpp>
#include <sstream>
#include <string_view>

#include "cosim/fmi/fmu_file.hpp"
#include "cosim/fmi/zip_archive.hpp"
#include "cosim/rt_config/system_spec.hpp"
#include "cosim/runtime/errno_text.hpp"
#include "cosim/runtime/error.hpp"

namespace cosim::config {

namespace {

namespace fs = std::filesystem;

// The SSP 1.0 namespaces (SSP 1.0 Sect. 1.4); prefixes are whatever a file declares.
constexpr std::string_view ns_ssd = "http://ssp-standard.org/SSP1/SystemStructureDescription";
constexpr std::string_view ns_ssc = "http://ssp-standard.org/SSP1/SystemStructureCommon";
constexpr std::string_view ns_ssv = "http://ssp-standard.org/SSP1/SystemStructureParameterValues";

constexpr const char* fmu_mime = "application/x-fmu-sharedlibrary";
constexpr const char* parameter_set_mime = "application/x-ssp-parameter-set";
constexpr const char* default_ssd = "SystemStructure.ssd";
constexpr const char* run_annotation = "cosim.run";
constexpr std::string_view osp_annotation = "com.opensimulationplatform";
constexpr std::string_view oms_annotation = "org.openmodelica";

// Far above any real SSD or package; stops a crafted archive from filling disk or memory.
constexpr std::uint64_t max_xml_bytes = 256ull << 20;
constexpr std::uint64_t max_unpacked_bytes = 16ull << 30;

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& e : v) s += (s.empty() ? "" : ", ") + e;
  return s;
}

std::string in_quotes(std::string_view s) {
  return "\"" + std::string(s) + "\"";
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Shortest text that reads back to the same double.
std::string shortest(double v) {
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) s.remove_suffix(1);
  return s;
}

// ---------------------------------------------------------------------------------------------
// XML files with lines and namespaces for messages and matching.

std::string_view local_name(const pugi::xml_node& n) {
  const std::string_view q = n.name();
  const auto c = q.find(':');
  return c == std::string_view::npos ? q : q.substr(c + 1);
}

// The namespace URI of an element: its prefix's xmlns declaration on it or an ancestor
// (pugixml does not resolve namespaces).
std::string_view namespace_of(const pugi::xml_node& n) {
  const std::string_view q = n.name();
  const auto c = q.find(':');
  const std::string attr =
      c == std::string_view::npos ? "xmlns" : "xmlns:" + std::string(q.substr(0, c));
  for (pugi::xml_node p = n; p; p = p.parent())
    if (p.type() == pugi::node_element)
      if (const pugi::xml_attribute a = p.attribute(attr.c_str())) return a.value();
  return "";
}

bool is(const pugi::xml_node& n, std::string_view ns, std::string_view local) {
  return n.type() == pugi::node_element && local_name(n) == local && namespace_of(n) == ns;
}

std::vector<pugi::xml_node> elements(const pugi::xml_node& n) {
  std::vector<pugi::xml_node> out;
  for (pugi::xml_node c = n.first_child(); c; c = c.next_sibling())
    if (c.type() == pugi::node_element) out.push_back(c);
  return out;
}

// Elements that never change what is simulated (SSP 1.0: geometry, graphics, annotations,
// meta data and signatures).
bool is_presentation(const pugi::xml_node& n) {
  const std::string_view l = local_name(n);
  const std::string_view ns = namespace_of(n);
  if (ns != ns_ssd && ns != ns_ssc && ns != ns_ssv) return false;
  return l == "Annotations" || l == "ElementGeometry" || l == "SystemGeometry" ||
         l == "GraphicalElements" || l == "ConnectorGeometry" || l == "ConnectionGeometry" ||
         l == "MetaData" || l == "Signature";
}

class xml_file {
 public:
  /// Reads and parses `path`; `shown` names it in messages.
  xml_file(const std::string& path, std::string shown) : path_(path), shown_(std::move(shown)) {
    std::error_code ec;
    const auto st = fs::status(path, ec);
    if (ec || !fs::exists(st)) throw error(errc::io, shown_ + ": no such file");
    if (!fs::is_regular_file(st)) throw error(errc::io, shown_ + ": not a regular file");
    if (fs::file_size(path, ec) > max_xml_bytes)
      throw error(errc::io, shown_ + ": larger than " + std::to_string(max_xml_bytes >> 20) +
                                " MiB; not an SSP file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw error(errc::io, shown_ + ": cannot read: " + errno_text(errno));
    std::ostringstream os;
    os << in.rdbuf();
    text_ = os.str();
    const pugi::xml_parse_result res =
        doc_.load_buffer(text_.data(), text_.size(), pugi::parse_default, pugi::encoding_auto);
    if (!res)
      throw error(errc::config_syntax, shown_ + ":" + std::to_string(line_of(res.offset)) +
                                           ": not well-formed XML: " + res.description());
  }
  xml_file(const xml_file&) = delete;
  xml_file& operator=(const xml_file&) = delete;

  [[nodiscard]] const std::string& shown() const noexcept { return shown_; }
  /// The folder relative URIs in this file resolve against.
  [[nodiscard]] fs::path dir() const { return fs::path(path_).parent_path(); }
  [[nodiscard]] pugi::xml_node root() const {
    for (pugi::xml_node c = doc_.first_child(); c; c = c.next_sibling())
      if (c.type() == pugi::node_element) return c;
    return {};
  }

  [[nodiscard]] std::size_t line_of(std::ptrdiff_t offset) const {
    if (offset < 0) return 0;
    const auto end = text_.begin() + std::min<std::ptrdiff_t>(offset, std::ssize(text_));
    return 1 + static_cast<std::size_t>(std::count(text_.begin(), end, '\n'));
  }

  /// "file:line: <element> attr="value"" (attr may be empty).
  [[nodiscard]] std::string where(const pugi::xml_node& n, const char* attr = "") const {
    std::string s = shown_;
    if (n) s += ":" + std::to_string(line_of(n.offset_debug())) + ": <" + n.name() + ">";
    if (attr[0] != '\0') {
      const pugi::xml_attribute a = n.attribute(attr);
      s += std::string(" ") + attr + (a ? "=" + in_quotes(a.value()) : " (missing)");
    }
    return s;
  }

  [[noreturn]] void fail(const pugi::xml_node& n, const char* attr, const std::string& why,
                         errc code = errc::config_value) const {
    throw error(code, where(n, attr) + ": " + why);
  }

  /// Refuses an element this reader does not understand; `what` says why it matters.
  [[noreturn]] void unsupported(const pugi::xml_node& n, const std::string& what) const {
    fail(n, "", "not supported: " + what, errc::config_key);
  }

  [[nodiscard]] std::string required(const pugi::xml_node& n, const char* attr) const {
    const pugi::xml_attribute a = n.attribute(attr);
    if (!a || a.value()[0] == '\0') fail(n, attr, "required");
    return a.value();
  }

  // xs:double (decimal, exponent); INF and NaN are refused where a value is needed.
  [[nodiscard]] std::optional<double> opt_double(const pugi::xml_node& n, const char* attr) const {
    const pugi::xml_attribute a = n.attribute(attr);
    if (!a) return std::nullopt;
    std::string_view s = trim(a.value());
    if (!s.empty() && s.front() == '+') s.remove_prefix(1);
    double v = 0.0;
    const auto res = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || res.ec != std::errc{} || res.ptr != s.data() + s.size() || !std::isfinite(v))
      fail(n, attr, "not a finite number");
    return v;
  }

  [[nodiscard]] std::int64_t to_int(const pugi::xml_node& n, const char* attr) const {
    const std::string raw = required(n, attr);  // s views into it: keep it alive
    std::string_view s = trim(raw);
    if (!s.empty() && s.front() == '+') s.remove_prefix(1);
    std::int64_t v = 0;
    const auto res = std::from_chars(s.data(), s.data() + s.size(), v);
    // xs:int, as FMI 2.0 Integer / FMI 3.0 Int32.
    if (s.empty() || res.ec != std::errc{} || res.ptr != s.data() + s.size() || v < INT32_MIN ||
        v > INT32_MAX)
      fail(n, attr,
           "not an integer from " + std::to_string(INT32_MIN) + " to " + std::to_string(INT32_MAX));
    return v;
  }

  [[nodiscard]] std::optional<bool> opt_bool(const pugi::xml_node& n, const char* attr) const {
    const pugi::xml_attribute a = n.attribute(attr);
    if (!a) return std::nullopt;
    const std::string_view s = trim(a.value());
    if (s == "true" || s == "1") return true;
    if (s == "false" || s == "0") return false;
    fail(n, attr, "not a boolean (true, false, 1, 0)");
  }

 private:
  std::string path_;
  std::string shown_;
  std::string text_;
  pugi::xml_document doc_;
};

// ---------------------------------------------------------------------------------------------
// Units (SSP 1.0 Sect. 5.5 ssc:Unit: value in SI = factor * value + offset, with the
// exponents of kg m s A K mol cd rad).

struct unit_def {
  std::array<int, 8> exponents{};
  double factor = 1.0;
  double offset = 0.0;
};
using unit_table = std::map<std::string, unit_def>;

void read_units(const xml_file& f, const pugi::xml_node& units, unit_table& out) {
  for (const pugi::xml_node& u : elements(units)) {
    if (!is(u, ns_ssc, "Unit")) {
      if (is_presentation(u)) continue;
      f.unsupported(u, "expected <ssc:Unit>");
    }
    const std::string name = f.required(u, "name");
    unit_def d;
    bool base = false;
    for (const pugi::xml_node& b : elements(u)) {
      if (!is(b, ns_ssc, "BaseUnit")) {
        if (is_presentation(b)) continue;
        f.unsupported(b, "expected <ssc:BaseUnit>");
      }
      static constexpr std::array<const char*, 8> names{"kg", "m",   "s",  "A",
                                                        "K",  "mol", "cd", "rad"};
      for (std::size_t i = 0; i < names.size(); ++i)
        if (b.attribute(names[i])) d.exponents[i] = static_cast<int>(f.to_int(b, names[i]));
      d.factor = f.opt_double(b, "factor").value_or(1.0);
      d.offset = f.opt_double(b, "offset").value_or(0.0);
      if (d.factor == 0.0) f.fail(b, "factor", "must be non-zero");
      base = true;
    }
    if (!base) f.fail(u, "name", "a unit needs its <ssc:BaseUnit>");
    if (out.count(name) != 0) f.fail(u, "name", "unit defined twice");
    out[name] = d;
  }
}

// ---------------------------------------------------------------------------------------------
// The description as read.

struct connector {
  std::string name;
  std::string kind;  // input, output, parameter, calculatedParameter, ...
  std::string type;  // Real, Integer, Boolean, String, Enumeration, Binary; "" if not given
  std::string unit;
  pugi::xml_node at;
};

struct bound_value {
  param_value value;
  std::string unit;           // ssv:Real unit, "" if none
  const unit_table* units{};  // the parameter set's own units (the SSD's are searched next)
  const xml_file* file{};
  pugi::xml_node at;        // the ssv:Parameter
  pugi::xml_node value_at;  // its ssv:Real, ssv:Integer, ...
};
using bound_values = std::map<std::string, bound_value>;

struct component {
  std::string name;
  std::string fmu;  // absolute, normalised
  std::shared_ptr<const fmi::fmu_file> file;
  std::vector<connector> connectors;
  bound_values bindings;  // the component's own, names without prefix
  pugi::xml_node at;
};

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

// Percent-decoding of a URI path (RFC 3986 Sect. 2.1).
std::optional<std::string> percent_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size() || std::isxdigit(static_cast<unsigned char>(s[i + 1])) == 0 ||
        std::isxdigit(static_cast<unsigned char>(s[i + 2])) == 0)
      return std::nullopt;
    out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
    i += 2;
  }
  return out;
}

class ssd_reader {
 public:
  /// `ssd`: the description's path; `shown`: its name in messages; `package_dir`: the folder
  /// an .ssp was unpacked into ("" for a bare .ssd), which relative URIs may not leave.
  ssd_reader(const std::string& ssd, std::string shown, std::string package_dir,
             std::string package_shown)
      : package_dir_(std::move(package_dir)), package_shown_(std::move(package_shown)) {
    files_.push_back(std::make_unique<xml_file>(ssd, std::move(shown)));
  }

  /// Where the macro step read() put into the table came from ("" if none).
  [[nodiscard]] const std::string& macro_step_origin() const noexcept { return macro_step_from_; }

  toml::table read() {
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

 private:
  // ---- system, components, connectors

  void read_system(const xml_file& f, const pugi::xml_node& sys) {
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

  std::vector<connector> read_connectors(const xml_file& f, const pugi::xml_node& list) {
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

  void read_component(const xml_file& f, const pugi::xml_node& e) {
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
  std::string resolve(const xml_file& f, const pugi::xml_node& n, const char* attr) {
    const std::string uri = n.attribute(attr).value();
    if (uri.find_first_of("?#") != std::string::npos)
      f.fail(n, attr,
             "URI queries and fragments are not supported (a relative path, e.g. "
             "\"resources/model.fmu\")",
             errc::config_key);
    std::string path;
    const auto colon = uri.find(':');
    const bool has_scheme = colon != std::string::npos && colon > 0 &&
                            std::isalpha(static_cast<unsigned char>(uri[0])) &&
                            uri.find('/') > colon;
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
      f.fail(n, attr,
             "no such file" + (package_dir_.empty() ? ": " + path : " in " + package_shown_),
             errc::io);
    if (!fs::is_regular_file(st)) f.fail(n, attr, "not a regular file: " + path, errc::io);
    return fs::absolute(fs::path(path), ec).lexically_normal().string();
  }

  // ---- the FMUs

  // Each component's FMU (its modelDescription.xml), and its declared connectors against the
  // FMU's variables: SSP 1.0 Sect. 5.3.3, names must match and kinds match causalities.
  void check_fmus(const xml_file& f) {
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

  static bool kind_matches(const std::string& kind, const fmi::variable& v) {
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
  static std::string ssp_type(fmi::var_type t) {
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
  static std::string variable_list(const fmi::model_description& md) {
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

  // ---- parameter bindings

  bound_values read_bindings(const xml_file& f, const pugi::xml_node& list) {
    bound_values out;  // later bindings take priority (SSP 1.0 Sect. 5.3.6)
    for (const pugi::xml_node& b : elements(list)) {
      if (!is(b, ns_ssd, "ParameterBinding")) {
        if (is_presentation(b)) continue;
        f.unsupported(b, "expected <ssd:ParameterBinding>");
      }
      const std::string type =
          b.attribute("type") ? b.attribute("type").value() : parameter_set_mime;
      if (type != parameter_set_mime)
        f.fail(b, "type", std::string("only parameter sets (") + parameter_set_mime + ") are read",
               errc::config_key);
      const std::string base =
          b.attribute("sourceBase") ? b.attribute("sourceBase").value() : "SSD";
      if (base != "SSD")
        f.fail(b, "sourceBase",
               "only \"SSD\" is read (a parameter file inside the component is not)",
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
            f.unsupported(
                c, "expected one <ssv:ParameterSet> (namespace " + std::string(ns_ssv) + ")");
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

  bound_values read_parameter_set(const xml_file& f, const pugi::xml_node& set) {
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
  std::string shown_path(const std::string& path) const {
    if (package_dir_.empty()) return path;
    return package_shown_ + "!/" + fs::path(path).lexically_relative(package_dir_).string();
  }

  // Component parameters: the component's bindings, overridden by the system's bindings
  // ("COMPONENT.NAME"; SSP 1.0 Sect. 5.3.6: higher levels take precedence); units converted
  // to the connector's.
  void resolve_parameters_of_components() {
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
                           fmi::type_name(var.type, md.fmi_major) +
                           (var.is_array ? " (array)" : "") +
                           "; only number, Boolean and Enumeration parameters are set");
        const connector* k = find_connector(c.connectors, name);
        params_[i][name] =
            value_in(v, k != nullptr && !k->unit.empty() ? k->unit : var.unit, ssp_type(var.type));
      }
  }

  // The bound value in the connector's unit, checked against its declared type.
  param_value value_in(const bound_value& v, const std::string& unit, const std::string& type) {
    const char* kind = std::holds_alternative<double>(v.value)         ? "Real"
                       : std::holds_alternative<std::int64_t>(v.value) ? "Integer"
                       : std::holds_alternative<bool>(v.value)         ? "Boolean"
                                                                       : "String";
    if (!type.empty() && type != kind)
      v.file->fail(v.value_at, "", std::string("a ") + kind + " value for a " + type);
    if (v.unit.empty() || unit.empty() || v.unit == unit) return v.value;
    const unit_def* from = find_unit(v, v.unit);
    const unit_def* to = find_unit(v, unit);
    if (from == nullptr || to == nullptr || from->exponents != to->exponents)
      v.file->fail(v.value_at, "unit",
                   "cannot be converted to the connector's unit " + in_quotes(unit) +
                       (from == nullptr || to == nullptr
                            ? " (define both as <ssc:Unit> in the description's or the "
                              "parameter set's <Units>)"
                            : " (different base units)"));
    // SI = factor * value + offset (SSP 1.0 ssc:BaseUnit).
    const double si = from->factor * std::get<double>(v.value) + from->offset;
    return (si - to->offset) / to->factor;
  }

  const unit_def* find_unit(const bound_value& v, const std::string& name) const {
    if (v.units != nullptr)
      if (const auto it = v.units->find(name); it != v.units->end()) return &it->second;
    if (const auto it = units_.find(name); it != units_.end()) return &it->second;
    return nullptr;
  }

  // ---- connections

  struct end_point {
    const component* comp = nullptr;  // nullptr: the system's own connector
    const connector* conn = nullptr;
  };

  end_point end_of(const xml_file& f, const pugi::xml_node& c, const char* elem_attr,
                   const char* conn_attr) {
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

  static std::string ref(const end_point& e) {
    return e.comp != nullptr ? e.comp->name + "." + e.conn->name
                             : "system connector " + e.conn->name;
  }

  // The unit of a component's connector: as declared, else the FMU variable's.
  static std::string unit_of(const end_point& e) {
    if (e.comp == nullptr || !e.conn->unit.empty()) return e.conn->unit;
    const fmi::model_description& md = e.comp->file->md;
    return md.variables[md.find(e.conn->name)].unit;
  }

  void read_connections(const xml_file& f, const pugi::xml_node& conns) {
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
        if (is(t, ns_ssc, "LinearTransformation") &&
            f.opt_double(t, "factor").value_or(1.0) == 1.0 &&
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

  void feed(const xml_file& f, const pugi::xml_node& c, std::map<std::string, pugi::xml_node>& fed,
            const std::string& input) {
    if (const auto it = fed.find(input); it != fed.end())
      f.fail(c, "",
             "input " + input + " is already fed by the connection at line " +
                 std::to_string(f.line_of(it->second.offset_debug())) + "; an input is fed once");
    fed[input] = c;
  }

  static std::string ssp_type_of(const end_point& e) {
    const fmi::model_description& md = e.comp->file->md;
    return ssp_type(md.variables[md.find(e.conn->name)].type);
  }

  void check_units(const xml_file& f, const pugi::xml_node& c, const end_point& a,
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

  // ---- default experiment

  void read_experiment(const xml_file& f, const pugi::xml_node& e) {
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
  void take_tool_step(const xml_file& f, const pugi::xml_node& n, const char* attr) {
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
  void read_osp_algorithm(const xml_file& f, const pugi::xml_node& a) {
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
  void read_system_annotations(const xml_file& f, const pugi::xml_node& list) {
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

  // ---- the system file

  toml::table table() const {
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
      s.insert("type", "fmu:" + components_[i].fmu);
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

  std::string package_dir_, package_shown_;
  std::vector<std::unique_ptr<xml_file>> files_;  // the SSD first, then parameter files
  std::vector<std::unique_ptr<unit_table>> unit_tables_;
  unit_table units_;
  std::vector<connector> system_connectors_;
  std::vector<component> components_;
  bound_values system_bindings_;
  bound_values system_values_;  // bound to system connectors
  std::vector<param_set> params_;
  pugi::xml_node connections_;
  std::vector<std::pair<std::string, std::string>> connections_out_;
  std::vector<std::pair<std::string, std::string>> sources_out_;
  std::vector<std::pair<std::string, std::string>> system_outputs_;  // ref, column
  std::optional<double> duration_, macro_step_;
  std::string macro_step_from_;      // where macro_step_ came from, for the message showing it
  std::optional<double> tool_step_;  // another master's fixed-step annotation
  std::string tool_step_from_;
};

// ---------------------------------------------------------------------------------------------
// Unpacking an .ssp.

// FNV-1a 64 of the file's bytes: names the unpacked folder by content, so that a changed
// package never reuses an old folder.
std::string content_hash(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) throw error(errc::io, path + ": cannot read: " + errno_text(errno));
  std::uint64_t h = 14695981039346656037ull;
  std::vector<unsigned char> buf(1 << 16);
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0)
    for (std::size_t i = 0; i < n; ++i) h = (h ^ buf[i]) * 1099511628211ull;
  const bool bad = std::ferror(f) != 0;
  std::fclose(f);
  if (bad) throw error(errc::io, path + ": cannot read");
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

// ${TMPDIR:-/tmp}/cosim-ssp-UID: created private; refused unless it is a folder of this
// user that nobody else can write (another user could otherwise plant FMUs in it).
std::string cache_root() {
  std::string root = fmi::temp_root() + "/cosim-ssp-" + std::to_string(geteuid());
  if (::mkdir(root.c_str(), 0700) != 0 && errno != EEXIST)
    throw error(errc::io, root + ": cannot create the folder SSP packages are unpacked in: " +
                              errno_text(errno));
  struct stat st {};
  if (::lstat(root.c_str(), &st) != 0) throw error(errc::io, root + ": " + errno_text(errno));
  if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022) != 0)
    throw error(errc::io, root +
                              ": not a private folder of this user (it must be a directory "
                              "owned by uid " +
                              std::to_string(geteuid()) +
                              ", writable by nobody else); remove it or set TMPDIR");
  return root;
}

// Folders of the cache unused for this long are removed (a reused one is touched), so the
// cache holds what recent runs used, not every package ever run.
constexpr double cache_keep_s = 30.0 * 24 * 3600;
// A ".unpack-*" folder this old belongs to an unpack that died half-way.
constexpr double partial_keep_s = 3600.0;

void prune_cache(const std::string& root) {
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    if (!it->is_directory(e2) || it->is_symlink(e2)) continue;
    const auto age = std::chrono::duration<double>(now - it->last_write_time(e2)).count();
    const bool partial = it->path().filename().string().rfind(".unpack-", 0) == 0;
    if (!e2 && age > (partial ? partial_keep_s : cache_keep_s)) fs::remove_all(it->path(), e2);
  }
}

}  // namespace

bool is_ssp_path(const std::string& path) {
  const std::string ext = lower(fs::path(path).extension().string());
  return ext == ".ssp" || ext == ".ssd";
}

std::string unpack_ssp(const std::string& path) {
  {
    std::error_code ec;
    const auto st = fs::status(path, ec);
    if (ec || !fs::exists(st)) throw error(errc::io, path + ": no such file");
    if (!fs::is_regular_file(st)) throw error(errc::io, path + ": not a regular file");
  }
  const fmi::zip_archive z(path, "SSP");
  z.check_entry_names("a package's entries");
  bool has_ssd = false;
  for (std::uint64_t i = 0; i < z.size(); ++i) has_ssd = has_ssd || z.name(i) == default_ssd;
  if (!has_ssd)
    z.fail(std::string("not an SSP: the archive has no ") + default_ssd + " at its top level");
  const std::string root = cache_root();
  std::string final_dir = root + "/" + content_hash(path);
  prune_cache(root);
  std::error_code ec;
  if (fs::is_directory(final_dir, ec)) {  // unpacked by an earlier run
    fs::last_write_time(final_dir, fs::file_time_type::clock::now(), ec);  // in use: keep
    return final_dir;
  }
  std::string tmp = root + "/.unpack-XXXXXX";
  if (mkdtemp(tmp.data()) == nullptr)
    throw error(errc::io, path + ": cannot create a folder to unpack it in " + root + ": " +
                              errno_text(errno));
  try {
    z.unpack(tmp, max_unpacked_bytes);
  } catch (const error& e) {
    fs::remove_all(tmp, ec);
    throw error(e.code(), std::string(e.what()).rfind(path, 0) == 0
                              ? e.what()
                              : path + ": unpacking: " + e.what());
  }
  // Complete before it gets its name: a run that sees the folder sees all of it.
  if (::rename(tmp.c_str(), final_dir.c_str()) != 0) {
    const int err = errno;
    fs::remove_all(tmp, ec);
    if (err != EEXIST && err != ENOTEMPTY)
      throw error(errc::io, path + ": cannot move the unpacked package to " + final_dir + ": " +
                                errno_text(err));
    // Another run unpacked the same content first.
  }
  return final_dir;
}

config_reader read_ssp(const std::string& path, const std::vector<std::string>& sets) {
  toml::table t;
  std::string step_origin;
  if (lower(fs::path(path).extension().string()) == ".ssp") {
    const std::string dir = unpack_ssp(path);
    ssd_reader r(dir + "/" + default_ssd, path + "!/" + default_ssd, dir, path);
    t = r.read();
    step_origin = r.macro_step_origin();
  } else {
    ssd_reader r(path, path, "", "");
    t = r.read();
    step_origin = r.macro_step_origin();
  }
  config_reader cr = config_reader::from_table(std::move(t), path);
  cr.apply_overrides(sets);
  const bool step_set = std::any_of(sets.begin(), sets.end(), [](const std::string& s) {
    return s.rfind("run.macro_step=", 0) == 0;
  });
  if (!step_set && !step_origin.empty() && cr.has("run.macro_step"))
    spdlog::info("{}: macro step {} s from {}", path, shortest(cr.get_double("run.macro_step")),
                 step_origin);
  if (!cr.has("run.duration"))
    throw error(errc::config_key,
                path +
                    ": no run duration: the description has no <ssd:DefaultExperiment "
                    "stopTime=\"...\">; give --set run.duration=SECONDS");
  if (!cr.has("run.macro_step"))
    throw error(errc::config_key,
                path + ": no macro step: neither a <ssc:Annotation type=\"" + run_annotation +
                    "\"><Run macroStep=\"H\"/></ssc:Annotation> in <ssd:DefaultExperiment> nor "
                    "a DefaultExperiment stepSize of its FMUs gives one; give --set "
                    "run.macro_step=SECONDS");
  return cr;
}

}  // namespace cosim::config
