// The double-actuated crane of 001 Sect. 4.1.1 as a scenario model.
//
// Subsystems: multibody (crane2_multibody) and hydraulics (both cylinders in one unit,
// rim::hydraulics_unit<2>; with model.interface = "rim" the unit also holds one coupled RIM
// of both actuators, 001 Algorithm 2). In direct coupling the two cylinders do not interact
// inside a macro step, so one unit behaves exactly like two (001 Sect. 5.1.2).
// Valve commands: kappa_1 follows M1 (001 Eq. (30)), kappa_2 follows 001 Eq. (35); with a
// test input (002 Eqs. (12)-(15)) both valves follow it around their own kappa0.
// Results columns: t,kappa_1,kappa_2,s_1,s_2,sd_1,sd_2,p1_1,p2_1,p1_2,p2_2,fh_1,fh_2.
#include "cosim/rt_config/model_registry.hpp"
#include "cosim/subsystems/manoeuvre.hpp"
#include "cosim/subsystems/rim_hydraulics.hpp"
#include "rim_options.hpp"
#include "types_crane.hpp"

namespace cosim::config {

namespace {

void read_crane2(config_reader& r, scenario& sc) {
  sc.options["coupling"] = r.opt_string("model.coupling").value_or("f-s");
  check_choice(r, "model.coupling", sc.options["coupling"], {"f-s"});
  crane_keys::read_manoeuvre(r, sc, {"M1", "hold"});
  crane_keys::read_interface(r, sc, "");
}

// The preset as an open system (system_spec.hpp), in the order the crane2 model built its
// system before it became a preset, so the results stay byte-identical.
system_spec expand_crane2(const scenario& sc) {
  const std::string where = sc.file + ": model.name = \"crane2\" (preset)";
  auto at = [&](const std::string& key) { return origin{where, key}; };
  const bool rim = crane_keys::interface_of(sc) == rim::interface_kind::rim;
  const bool follow = rim && crane_keys::rim_follows(sc);
  system_spec s;

  subsystem_decl mb{"multibody", "crane2.multibody", {}, at("subsystems.multibody")};
  if (rim) mb.parameters["rim_outputs"] = true;
  if (follow) mb.parameters["rim_follow"] = true;
  subsystem_decl hy{"hydraulics", "crane2.hydraulics", {}, at("subsystems.hydraulics")};
  hy.parameters["interface"] = sc.option("interface");
  hy.parameters["force_output"] = rim ? sc.option("force_output") : std::string("sample");
  s.subsystems = {std::move(mb), std::move(hy)};
  // 001 Eq. (41): the static equilibrium of both actuators gives every start value.
  s.initialization.push_back({"crane2.equilibrium",
                              {{"multibody", "multibody"}, {"hydraulics", "hydraulics"}},
                              at("initialization[0]")});

  for (int i = 0; i < 2; ++i) {
    source_decl src{"hydraulics.kappa_" + std::to_string(i + 1),
                    "",
                    {},
                    at("sources[" + std::to_string(i) + "]")};
    if (crane_keys::is_test_input(sc)) {
      // Both valves follow the test input, each around its own kappa0.
      src.signal = sc.option("manoeuvre");
      src.args = {{"amplitude", sc.param("test_amplitude")},
                  {"time", sc.param("test_time")},
                  {"width", sc.param("test_width")},
                  {"frequency", sc.param("test_frequency")}};
    } else {
      crane::manoeuvre_kind mk{};
      crane::parse_manoeuvre(sc.option("manoeuvre"), mk);
      // M1: actuator 1 follows 001 Eq. (30) (= 003 M1), actuator 2 001 Eq. (35).
      src.signal = i == 1 && mk != crane::manoeuvre_kind::hold
                       ? std::string("manoeuvre:M1_kappa2")
                       : "manoeuvre:" + sc.option("manoeuvre");
    }
    s.sources.push_back(std::move(src));
  }

  auto connect = [&](const std::string& from, const std::string& to) {
    s.connections.push_back({from, to, std::nullopt, false,
                             at("connections[" + std::to_string(s.connections.size()) + "]")});
    return from + " -> " + to;
  };
  for (const char* i : {"_1", "_2"}) {
    const std::string n(i);
    connect("multibody.s" + n, "hydraulics.s" + n);
    const std::string c_sd = connect("multibody.sd" + n, "hydraulics.sd" + n);
    const std::string c_fh = connect("hydraulics.fh" + n, "multibody.fh" + n);
    s.bonds.push_back(
        {"actuator" + n, {{c_fh, c_sd, 1.0}}, at("bonds[" + std::to_string(s.bonds.size()) + "]")});
  }
  if (rim)
    for (const char* p : {"Mt_11", "Mt_12", "Mt_22", "ft_1", "ft_2"})
      connect(std::string("multibody.") + p, std::string("hydraulics.") + p);
  if (follow)
    for (const char* p : {"rim_s_1", "rim_s_2", "rim_sd_1", "rim_sd_2"})
      connect(std::string("hydraulics.") + p, std::string("multibody.") + p);

  for (const char* c : {"kappa_1", "kappa_2"})
    s.record.push_back({std::string("hydraulics.") + c, c});
  for (const char* c : {"s_1", "s_2", "sd_1", "sd_2"})
    s.record.push_back({std::string("multibody.") + c, c});
  for (const char* c : {"p1_1", "p2_1", "p1_2", "p2_2", "fh_1", "fh_2"})
    s.record.push_back({std::string("hydraulics.") + c, c});
  return s;
}

}  // namespace

model_entry crane2_model_entry() {
  model_entry m;
  m.name = "crane2";
  m.description =
      "double-actuated hydraulic crane of paper 001 Sect. 4.1.1: subsystems multibody, hydraulics";
  m.subsystems = {
      {"multibody", crane_steps::multibody, {"semi-implicit-euler", "trapezoidal"}},
      {"hydraulics", crane_steps::hydraulics, {"forward-euler", "heun"}},
  };
  m.read = read_crane2;
  m.expand = expand_crane2;
  m.reduced_interface = true;
  m.keys = {{"model.coupling", "crane2: f-s only"}};
  for (auto& k :
       crane_keys::docs("crane2: M1 (actuator 1: 001 Eq. 30, actuator 2: 001 Eq. 35), hold"))
    m.keys.push_back(std::move(k));
  return m;
}

}  // namespace cosim::config
