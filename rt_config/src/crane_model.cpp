// The single-actuator crane of paper 003 as a scenario model.
#include "cosim/rt_config/driver_wiring.hpp"
#include "cosim/rt_config/model_registry.hpp"
#include "cosim/subsystems/crane_subsystems.hpp"
#include "cosim/subsystems/rim_hydraulics.hpp"
#include "rim_options.hpp"
#include "types_crane.hpp"

namespace cosim::config {

namespace {

void read_crane(config_reader& r, scenario& sc) {
  sc.options["coupling"] = r.opt_string("model.coupling").value_or("f-s");
  check_choice(r, "model.coupling", sc.options["coupling"], {"f-s", "p-s"});
  crane_keys::read_manoeuvre(r, sc, {"M1", "M2", "hold"});
  // 001 Sect. 4.3: the RIM is driven by the actuator force, i.e. f-s coupling.
  crane_keys::read_interface(r, sc,
                             sc.options["coupling"] == "f-s"
                                 ? ""
                                 : "a RIM needs model.coupling = \"f-s\" (001 Sect. 4.3: the "
                                   "hydraulics return the actuator force lambda of 001 Eq. (11))");
  read_signal_source(r, sc, "kappa_source");  // manoeuvre | driver:<name>.<channel>
}

// The preset as an open system (system_spec.hpp): the same subsystems, sources,
// connections, bond and columns, in the same order, as the crane model built before it
// became a preset, so the results stay byte-identical.
system_spec expand_crane(const scenario& sc) {
  const std::string where = sc.file + ": model.name = \"crane\" (preset)";
  auto at = [&](const std::string& key) { return origin{where, key}; };
  const bool fs = sc.option("coupling") == "f-s";
  const bool rim = crane_keys::interface_of(sc) == rim::interface_kind::rim;
  const bool follow = rim && crane_keys::rim_follows(sc);
  system_spec s;

  subsystem_decl mb{"multibody", "crane.multibody", {}, at("subsystems.multibody")};
  mb.parameters["coupling"] = std::string(fs ? "f-s" : "p-s");
  if (rim) mb.parameters["rim_outputs"] = true;
  if (follow) mb.parameters["rim_follow"] = true;
  subsystem_decl hy{"hydraulics",
                    rim ? "crane.rim_hydraulics" : "crane.hydraulics",
                    {},
                    at("subsystems.hydraulics")};
  if (rim)
    hy.parameters["force_output"] = sc.option("force_output");
  else
    hy.parameters["coupling"] = std::string(fs ? "f-s" : "p-s");
  s.subsystems = {std::move(mb), std::move(hy)};
  // 003 Sect. 1.3: the static equilibrium gives every start value.
  s.initialization.push_back({"crane.equilibrium",
                              {{"multibody", "multibody"}, {"hydraulics", "hydraulics"}},
                              at("initialization[0]")});

  source_decl kappa{"hydraulics.kappa", "", {}, at("sources[0]")};
  const auto ks = sc.options.find("kappa_source");
  if (ks != sc.options.end() && ks->second.rfind("driver:", 0) == 0) {
    kappa.signal = ks->second;  // a UDP input driver's channel (docs/drivers.md)
  } else if (crane_keys::is_test_input(sc)) {
    kappa.signal = sc.option("manoeuvre");
    kappa.args = {{"amplitude", sc.param("test_amplitude")},
                  {"time", sc.param("test_time")},
                  {"width", sc.param("test_width")},
                  {"frequency", sc.param("test_frequency")}};
  } else {
    kappa.signal = "manoeuvre:" + sc.option("manoeuvre");
  }
  s.sources.push_back(std::move(kappa));

  auto connect = [&](const std::string& from, const std::string& to) {
    s.connections.push_back({from, to, std::nullopt, false,
                             at("connections[" + std::to_string(s.connections.size()) + "]")});
    return from + " -> " + to;
  };
  connect("multibody.s", "hydraulics.s");
  const std::string c_sd = connect("multibody.sd", "hydraulics.sd");
  if (rim) {
    connect("multibody.Mt_11", "hydraulics.Mt_11");
    connect("multibody.ft_1", "hydraulics.ft_1");
    if (follow) {
      connect("hydraulics.rim_s", "multibody.rim_s");
      connect("hydraulics.rim_sd", "multibody.rim_sd");
    }
  }
  if (fs) {
    const std::string c_fh = connect("hydraulics.fh", "multibody.fh");
    s.bonds.push_back({"actuator", {{c_fh, c_sd, 1.0}}, at("bonds[0]")});
  } else {
    const std::string c_p1 = connect("hydraulics.p1", "multibody.p1");
    const std::string c_p2 = connect("hydraulics.p2", "multibody.p2");
    // Pressure x volume flow: f_h sd = (p2 - p1) a_p sd (the preset's default a_p).
    const double ap = crane::hydraulic_params{}.ap;
    s.bonds.push_back({"actuator", {{c_p2, c_sd, ap}, {c_p1, c_sd, -ap}}, at("bonds[0]")});
  }

  // f_h of 003 Eq. (8) as the hydraulics evaluate it (its sd input extrapolated to t); in
  // f-s this is exactly the coupling output.
  s.record = {{"hydraulics.kappa", "kappa"}, {"multibody.s", "s"},    {"multibody.sd", "sd"},
              {"hydraulics.p1", "p1"},       {"hydraulics.p2", "p2"}, {"hydraulics.fh", "fh"}};
  return s;
}

}  // namespace

model_entry crane_model_entry() {
  model_entry m;
  m.name = "crane";
  m.description = "hydraulic crane of paper 003: subsystems multibody, hydraulics";
  m.subsystems = {
      {"multibody", crane_steps::multibody, {"semi-implicit-euler", "trapezoidal"}},
      {"hydraulics", crane_steps::hydraulics, {"forward-euler", "heun"}},
  };
  m.read = read_crane;
  m.expand = expand_crane;
  m.reduced_interface = true;
  m.keys = {
      {"model.kappa_source",
       "manoeuvre (default) or driver:<name>.<channel>: kappa from a UDP input driver"},
      {"model.coupling", "f-s (force-displacement) or p-s (pressure-displacement), 003 Sect. 3"},
      {"multibody.step", "h_M [s]; default H (003 Sect. 5)"},
      {"multibody.integrator", "semi-implicit-euler (003 Eqs. 6-7) or trapezoidal"},
      {"hydraulics.step", "h_H [s]; default min(H, 0.2 ms)"},
      {"hydraulics.integrator", "forward-euler (003 Eq. 14) or heun"},
  };
  for (auto& k : crane_keys::docs("valve command kappa(t): M1 (003 Eq. 19), M2 (003 Eq. 20), hold"))
    m.keys.push_back(std::move(k));
  return m;
}

}  // namespace cosim::config
