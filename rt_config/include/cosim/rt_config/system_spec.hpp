#pragma once
// The open system description (docs/systems.md): which subsystems (by registered type),
// their parameters, how ports connect, which connections form power bonds, which inputs
// are fed by signal sources, what is recorded, and which initialisation steps compute
// start values across subsystems. A system file ([subsystems.*], [[connections]], ...)
// is read into this; a [model] scenario (a preset) expands into the same data.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace cosim::config {

/// A parameter value: number, integer, boolean, string, or a list of numbers or strings.
using param_value = std::variant<double, std::int64_t, bool, std::string, std::vector<double>,
                                 std::vector<std::string>>;
/// Parameters by name. Given by the file (only what it sets), or resolved (every declared
/// parameter, defaults filled in) when handed to a type's factory.
using param_set = std::map<std::string, param_value>;

/// Accessors for a resolved param_set (the kinds were checked when it was resolved).
double real_param(const param_set& p, const std::string& name);
std::int64_t int_param(const param_set& p, const std::string& name);
bool bool_param(const param_set& p, const std::string& name);
const std::string& text_param(const param_set& p, const std::string& name);
const std::vector<double>& reals_param(const param_set& p, const std::string& name);
const std::vector<std::string>& texts_param(const param_set& p, const std::string& name);

/// Where a declaration came from, for messages: "file:line:col" of its table, or
/// "file: model.name = \"crane\" (preset)".
struct origin {
  origin() = default;
  origin(std::string w, std::string k) : where(std::move(w)), key(std::move(k)) {}
  std::string where;
  std::string key;                          // e.g. "subsystems.mbs", "connections[2]"
  std::map<std::string, std::string> keys;  // where each key of the table is ("to" -> f:28:1)
  /// Where `full_key` ("connections[2].to") is: its own line when known, else the table's.
  [[nodiscard]] const std::string& where_of(const std::string& full_key) const {
    const auto dot = full_key.rfind('.');
    const auto it = keys.find(dot == std::string::npos ? full_key : full_key.substr(dot + 1));
    return it != keys.end() && full_key.rfind(key + ".", 0) == 0 &&
                   full_key.find('.', key.size() + 1) == std::string::npos
               ? it->second
               : where;
  }
};

struct subsystem_decl {
  std::string name;
  std::string type;      // registered subsystem type (type_registry.hpp)
  param_set parameters;  // as given; checked against the type's declarations
  origin at;
};

/// An initialisation step spanning subsystems (e.g. 003 Sect. 1.3: the crane's static
/// equilibrium): computes start-value parameters of the subsystems in its roles.
struct init_decl {
  std::string type;                          // registered initialisation type
  std::map<std::string, std::string> roles;  // role -> subsystem name
  origin at;
};

struct connection_decl {
  std::string from;  // "subsystem.output"
  std::string to;    // "subsystem.input"
  /// Extrapolation order 0-4 of this input; unset: [coupling.order] / [coupling].
  std::optional<int> extrapolation;
  /// Hold the last value (zero-order hold whatever [coupling] says), e.g. valve commands.
  bool hold = false;
  origin at;
  /// Energy-based correction of this input (energy_correction.hpp); needs a bond. false:
  /// not this input, whatever [coupling] or its bond say; unset: as they say.
  std::optional<bool> energy_correction{};
  /// Feedthrough correction of this input (feedthrough_correction.hpp); false and unset as
  /// energy_correction.
  std::optional<bool> feedthrough_correction{};
};

/// One effort/flow pair of a power bond (000 Sect. 3.1), each named by its connection
/// "from -> to"; power = gain * effort * flow.
struct bond_term_decl {
  std::string effort;  // "hyd.fh -> mbs.fh"
  std::string flow;    // "mbs.sd -> hyd.sd"
  double gain = 1.0;
};

struct bond_decl {
  std::string name;
  std::vector<bond_term_decl> terms;
  origin at;
  bool energy_correction = false;  // both consumer inputs of every term
};

/// A signal feeding an input: "manoeuvre:M1", "constant:0.5", "step" (002 test inputs,
/// with args amplitude/time/width/frequency), "csv:FILE:COLUMN", "driver:NAME.CHANNEL".
/// Manoeuvres and test inputs are offsets to the input's start value (the type's
/// start parameter of that input).
struct source_decl {
  std::string to;  // "subsystem.input"
  std::string signal;
  std::map<std::string, double> args;
  origin at;
};

struct record_decl {
  record_decl() = default;
  record_decl(std::string r, std::string a) : ref(std::move(r)), as(std::move(a)) {}
  std::string ref;    // "subsystem.variable" (a variable, else an output)
  std::string as;     // column name; empty: ref
  std::string where;  // "file:line:col" of the entry; empty for a preset's (the file then)
  std::string key;    // the key that asked for it when not [output] record (an alarm's variable)
};

struct system_spec {
  std::vector<subsystem_decl> subsystems;  // in this order in the system (and run.order default)
  std::vector<init_decl> initialization;   // applied in this order before construction
  std::vector<connection_decl> connections;
  std::vector<bond_decl> bonds;
  std::vector<source_decl> sources;
  std::vector<record_decl> record;

  [[nodiscard]] const subsystem_decl* find(const std::string& name) const;
};

}  // namespace cosim::config
