#pragma once
// Variables of the crane FMUs (crane_multibody.fmu, crane_hydraulics.fmu): one table per FMU,
// read by the FMUs themselves (multibody_fmu.cpp, hydraulics_fmu.cpp) and by the program
// that writes their modelDescription.xml at build time (crane_model_description.cpp), so
// the two cannot disagree. Start values of the states and inputs are the static
// equilibrium of 003 Sect. 1.3 for the default parameters (crane.equilibrium of the
// built-in crane types, types_crane.cpp): an FMU left at its defaults starts at rest.
//
// Which parameters each side holds follows the built-in types crane.multibody and
// crane.hydraulics (types_crane.cpp). The couplings and integrators are Integer parameters
// (the importer sets Real, Integer and Boolean parameters): coupling 1 = f-s, 2 = p-s;
// multibody integrator 1 = semi-implicit Euler, 2 = trapezoidal; hydraulics integrator
// 1 = forward Euler, 2 = Heun.
#include <cstdint>
#include <limits>
#include <vector>

#include "cosim/subsystems/crane_model.hpp"

namespace cosim::crane_fmu {

enum class kind { real, integer };
enum class causality { independent, parameter, input, output, local };

struct var_spec {
  std::uint32_t vr = 0;
  const char* name = "";
  kind type = kind::real;
  causality causal = causality::local;
  const char* unit = "";  // "" dimensionless
  const char* doc = "";
  double start = 0.0;  // parameters and inputs
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  /// Outputs: depends on the inputs at the same time (direct feedthrough), listed by value
  /// reference.
  std::vector<std::uint32_t> depends_on;
};

constexpr double inf = std::numeric_limits<double>::infinity();

// guid of each FMU (modelDescription.xml and fmi2Instantiate).
constexpr const char* multibody_token = "{3b1f6c2e-9d47-4a85-b0e3-7c5d8a2f1e10}";
constexpr const char* hydraulics_token = "{5e8a2d4c-1f63-4b97-a2c8-0d9e6b3f7a11}";
constexpr double max_pressure = 1e9;  // [Pa], as types_crane.cpp
constexpr double max_force = 1e9;     // [N]
constexpr double max_length = 100.0;  // [m]

// Value references of crane_multibody.fmu.
namespace mb {
enum : std::uint32_t {
  time,
  s,
  sd,
  fh,
  p1,
  p2,
  theta1,
  theta2,
  theta1d,
  theta2d,
  coupling,
  integrator,
  h_internal,
  L,
  Lh,
  m,
  mp,
  mh,
  xB,
  yB,
  g,
  theta1_0,
  theta2_0,
  ap,
  c,
  fh0,
  p1_0,
  p2_0,
  count
};
}  // namespace mb

// Value references of crane_hydraulics.fmu.
namespace hy {
enum : std::uint32_t {
  time,
  s,
  sd,
  kappa,
  fh,
  p1,
  p2,
  kappa_used,
  coupling,
  integrator,
  h_internal,
  ap,
  l,
  c,
  cd,
  rho,
  pP,
  pT,
  a,
  b,
  valve_area,
  s0,
  p1_0,
  p2_0,
  kappa0,
  count
};
}  // namespace hy

// Table rows (named constructors: every field set, no missing initialisers).
inline var_spec row(std::uint32_t vr, const char* name, kind k, causality c, const char* unit,
                    const char* doc, double start = 0.0, double lo = -inf, double hi = inf,
                    std::vector<std::uint32_t> depends_on = {}) {
  var_spec v;
  v.vr = vr;
  v.name = name;
  v.type = k;
  v.causal = c;
  v.unit = unit;
  v.doc = doc;
  v.start = start;
  v.min = lo;
  v.max = hi;
  v.depends_on = std::move(depends_on);
  return v;
}

inline const crane::equilibrium& default_equilibrium() {
  // The built-in crane.equilibrium with the default parameters (003 Sect. 1.3: 3 Newton
  // steps on 003 Eq. (17)).
  static const crane::equilibrium eq = crane::solve_equilibrium({}, {}, 3);
  return eq;
}

inline std::vector<var_spec> multibody_variables() {
  const crane::mechanical_params d{};
  const crane::hydraulic_params hd{};
  const crane::equilibrium& eq = default_equilibrium();
  const double two_pi = 2.0 * 3.14159265358979323846;
  using C = causality;
  using K = kind;
  return {
      row(mb::time, "time", K::real, C::independent, "s", "simulation time"),
      row(mb::s, "s", K::real, C::output, "m", "actuator length, 003 Eq. (5)"),
      row(mb::sd, "sd", K::real, C::output, "m/s", "actuator rate, 003 Eq. (4)"),
      row(mb::fh, "fh", K::real, C::input, "N", "actuator force (f-s); until set: fh0", eq.fh,
          -max_force, max_force),
      row(mb::p1, "p1", K::real, C::input, "Pa", "pressure p1 (p-s); until set: p1_0", eq.p1, 0.0,
          max_pressure),
      row(mb::p2, "p2", K::real, C::input, "Pa", "pressure p2 (p-s); until set: p2_0", eq.p2, 0.0,
          max_pressure),
      row(mb::theta1, "theta1", K::real, C::local, "rad", "link 1 angle"),
      row(mb::theta2, "theta2", K::real, C::local, "rad", "link 2 angle"),
      row(mb::theta1d, "theta1d", K::real, C::local, "rad/s", "link 1 angular velocity"),
      row(mb::theta2d, "theta2d", K::real, C::local, "rad/s", "link 2 angular velocity"),
      row(mb::coupling, "coupling", K::integer, C::parameter, "",
          "1 = f-s (input fh), 2 = p-s (inputs p1, p2; evaluates 003 Eq. (8)) (003 Sect. 3)", 1.0,
          1.0, 2.0),
      row(mb::integrator, "integrator", K::integer, C::parameter, "",
          "1 = semi-implicit Euler (003 Eqs. (6)-(7)), 2 = trapezoidal", 1.0, 1.0, 2.0),
      row(mb::h_internal, "h_internal", K::real, C::parameter, "s",
          "internal step; 0 = one step per doStep (h_M = H, 003 Sect. 5)", 0.0, 0.0, inf),
      row(mb::L, "L", K::real, C::parameter, "m", "link 1 length (003 Table 1)", d.L, 1e-9,
          max_length),
      row(mb::Lh, "Lh", K::real, C::parameter, "m", "link 2 length (003 Table 1)", d.Lh, 1e-9,
          max_length),
      row(mb::m, "m", K::real, C::parameter, "kg", "link 1 mass (003 Table 1)", d.m, 0.0, 1e6),
      row(mb::mp, "mp", K::real, C::parameter, "kg", "point mass at Q (003 Table 1)", d.mp, 0.0,
          1e6),
      row(mb::mh, "mh", K::real, C::parameter, "kg", "point mass at R (003 Table 1)", d.mh, 1e-9,
          1e6),
      row(mb::xB, "xB", K::real, C::parameter, "m", "fixed actuator end B, x (003 Table 1)", d.xB,
          -max_length, max_length),
      row(mb::yB, "yB", K::real, C::parameter, "m", "fixed actuator end B, y (003 Table 1)", d.yB,
          -max_length, max_length),
      row(mb::g, "g", K::real, C::parameter, "m/s^2", "gravity along -y (003 Table 1)", d.g, 0.0,
          100.0),
      row(mb::theta1_0, "theta1_0", K::real, C::parameter, "rad",
          "initial link 1 angle (003 Sect. 1.3)", d.theta1_0, -two_pi, two_pi),
      row(mb::theta2_0, "theta2_0", K::real, C::parameter, "rad",
          "initial link 2 angle (003 Sect. 1.3)", d.theta2_0, -two_pi, two_pi),
      row(mb::ap, "ap", K::real, C::parameter, "m^2",
          "p-s only: piston area of 003 Eq. (8), as the hydraulics' ap (003 Table 2)", hd.ap, 1e-12,
          1.0),
      row(mb::c, "c", K::real, C::parameter, "N s/m",
          "p-s only: viscous friction of 003 Eq. (8), as the hydraulics' c (003 Table 2)", hd.c,
          0.0, 1e9),
      row(mb::fh0, "fh0", K::real, C::parameter, "N",
          "f-s: input fh until the importer sets it (start value, 003 Eq. (15))", eq.fh, -max_force,
          max_force),
      row(mb::p1_0, "p1_0", K::real, C::parameter, "Pa",
          "p-s: input p1 until the importer sets it (start value, 003 Sect. 1.3)", eq.p1, 0.0,
          max_pressure),
      row(mb::p2_0, "p2_0", K::real, C::parameter, "Pa",
          "p-s: input p2 until the importer sets it (start value, 003 Sect. 1.3)", eq.p2, 0.0,
          max_pressure),
  };
}

inline std::vector<var_spec> hydraulics_variables() {
  const crane::hydraulic_params d{};
  const crane::equilibrium& eq = default_equilibrium();
  using C = causality;
  using K = kind;
  return {
      row(hy::time, "time", K::real, C::independent, "s", "simulation time"),
      row(hy::s, "s", K::real, C::input, "m", "actuator length; until set: s0", eq.s0, 0.0,
          max_length),
      row(hy::sd, "sd", K::real, C::input, "m/s", "actuator rate; until set: 0", 0.0, -inf, inf),
      row(hy::kappa, "kappa", K::real, C::input, "1", "valve command; until set: kappa0", eq.kappa0,
          -inf, inf),
      row(hy::fh, "fh", K::real, C::output, "N",
          "actuator force, 003 Eq. (8) with the input sd (direct feedthrough)", 0.0, -inf, inf,
          {hy::sd}),
      row(hy::p1, "p1", K::real, C::output, "Pa", "pressure p1 (state, 003 Eq. (14))"),
      row(hy::p2, "p2", K::real, C::output, "Pa", "pressure p2 (state, 003 Eq. (14))"),
      row(hy::kappa_used, "kappa_used", K::real, C::local, "1",
          "the valve command the outputs were last evaluated with"),
      row(hy::coupling, "coupling", K::integer, C::parameter, "",
          "1 = f-s, 2 = p-s; both compute fh, p1 and p2 (003 Sect. 3)", 1.0, 1.0, 2.0),
      row(hy::integrator, "integrator", K::integer, C::parameter, "",
          "1 = forward Euler (003 Eq. (14)), 2 = Heun", 1.0, 1.0, 2.0),
      row(hy::h_internal, "h_internal", K::real, C::parameter, "s",
          "internal step; 0 = one step per doStep (the default experiment's 0.2 ms, 003 Sect. 5)",
          0.0, 0.0, inf),
      row(hy::ap, "ap", K::real, C::parameter, "m^2", "piston area (003 Table 2)", d.ap, 1e-12,
          1.0),
      row(hy::l, "l", K::real, C::parameter, "m", "cylinder length (003 Table 2, Eq. (12))", d.l,
          1e-9, max_length),
      row(hy::c, "c", K::real, C::parameter, "N s/m", "viscous friction (003 Table 2, Eq. (8))",
          d.c, 0.0, 1e9),
      row(hy::cd, "cd", K::real, C::parameter, "", "valve discharge coefficient (003 Table 2)",
          d.cd, 1e-9, 1.0),
      row(hy::rho, "rho", K::real, C::parameter, "kg/m^3", "fluid density (003 Table 2)", d.rho,
          1e-9, 1e5),
      row(hy::pP, "pP", K::real, C::parameter, "Pa", "pump pressure (003 Table 2)", d.pP, 1e-9,
          max_pressure),
      row(hy::pT, "pT", K::real, C::parameter, "Pa", "tank pressure (003 Table 2)", d.pT, 0.0,
          max_pressure),
      row(hy::a, "a", K::real, C::parameter, "1/Pa",
          "compressibility coefficient (003 Table 2, Eq. (11))", d.a, 1e-30, 1e-6),
      row(hy::b, "b", K::real, C::parameter, "1/Pa^2",
          "compressibility coefficient (003 Table 2, Eq. (11))", d.b, -1e-12, 1e-12),
      row(hy::valve_area, "valve_area", K::real, C::parameter, "m^2",
          "valve area at kappa = 1 (003 Eq. (13))", d.valve_area, 1e-12, 1.0),
      row(hy::s0, "s0", K::real, C::parameter, "m",
          "initial actuator length, 003 Eq. (12) (start value)", eq.s0, 0.0, max_length),
      row(hy::p1_0, "p1_0", K::real, C::parameter, "Pa",
          "initial pressure p1 (start value, 003 Sect. 1.3)", eq.p1, 0.0, max_pressure),
      row(hy::p2_0, "p2_0", K::real, C::parameter, "Pa",
          "initial pressure p2 (start value, 003 Sect. 1.3)", eq.p2, 0.0, max_pressure),
      row(hy::kappa0, "kappa0", K::real, C::parameter, "",
          "input kappa until the importer sets it (start value, 003 Sect. 1.3)", eq.kappa0, 0.0,
          1.0),
  };
}

}  // namespace cosim::crane_fmu
