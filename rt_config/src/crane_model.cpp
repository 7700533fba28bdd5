// The single-actuator crane of paper 003 as a scenario model.
#include "cosim/rt_config/driver_wiring.hpp"
#include "cosim/rt_config/model_registry.hpp"
#include "cosim/subsystems/crane_subsystems.hpp"
#include "cosim/subsystems/manoeuvre.hpp"
#include "cosim/subsystems/rim_hydraulics.hpp"
#include "rim_options.hpp"

namespace cosim::config {

namespace {

constexpr double max_hydraulic_step = 2e-4;  // 003 Sect. 5: forward Euler limit

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

void build_crane(const scenario& sc, built_scenario& b) {
  using namespace cosim::crane;
  const mechanical_params mp{};
  const hydraulic_params hp{};
  const equilibrium eq = solve_equilibrium(mp, hp, 3);  // 003 Sect. 1.3
  const coupling cpl = sc.option("coupling") == "f-s" ? coupling::force_displacement
                                                      : coupling::pressure_displacement;
  const bool rim = crane_keys::interface_of(sc) == rim::interface_kind::rim;
  auto mb = std::make_unique<crane_multibody>("multibody", mp, hp, cpl,
                                              sc.sub("multibody").integrator == "trapezoidal"
                                                  ? multibody_integrator::trapezoidal
                                                  : multibody_integrator::semi_implicit_euler,
                                              eq, rim, rim && crane_keys::rim_follows(sc));
  const hydraulic_integrator hyi = sc.sub("hydraulics").integrator == "heun"
                                       ? hydraulic_integrator::heun
                                       : hydraulic_integrator::forward_euler;
  std::unique_ptr<subsystem> hy;
  std::size_t in_kappa = hydraulic_cylinder::in_kappa;
  if (rim) {
    // 001 Algorithm 2: the RIM and the cylinder in one unit, exchanging every h_H.
    auto unit = std::make_unique<rim::hydraulics_unit<1>>(
        "hydraulics", hp, std::array<rim::cylinder_start, 1>{rim::start_of(eq)},
        rim::interface_kind::rim, hyi, crane_keys::force_output_of(sc));
    in_kappa = unit->in_kappa(0);
    hy = std::move(unit);
  } else {
    hy = std::make_unique<hydraulic_cylinder>("hydraulics", hp, cpl, hyi, eq);
  }
  subsystem* hyp = hy.get();
  system& sys = b.sys;
  sys.add(std::move(mb));
  sys.add(std::move(hy));

  if (crane_keys::is_test_input(sc)) {
    b.sources.push_back(crane_keys::make_test_input(sc, eq.kappa0));
  } else {
    manoeuvre_kind mk{};
    parse_manoeuvre(sc.option("manoeuvre"), mk);
    b.sources.push_back(std::make_unique<manoeuvre>(mk, eq.kappa0));
  }
  if (!connect_driver_source(sc, b, "kappa_source",
                             "hydraulics." + hyp->input(in_kappa).desc().name, eq.kappa0))
    hyp->input(in_kappa).bind_source(b.sources.back().get());

  sys.connect("multibody.s", "hydraulics.s");
  const std::size_t c_sd = sys.connect("multibody.sd", "hydraulics.sd");
  if (rim) {
    sys.connect("multibody.Mt_11", "hydraulics.Mt_11");
    sys.connect("multibody.ft_1", "hydraulics.ft_1");
    if (crane_keys::rim_follows(sc)) {
      sys.connect("hydraulics.rim_s", "multibody.rim_s");
      sys.connect("hydraulics.rim_sd", "multibody.rim_sd");
    }
  }
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
      {"hydraulics",
       [](double H) { return dividing_step(H, max_hydraulic_step); },
       {"forward-euler", "heun"}},
  };
  m.read = read_crane;
  m.build = build_crane;
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
