// The crane family as open-system types (types_crane.cpp): declared parameters and ports,
// the equilibrium initialisation steps checked against the statics of 003 Sect. 1.3 and
// 001 Eq. (41) computed here independently, the crane / crane2 presets' expansion, and the
// hand-written system files of rt_config/systems/ against the shipped scenarios, byte for
// byte.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "bench_key_file.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numbers>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "cosim/rt_config/run.hpp"
#include "cosim/rt_config/scenario.hpp"
#include "cosim/rt_config/type_registry.hpp"
#include "cosim/runtime/error.hpp"
#include "temp_dir.hpp"

namespace {

using namespace cosim::config;

const std::vector<std::string> crane_types{"crane.multibody", "crane.hydraulics",
                                           "crane.rim_hydraulics", "crane2.multibody",
                                           "crane2.hydraulics"};

const subsystem_type& type(const std::string& name) {
  const subsystem_type* t = find_subsystem_type(name);
  if (t == nullptr) throw std::runtime_error("type " + name + " is not registered");
  return *t;
}

param_set resolved(const std::string& name, const param_set& given = {}) {
  return resolve_parameters(type(name), given, "test", "subsystems.x.parameters");
}

std::unique_ptr<cosim::subsystem> instance(const std::string& name, const param_set& given = {}) {
  const subsystem_type& t = type(name);
  return t.create("x", resolved(name, given), t.integrators.front());
}

struct port {
  std::string name, unit;
  bool feedthrough = false;
};

std::vector<port> inputs(const cosim::subsystem& s) {
  std::vector<port> v;
  for (std::size_t i = 0; i < s.input_count(); ++i)
    v.push_back({s.input(i).desc().name, s.input(i).desc().unit, false});
  return v;
}

std::vector<port> outputs(const cosim::subsystem& s) {
  std::vector<port> v;
  for (std::size_t i = 0; i < s.output_count(); ++i)
    v.push_back({s.output_desc(i).name, s.output_desc(i).unit, s.output_desc(i).feedthrough});
  return v;
}

void expect_ports(const std::vector<port>& got, const std::vector<port>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(want[i].name);
    EXPECT_EQ(got[i].name, want[i].name);
    EXPECT_EQ(got[i].unit, want[i].unit);
    EXPECT_EQ(got[i].feedthrough, want[i].feedthrough);
  }
}

// ---- Declarations ---------------------------------------------------------------------

TEST(CraneTypes, EveryDeclaredDefaultIsOfItsKindAndWithinItsRange) {
  for (const auto& name : crane_types) {
    SCOPED_TRACE(name);
    const subsystem_type& t = type(name);
    EXPECT_FALSE(t.description.empty());
    EXPECT_FALSE(t.integrators.empty());
    for (const param_decl& d : t.parameters) {
      SCOPED_TRACE(d.name);
      EXPECT_FALSE(d.doc.empty());
      switch (d.kind) {
        case param_kind::real: {
          ASSERT_TRUE(std::holds_alternative<double>(d.def));
          const double v = std::get<double>(d.def);
          EXPECT_TRUE(std::isfinite(v));
          EXPECT_TRUE(d.min_exclusive ? v > d.min : v >= d.min) << v << " vs min " << d.min;
          EXPECT_LE(v, d.max);
          break;
        }
        case param_kind::text: {
          ASSERT_TRUE(std::holds_alternative<std::string>(d.def));
          const auto& v = std::get<std::string>(d.def);
          EXPECT_NE(std::find(d.choices.begin(), d.choices.end(), v), d.choices.end()) << v;
          break;
        }
        case param_kind::boolean:
          EXPECT_TRUE(std::holds_alternative<bool>(d.def));
          break;
        default:
          ADD_FAILURE() << "unexpected kind";
      }
    }
    EXPECT_NO_THROW((void)resolved(name));
  }
}

