// `cosim inspect X.fmu`: what an FMU declares (modelDescription.xml), read without
// unpacking or loading it: FMI version, model, capabilities, default experiment, and the
// variables with causality, variability, type, unit and start value. A file that is not a
// readable FMU exits 2 with a message naming it.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "commands.hpp"
#include "cosim/fmi/fmu_file.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/json_writer.hpp"

namespace cosim::cli {

namespace {

const char* yes_no(bool b) {
  return b ? "yes" : "no";
}

std::string opt_number(const std::optional<double>& v) {
  return v ? format_double(*v) : std::string("-");
}

void print_fmu(const fmi::fmu_file& f) {
  const fmi::model_description& md = f.md;
  const int major = md.fmi_major;
  std::printf("%s\n", f.path.c_str());
  std::printf("  FMI version:        %s\n", md.fmi_version.c_str());
  std::printf("  model name:         %s\n", md.model_name.c_str());
  if (!md.description.empty()) std::printf("  description:        %s\n", md.description.c_str());
  if (!md.generation_tool.empty())
    std::printf("  generation tool:    %s\n", md.generation_tool.c_str());
  std::printf("  %-19s %s\n", major == 2 ? "guid:" : "instantiationToken:", md.token.c_str());
  std::printf("  interfaces:         %s%s%s\n", md.cosim ? "co-simulation" : "",
              md.cosim && md.model_exchange ? ", " : "",
              md.model_exchange ? "model exchange (not run by cosim)" : "");
  if (md.cosim) {
    const fmi::cosimulation& c = *md.cosim;
    const std::string bin = fmi::binary_path_in_fmu(md);
    std::printf("  modelIdentifier:    %s\n", c.model_identifier.c_str());
    std::printf("  binary:             %s (%s)\n", bin.c_str(),
                f.has(bin) ? "present" : "MISSING: cannot run here");
    std::printf("  capabilities:\n");
    std::printf("    canHandleVariableCommunicationStepSize  %s\n",
                yes_no(c.can_handle_variable_communication_step_size));
    std::printf("    canGetAndSetFMU%-24s %s\n", major == 2 ? "state" : "State",
                yes_no(c.can_get_and_set_fmu_state));
    std::printf("    maxOutputDerivativeOrder                %d\n", c.max_output_derivative_order);
    std::printf("    providesDirectionalDerivative%-10s %s\n", major == 2 ? "" : "s",
                yes_no(c.provides_directional_derivatives));
    std::printf("    canBeInstantiatedOnlyOncePerProcess     %s\n",
                yes_no(c.can_be_instantiated_only_once_per_process));
    std::printf("    needsExecutionTool                      %s\n", yes_no(c.needs_execution_tool));
    if (major >= 3) {
      std::printf("    hasEventMode                            %s\n", yes_no(c.has_event_mode));
      std::printf("    providesIntermediateUpdate              %s\n",
                  yes_no(c.provides_intermediate_update));
      std::printf("    mightReturnEarlyFromDoStep              %s\n",
                  yes_no(c.might_return_early_from_do_step));
    }
  } else {
    std::printf("  (no <CoSimulation>: cosim cannot run this FMU)\n");
  }
  const fmi::default_experiment& e = md.experiment;
  std::printf("  default experiment: startTime %s, stopTime %s, stepSize %s, tolerance %s\n",
              opt_number(e.start_time).c_str(), opt_number(e.stop_time).c_str(),
              opt_number(e.step_size).c_str(), opt_number(e.tolerance).c_str());

  struct row {
    std::string cells[6];
    std::string note;
  };
  std::vector<row> rows;
  rows.push_back({{"name", "causality", "variability", "type", "unit", "start"}, ""});
  for (std::size_t k = 0; k < md.variables.size(); ++k) {
    const fmi::variable& v = md.variables[k];
    row r;
    r.cells[0] = v.name;
    r.cells[1] = fmi::to_string(v.causal);
    r.cells[2] = fmi::to_string(v.variab);
    r.cells[3] = std::string(fmi::type_name(v.type, major)) + (v.is_array ? "[]" : "");
    r.cells[4] = v.unit.empty() ? "-" : v.unit;
    r.cells[5] = v.start_text ? *v.start_text : "-";
    if (v.min || v.max) r.note += "range [" + opt_number(v.min) + ", " + opt_number(v.max) + "]";
    if (v.causal == fmi::causality::output && md.feedthrough(k))
      r.note += std::string(r.note.empty() ? "" : "; ") + "direct feedthrough";
    if (v.is_array || !fmi::is_supported(v.type))
      r.note += std::string(r.note.empty() ? "" : "; ") + "not exchanged by cosim";
    rows.push_back(std::move(r));
  }
  std::size_t width[6] = {};
  for (const auto& r : rows)
    for (int c = 0; c < 6; ++c) width[c] = std::max(width[c], r.cells[c].size());
  std::printf("variables (%zu):\n", md.variables.size());
  for (const auto& r : rows) {
    std::string line = " ";
    for (int c = 0; c < 6; ++c) {
      line += " " + r.cells[c];
      if (c < 5 || !r.note.empty()) line += std::string(width[c] - r.cells[c].size(), ' ');
    }
    if (!r.note.empty()) line += "  " + r.note;
    std::printf("%s\n", line.c_str());
  }
}

}  // namespace

command add_inspect_command(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto* inspect = app.add_subcommand(
      "inspect",
      "Show what an FMU declares: FMI version, model, co-simulation capabilities, default\n"
      "experiment, and its variables with causality, variability, type, unit and start.");
  inspect->add_option("fmu", *path, "An FMI 2.0 or 3.0 .fmu file")->required();
  return {inspect, [path] {
            try {
              print_fmu(*fmi::read_fmu(*path));
              return 0;
            } catch (const error& e) {
              std::fprintf(stderr, "cosim inspect: %s\n", e.what());
              return 2;
            }
          }};
}

}  // namespace cosim::cli
