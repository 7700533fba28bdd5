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
#include "cosim/subsystems/crane2_subsystems.hpp"
#include "cosim/subsystems/manoeuvre.hpp"
#include "cosim/subsystems/rim_hydraulics.hpp"
#include "rim_options.hpp"

namespace cosim::config {

namespace {

constexpr double max_hydraulic_step = 2e-4;  // 001 Sect. 5.1: h_S = 0.2 ms (forward Euler)

void read_crane2(config_reader& r, scenario& sc) {
  sc.options["coupling"] = r.opt_string("model.coupling").value_or("f-s");
  check_choice(r, "model.coupling", sc.options["coupling"], {"f-s"});
  crane_keys::read_manoeuvre(r, sc, {"M1", "hold"});
  crane_keys::read_interface(r, sc, "");
}

void build_crane2(const scenario& sc, built_scenario& b) {
  using namespace cosim::crane;
  const mechanical_params mp{};
  const hydraulic_params hp{};
  const crane2_equilibrium eq = solve_crane2_equilibrium(mp, hp);  // 001 Eq. (41)
  const rim::interface_kind itf = crane_keys::interface_of(sc);
  const bool rim = itf == rim::interface_kind::rim;
  auto mb = std::make_unique<crane2_multibody>("multibody", mp,
                                               sc.sub("multibody").integrator == "trapezoidal"
                                                   ? multibody_integrator::trapezoidal
                                                   : multibody_integrator::semi_implicit_euler,
                                               eq, rim, rim && crane_keys::rim_follows(sc));
  auto hy = std::make_unique<rim::hydraulics_unit<2>>(
      "hydraulics", hp,
      std::array<rim::cylinder_start, 2>{rim::start_of(eq.act[0]), rim::start_of(eq.act[1])}, itf,
      sc.sub("hydraulics").integrator == "heun" ? hydraulic_integrator::heun
                                                : hydraulic_integrator::forward_euler,
      crane_keys::force_output_of(sc));
  rim::hydraulics_unit<2>* hyp = hy.get();
  system& sys = b.sys;
  sys.add(std::move(mb));
  sys.add(std::move(hy));

  if (crane_keys::is_test_input(sc)) {
    b.sources.push_back(crane_keys::make_test_input(sc, eq.act[0].kappa0));
    b.sources.push_back(crane_keys::make_test_input(sc, eq.act[1].kappa0));
  } else {
    manoeuvre_kind mk{};
    parse_manoeuvre(sc.option("manoeuvre"), mk);
    b.sources.push_back(std::make_unique<manoeuvre>(mk, eq.act[0].kappa0));
    if (mk == manoeuvre_kind::hold)
      b.sources.push_back(std::make_unique<manoeuvre>(mk, eq.act[1].kappa0));
    else
      b.sources.push_back(std::make_unique<kappa2_manoeuvre>(eq.act[1].kappa0));  // 001 Eq. (35)
  }
  hyp->input(hyp->in_kappa(0)).bind_source(b.sources[b.sources.size() - 2].get());
  hyp->input(hyp->in_kappa(1)).bind_source(b.sources.back().get());

  for (const char* i : {"_1", "_2"}) {
    const std::string n(i);
    sys.connect("multibody.s" + n, "hydraulics.s" + n);
    const std::size_t c_sd = sys.connect("multibody.sd" + n, "hydraulics.sd" + n);
    const std::size_t c_fh = sys.connect("hydraulics.fh" + n, "multibody.fh" + n);
    sys.add_bond({"actuator" + n, {{c_fh, c_sd, 1.0}}});
  }
  if (rim)
    for (const char* p : {"Mt_11", "Mt_12", "Mt_22", "ft_1", "ft_2"})
      sys.connect(std::string("multibody.") + p, std::string("hydraulics.") + p);
  if (rim && crane_keys::rim_follows(sc))
    for (const char* p : {"rim_s_1", "rim_s_2", "rim_sd_1", "rim_sd_2"})
      sys.connect(std::string("hydraulics.") + p, std::string("multibody.") + p);

  for (const char* c : {"kappa_1", "kappa_2"}) sys.add_probe(c, std::string("hydraulics.") + c);
  for (const char* c : {"s_1", "s_2", "sd_1", "sd_2"})
    sys.add_probe(c, std::string("multibody.") + c);
  for (const char* c : {"p1_1", "p2_1", "p1_2", "p2_2", "fh_1", "fh_2"})
    sys.add_probe(c, std::string("hydraulics.") + c);
}

}  // namespace

model_entry crane2_model_entry() {
  model_entry m;
  m.name = "crane2";
  m.description =
      "double-actuated hydraulic crane of paper 001 Sect. 4.1.1: subsystems multibody, hydraulics";
  m.subsystems = {
      {"multibody", [](double H) { return H; }, {"semi-implicit-euler", "trapezoidal"}},
      {"hydraulics",
       [](double H) { return dividing_step(H, max_hydraulic_step); },
       {"forward-euler", "heun"}},
  };
  m.read = read_crane2;
  m.build = build_crane2;
  m.reduced_interface = true;
  m.keys = {{"model.coupling", "crane2: f-s only"}};
  for (auto& k :
       crane_keys::docs("crane2: M1 (actuator 1: 001 Eq. 30, actuator 2: 001 Eq. 35), hold"))
    m.keys.push_back(std::move(k));
  return m;
}

}  // namespace cosim::config