TEST(CraneTypes, DefaultStepsAreThoseOf003Sect5) {
  // h_M = H; h_H = min(H, 0.2 ms), dividing H.
  for (const char* m : {"crane.multibody", "crane2.multibody"})
    for (double H : {1e-3, 3e-3, 0.025}) EXPECT_DOUBLE_EQ(type(m).default_step(H, {}), H);
  for (const char* h : {"crane.hydraulics", "crane.rim_hydraulics", "crane2.hydraulics"}) {
    SCOPED_TRACE(h);
    EXPECT_DOUBLE_EQ(type(h).default_step(1e-3, {}), 2e-4);
    EXPECT_DOUBLE_EQ(type(h).default_step(0.025, {}), 2e-4);
    EXPECT_DOUBLE_EQ(type(h).default_step(1e-4, {}), 1e-4);
    EXPECT_DOUBLE_EQ(type(h).default_step(3e-4, {}), 1.5e-4);  // 2e-4 does not divide 0.3 ms
    EXPECT_EQ(type(h).integrators, (std::vector<std::string>{"forward-euler", "heun"}));
  }
  EXPECT_EQ(type("crane.multibody").integrators,
            (std::vector<std::string>{"semi-implicit-euler", "trapezoidal"}));
}

TEST(CraneTypes, ValveCommandsAreOffsetsToKappa0) {
  EXPECT_EQ(type("crane.hydraulics").start_params.at("kappa"), "kappa0");
  EXPECT_EQ(type("crane.rim_hydraulics").start_params.at("kappa"), "kappa0");
  EXPECT_EQ(type("crane2.hydraulics").start_params.at("kappa_1"), "kappa0_1");
  EXPECT_EQ(type("crane2.hydraulics").start_params.at("kappa_2"), "kappa0_2");
}

TEST(CraneTypes, InstancesWithDefaultsHaveTheDeclaredPorts) {
  auto mb = instance("crane.multibody");
  expect_ports(inputs(*mb), {{"fh", "N"}});
  expect_ports(outputs(*mb), {{"s", "m"}, {"sd", "m/s"}});
  auto mb_ps = instance("crane.multibody", {{"coupling", std::string("p-s")}});
  expect_ports(inputs(*mb_ps), {{"p1", "Pa"}, {"p2", "Pa"}});
  auto mb_rim = instance("crane.multibody", {{"rim_outputs", true}, {"rim_follow", true}});
  expect_ports(inputs(*mb_rim), {{"fh", "N"}, {"rim_s", "m"}, {"rim_sd", "m/s"}});
  expect_ports(outputs(*mb_rim), {{"s", "m"}, {"sd", "m/s"}, {"Mt_11", "kg"}, {"ft_1", "N"}});

  // f-s: fh = 003 Eq. (8) with the received sd, direct feedthrough; p-s: states only.
  auto hy = instance("crane.hydraulics");
  expect_ports(inputs(*hy), {{"s", "m"}, {"sd", "m/s"}, {"kappa", "1"}});
  expect_ports(outputs(*hy), {{"fh", "N", true}});
  auto hy_ps = instance("crane.hydraulics", {{"coupling", std::string("p-s")}});
  expect_ports(outputs(*hy_ps), {{"p1", "Pa"}, {"p2", "Pa"}});

  // The RIM unit's fh uses the RIM's own rate: no feedthrough.
  auto rim = instance("crane.rim_hydraulics");
  expect_ports(inputs(*rim),
               {{"s", "m"}, {"sd", "m/s"}, {"kappa", "1"}, {"Mt_11", "kg"}, {"ft_1", "N"}});
  expect_ports(outputs(*rim), {{"fh", "N"}, {"rim_s", "m"}, {"rim_sd", "m/s"}});

  auto mb2 = instance("crane2.multibody");
  expect_ports(inputs(*mb2), {{"fh_1", "N"}, {"fh_2", "N"}});
  expect_ports(outputs(*mb2), {{"s_1", "m"}, {"sd_1", "m/s"}, {"s_2", "m"}, {"sd_2", "m/s"}});
  auto hy2 = instance("crane2.hydraulics");
  expect_ports(inputs(*hy2), {{"s_1", "m"},
                              {"sd_1", "m/s"},
                              {"kappa_1", "1"},
                              {"s_2", "m"},
                              {"sd_2", "m/s"},
                              {"kappa_2", "1"}});
  expect_ports(outputs(*hy2), {{"fh_1", "N", true}, {"fh_2", "N", true}});
  auto hy2_rim = instance("crane2.hydraulics", {{"interface", std::string("rim")}});
  EXPECT_EQ(hy2_rim->input_count(), 11u);  // 6 + Mt_11, Mt_12, Mt_22, ft_1, ft_2
  expect_ports(outputs(*hy2_rim), {{"fh_1", "N"},
                                   {"fh_2", "N"},
                                   {"rim_s_1", "m"},
                                   {"rim_sd_1", "m/s"},
                                   {"rim_s_2", "m"},
                                   {"rim_sd_2", "m/s"}});
}

