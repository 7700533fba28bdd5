// The oscillator benchmarks as scenario models: 000 App. A.1 (oscillator2), A.2
// (oscillator3), A.3 (oscillator_nonlinear) and 004 Sect. 3 (oscillator004).
//
// Subsystems are named mass1, mass2[, mass3]; mass i carries m_i and its ground elements.
// Coupling (000 Sect. 2.4):
//  - "f-d": every coupling element lives in the subsystem of its first mass (000 Eq. (12);
//    A.2: masses 1 and 2, Eqs. (47)-(48); 004: the fast mass 1, as 004's Simulink side
//    evaluates the spring k2), which sends its force to the other mass and receives that
//    mass's displacement and velocity. Each element is a power bond f x v (000 Sect. 3.1).
//  - "d-d": both masses hold a copy of the element and exchange displacement and velocity
//    (000 Eqs. (40)-(41), (52)-(54)). No force crosses the interface, so there is no power
//    bond and dP = dE = 0 in the results.
// Results columns: t, x1..xn, v1..vn (+ dP, dE, sum_abs_dE).
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "cosim/rt_config/model_registry.hpp"
#include "cosim/subsystems/oscillator.hpp"

namespace cosim::config {

namespace {

constexpr double steps_per_cycle004 = 100.0;  // 004 Sect. 3.2: 100 steps per cycle

enum class kind { two_mass, three_mass, nonlinear, paper004 };

// Reads model.<name> (default `def`) into sc.params. Masses must be > 0: a zero mass
// makes the mass matrix of 000 Eq. (10) singular.
double read_param(config_reader& r, scenario& sc, const std::string& name, double def,
                  bool is_mass) {
  const std::string key = "model." + name;
  const double v = r.opt_double(key).value_or(def);
  if (is_mass) {
    if (!(v > 0.0) || !std::isfinite(v))
      r.fail(key, "a mass must be > 0 (the mass matrix would be singular)");
  } else if (!(v >= 0.0) || !std::isfinite(v)) {
    r.fail(key, "must be a finite number >= 0");
  }
  sc.params[name] = v;
  return v;
}

void read_coupling(config_reader& r, scenario& sc) {
  sc.options["coupling"] = r.opt_string("model.coupling").value_or("f-d");
  check_choice(r, "model.coupling", sc.options["coupling"], {"f-d", "d-d"});
}

void read_two_mass(config_reader& r, scenario& sc, const osc::two_mass_params& d) {
  read_param(r, sc, "m1", d.m1, true);
  read_param(r, sc, "m2", d.m2, true);
  read_param(r, sc, "k1", d.k1, false);
  read_param(r, sc, "k2", d.k2, false);
  read_param(r, sc, "kc", d.kc, false);
  read_param(r, sc, "c1", d.c1, false);
  read_param(r, sc, "c2", d.c2, false);
  read_param(r, sc, "cc", d.cc, false);
}

osc::two_mass_params two_mass_from(const scenario& sc, osc::two_mass_params p) {
  p.m1 = sc.param("m1");
  p.m2 = sc.param("m2");
  p.k1 = sc.param("k1");
  p.k2 = sc.param("k2");
  p.kc = sc.param("kc");
  p.c1 = sc.param("c1");
  p.c2 = sc.param("c2");
  p.cc = sc.param("cc");
  return p;
}

void read_oscillator2(config_reader& r, scenario& sc) {
  read_coupling(r, sc);
  const std::int64_t c = r.opt_int("model.case").value_or(1);
  if (c < 1 || c > 3) r.fail("model.case", "must be 1, 2 or 3 (000 App. A.1 damping cases)");
  sc.params["case"] = static_cast<double>(c);
  read_two_mass(r, sc, osc::a1_params(static_cast<int>(c)));
}

void read_oscillator3(config_reader& r, scenario& sc) {
  read_coupling(r, sc);
  const osc::three_mass_params d = osc::a2_params();
  read_param(r, sc, "m1", d.m1, true);
  read_param(r, sc, "m2", d.m2, true);
  read_param(r, sc, "m3", d.m3, true);
  read_param(r, sc, "k1", d.k1, false);
  read_param(r, sc, "k2", d.k2, false);
  read_param(r, sc, "k3", d.k3, false);
  read_param(r, sc, "kc1", d.kc1, false);
  read_param(r, sc, "kc2", d.kc2, false);
  read_param(r, sc, "c1", d.c1, false);
  read_param(r, sc, "c2", d.c2, false);
  read_param(r, sc, "c3", d.c3, false);
  read_param(r, sc, "cc1", d.cc1, false);
  read_param(r, sc, "cc2", d.cc2, false);
}

void read_nonlinear(config_reader& r, scenario& sc) {
  read_coupling(r, sc);
  const osc::two_mass_params d = osc::a3_params();
  read_two_mass(r, sc, d);
  for (const char* e : {"spring_exponent", "damper_exponent"}) {
    const std::string key = std::string("model.") + e;
    const double def = std::string(e) == "spring_exponent" ? d.spring_exponent : d.damper_exponent;
    const double v = r.opt_double(key).value_or(def);
    // Below 1 the force has an infinite slope at zero (000 Eqs. (55)-(56) with n, m >= 1).
    if (!(v >= 1.0) || !std::isfinite(v)) r.fail(key, "must be a finite number >= 1");
    sc.params[e] = v;
  }
}

osc::params004 params004_from(const scenario& sc) {
  osc::params004 p;
  p.fr = sc.param("fr");
  p.zeta = sc.param("zeta");
  p.ar12 = sc.param("ar12");
  p.ar1 = sc.param("ar1");
  p.ar2 = sc.param("ar2");
  p.m1 = sc.param("m1");
  return p;
}

void read_004(config_reader& r, scenario& sc) {
  read_coupling(r, sc);
  const osc::params004 d;
  const double fr = r.opt_double("model.fr").value_or(d.fr);
  if (!(fr > 1.0) || !std::isfinite(fr))
    r.fail("model.fr", "must be > 1: FR = w1/w2 with mass 1 the fast subsystem (004 Eq. (5))");
  sc.params["fr"] = fr;
  const double zeta = r.opt_double("model.zeta").value_or(d.zeta);
  if (!(zeta >= 0.0) || !std::isfinite(zeta))
    r.fail("model.zeta", "must be a finite damping ratio >= 0 (004 Eq. (9))");
  sc.params["zeta"] = zeta;
  for (const auto& [name, def] :
       {std::pair<const char*, double>{"ar12", d.ar12}, {"ar1", d.ar1}, {"ar2", d.ar2}}) {
    const std::string key = std::string("model.") + name;
    const double v = r.opt_double(key).value_or(def);
    if (v == 0.0 || !std::isfinite(v))
      r.fail(key, "an amplitude ratio must be finite and non-zero");
    sc.params[name] = v;
  }
  read_param(r, sc, "m1", d.m1, true);
  try {
    const osc::physical004 q = osc::derive004(params004_from(sc));
    // 004 Eq. (9): a finite zeta can still give an infinite damping coefficient.
    if (!std::isfinite(q.c1) || !std::isfinite(q.c3))
      r.fail("model.zeta", "gives a non-finite damping coefficient c = 2 zeta m w (004 Eq. (9))");
  } catch (const std::invalid_argument& e) {
    // The springs follow from FR and the amplitude ratios together: the one given is named.
    const char* key = r.has("model.ar2")    ? "model.ar2"
                      : r.has("model.ar1")  ? "model.ar1"
                      : r.has("model.ar12") ? "model.ar12"
                                            : "model.fr";
    r.fail(key, std::string(e.what()) + " (model.fr, model.ar12, model.ar1, model.ar2 together)");
  }
}

kind kind_of(const std::string& model) {
  if (model == "oscillator2") return kind::two_mass;
  if (model == "oscillator3") return kind::three_mass;
  if (model == "oscillator_nonlinear") return kind::nonlinear;
  return kind::paper004;
}

osc::oscillator_definition definition(const scenario& sc) {
  switch (kind_of(sc.model)) {
    case kind::two_mass:
      return osc::make_definition(
          two_mass_from(sc, osc::a1_params(static_cast<int>(sc.param("case")))));
    case kind::three_mass: {
      osc::three_mass_params p = osc::a2_params();
      p.m1 = sc.param("m1");
      p.m2 = sc.param("m2");
      p.m3 = sc.param("m3");
      p.k1 = sc.param("k1");
      p.k2 = sc.param("k2");
      p.k3 = sc.param("k3");
      p.kc1 = sc.param("kc1");
      p.kc2 = sc.param("kc2");
      p.c1 = sc.param("c1");
      p.c2 = sc.param("c2");
      p.c3 = sc.param("c3");
      p.cc1 = sc.param("cc1");
      p.cc2 = sc.param("cc2");
      return osc::make_definition(p);
    }
    case kind::nonlinear: {
      osc::two_mass_params p = two_mass_from(sc, osc::a3_params());
      p.spring_exponent = sc.param("spring_exponent");
      p.damper_exponent = sc.param("damper_exponent");
      return osc::make_definition(p);
    }
    case kind::paper004:
      break;
  }
  return osc::make_definition(params004_from(sc));
}

std::string mass_name(std::size_t i) {
  return "mass" + std::to_string(i + 1);
}

// The preset as an open system (system_spec.hpp): masses of type oscillator.mass with the
// partners' start values written out (000 Eq. (13)), the coupling connections and, for
// f-d, one power bond per element (000 Sect. 3.1); columns x1..xn, v1..vn.
system_spec expand_oscillator(const scenario& sc) {
  const osc::oscillator_definition d = definition(sc);
  const bool fd = sc.option("coupling") == "f-d";
  const double n = d.spring_exponent, p = d.damper_exponent;
  const std::string where = sc.file + ": model.name = \"" + sc.model + "\" (preset)";

  struct mass_elements {
    std::vector<std::string> links, forces;
    std::vector<double> k, c, x0, v0, f0;
  };
  std::vector<mass_elements> e(d.size());
  for (const osc::link& l : d.links) {
    const std::string ta = std::to_string(l.a + 1), tb = std::to_string(l.b + 1);
    auto add_link = [&](std::size_t owner, std::size_t partner, const std::string& tag) {
      mass_elements& o = e[owner];
      o.links.push_back(tag);
      o.k.push_back(l.k);
      o.c.push_back(l.c);
      o.x0.push_back(d.x0[partner]);
      o.v0.push_back(d.v0[partner]);
    };
    add_link(l.a, l.b, tb);
    if (fd) {
      // Force of the element at t0 (000 Eq. (13)), the value mass b starts with.
      e[l.b].forces.push_back(ta);
      e[l.b].f0.push_back(osc::power_law(l.k, n, d.x0[l.a] - d.x0[l.b]) +
                          osc::power_law(l.c, p, d.v0[l.a] - d.v0[l.b]));
    } else {
      add_link(l.b, l.a, ta);
    }
  }

  system_spec s;
  for (std::size_t i = 0; i < d.size(); ++i) {
    subsystem_decl sd;
    sd.name = mass_name(i);
    sd.type = "oscillator.mass";
    sd.at = {where, "subsystems." + sd.name};
    param_set& ps = sd.parameters;
    ps["m"] = d.m[i];
    ps["k"] = d.k[i];
    ps["c"] = d.c[i];
    ps["spring_exponent"] = n;
    ps["damper_exponent"] = p;
    ps["x0"] = d.x0[i];
    ps["v0"] = d.v0[i];
    if (!e[i].links.empty()) {
      ps["coupling"] = std::string(fd ? "f-d" : "d-d");
      ps["links"] = e[i].links;
      ps["link_k"] = e[i].k;
      ps["link_c"] = e[i].c;
      ps["link_x0"] = e[i].x0;
      ps["link_v0"] = e[i].v0;
    }
    if (!e[i].forces.empty()) {
      ps["forces"] = e[i].forces;
      ps["force_f0"] = e[i].f0;
    }
    s.subsystems.push_back(std::move(sd));
  }
  auto connect = [&](const std::string& from, const std::string& to) {
    connection_decl c;
    c.from = from;
    c.to = to;
    c.at = {where, "connections[" + std::to_string(s.connections.size()) + "]"};
    s.connections.push_back(std::move(c));
    return from + " -> " + to;
  };
  for (const osc::link& l : d.links) {
    const std::string a = mass_name(l.a), bn = mass_name(l.b);
    const std::string ta = std::to_string(l.a + 1), tb = std::to_string(l.b + 1);
    connect(bn + ".x", a + ".x" + tb);
    const std::string c_v = connect(bn + ".v", a + ".v" + tb);
    if (fd) {
      const std::string c_f = connect(a + ".f", bn + ".f" + ta);
      // Power into mass b through the element: f * v_b (000 Sect. 3.1).
      s.bonds.push_back({"link" + ta + tb,
                         {{c_f, c_v, 1.0}},
                         {where, "bonds[" + std::to_string(s.bonds.size()) + "]"}});
    } else {
      connect(a + ".x", bn + ".x" + ta);
      connect(a + ".v", bn + ".v" + ta);
    }
  }
  for (std::size_t i = 0; i < d.size(); ++i)
    s.record.push_back({mass_name(i) + ".x", "x" + std::to_string(i + 1)});
  for (std::size_t i = 0; i < d.size(); ++i)
    s.record.push_back({mass_name(i) + ".v", "v" + std::to_string(i + 1)});
  return s;
}

const std::vector<std::string> integrators000{"trapezoidal", "semi-implicit-euler", "rk4"};

std::vector<subsystem_spec> same_step_masses(std::size_t n) {
  std::vector<subsystem_spec> s;
  for (std::size_t i = 0; i < n; ++i)
    s.push_back({mass_name(i), [](double H) { return H; }, integrators000});
  return s;
}

std::vector<key_doc> common_keys(std::size_t n) {
  std::vector<key_doc> k{
      {"model.coupling", "f-d (force-displacement, default) or d-d (000 Sect. 2.4)"}};
  for (std::size_t i = 0; i < n; ++i)
    k.push_back({mass_name(i) + ".integrator",
                 "trapezoidal (default), semi-implicit-euler or rk4; step defaults to H"});
  return k;
}

}  // namespace

std::optional<osc::oscillator_definition> oscillator_definition_of(const scenario& sc) {
  if (sc.model != "oscillator2" && sc.model != "oscillator3" &&
      sc.model != "oscillator_nonlinear" && sc.model != "oscillator004")
    return std::nullopt;
  return definition(sc);
}

model_entry oscillator2_model_entry() {
  model_entry m;
  m.name = "oscillator2";
  m.description = "two-mass linear oscillator of 000 App. A.1: subsystems mass1, mass2";
  m.subsystems = same_step_masses(2);
  m.read = read_oscillator2;
  m.expand = expand_oscillator;
  m.keys = common_keys(2);
  m.keys.push_back({"model.case", "damping case 1 (c = 0), 2 (c = 0.01 Ns/m), 3 (c = 10 Ns/m)"});
  m.keys.push_back({"model.m1, m2, k1, k2, kc, c1, c2, cc",
                    "override 000 A.1 values (m1 = m2 = 1 kg, k1 = 10, k2 = 1000, kc = 100 N/m)"});
  return m;
}

model_entry oscillator3_model_entry() {
  model_entry m;
  m.name = "oscillator3";
  m.description = "triple linear oscillator of 000 App. A.2: subsystems mass1, mass2, mass3";
  m.subsystems = same_step_masses(3);
  m.read = read_oscillator3;
  m.expand = expand_oscillator;
  m.keys = common_keys(3);
  m.keys.push_back({"model.m1..m3, k1..k3, kc1, kc2, c1..c3, cc1, cc2",
                    "override 000 A.2 values (m = 10, 25, 100 kg; k = 10, 5, 100; kc = 100 N/m)"});
  return m;
}

model_entry oscillator_nonlinear_model_entry() {
  model_entry m;
  m.name = "oscillator_nonlinear";
  m.description = "double oscillator with nonlinear damping, 000 App. A.3: mass1, mass2";
  m.subsystems = same_step_masses(2);
  m.read = read_nonlinear;
  m.expand = expand_oscillator;
  m.keys = common_keys(2);
  m.keys.push_back({"model.damper_exponent", "m of 000 Eq. (56), >= 1; default 2 (quadratic)"});
  m.keys.push_back({"model.spring_exponent", "n of 000 Eq. (55), >= 1; default 1 (linear)"});
  m.keys.push_back({"model.m1, m2, k1, k2, kc, c1, c2, cc",
                    "override the A.1 masses and springs, c = 0.01 (A.3 prints no values)"});
  return m;
}

model_entry oscillator004_model_entry() {
  model_entry m;
  m.name = "oscillator004";
  m.description =
      "double-mass triple-spring test of 004 Sect. 3: mass1 (fast, RK4), mass2 (slow, "
      "trapezoidal)";
  // 004 Sect. 3.2: 100 steps per cycle in each simulator: h1 = 1/(100 f1) = 10 ms,
  // h2 = FR h1 = H (the slow subsystem communicates at its own step). h1 never exceeds H,
  // so a small macro step takes mass1 along.
  m.subsystems = {
      {"mass1",
       [](double H) { return std::min(H, 1.0 / steps_per_cycle004); },
       {"rk4", "trapezoidal", "semi-implicit-euler"}},
      {"mass2", [](double H) { return H; }, {"trapezoidal", "rk4", "semi-implicit-euler"}},
  };
  m.read = read_004;
  m.expand = expand_oscillator;
  m.default_macro_step = [](const scenario& sc) {
    // Fast-step delivery (004's interface): communication at h1, every fast step.
    if (sc.run.fast_step) return 1.0 / steps_per_cycle004;
    return sc.param("fr") / steps_per_cycle004;  // h2 = FR / (100 f1), f1 = 1 Hz
  };
  m.default_macro_step_key = "model.fr";
  m.fast_step_subsystems = [](const scenario& sc) {
    // H = h1; mass2 keeps h2 = FR h1 on its own grid (004 Sect. 3.2).
    const double h2 = sc.param("fr") / steps_per_cycle004;
    std::vector<subsystem_spec> s = oscillator004_model_entry().subsystems;
    s[1].default_step = [h2](double /*H*/) { return h2; };
    return s;
  };
  m.keys = {
      {"model.fr", "frequency ratio FR = w1/w2 > 1 (004 Eq. (5)); H defaults to FR/100 s"},
      {"model.zeta", "damping ratio of 004 Eq. (9), >= 0 (default 0)"},
      {"model.ar12, ar1, ar2", "amplitude ratios (004 Eq. (5)); defaults 0.1, 0.1, -1000"},
      {"model.m1", "mass 1 [kg] (default 1; the motion does not depend on it)"},
      {"model.coupling",
       "f-d (default: mass1 owns k2 and sends its force, 004 Fig. 6) or d-d (each mass "
       "evaluates k2 from the other's position, 004 Fig. 5)"},
      {"mass1.step", "h1, default min(H, 10 ms) (100 steps per fast cycle, 004 Sect. 3.2)"},
      {"run.delivery = fast-step",
       "004's interface: H = h1 = 10 ms by default, mass2 steps h2 = FR h1 on its own grid"},
      {"mass1.integrator",
       "rk4 (default, Simulink ode4, 004 Eq. (1)), trapezoidal, semi-implicit-euler"},
      {"mass2.integrator", "trapezoidal (default, 004 Sect. 3.2), rk4, semi-implicit-euler"},
  };
  return m;
}

}  // namespace cosim::config
