// Subsystem types and initialisation steps of the crane family: the single-actuated crane
// of paper 003 (multibody, hydraulic cylinder, RIM + cylinder unit of 001 Algorithm 2) and
// the double-actuated crane of 001 Sect. 4.1.1. The physical parameters are those of 003
// Tables 1-2 (defaults = the paper's); start values default to the static equilibrium of
// 003 Sect. 1.3 / 001 Eq. (41) with the default parameters, so an instance with defaults is
// in equilibrium. The [model] presets crane and crane2 expand into these types
// (crane_model.cpp, crane2_model.cpp).
//
// Which side owns which parameters: the multibody holds the mechanical parameters (and,
// for p-s coupling, the piston area ap and friction c of 003 Eq. (8), which it evaluates
// itself); the hydraulics hold the hydraulic ones. The equilibrium reads the mechanical
// parameters from the multibody and the hydraulic ones from the hydraulics; in p-s it
// requires the multibody's ap and c to equal the hydraulics' (one cylinder).
#include <array>
#include <cmath>
#include <numbers>

#include "cosim/rt_config/model_registry.hpp"
#include "cosim/rt_config/type_registry.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/json_writer.hpp"
#include "cosim/subsystems/crane2_model.hpp"
#include "cosim/subsystems/crane2_subsystems.hpp"
#include "cosim/subsystems/crane_subsystems.hpp"
#include "cosim/subsystems/rim_hydraulics.hpp"
#include "types_crane.hpp"