TEST(CraneTypes, BadParametersFailNamingTheParameter) {
  try {
    (void)resolved("crane.hydraulics", {{"cd", 1.5}});
    ADD_FAILURE() << "cd = 1.5 accepted";
  } catch (const cosim::error& e) {
    EXPECT_NE(std::string(e.what()).find("subsystems.x.parameters.cd"), std::string::npos)
        << e.what();
  }
  // rim_follow needs the RIM outputs it follows.
  EXPECT_THROW((void)instance("crane.multibody", {{"rim_follow", true}}), cosim::error);
  EXPECT_THROW((void)instance(
                   "crane.multibody",
                   {{"rim_outputs", true}, {"rim_follow", true}, {"coupling", std::string("p-s")}}),
               cosim::error);
  // pT >= pP has no valve flow direction.
  EXPECT_THROW((void)instance("crane.hydraulics", {{"pT", 8e6}}), cosim::error);
}

// ---- Equilibrium -----------------------------------------------------------------------

// 003 Eq. (17), written here from 003 Eqs. (8)-(13) at rest (sd = 0, s = s0): the force
// balance fh - (p2 - p1) ap and the two chamber flows (valve in minus valve out) [m^3/s].
struct statics {
  double force = 0.0;  // [N]
  double q1 = 0.0, q2 = 0.0;
  double flow_scale = 0.0;  // largest single orifice flow [m^3/s]
};

statics eq17(const param_set& hy, const std::string& sfx, double fh) {
  const double ap = real_param(hy, "ap"), cd = real_param(hy, "cd"), rho = real_param(hy, "rho"),
               pP = real_param(hy, "pP"), pT = real_param(hy, "pT"),
               A = real_param(hy, "valve_area");
  const double p1 = real_param(hy, "p1_0" + sfx), p2 = real_param(hy, "p2_0" + sfx),
               k = real_param(hy, "kappa0" + sfx);
  auto orifice = [&](double area, double dp) {
    return dp > 0.0 ? area * cd * std::sqrt(2.0 * dp / rho) : 0.0;
  };
  statics s;
  s.force = fh - (p2 - p1) * ap;
  const double in1 = orifice(A * k, pP - p1), out1 = orifice(A * (1.0 - k), p1 - pT);
  const double in2 = orifice(A * (1.0 - k), pP - p2), out2 = orifice(A * k, p2 - pT);
  s.q1 = in1 - out1;
  s.q2 = in2 - out2;
  s.flow_scale = std::max({in1, out1, in2, out2});
  return s;
}

