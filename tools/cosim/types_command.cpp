// `cosim types [NAME]`: the registered subsystem types and initialisation steps a system
// file can name (rt_config type_registry.hpp). Ports are listed from an instance built
// with the default parameters, so they cannot drift from the code.
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>

#include "commands.hpp"
#include "cosim/rt_config/plugin.hpp"
#include "cosim/rt_config/type_registry.hpp"
#include "cosim/runtime/json_writer.hpp"

namespace cosim::cli {

namespace {

std::string value_text(const config::param_value& v) {
  struct visitor {
    std::string operator()(double x) const { return format_double(x); }
    std::string operator()(std::int64_t x) const { return std::to_string(x); }
    std::string operator()(bool x) const { return x ? "true" : "false"; }
    std::string operator()(const std::string& x) const { return "\"" + x + "\""; }
    std::string operator()(const std::vector<double>& x) const {
      std::string s = "[";
      for (std::size_t i = 0; i < x.size(); ++i) s += (i ? ", " : "") + format_double(x[i]);
      return s + "]";
    }
    std::string operator()(const std::vector<std::string>& x) const {
      std::string s = "[";
      for (std::size_t i = 0; i < x.size(); ++i) s += (i ? ", \"" : "\"") + x[i] + "\"";
      return s + "]";
    }
  };
  return std::visit(visitor{}, v);
}

std::string range_text(const config::param_decl& d) {
  if (!d.choices.empty()) {
    std::string s = "one of ";
    for (std::size_t i = 0; i < d.choices.size(); ++i) s += (i ? ", " : "") + d.choices[i];
    return s;
  }
  const bool lo = std::isfinite(d.min), hi = std::isfinite(d.max);
  if (lo && hi)
    return std::string(d.min_exclusive ? "(" : "[") + format_double(d.min) + ", " +
           format_double(d.max) + "]";
  if (lo) return std::string(d.min_exclusive ? "> " : ">= ") + format_double(d.min);
  if (hi) return "<= " + format_double(d.max);
  return "";
}

const char* role_text(port_role r) {
  switch (r) {
    case port_role::effort:
      return "effort";
    case port_role::flow:
      return "flow";
    case port_role::signal:
      break;
  }
  return "signal";
}

void print_type(const config::subsystem_type& t) {
  std::printf("%s\n  %s\n", t.name.c_str(), t.description.c_str());
  std::printf("  integrators: ");
  for (std::size_t i = 0; i < t.integrators.size(); ++i)
    std::printf("%s%s%s", i ? ", " : "", t.integrators[i].c_str(), i == 0 ? " (default)" : "");
  const config::param_set defaults = config::resolve_parameters(t, {}, "cosim types", t.name);
  std::printf("\n  default step at H = 1 ms: %s s\n",
              format_double(t.default_step(1e-3, defaults)).c_str());
  std::printf("  parameters ([subsystems.NAME.parameters]):\n");
  for (const auto& d : t.parameters) {
    std::printf(
        "    %-18s %-16s default %s", d.name.c_str(),
        (std::string(config::to_string(d.kind)) + (d.unit.empty() ? "" : " [" + d.unit + "]"))
            .c_str(),
        value_text(d.def).c_str());
    const std::string range = range_text(d);
    if (!range.empty()) std::printf(", %s", range.c_str());
    if (d.start_value) std::printf(", start value");
    std::printf("\n      %s\n", d.doc.c_str());
  }
  const auto instance = t.create("x", defaults, t.integrators.front());
  std::printf("  ports with the default parameters (name [unit] role):\n");
  for (std::size_t i = 0; i < instance->input_count(); ++i) {
    const port_desc& p = instance->input(i).desc();
    const auto sp = t.start_params.find(p.name);
    std::printf(
        "    input  %-10s [%s] %s%s\n", p.name.c_str(), p.unit.c_str(), role_text(p.role),
        sp != t.start_params.end() ? (", start value: parameter " + sp->second).c_str() : "");
  }
  for (std::size_t o = 0; o < instance->output_count(); ++o) {
    const port_desc& p = instance->output_desc(o);
    std::printf("    output %-10s [%s] %s%s\n", p.name.c_str(), p.unit.c_str(), role_text(p.role),
                p.feedthrough ? ", direct feedthrough" : "");
  }
  if (!instance->variables().empty()) {
    std::printf("  variables (recordable):");
    for (const auto& v : instance->variables())
      std::printf(" %s [%s]", v.name.c_str(), v.unit.c_str());
    std::printf("\n");
  }
}

void print_init(const config::init_type& t) {
  std::printf("%s (initialization)\n  %s\n  roles:\n", t.name.c_str(), t.description.c_str());
  for (const auto& r : t.roles) {
    std::string types;
    for (const auto& ty : r.types) types += (types.empty() ? "" : " or ") + ty;
    std::printf("    %-12s a subsystem of type %s\n", r.name.c_str(), types.c_str());
  }
}

}  // namespace

command add_types_command(CLI::App& app) {
  auto name = std::make_shared<std::string>();
  auto* types = app.add_subcommand(
      "types",
      "List the subsystem types and initialisation steps a system file can use\n"
      "([subsystems.NAME] type = ..., [[initialization]] type = ...). With NAME: its\n"
      "parameters (unit, default, range), integrators, default step, and ports.");
  types->add_option("name", *name, "A type, e.g. crane.multibody");
  auto plugins = std::make_shared<std::vector<std::string>>();
  types
      ->add_option("--plugin", *plugins,
                   "Load a plugin's types first (a shared library as a system file's "
                   "plugins = [...] names; repeatable)")
      ->type_name("PATH");
  return {types, [name, plugins] {
            for (const auto& p : *plugins) config::load_plugin(p, "--plugin");
            if (name->empty()) {
              std::printf("subsystem types:\n");
              for (const config::subsystem_type* t : config::all_subsystem_types())
                std::printf("  %-24s %s\n", t->name.c_str(), t->description.c_str());
              std::printf("initialisation steps ([[initialization]]):\n");
              for (const auto& t : config::init_types())
                std::printf("  %-24s %s\n", t.name.c_str(), t.description.c_str());
              std::printf("`cosim types NAME` shows one.\n");
              return 0;
            }
            if (const auto* t = config::find_subsystem_type(*name)) {
              print_type(*t);
              return 0;
            }
            if (const auto* t = config::find_init_type(*name)) {
              print_init(*t);
              return 0;
            }
            std::string known;
            for (const config::subsystem_type* t : config::all_subsystem_types())
              known += " " + t->name;
            for (const auto& t : config::init_types()) known += " " + t.name;
            std::fprintf(stderr, "cosim types: unknown type \"%s\" (known:%s)\n", name->c_str(),
                         known.c_str());
            return 2;
          }};
}

}  // namespace cosim::cli
