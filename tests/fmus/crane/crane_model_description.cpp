// Writes the FMI 2.0 modelDescription.xml of crane_multibody.fmu or crane_hydraulics.fmu
// from the variable tables the FMUs use (crane_fmu_variables.hpp), at build time, so the
// start values are the equilibrium of 003 Sect. 1.3 computed by the same code as the
// built-in crane.equilibrium, printed to round-trip exactly.
//
// Usage: crane_model_description multibody|hydraulics OUT.xml   (exit 2 on bad use or I/O)
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "crane_fmu_variables.hpp"

namespace {

using namespace cosim::crane_fmu;

std::string num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// SI base-unit exponents of the units the tables use (FMI 2.0 Sect. 2.2.2).
const std::map<std::string, std::string>& base_units() {
  static const std::map<std::string, std::string> u{
      {"s", "s=\"1\""},
      {"m", "m=\"1\""},
      {"m/s", "m=\"1\" s=\"-1\""},
      {"m/s^2", "m=\"1\" s=\"-2\""},
      {"m^2", "m=\"2\""},
      {"rad", "rad=\"1\""},
      {"rad/s", "rad=\"1\" s=\"-1\""},
      {"kg", "kg=\"1\""},
      {"kg/m^3", "kg=\"1\" m=\"-3\""},
      {"N", "kg=\"1\" m=\"1\" s=\"-2\""},
      {"N s/m", "kg=\"1\" s=\"-1\""},
      {"Pa", "kg=\"1\" m=\"-1\" s=\"-2\""},
      {"1/Pa", "kg=\"-1\" m=\"1\" s=\"2\""},
      {"1/Pa^2", "kg=\"-2\" m=\"2\" s=\"4\""},
      {"1", ""},
  };
  return u;
}

const char* causality_name(causality c) {
  switch (c) {
    case causality::independent:
      return "independent";
    case causality::parameter:
      return "parameter";
    case causality::input:
      return "input";
    case causality::output:
      return "output";
    case causality::local:
      break;
  }
  return "local";
}

std::string describe(const std::string& part, const std::vector<var_spec>& vars) {
  const bool multibody = part == "multibody";
  std::ostringstream x;
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<!-- Written at build time by tests/fmus/crane/crane_model_description.cpp; start values\n"
    << "     are the static equilibrium of 003 Sect. 1.3 for the default parameters. -->\n"
    << "<fmiModelDescription\n"
    << "  fmiVersion=\"2.0\"\n"
    << "  modelName=\"crane_" << part << "\"\n"
    << "  guid=\"" << (multibody ? multibody_token : hydraulics_token) << "\"\n"
    << "  description=\""
    << (multibody ? "Crane multibody of paper 003 Eqs. (1)-(7), the built-in crane.multibody"
                  : "Crane hydraulic cylinder of paper 003 Eqs. (8)-(14), the built-in "
                    "crane.hydraulics")
    << "\"\n"
    << "  generationTool=\"cosim tests/fmus/crane\"\n"
    << "  variableNamingConvention=\"flat\"\n"
    << "  numberOfEventIndicators=\"0\">\n"
    << "  <CoSimulation\n"
    << "    modelIdentifier=\"crane_" << part << "\"\n"
    << "    canHandleVariableCommunicationStepSize=\"true\"\n"
    << "    canInterpolateInputs=\"false\"\n"
    << "    maxOutputDerivativeOrder=\"0\"\n"
    << "    canGetAndSetFMUstate=\"true\"\n"
    << "    canSerializeFMUstate=\"false\"\n"
    // The hydraulics give d fh / d sd (hydraulics_fmu.cpp), for the feedthrough correction.
    << "    providesDirectionalDerivative=\"" << (multibody ? "false" : "true") << "\"/>\n";
  std::set<std::string> units;
  for (const var_spec& v : vars)
    if (*v.unit != '\0') units.insert(v.unit);
  x << "  <UnitDefinitions>\n";
  for (const std::string& u : units)
    x << "    <Unit name=\"" << xml_escape(u) << "\"><BaseUnit " << base_units().at(u)
      << "/></Unit>\n";
  x << "  </UnitDefinitions>\n";
  // The multibody steps once per macro step (h_M = H, 003 Sect. 5): no step size; the
  // hydraulics' forward Euler needs h_H <= 0.2 ms.
  x << "  <DefaultExperiment startTime=\"0\" stopTime=\"10\""
    << (multibody ? "" : " stepSize=\"0.0002\"") << "/>\n";
  x << "  <ModelVariables>\n";
  for (std::size_t i = 0; i < vars.size(); ++i) {
    const var_spec& v = vars[i];
    if (v.vr != i) throw std::logic_error("value references must be 0, 1, ... in order");
    x << "    <!-- index " << i + 1 << " -->\n"
      << "    <ScalarVariable name=\"" << v.name << "\" valueReference=\"" << v.vr
      << "\" description=\"" << xml_escape(v.doc) << "\" causality=\"" << causality_name(v.causal)
      << "\"";
    switch (v.causal) {
      case causality::parameter:
        x << " variability=\"fixed\" initial=\"exact\"";
        break;
      case causality::output:
      case causality::local:
        x << " variability=\"continuous\" initial=\"calculated\"";
        break;
      default:
        x << " variability=\"continuous\"";
    }
    x << ">\n      <" << (v.type == kind::integer ? "Integer" : "Real");
    if (*v.unit != '\0') x << " unit=\"" << xml_escape(v.unit) << "\"";
    if (v.causal == causality::parameter || v.causal == causality::input)
      x << " start=\""
        << (v.type == kind::integer ? std::to_string(static_cast<long>(v.start)) : num(v.start))
        << "\"";
    if (std::isfinite(v.min))
      x << " min=\""
        << (v.type == kind::integer ? std::to_string(static_cast<long>(v.min)) : num(v.min))
        << "\"";
    if (std::isfinite(v.max))
      x << " max=\""
        << (v.type == kind::integer ? std::to_string(static_cast<long>(v.max)) : num(v.max))
        << "\"";
    x << "/>\n    </ScalarVariable>\n";
  }
  x << "  </ModelVariables>\n  <ModelStructure>\n    <Outputs>\n";
  for (const var_spec& v : vars) {
    if (v.causal != causality::output) continue;
    x << "      <Unknown index=\"" << v.vr + 1 << "\" dependencies=\"";
    for (std::size_t k = 0; k < v.depends_on.size(); ++k)
      x << (k > 0 ? " " : "") << v.depends_on[k] + 1;
    x << "\"/>\n";
  }
  x << "    </Outputs>\n    <InitialUnknowns>\n";
  for (const var_spec& v : vars)
    if (v.causal == causality::output) x << "      <Unknown index=\"" << v.vr + 1 << "\"/>\n";
  x << "    </InitialUnknowns>\n  </ModelStructure>\n</fmiModelDescription>\n";
  return x.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || (std::string(argv[1]) != "multibody" && std::string(argv[1]) != "hydraulics")) {
    std::cerr << "usage: crane_model_description multibody|hydraulics OUT.xml\n";
    return 2;
  }
  const std::string part = argv[1];
  try {
    const std::string text =
        describe(part, part == "multibody" ? multibody_variables() : hydraulics_variables());
    // Written whole or not at all: the build never packs a truncated file.
    const std::string tmp = std::string(argv[2]) + ".tmp";
    std::ofstream out(tmp);
    out << text;
    out.close();
    if (!out || std::rename(tmp.c_str(), argv[2]) != 0) {
      std::remove(tmp.c_str());
      std::cerr << "crane_model_description: cannot write " << argv[2] << "\n";
      return 2;
    }
  } catch (const std::exception& e) {
    std::cerr << "crane_model_description: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