void expect_statics(const param_set& hy, const std::string& sfx, double fh) {
  const statics s = eq17(hy, sfx, fh);
  // Three Newton steps of 003's procedure leave a residual far below what a run resolves:
  // 1 mN of force, and flows 1e-9 of the orifice flows.
  EXPECT_LT(std::abs(s.force), 1e-3) << s.force;
  EXPECT_GT(s.flow_scale, 1e-3);  // the valve is open: the flow balance is not trivial
  EXPECT_LT(std::abs(s.q1), 1e-9 * s.flow_scale) << s.q1;
  EXPECT_LT(std::abs(s.q2), 1e-9 * s.flow_scale) << s.q2;
}

// Start values to something that is no equilibrium, so the test sees what apply() wrote.
void scramble(param_set& p) {
  for (auto& [k, v] : p)
    if (k.find('0') != std::string::npos && k.rfind("theta", 0) != 0) v = 1.0;
}

double round4(double v) {
  return std::round(v * 1e4) / 1e4;
}

TEST(CraneEquilibriumInit, WritesTheStartValuesOf003Sect1_3) {
  const init_type* init = find_init_type("crane.equilibrium");
  ASSERT_NE(init, nullptr);
  ASSERT_EQ(init->roles.size(), 2u);
  EXPECT_EQ(init->roles[0].types, (std::vector<std::string>{"crane.multibody"}));
  EXPECT_EQ(init->roles[1].types,
            (std::vector<std::string>{"crane.hydraulics", "crane.rim_hydraulics"}));
  param_set mb = resolved("crane.multibody"), hy = resolved("crane.hydraulics");
  scramble(mb);
  scramble(hy);
  init->apply({{"multibody", &mb}, {"hydraulics", &hy}});
  // 003 Sect. 1.3 by hand: theta1 = 30 deg puts P at (sqrt3/4, 1/4), so s = 0.5 m and
  // ds/dth1 = sqrt3/4; link 2 hangs straight down, so only link 1's moment
  // g L (m/2 + mp + mh) cos 30deg must be held: fh = 2 g (m/2 + mp + mh) = 8829 N.
  EXPECT_NEAR(real_param(hy, "s0"), 0.5, 1e-12);
  EXPECT_NEAR(real_param(mb, "fh0"), 2.0 * 9.81 * 450.0, 1e-8);
  expect_statics(hy, "", real_param(mb, "fh0"));
  // 003 Eq. (18) as printed.
  EXPECT_EQ(round4(real_param(hy, "p1_0") / 1e6), 3.1708);
  EXPECT_EQ(round4(real_param(hy, "p2_0") / 1e6), 4.5292);
  EXPECT_EQ(round4(real_param(hy, "kappa0")), 0.4543);
  // The p-s multibody starts with the same pressures as inputs.
  EXPECT_EQ(real_param(mb, "p1_0"), real_param(hy, "p1_0"));
  EXPECT_EQ(real_param(mb, "p2_0"), real_param(hy, "p2_0"));
  // The declared defaults are this equilibrium: an instance with defaults starts at rest.
  const param_set defaults_mb = resolved("crane.multibody"),
                  defaults_hy = resolved("crane.hydraulics");
  for (const char* k : {"s0", "p1_0", "p2_0", "kappa0"})
    EXPECT_EQ(real_param(defaults_hy, k), real_param(hy, k)) << k;
  EXPECT_EQ(real_param(defaults_mb, "fh0"), real_param(mb, "fh0"));
}

TEST(CraneEquilibriumInit, FollowsTheParametersOfItsRoles) {
  const init_type* init = find_init_type("crane.equilibrium");
  ASSERT_NE(init, nullptr);
  // A heavier point mass at Q: fh = 2 g (m/2 + mp + mh) with mp = 300 kg.
  param_set mb = resolved("crane.multibody", {{"mp", 300.0}});
  // A larger piston and another tank pressure: the pressures must follow.
  param_set hy = resolved("crane.rim_hydraulics", {{"ap", 80e-4}, {"pT", 0.2e6}});
  scramble(mb);
  scramble(hy);
  init->apply({{"multibody", &mb}, {"hydraulics", &hy}});
  EXPECT_NEAR(real_param(mb, "fh0"), 2.0 * 9.81 * 500.0, 1e-8);
  EXPECT_EQ(real_param(hy, "fh0"), real_param(mb, "fh0"));  // the RIM starts in equilibrium
  expect_statics(hy, "", real_param(mb, "fh0"));
}