namespace cosim::config {

double crane_steps::multibody(double H) {
  return H;
}

double crane_steps::hydraulics(double H) {
  return dividing_step(H, 2e-4);
}

namespace {

param_decl real(std::string name, std::string unit, std::string doc, double def, double lo,
                double hi, bool lo_exclusive = false) {
  param_decl d;
  d.name = std::move(name);
  d.kind = param_kind::real;
  d.unit = std::move(unit);
  d.doc = std::move(doc);
  d.def = def;
  d.min = lo;
  d.max = hi;
  d.min_exclusive = lo_exclusive;
  return d;
}

param_decl start(std::string name, std::string unit, std::string doc, double def, double lo,
                 double hi) {
  param_decl d = real(std::move(name), std::move(unit), std::move(doc), def, lo, hi);
  d.start_value = true;
  return d;
}

param_decl text(std::string name, std::string doc, std::string def,
                std::vector<std::string> choices) {
  param_decl d;
  d.name = std::move(name);
  d.kind = param_kind::text;
  d.doc = std::move(doc);
  d.def = std::move(def);
  d.choices = std::move(choices);
  return d;
}

param_decl boolean(std::string name, std::string doc, bool def) {
  param_decl d;
  d.name = std::move(name);
  d.kind = param_kind::boolean;
  d.doc = std::move(doc);
  d.def = def;
  return d;
}

// Ranges of the start values: wide, only excluding nonsense (the equilibrium writes them).
constexpr double max_pressure = 1e9;  // [Pa]
constexpr double max_force = 1e9;     // [N]
constexpr double max_length = 100.0;  // [m]

// 003 Table 1 (with the mass-matrix erratum of crane_model.hpp).
void add_mechanical(std::vector<param_decl>& v) {
  const crane::mechanical_params d{};
  const double two_pi = 2.0 * std::numbers::pi;
  v.push_back(real("L", "m", "link 1 length (003 Table 1)", d.L, 0.0, max_length, true));
  v.push_back(real("Lh", "m", "link 2 length (003 Table 1)", d.Lh, 0.0, max_length, true));
  v.push_back(real("m", "kg", "link 1 mass (003 Table 1)", d.m, 0.0, 1e6));
  v.push_back(real("mp", "kg", "point mass at Q (003 Table 1)", d.mp, 0.0, 1e6));
  v.push_back(real("mh", "kg", "point mass at R (003 Table 1)", d.mh, 0.0, 1e6, true));
  v.push_back(
      real("xB", "m", "fixed actuator end B, x (003 Table 1)", d.xB, -max_length, max_length));
  v.push_back(
      real("yB", "m", "fixed actuator end B, y (003 Table 1)", d.yB, -max_length, max_length));
  v.push_back(real("g", "m/s^2", "gravity along -y (003 Table 1)", d.g, 0.0, 100.0));
  v.push_back(
      real("theta1_0", "rad", "initial link 1 angle (003 Sect. 1.3)", d.theta1_0, -two_pi, two_pi));
  v.push_back(
      real("theta2_0", "rad", "initial link 2 angle (003 Sect. 1.3)", d.theta2_0, -two_pi, two_pi));
}

crane::mechanical_params mechanical_of(const param_set& p) {
  crane::mechanical_params m;
  m.L = real_param(p, "L");
  m.Lh = real_param(p, "Lh");
  m.m = real_param(p, "m");
  m.mp = real_param(p, "mp");
  m.mh = real_param(p, "mh");
  m.xB = real_param(p, "xB");
  m.yB = real_param(p, "yB");
  m.g = real_param(p, "g");
  m.theta1_0 = real_param(p, "theta1_0");
  m.theta2_0 = real_param(p, "theta2_0");
  return m;
}

param_decl piston_area(const std::string& doc) {
  return real("ap", "m^2", doc, crane::hydraulic_params{}.ap, 0.0, 1.0, true);
}
param_decl friction(const std::string& doc) {
  return real("c", "N s/m", doc, crane::hydraulic_params{}.c, 0.0, 1e9);
}

// 003 Table 2.
void add_hydraulic(std::vector<param_decl>& v) {
  const crane::hydraulic_params d{};
  v.push_back(piston_area("piston area (003 Table 2)"));
  v.push_back(
      real("l", "m", "cylinder length (003 Table 2, Eq. (12))", d.l, 0.0, max_length, true));
  v.push_back(friction("viscous friction (003 Table 2, Eq. (8))"));
  v.push_back(real("cd", "", "valve discharge coefficient (003 Table 2)", d.cd, 0.0, 1.0, true));
  v.push_back(real("rho", "kg/m^3", "fluid density (003 Table 2)", d.rho, 0.0, 1e5, true));
  v.push_back(real("pP", "Pa", "pump pressure (003 Table 2)", d.pP, 0.0, max_pressure, true));
  v.push_back(real("pT", "Pa", "tank pressure (003 Table 2)", d.pT, 0.0, max_pressure));
  v.push_back(real("a", "1/Pa", "compressibility coefficient (003 Table 2, Eq. (11))", d.a, 0.0,
                   1e-6, true));
  v.push_back(real("b", "1/Pa^2", "compressibility coefficient (003 Table 2, Eq. (11))", d.b,
                   -1e-12, 1e-12));
  v.push_back(real("valve_area", "m^2", "valve area at kappa = 1 (003 Eq. (13))", d.valve_area, 0.0,
                   1.0, true));
}

crane::hydraulic_params hydraulic_of(const param_set& p) {
  crane::hydraulic_params h;
  h.ap = real_param(p, "ap");
  h.l = real_param(p, "l");
  h.c = real_param(p, "c");
  h.cd = real_param(p, "cd");
  h.rho = real_param(p, "rho");
  h.pP = real_param(p, "pP");
  h.pT = real_param(p, "pT");
  h.a = real_param(p, "a");
  h.b = real_param(p, "b");
  h.valve_area = real_param(p, "valve_area");
  COSIM_INPUT_CHECK(h.pT < h.pP, errc::config_value,
                    "tank pressure pT = " + format_double(h.pT) +
                        " Pa must be below the pump pressure pP = " + format_double(h.pP) + " Pa");
  return h;
}

// Start values of one cylinder ("" for crane, "_1"/"_2" for crane2).
void add_cylinder_start(std::vector<param_decl>& v, const crane::equilibrium& eq,
                        const std::string& sfx, bool with_force) {
  v.push_back(start("s0" + sfx, "m", "initial actuator length, 003 Eq. (12) (start value)", eq.s0,
                    0.0, max_length));
  v.push_back(start("p1_0" + sfx, "Pa", "initial pressure p1 (start value, 003 Sect. 1.3)", eq.p1,
                    0.0, max_pressure));
  v.push_back(start("p2_0" + sfx, "Pa", "initial pressure p2 (start value, 003 Sect. 1.3)", eq.p2,
                    0.0, max_pressure));
  v.push_back(start("kappa0" + sfx, "", "initial valve command (start value, 003 Sect. 1.3)",
                    eq.kappa0, 0.0, 1.0));
  if (with_force)
    v.push_back(start("fh0" + sfx, "N",
                      "initial actuator force; the RIM starts in equilibrium, ft = -fh0 (001 Eq. "
                      "(11)) (start value)",
                      eq.fh, -max_force, max_force));
}

crane::multibody_integrator multibody_integrator_of(const std::string& name) {
  if (name == "semi-implicit-euler") return crane::multibody_integrator::semi_implicit_euler;
  if (name == "trapezoidal") return crane::multibody_integrator::trapezoidal;
  throw error(errc::config_value,
              "integrator \"" + name + "\" is not one of: semi-implicit-euler, trapezoidal");
}

crane::hydraulic_integrator hydraulic_integrator_of(const std::string& name) {
  if (name == "forward-euler") return crane::hydraulic_integrator::forward_euler;
  if (name == "heun") return crane::hydraulic_integrator::heun;
  throw error(errc::config_value, "integrator \"" + name + "\" is not one of: forward-euler, heun");
}

rim::force_output force_output_of(const param_set& p) {
  rim::force_output f = rim::force_output::sample;
  rim::parse_force_output(text_param(p, "force_output"), f);  // choices checked on resolve
  return f;
}

rim::cylinder_start cylinder_start_of(const param_set& p, const std::string& sfx) {
  rim::cylinder_start c;
  c.s0 = real_param(p, "s0" + sfx);
  c.p1 = real_param(p, "p1_0" + sfx);
  c.p2 = real_param(p, "p2_0" + sfx);
  c.kappa0 = real_param(p, "kappa0" + sfx);
  c.fh = real_param(p, "fh0" + sfx);
  return c;
}

double multibody_step(double H, const param_set& /*p*/) {
  return crane_steps::multibody(H);
}
double hydraulic_step(double H, const param_set& /*p*/) {
  return crane_steps::hydraulics(H);
}

const char* const rim_follow_doc =
    "with rim_outputs and f-s: inputs rim_s [m], rim_sd [m/s]; a step ending at their newest "
    "sample projects the state onto the RIM's interface state (run Gauss-Seidel, hydraulics "
    "first)";

subsystem_type crane_multibody_type(const crane::equilibrium& eq) {
  subsystem_type t;
  t.name = "crane.multibody";
  t.description =
      "two-link crane of 003 Eqs. (1)-(7) in q = (theta1, theta2); outputs s, sd of actuator 1 "
      "(003 Eqs. (4)-(5)), input fh (f-s) or p1, p2 (p-s, evaluates 003 Eq. (8))";
  t.parameters.push_back(text("coupling",
                              "f-s: input fh [N]; p-s: inputs p1, p2 [Pa] (003 Sect. 3)", "f-s",
                              {"f-s", "p-s"}));
  t.parameters.push_back(
      boolean("rim_outputs",
              "outputs Mt_11 [kg], ft_1 [N]: effective mass and force along s (001 Eqs. "
              "(12)-(13)) for a reduced interface model",
              false));
  t.parameters.push_back(boolean("rim_follow", rim_follow_doc, false));
  add_mechanical(t.parameters);
  t.parameters.push_back(
      piston_area("p-s only: piston area of 003 Eq. (8), as the hydraulics' ap (003 Table 2)"));
  t.parameters.push_back(
      friction("p-s only: viscous friction of 003 Eq. (8), as the hydraulics' c (003 Table 2)"));
  t.parameters.push_back(start("fh0", "N", "f-s: initial input fh (start value, 003 Eq. (15))",
                               eq.fh, -max_force, max_force));
  t.parameters.push_back(start("p1_0", "Pa", "p-s: initial input p1 (start value, 003 Sect. 1.3)",
                               eq.p1, 0.0, max_pressure));
  t.parameters.push_back(start("p2_0", "Pa", "p-s: initial input p2 (start value, 003 Sect. 1.3)",
                               eq.p2, 0.0, max_pressure));
  t.integrators = {"semi-implicit-euler", "trapezoidal"};
  t.default_step = multibody_step;
  t.create = [](const std::string& name, const param_set& p, const std::string& integrator) {
    const bool fs = text_param(p, "coupling") == "f-s";
    const bool rim_outputs = bool_param(p, "rim_outputs");
    const bool follow = bool_param(p, "rim_follow");
    COSIM_INPUT_CHECK(!follow || (rim_outputs && fs), errc::config_value,
                      "parameters.rim_follow = true needs rim_outputs = true and coupling = "
                      "\"f-s\" (the RIM returns the actuator force, 001 Sect. 4.3)");
    crane::hydraulic_params hp;  // only ap and c enter the multibody (p-s, 003 Eq. (8))
    hp.ap = real_param(p, "ap");
    hp.c = real_param(p, "c");
    crane::equilibrium start;  // the constructor reads only the initial coupling inputs
    start.fh = real_param(p, "fh0");
    start.p1 = real_param(p, "p1_0");
    start.p2 = real_param(p, "p2_0");
    return std::make_unique<crane::crane_multibody>(
        name, mechanical_of(p), hp,
        fs ? crane::coupling::force_displacement : crane::coupling::pressure_displacement,
        multibody_integrator_of(integrator), start, rim_outputs, follow);
  };
  return t;
}

subsystem_type crane_hydraulics_type(const crane::equilibrium& eq) {
  subsystem_type t;
  t.name = "crane.hydraulics";
  t.description =
      "hydraulic cylinder of 003 Eqs. (8)-(14), states p1, p2; inputs s, sd, kappa; output fh "
      "(f-s, direct feedthrough of sd) or p1, p2 (p-s)";
  t.parameters.push_back(text("coupling",
                              "f-s: output fh [N]; p-s: outputs p1, p2 [Pa] (003 Sect. 3)", "f-s",
                              {"f-s", "p-s"}));
  add_hydraulic(t.parameters);
  add_cylinder_start(t.parameters, eq, "", false);
  t.integrators = {"forward-euler", "heun"};
  t.default_step = hydraulic_step;
  t.start_params = {{"kappa", "kappa0"}};
  t.create = [](const std::string& name, const param_set& p, const std::string& integrator) {
    crane::equilibrium start;  // the constructor reads s0, p1, p2, kappa0
    start.s0 = real_param(p, "s0");
    start.p1 = real_param(p, "p1_0");
    start.p2 = real_param(p, "p2_0");
    start.kappa0 = real_param(p, "kappa0");
    return std::make_unique<crane::hydraulic_cylinder>(name, hydraulic_of(p),
                                                       text_param(p, "coupling") == "f-s"
                                                           ? crane::coupling::force_displacement
                                                           : crane::coupling::pressure_displacement,
                                                       hydraulic_integrator_of(integrator), start);
  };
  return t;
}

param_decl force_output_decl() {
  return text("force_output",
              "sample: fh at the communication point; mean: mean fh over the macro step (004 "
              "smoothing; Gauss-Seidel with the hydraulics first)",
              "sample", {"sample", "mean"});
}

subsystem_type crane_rim_hydraulics_type(const crane::equilibrium& eq) {
  subsystem_type t;
  t.name = "crane.rim_hydraulics";
  t.description =
      "reduced interface model of the multibody plus the cylinder of 003 Eqs. (8)-(14) in one "
      "unit (001 Algorithm 2); inputs s, sd, kappa, Mt_11, ft_1; outputs fh, rim_s, rim_sd";
  t.parameters.push_back(force_output_decl());
  add_hydraulic(t.parameters);
  add_cylinder_start(t.parameters, eq, "", true);
  t.integrators = {"forward-euler", "heun"};
  t.default_step = hydraulic_step;
  t.start_params = {{"kappa", "kappa0"}};
  t.create = [](const std::string& name, const param_set& p, const std::string& integrator) {
    return std::make_unique<rim::hydraulics_unit<1>>(
        name, hydraulic_of(p), std::array<rim::cylinder_start, 1>{cylinder_start_of(p, "")},
        rim::interface_kind::rim, hydraulic_integrator_of(integrator), force_output_of(p));
  };
  return t;
}

subsystem_type crane2_multibody_type(const crane::crane2_equilibrium& eq) {
  subsystem_type t;
  t.name = "crane2.multibody";
  t.description =
      "double-actuated crane of 001 Sect. 4.1.1 in q = (theta1, theta2); inputs fh_1, fh_2; "
      "outputs s_1, sd_1, s_2, sd_2 (001 Eqs. (20), (31)-(33))";
  t.parameters.push_back(boolean("rim_outputs",
                                 "outputs Mt_11, Mt_12, Mt_22 [kg], ft_1, ft_2 [N] (001 Eqs. "
                                 "(12)-(13)): one coupled RIM of both actuators",
                                 false));
  t.parameters.push_back(boolean(
      "rim_follow",
      "with rim_outputs: inputs rim_s_1, rim_s_2 [m], rim_sd_1, rim_sd_2 [m/s]; a step ending at "
      "their newest sample projects the state onto the RIM's (Gauss-Seidel, hydraulics first)",
      false));
  add_mechanical(t.parameters);
  for (int i = 0; i < 2; ++i) {
    const std::string sfx = "_" + std::to_string(i + 1);
    t.parameters.push_back(start("fh0" + sfx, "N",
                                 "initial input fh" + sfx + " (start value, 001 Eq. (41))",
                                 eq.act[i].fh, -max_force, max_force));
  }
  t.integrators = {"semi-implicit-euler", "trapezoidal"};
  t.default_step = multibody_step;
  t.create = [](const std::string& name, const param_set& p, const std::string& integrator) {
    const bool rim_outputs = bool_param(p, "rim_outputs");
    const bool follow = bool_param(p, "rim_follow");
    COSIM_INPUT_CHECK(!follow || rim_outputs, errc::config_value,
                      "parameters.rim_follow = true needs rim_outputs = true");
    crane::crane2_equilibrium start;  // the constructor reads only the initial forces
    start.act[0].fh = real_param(p, "fh0_1");
    start.act[1].fh = real_param(p, "fh0_2");
    return std::make_unique<crane::crane2_multibody>(
        name, mechanical_of(p), multibody_integrator_of(integrator), start, rim_outputs, follow);
  };
  return t;
}

subsystem_type crane2_hydraulics_type(const crane::crane2_equilibrium& eq) {
  subsystem_type t;
  t.name = "crane2.hydraulics";
  t.description =
      "both cylinders of the double-actuated crane (003 Eqs. (8)-(14)) in one unit, direct or "
      "with one coupled RIM (001 Algorithm 2); inputs s_i, sd_i, kappa_i (rim: Mt_11, Mt_12, "
      "Mt_22, ft_1, ft_2); outputs fh_i (rim: rim_s_i, rim_sd_i)";
  t.parameters.push_back(text("interface",
                              "direct (001 Algorithm 1: fh from the received sd, direct "
                              "feedthrough) or rim (001 Algorithm 2)",
                              "direct", {"direct", "rim"}));
  t.parameters.push_back(force_output_decl());
  add_hydraulic(t.parameters);
  for (int i = 0; i < 2; ++i)
    add_cylinder_start(t.parameters, eq.act[i], "_" + std::to_string(i + 1), true);
  t.integrators = {"forward-euler", "heun"};
  t.default_step = hydraulic_step;
  t.start_params = {{"kappa_1", "kappa0_1"}, {"kappa_2", "kappa0_2"}};
  t.create = [](const std::string& name, const param_set& p, const std::string& integrator) {
    rim::interface_kind itf = rim::interface_kind::direct;
    rim::parse_interface(text_param(p, "interface"), itf);  // choices checked on resolve
    return std::make_unique<rim::hydraulics_unit<2>>(
        name, hydraulic_of(p),
        std::array<rim::cylinder_start, 2>{cylinder_start_of(p, "_1"), cylinder_start_of(p, "_2")},
        itf, hydraulic_integrator_of(integrator), force_output_of(p));
  };
  return t;
}

void set_real(param_set& p, const std::string& name, double v) {
  // Only start values declared by the role's type (resolve_parameters filled them all).
  COSIM_DEMAND(p.count(name) != 0);
  p[name] = v;
}

// The solved start values must be finite and a valve command within [0, 1]; else the
// Newton iteration from the paper's guess did not find the equilibrium for these
// parameters.
void check_cylinder(const crane::equilibrium& e, const std::string& what) {
  const bool ok = std::isfinite(e.s0) && std::isfinite(e.fh) && std::isfinite(e.p1) &&
                  std::isfinite(e.p2) && std::isfinite(e.kappa0) && e.kappa0 >= 0.0 &&
                  e.kappa0 <= 1.0 && e.p1 >= 0.0 && e.p2 >= 0.0;
  COSIM_INPUT_CHECK(ok, errc::config_value,
                    "no static equilibrium" + what +
                        " for these parameters: Newton from 003's guess "
                        "(3.3 MPa, 4.4 MPa, 0.5) gave p1 = " +
                        format_double(e.p1) + " Pa, p2 = " + format_double(e.p2) +
                        " Pa, kappa0 = " + format_double(e.kappa0) +
                        " (needs finite pressures >= 0 and 0 <= kappa0 <= 1)");
}

init_type crane_equilibrium_type() {
  init_type t;
  t.name = "crane.equilibrium";
  t.description =
      "static equilibrium of 003 Sect. 1.3: fh of 003 Eq. (15) at theta1_0, theta2_0 at rest, "
      "then 3 Newton steps on 003 Eq. (17) for p1, p2, kappa0; writes the multibody's fh0, p1_0, "
      "p2_0 and the hydraulics' s0, p1_0, p2_0, kappa0 (and fh0 of a RIM unit)";
  t.roles = {{"multibody", {"crane.multibody"}},
             {"hydraulics", {"crane.hydraulics", "crane.rim_hydraulics"}}};
  t.apply = [](const std::map<std::string, param_set*>& by_role) {
    param_set& mb = *by_role.at("multibody");
    param_set& hy = *by_role.at("hydraulics");
    const crane::hydraulic_params hp = hydraulic_of(hy);
    if (text_param(mb, "coupling") == "p-s") {
      // The multibody evaluates 003 Eq. (8) of the same cylinder.
      for (const char* k : {"ap", "c"})
        COSIM_INPUT_CHECK(real_param(mb, k) == real_param(hy, k), errc::config_value,
                          std::string("the multibody's ") + k + " = " +
                              format_double(real_param(mb, k)) + " differs from the hydraulics' " +
                              k + " = " + format_double(real_param(hy, k)) +
                              " (p-s: both evaluate 003 Eq. (8) of one cylinder)");
    }
    const crane::equilibrium e = crane::solve_equilibrium(mechanical_of(mb), hp, 3);
    check_cylinder(e, "");
    set_real(mb, "fh0", e.fh);
    set_real(mb, "p1_0", e.p1);
    set_real(mb, "p2_0", e.p2);
    set_real(hy, "s0", e.s0);
    set_real(hy, "p1_0", e.p1);
    set_real(hy, "p2_0", e.p2);
    set_real(hy, "kappa0", e.kappa0);
    if (hy.count("fh0") != 0) set_real(hy, "fh0", e.fh);  // crane.rim_hydraulics
  };
  return t;
}

init_type crane2_equilibrium_type() {
  init_type t;
  t.name = "crane2.equilibrium";
  t.description =
      "static equilibrium of the double-actuated crane (001 Algorithm 1 lines 2-4, Eq. (41)): "
      "actuator forces holding theta1_0, theta2_0 at rest, then Newton per cylinder on 003 Eq. "
      "(17); writes the multibody's fh0_i and the hydraulics' s0_i, p1_0_i, p2_0_i, kappa0_i, "
      "fh0_i";
  t.roles = {{"multibody", {"crane2.multibody"}}, {"hydraulics", {"crane2.hydraulics"}}};
  t.apply = [](const std::map<std::string, param_set*>& by_role) {
    param_set& mb = *by_role.at("multibody");
    param_set& hy = *by_role.at("hydraulics");
    const crane::crane2_equilibrium e =
        crane::solve_crane2_equilibrium(mechanical_of(mb), hydraulic_of(hy));
    for (int i = 0; i < 2; ++i) {
      const std::string sfx = "_" + std::to_string(i + 1);
      check_cylinder(e.act[i], " of actuator " + std::to_string(i + 1));
      set_real(mb, "fh0" + sfx, e.act[i].fh);
      set_real(hy, "s0" + sfx, e.act[i].s0);
      set_real(hy, "p1_0" + sfx, e.act[i].p1);
      set_real(hy, "p2_0" + sfx, e.act[i].p2);
      set_real(hy, "kappa0" + sfx, e.act[i].kappa0);
      set_real(hy, "fh0" + sfx, e.act[i].fh);
    }
  };
  return t;
}

}  // namespace

std::vector<subsystem_type> crane_subsystem_types() {
  // Start values default to the equilibrium with the default parameters (solved once).
  const crane::equilibrium eq = crane::solve_equilibrium({}, {}, 3);
  const crane::crane2_equilibrium eq2 = crane::solve_crane2_equilibrium({}, {});
  std::vector<subsystem_type> v;
  v.push_back(crane_multibody_type(eq));
  v.push_back(crane_hydraulics_type(eq));
  v.push_back(crane_rim_hydraulics_type(eq));
  v.push_back(crane2_multibody_type(eq2));
  v.push_back(crane2_hydraulics_type(eq2));
  return v;
}

std::vector<init_type> crane_init_types() {
  std::vector<init_type> v;
  v.push_back(crane_equilibrium_type());
  v.push_back(crane2_equilibrium_type());
  return v;
}

}  // namespace cosim::config
