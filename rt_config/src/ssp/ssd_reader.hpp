#pragma once
// The reader of an SSP 1.0 System Structure Description (private to rt_config's SSP import):
// SystemStructure.ssd and its parameter sets read into the system file they stand for
// (ssp_reader.hpp). Only what keeps the meaning is accepted: anything the runtime cannot do
// as written (nested systems, signal dictionaries, parameter mappings, connection
// transformations, array connectors, unit conversions on connections, other component kinds)
// is refused with the file, line, element and attribute.
//   ssd_reader.cpp       the description, system, components, connectors, FMUs, experiment,
//                        and the system file it gives
//   ssd_parameters.cpp   parameter bindings and parameter sets (.ssv)
//   ssd_connections.cpp  connections
#include <toml++/toml.h>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cosim/fmi/fmu_file.hpp"
#include "cosim/rt_config/system_spec.hpp"
#include "ssp/ssp_units.hpp"
#include "ssp/ssp_xml.hpp"

namespace cosim::config::ssp {

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

/// The connector `name` of `cs`, or null.
[[nodiscard]] const connector* find_connector(const std::vector<connector>& cs,
                                              std::string_view name);
/// "a, b" (or "none"), for messages.
[[nodiscard]] std::string connector_names(const std::vector<connector>& cs);

class ssd_reader {
 public:
  /// `ssd`: the description's path; `shown`: its name in messages; `package_dir`: the folder
  /// an .ssp was unpacked into ("" for a bare .ssd), which relative URIs may not leave.
  ssd_reader(const std::string& ssd, std::string shown, std::string package_dir,
             std::string package_shown);

  /// Where the macro step read() put into the table came from ("" if none).
  [[nodiscard]] const std::string& macro_step_origin() const noexcept { return macro_step_from_; }

  /// The system file the description stands for. Throws cosim::error.
  toml::table read();

 private:
  // System, components, connectors (ssd_reader.cpp).
  void read_system(const xml_file& f, const pugi::xml_node& sys);
  std::vector<connector> read_connectors(const xml_file& f, const pugi::xml_node& list);
  void read_component(const xml_file& f, const pugi::xml_node& e);
  std::string resolve(const xml_file& f, const pugi::xml_node& n, const char* attr);

  // The FMUs (ssd_reader.cpp).
  void check_fmus(const xml_file& f);
  static bool kind_matches(const std::string& kind, const fmi::variable& v);
  static std::string ssp_type(fmi::var_type t);
  static std::string variable_list(const fmi::model_description& md);

  // Parameter bindings (ssd_parameters.cpp).
  bound_values read_bindings(const xml_file& f, const pugi::xml_node& list);
  bound_values read_parameter_set(const xml_file& f, const pugi::xml_node& set);
  [[nodiscard]] std::string shown_path(const std::string& path) const;
  void resolve_parameters_of_components();
  param_value value_in(const bound_value& v, const std::string& unit, const std::string& type);

  // Connections (ssd_connections.cpp).
  struct end_point {
    const component* comp = nullptr;  // nullptr: the system's own connector
    const connector* conn = nullptr;
  };
  end_point end_of(const xml_file& f, const pugi::xml_node& c, const char* elem_attr,
                   const char* conn_attr);
  static std::string ref(const end_point& e);
  static std::string unit_of(const end_point& e);
  void read_connections(const xml_file& f, const pugi::xml_node& conns);
  void feed(const xml_file& f, const pugi::xml_node& c, std::map<std::string, pugi::xml_node>& fed,
            const std::string& input);
  static std::string ssp_type_of(const end_point& e);
  void check_units(const xml_file& f, const pugi::xml_node& c, const end_point& a,
                   const end_point& b);

  // Default experiment and the step annotations of other tools (ssd_reader.cpp).
  void read_experiment(const xml_file& f, const pugi::xml_node& e);
  void take_tool_step(const xml_file& f, const pugi::xml_node& n, const char* attr);
  void read_osp_algorithm(const xml_file& f, const pugi::xml_node& a);
  void read_system_annotations(const xml_file& f, const pugi::xml_node& list);

  // The system file (ssd_reader.cpp).
  [[nodiscard]] toml::table table() const;

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

}  // namespace cosim::config::ssp