TEST(CraneEquilibriumInit, PressureCouplingNeedsOneCylinder) {
  const init_type* init = find_init_type("crane.equilibrium");
  ASSERT_NE(init, nullptr);
  param_set mb = resolved("crane.multibody", {{"coupling", std::string("p-s")}});
  param_set hy = resolved("crane.hydraulics", {{"coupling", std::string("p-s")}, {"ap", 80e-4}});
  try {
    init->apply({{"multibody", &mb}, {"hydraulics", &hy}});
    ADD_FAILURE() << "different piston areas accepted";
  } catch (const cosim::error& e) {
    EXPECT_NE(std::string(e.what()).find("ap"), std::string::npos) << e.what();
  }
}

TEST(Crane2EquilibriumInit, WritesTheStartValuesOf001Eq41) {
  const init_type* init = find_init_type("crane2.equilibrium");
  ASSERT_NE(init, nullptr);
  param_set mb = resolved("crane2.multibody"), hy = resolved("crane2.hydraulics");
  scramble(mb);
  scramble(hy);
  init->apply({{"multibody", &mb}, {"hydraulics", &hy}});
  // Actuator 1 holds link 1's moment (as the single crane); actuator 2 joins P and the
  // middle of link 2, which hangs straight down: s2^2 = L^2/4 + Lh^2/4 + (L Lh/2)
  // cos(th1 - th2) = 1/4 + 1/16 + (1/4) cos(120 deg) = 3/16, and no moment, so fh_2 = 0.
  EXPECT_NEAR(real_param(hy, "s0_1"), 0.5, 1e-12);
  EXPECT_NEAR(real_param(hy, "s0_2"), std::sqrt(3.0 / 16.0), 1e-12);
  EXPECT_NEAR(real_param(mb, "fh0_1"), 2.0 * 9.81 * 450.0, 1e-6);
  EXPECT_NEAR(real_param(mb, "fh0_2"), 0.0, 1e-6);
  for (const char* i : {"_1", "_2"}) {
    SCOPED_TRACE(i);
    EXPECT_EQ(real_param(hy, std::string("fh0") + i), real_param(mb, std::string("fh0") + i));
    expect_statics(hy, i, real_param(mb, std::string("fh0") + i));
  }
  // 001 Table 3.
  EXPECT_NEAR(real_param(hy, "kappa0_1"), 0.45435, 5e-6);
  EXPECT_NEAR(real_param(hy, "kappa0_2"), 0.5, 5e-6);
}

// ---- Presets and system files ----------------------------------------------------------

std::string scenario_path(const std::string& name) {
  return std::string(COSIM_SOURCE_DIR) + "/rt_config/scenarios/" + name + ".toml";
}
std::string system_path(const std::string& name) {
  return std::string(COSIM_SOURCE_DIR) + "/rt_config/systems/" + name + ".toml";
}

