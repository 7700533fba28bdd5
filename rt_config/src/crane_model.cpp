// The single-actuator crane of paper 003 as a scenario model.
#include "cosim/rt_config/model_registry.hpp"
#include "cosim/subsystems/crane_subsystems.hpp"
#include "cosim/subsystems/manoeuvre.hpp"

namespace cosim::config {

namespace {

constexpr double max_hydraulic_step = 2e-4;  // 003 Sect. 5: forward Euler limit

void read_crane(config_reader& r, scenario& sc) {
  sc.options["coupling"] = r.opt_string("model.coupling").value_or("f-s");
  check_choice(r, "model.coupling", sc.options["coupling"], {"f-s", "p-s"});
  sc.options["manoeuvre"] = r.opt_string("model.manoeuvre").value_or("M1");
  crane::manoeuvre_kind mk{};
  if (!crane::parse_manoeuvre(sc.options["manoeuvre"], mk))
    r.fail("model.manoeuvre", "must be M1, M2 or hold");
}

void build_crane(const scenario& sc, built_scenario& b) {
  using namespace cosim::crane;
  const mechanical_params mp{};
  const hydraulic_params hp{};
  const equilibrium eq = solve_equilibrium(mp, hp, 3);  // 003 Sect. 1.3
  const coupling cpl = sc.option("coupling") == "f-s" ? coupling::force_displacement
                                                      : coupling::pressure_displacement;
  auto mb = std::make_unique<crane_multibody>(
      "multibody", mp, hp, cpl,
      sc.sub("multibody").integrator == "trapezoidal" ? multibody_integrator::trapezoidal
                                                      : multibody_integrator::semi_implicit_euler,
      eq);
  auto hy = std::make_unique<hydraulic_cylinder>(
      "hydraulics", hp, cpl,
      sc.sub("hydraulics").integrator == "heun" ? hydraulic_integrator::heun
                                                : hydraulic_integrator::forward_euler,
      eq);
  hydraulic_cylinder* hyp = hy.get();
  system& sys = b.sys;
  sys.add(std::move(mb));
  sys.add(std::move(hy));

  manoeuvre_kind mk{};
  parse_manoeuvre(sc.option("manoeuvre"), mk);
  b.sources.push_back(std::make_unique<manoeuvre>(mk, eq.kappa0));
  hyp->input(hydraulic_cylinder::in_kappa).bind_source(b.sources.back().get());

  sys.connect("multibody.s", "hydraulics.s");
  const std::size_t c_sd = sys.connect("multibody.sd", "hydraulics.sd");
  if (cpl == coupling::force_displacement) {
    const std::size_t c_fh = sys.connect("hydraulics.fh", "multibody.fh");
    sys.add_bond({"actuator", {{c_fh, c_sd, 1.0}}});
  } else {
    const std::size_t c_p1 = sys.connect("hydraulics.p1", "multibody.p1");
    const std::size_t c_p2 = sys.connect("hydraulics.p2", "multibody.p2");
    // Pressure x volume flow: f_h sd = (p2 - p1) a_p sd.
    sys.add_bond({"actuator", {{c_p2, c_sd, hp.ap}, {c_p1, c_sd, -hp.ap}}});
  }

  sys.add_probe("kappa", "hydraulics.kappa");
  sys.add_probe("s", "multibody.s");
  sys.add_probe("sd", "multibody.sd");
  sys.add_probe("p1", "hydraulics.p1");
  sys.add_probe("p2", "hydraulics.p2");
  // f_h of 003 Eq. (8) as the hydraulics evaluate it (its sd input extrapolated to t);
  // in f-s this is exactly the coupling output.
  sys.add_probe("fh", "hydraulics.fh");
}

}  // namespace

model_entry crane_model_entry() {
  model_entry m;
  m.name = "crane";
  m.description = "hydraulic crane of paper 003: subsystems multibody, hydraulics";
  m.subsystems = {
      {"multibody", [](double H) { return H; }, {"semi-implicit-euler", "trapezoidal"}},
      // 003 Sect. 5: h_H = min(H, 0.2 ms); the largest step <= 0.2 ms dividing H.
      {"hydraulics", [](double H) { return dividing_step(H, max_hydraulic_step); },
       {"forward-euler", "heun"}},
  };
  m.read = read_crane;
  m.build = build_crane;
  m.keys = {
      {"model.coupling", "f-s (force-displacement) or p-s (pressure-displacement), 003 Sect. 3"},
      {"model.manoeuvre", "valve command kappa(t): M1 (003 Eq. 19), M2 (003 Eq. 20) or hold"},
      {"multibody.step", "h_M [s]; default H (003 Sect. 5)"},
      {"multibody.integrator", "semi-implicit-euler (003 Eqs. 6-7) or trapezoidal"},
      {"hydraulics.step", "h_H [s]; default min(H, 0.2 ms)"},
      {"hydraulics.integrator", "forward-euler (003 Eq. 14) or heun"},
  };
  return m;
}

}  // namespace cosim::config