TEST(CranePreset, ExpandsIntoTheTypesWithTheEquilibriumStep) {
  const scenario sc = load_scenario(scenario_path("crane_m1_fs_rim"), {});
  ASSERT_TRUE(sc.preset);
  const system_spec& s = sc.system;
  ASSERT_EQ(s.subsystems.size(), 2u);
  EXPECT_EQ(s.subsystems[0].name, "multibody");
  EXPECT_EQ(s.subsystems[0].type, "crane.multibody");
  EXPECT_EQ(s.subsystems[1].name, "hydraulics");
  EXPECT_EQ(s.subsystems[1].type, "crane.rim_hydraulics");
  EXPECT_NE(s.subsystems[0].at.where.find("model.name = \"crane\" (preset)"), std::string::npos);
  ASSERT_EQ(s.initialization.size(), 1u);
  EXPECT_EQ(s.initialization[0].type, "crane.equilibrium");
  ASSERT_EQ(s.sources.size(), 1u);
  EXPECT_EQ(s.sources[0].to, "hydraulics.kappa");
  EXPECT_EQ(s.sources[0].signal, "manoeuvre:M1");
  std::vector<std::string> conns;
  for (const auto& c : s.connections) conns.push_back(c.from + " -> " + c.to);
  EXPECT_EQ(conns, (std::vector<std::string>{
                       "multibody.s -> hydraulics.s", "multibody.sd -> hydraulics.sd",
                       "multibody.Mt_11 -> hydraulics.Mt_11", "multibody.ft_1 -> hydraulics.ft_1",
                       "hydraulics.fh -> multibody.fh"}));
  ASSERT_EQ(s.bonds.size(), 1u);
  std::vector<std::string> cols;
  for (const auto& r : s.record) cols.push_back(r.as);
  EXPECT_EQ(cols, (std::vector<std::string>{"kappa", "s", "sd", "p1", "p2", "fh"}));

  // Test inputs keep their model.test_* values as source arguments.
  const scenario st = load_scenario(scenario_path("crane_m1_fs"),
                                    {"model.manoeuvre=\"ramp\"", "model.test_amplitude=0.02"});
  ASSERT_EQ(st.system.sources.size(), 1u);
  EXPECT_EQ(st.system.sources[0].signal, "ramp");
  EXPECT_EQ(st.system.sources[0].args.at("amplitude"), 0.02);
  EXPECT_EQ(st.system.sources[0].args.at("time"), 0.5);

  // The bench scenario's kappa comes from the joystick driver's channel.
  const scenario sb = load_scenario(scenario_path("bench_udp"), cosim::test::with_bench_keys({}));
  ASSERT_EQ(sb.system.sources.size(), 1u);
  EXPECT_EQ(sb.system.sources[0].signal, "driver:joystick.kappa");

  // crane2: actuator 2 follows 001 Eq. (35).
  const scenario s2 = load_scenario(scenario_path("crane2_m1_fs"), {});
  ASSERT_EQ(s2.system.sources.size(), 2u);
  EXPECT_EQ(s2.system.sources[0].signal, "manoeuvre:M1");
  EXPECT_EQ(s2.system.sources[1].signal, "manoeuvre:M1_kappa2");
  EXPECT_EQ(s2.system.initialization.at(0).type, "crane2.equilibrium");
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `file` through the library's run entry into DIR/<tag>; returns results.csv.
std::string run_results(const cosim::test::temp_dir& tmp, const std::string& file,
                        const std::string& tag) {
  run_request req;
  req.scenario = file;
  req.out_dir = tmp / tag;
  req.quiet = true;
  const run_report rep = run_scenario(req, nullptr);
  EXPECT_EQ(exit_code(rep.outcome), 0) << file;
  return read_all(tmp / (tag + "/results.csv"));
}

void expect_same_results(const std::string& name) {
  SCOPED_TRACE(name);
  cosim::test::temp_dir tmp;
  const std::string preset = run_results(tmp, scenario_path(name), "preset");
  const std::string system = run_results(tmp, system_path(name), "system");
  // Same header and every row: thousands of rows over the 10-s manoeuvre.
  EXPECT_GT(std::count(preset.begin(), preset.end(), '\n'), 300);
  EXPECT_EQ(preset.substr(0, preset.find('\n')), system.substr(0, system.find('\n')));
  EXPECT_TRUE(preset == system) << "results.csv differ";
}

TEST(CranePreset, KappaFromADriverChannelIsWiredBeforeTheCoupling) {
  // The bench scenario with both sockets on ephemeral ports (nothing is sent at build).
  const scenario sc =
      load_scenario(scenario_path("bench_udp"),
                    cosim::test::with_bench_keys({"drivers.joystick.bind=\"127.0.0.1:0\"",
                                                  "drivers.valve.bind=\"127.0.0.1:0\""}));
  const auto b = build(sc);
  const cosim::system& sys = b->sys;
  ASSERT_GE(sys.size(), 3u);
  EXPECT_EQ(sys.at(0).name(), "multibody");
  EXPECT_EQ(sys.at(1).name(), "hydraulics");
  EXPECT_EQ(sys.at(2).name(), "joystick");
  // As the crane model wired it: the drivers (with the valve fed by the joystick), the
  // joystick's kappa channel into the hydraulics, then s, sd, fh.
  const std::size_t k = sys.connection_to("hydraulics.kappa");
  const cosim::connection& c = sys.connections()[k];
  EXPECT_EQ(sys.at(c.from).name(), "joystick");
  EXPECT_EQ(sys.at(c.from).output_desc(c.output).name, "kappa");
  EXPECT_EQ(sys.connection_to("hydraulics.s"), k + 1);
  EXPECT_EQ(sys.connection_to("multibody.fh"), k + 3);
}

// docs/drivers.md: a channel's port has the unit of `units` (default "1"); connections to
// it are checked like any other.
TEST(CranePreset, OutputDriverChannelsCarryTheirUnits) {
  const std::vector<std::string> valve{"drivers.joystick.bind=\"127.0.0.1:0\"",
                                       "drivers.valve.bind=\"127.0.0.1:0\"",
                                       "drivers.valve.channels=[\"kappa\", \"s\"]",
                                       "drivers.valve.min=[0.0, 0.0]",
                                       "drivers.valve.max=[1.0, 2.0]",
                                       "drivers.valve.safe_value=[0.0, 0.0]",
                                       "drivers.valve.from=[\"joystick.kappa\", \"multibody.s\"]"};
  auto error_of = [&](std::vector<std::string> sets) -> std::string {
    try {
      (void)build(load_scenario(scenario_path("bench_udp"), cosim::test::with_bench_keys(sets)));
    } catch (const cosim::error& e) {
      return e.what();
    }
    return "";
  };
  // Without units the actuator length [m] cannot feed a dimensionless channel.
  EXPECT_NE(error_of(valve).find("cannot connect multibody.s [m] to valve.s [1]: units differ"),
            std::string::npos)
      << error_of(valve);
  auto with = [&](const std::string& units) {
    auto v = valve;
    v.push_back("drivers.valve.units=" + units);
    return v;
  };
  const auto ok = with("[\"1\", \"m\"]");
  EXPECT_EQ(error_of(ok), "");
  const auto b = build(load_scenario(scenario_path("bench_udp"), cosim::test::with_bench_keys(ok)));
  const cosim::connection& c = b->sys.connections()[b->sys.connection_to("valve.s")];
  EXPECT_EQ(b->sys.at(c.from).output_desc(c.output).unit, "m");
  // Printed as a system file, the units come along.
  EXPECT_NE(system_toml(load_scenario(scenario_path("bench_udp"), cosim::test::with_bench_keys(ok)))
                .find("units = [\"1\", \"m\"]"),
            std::string::npos);
  // One unit per channel, and a unit is one word.
  for (const std::string bad : {"[\"m\"]", "[\"m\", \"\"]", "[\"1\", \"m s\"]"}) {
    const std::string e = error_of(with(bad));
    EXPECT_NE(e.find("drivers.valve.units"), std::string::npos) << bad << ": " << e;
  }
}

// docs/drivers.md: what the driver itself sends (the fail-safe value on a stop) or starts
// an input at must be a value the channel allows, and an address datagrams go to or come
// from must name one device. Before, safe_value = [nan] or [5.0] with max = [1.0] was sent
// to the bench on every stop, and `to = "127.0.0.1:0"` ran "completed" with nothing sent.
TEST(CranePreset, DriverValuesOutsideTheChannelAndAddressesOfNoDeviceAreRefused) {
  const std::vector<std::string> base{"drivers.joystick.bind=\"127.0.0.1:0\"",
                                      "drivers.valve.bind=\"127.0.0.1:0\""};
  for (const auto& [set, key, why] :
       {std::tuple{"drivers.valve.safe_value=[nan]", "drivers.valve.safe_value", "finite"},
        {"drivers.valve.safe_value=[1.5]", "drivers.valve.safe_value", "within min .. max"},
        {"drivers.joystick.initial=[-0.1]", "drivers.joystick.initial", "within min .. max"},
        {"drivers.valve.to=\"127.0.0.1:0\"", "drivers.valve.to", "port 0"},
        {"drivers.valve.to=\"255.255.255.255:5000\"", "drivers.valve.to", "no single device"},
        {"drivers.joystick.peers=[\"0.0.0.0:5601\"]", "drivers.joystick.peers", "no single device"},
        {"drivers.joystick.channels=[\"kappa\", \"kappa\"]", "drivers.joystick.channels",
         "named twice"}}) {
    SCOPED_TRACE(set);
    auto sets = base;
    sets.emplace_back(set);
    try {
      (void)load_scenario(scenario_path("bench_udp"), cosim::test::with_bench_keys(sets));
      ADD_FAILURE() << "accepted";
    } catch (const cosim::error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(key), std::string::npos) << m;
      EXPECT_NE(m.find(why), std::string::npos) << m;
      EXPECT_EQ(m.find('\n'), std::string::npos) << "one line: " << m;
    }
  }
  // The shipped values are inside: 0 within [0, 1].
  EXPECT_NO_THROW(
      (void)load_scenario(scenario_path("bench_udp"), cosim::test::with_bench_keys(base)));
}

// A driver's port in use is said about the driver's key alone. The driver is made when the
// first source uses its channel, and the message was wrapped in that source's context
// ("model.name = "crane" (preset): sources[0].signal: drivers.joystick.bind = ...").
TEST(CranePreset, APortInUseIsNamedByTheDriversKeyAlone) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a), 0);
  socklen_t len = sizeof a;
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  const std::string bind = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  try {
    (void)build(
        load_scenario(scenario_path("bench_udp"),
                      cosim::test::with_bench_keys({"drivers.joystick.bind=\"" + bind + "\"",
                                                    "drivers.valve.bind=\"127.0.0.1:0\""})));
    ADD_FAILURE() << "a port in use was accepted";
  } catch (const cosim::error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("bench_udp.toml: drivers.joystick.bind = \"" + bind + "\": cannot bind"),
              std::string::npos)
        << m;
    EXPECT_EQ(m.find("sources["), std::string::npos) << m;
  }
  ::close(fd);
}

// --print-system of a preset is a system file that runs to the same results (p-s bond
// gains, the coupled RIM of crane2 with Gauss-Seidel).
TEST(CranePreset, PrintedSystemRunsToTheSameResults) {
  for (const char* name : {"crane_m1_ps", "crane2_m1_rim"}) {
    SCOPED_TRACE(name);
    cosim::test::temp_dir tmp;
    const std::string printed =
        tmp.file("printed.toml", system_toml(load_scenario(scenario_path(name), {})));
    const std::string a = run_results(tmp, scenario_path(name), "preset");
    const std::string b = run_results(tmp, printed, "system");
    EXPECT_GT(std::count(a.begin(), a.end(), '\n'), 300);
    EXPECT_TRUE(a == b) << "results.csv differ";
  }
}

TEST(CraneSystemFiles, CraneM1FsEqualsTheScenarioByteForByte) {
  expect_same_results("crane_m1_fs");
}

TEST(CraneSystemFiles, CraneM1FsRimEqualsTheScenarioByteForByte) {
  expect_same_results("crane_m1_fs_rim");
}

TEST(CraneSystemFiles, Crane2M1FsEqualsTheScenarioByteForByte) {
  expect_same_results("crane2_m1_fs");
}

}  // namespace
