// The oscillator.mass subsystem type (types_oscillator.cpp), the oscillator presets'
// expansion into a system_spec, and the hand-written oscillator system files
// (rt_config/systems/) against the presets they reproduce.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cosim/rt_config/scenario.hpp"
#include "cosim/rt_config/type_registry.hpp"
#include "cosim/runtime/csv_writer.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/executor.hpp"
#include "temp_dir.hpp"

namespace {

namespace config = cosim::config;

const std::string src = COSIM_SOURCE_DIR;

const config::subsystem_type& mass_type() {
  const config::subsystem_type* t = config::find_subsystem_type("oscillator.mass");
  EXPECT_NE(t, nullptr);
  if (t == nullptr) throw std::runtime_error("oscillator.mass is not registered");
  return *t;
}

config::param_set resolved(const config::param_set& given) {
  return config::resolve_parameters(mass_type(), given, "test", "subsystems.m.parameters");
}

std::unique_ptr<cosim::subsystem> make(const config::param_set& given,
                                       const std::string& integrator = "trapezoidal") {
  return mass_type().create("m", resolved(given), integrator);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

double variable(const cosim::subsystem& s, const std::string& name) {
  for (const auto& v : s.variables())
    if (v.name == name) return *v.value;
  ADD_FAILURE() << "no variable " << name;
  return 0.0;
}

/// Expects `f` to throw a cosim::error whose message contains each needle.
template <class F>
std::string expect_error(F&& f, const std::vector<std::string>& needles) {
  try {
    f();
  } catch (const cosim::error& e) {
    std::string msg = e.what();
    for (const auto& n : needles)
      EXPECT_NE(msg.find(n), std::string::npos) << "missing '" << n << "' in: " << msg;
    return msg;
  }
  ADD_FAILURE() << "no error";
  return {};
}

TEST(OscillatorType, DeclaresTheParametersOfTheBriefWithDefaultsInRange) {
  const config::subsystem_type& t = mass_type();
  std::vector<std::string> names;
  for (const auto& d : t.parameters) names.push_back(d.name);
  const std::vector<std::string> expected{
      "m",       "k",       "c",        "spring_exponent", "damper_exponent",
      "x0",      "v0",      "links",    "link_k",          "link_c",
      "link_x0", "link_v0", "coupling", "forces",          "force_f0"};
  EXPECT_EQ(names, expected);
  // Every default passes its own declaration (kind and range).
  const config::param_set p = resolved({});
  EXPECT_EQ(p.size(), expected.size());
  EXPECT_EQ(config::real_param(p, "m"), 1.0);
  EXPECT_EQ(config::text_param(p, "coupling"), "f-d");
  EXPECT_TRUE(config::texts_param(p, "links").empty());
  EXPECT_EQ(t.integrators, (std::vector<std::string>{"trapezoidal", "semi-implicit-euler", "rk4"}));
  EXPECT_EQ(t.default_step(0.004, p), 0.004);
  // The partners' start values are start values; the mass's own state is not.
  for (const auto& d : t.parameters)
    EXPECT_EQ(d.start_value, d.name == "link_x0" || d.name == "link_v0" || d.name == "force_f0")
        << d.name;
}

TEST(OscillatorType, RangesFollowThePhysics) {
  // m > 0 (regular mass matrix, 000 Eq. (10)); k, c >= 0; exponents >= 1 (000 Eqs. (55)-(56)).
  expect_error(
      [] {
        (void)resolved({{"m", 0.0}});
      },
      {"subsystems.m.parameters.m", "value 0 is out of range", "> 0", "[kg]"});
  expect_error([] { (void)resolved({{"k", -1.0}}); }, {"parameters.k", ">= 0"});
  expect_error([] { (void)resolved({{"c", -1.0}}); }, {"parameters.c", ">= 0"});
  expect_error(
      [] {
        (void)resolved({{"spring_exponent", 0.5}});
      },
      {"parameters.spring_exponent", ">= 1"});
  expect_error(
      [] {
        (void)resolved({{"damper_exponent", 0.99}});
      },
      {"parameters.damper_exponent", ">= 1"});
  expect_error(
      [] {
        (void)resolved({{"link_k", std::vector<double>{1.0, -2.0}}});
      },
      {"parameters.link_k", "-2"});
  expect_error(
      [] {
        (void)resolved({{"coupling", std::string("f-f")}});
      },
      {"parameters.coupling", "f-d, d-d"});
  // Boundary values are allowed.
  EXPECT_NO_THROW((void)resolved(
      {{"m", 1e-9}, {"k", 0.0}, {"spring_exponent", 1.0}, {"x0", -3.0}, {"v0", -4.0}}));
}

TEST(OscillatorType, InstancePortsUnitsAndFeedthrough) {
  const auto plain = make({});
  ASSERT_EQ(plain->output_count(), 2U);
  EXPECT_EQ(plain->input_count(), 0U);

  const auto fd = make({{"links", std::vector<std::string>{"7"}},
                        {"link_k", std::vector<double>{1.0}},
                        {"link_c", std::vector<double>{0.0}},
                        {"link_x0", std::vector<double>{0.0}},
                        {"link_v0", std::vector<double>{0.0}},
                        {"forces", std::vector<std::string>{"9"}},
                        {"force_f0", std::vector<double>{0.0}}});
  ASSERT_EQ(fd->output_count(), 3U);
  const struct {
    const char* name;
    const char* unit;
    cosim::port_role role;
    bool feedthrough;
  } outs[] = {{"x", "m", cosim::port_role::signal, false},
              {"v", "m/s", cosim::port_role::flow, false},
              // f at t is the element's force with the partner's x, v at t (000 Eq. (24)).
              {"f", "N", cosim::port_role::effort, true}};
  for (std::size_t i = 0; i < 3; ++i) {
    const cosim::port_desc& d = fd->output_desc(i);
    EXPECT_EQ(d.name, outs[i].name);
    EXPECT_EQ(d.unit, outs[i].unit);
    EXPECT_EQ(d.role, outs[i].role);
    EXPECT_EQ(d.feedthrough, outs[i].feedthrough) << d.name;
  }
  ASSERT_EQ(fd->input_count(), 3U);
  EXPECT_EQ(fd->input(0).desc().name, "x7");
  EXPECT_EQ(fd->input(0).desc().unit, "m");
  EXPECT_EQ(fd->input(1).desc().name, "v7");
  EXPECT_EQ(fd->input(1).desc().unit, "m/s");
  EXPECT_EQ(fd->input(1).desc().role, cosim::port_role::flow);
  EXPECT_EQ(fd->input(2).desc().name, "f9");
  EXPECT_EQ(fd->input(2).desc().unit, "N");
  EXPECT_EQ(fd->input(2).desc().role, cosim::port_role::effort);

  // d-d: the partner holds its own copy; no force output.
  const auto dd = make({{"coupling", std::string("d-d")},
                        {"links", std::vector<std::string>{"1", "3"}},
                        {"link_k", std::vector<double>{1.0, 2.0}},
                        {"link_c", std::vector<double>{0.0, 0.0}},
                        {"link_x0", std::vector<double>{0.0, 0.0}},
                        {"link_v0", std::vector<double>{0.0, 0.0}}});
  EXPECT_EQ(dd->output_count(), 2U);
  ASSERT_EQ(dd->input_count(), 4U);
  EXPECT_EQ(dd->input(2).desc().name, "x3");
}

// The parameters reach the right physics: f and a at t0 by hand (000 Eqs. (12)-(14), (55)-
// (56)), linear and with power-law exponents.
TEST(OscillatorType, ParametersGiveTheForceAndAccelerationOfTheEquations) {
  const config::param_set base{{"m", 2.0},
                               {"k", 3.0},
                               {"c", 0.5},
                               {"x0", 0.1},
                               {"v0", -0.2},
                               {"links", std::vector<std::string>{"2"}},
                               {"link_k", std::vector<double>{4.0}},
                               {"link_c", std::vector<double>{0.25}},
                               {"link_x0", std::vector<double>{0.3}},
                               {"link_v0", std::vector<double>{0.6}},
                               {"forces", std::vector<std::string>{"3"}},
                               {"force_f0", std::vector<double>{1.5}}};
  {
    auto s = make(base);
    s->initialize(cosim::time_point{});
    s->update_outputs(cosim::time_point{});
    // f = 4 (0.1 - 0.3) + 0.25 (-0.2 - 0.6) = -1.0
    EXPECT_NEAR(s->output(2), -1.0, 1e-15);
    EXPECT_EQ(s->output(0), 0.1);
    EXPECT_EQ(s->output(1), -0.2);
    // m a = -3 (0.1) - 0.5 (-0.2) - f + 1.5 = 2.3
    EXPECT_NEAR(variable(*s, "a"), 1.15, 1e-15);
  }
  {
    config::param_set p = base;
    p["spring_exponent"] = 2.0;
    p["damper_exponent"] = 3.0;
    auto s = make(p, "rk4");
    s->initialize(cosim::time_point{});
    s->update_outputs(cosim::time_point{});
    // f = 4 |-0.2| (-0.2) + 0.25 |-0.8|^2 (-0.8) = -0.16 - 0.128
    EXPECT_NEAR(s->output(2), -0.288, 1e-15);
    // m a = -3 |0.1| 0.1 - 0.5 |-0.2|^2 (-0.2) + 0.288 + 1.5 = 1.762
    EXPECT_NEAR(variable(*s, "a"), 0.881, 1e-15);
  }
}

// `cosim types` shows link_x0, link_v0 and force_f0 with default []: left out, they are 0 for
// every element (the partner at rest at its origin), not a refusal.
TEST(OscillatorType, LeftOutStartValuesOfTheElementsAreZero) {
  const config::param_set given{{"m", 2.0},
                                {"k", 3.0},
                                {"x0", 0.1},
                                {"v0", -0.2},
                                {"links", std::vector<std::string>{"2"}},
                                {"link_k", std::vector<double>{4.0}},
                                {"link_c", std::vector<double>{0.25}},
                                {"forces", std::vector<std::string>{"3"}}};
  auto s = make(given);
  ASSERT_EQ(s->input_count(), 3U);
  s->initialize(cosim::time_point{});
  s->update_outputs(cosim::time_point{});
  // f = 4 (0.1 - 0) + 0.25 (-0.2 - 0) = 0.35 with the partner at rest at 0
  EXPECT_NEAR(s->output(2), 0.35, 1e-15);
  // m a = -3 (0.1) - f + 0 (the received force at t0) = -0.65
  EXPECT_NEAR(variable(*s, "a"), -0.325, 1e-15);
}

TEST(OscillatorType, InconsistentElementListsNameTheParameter) {
  expect_error(
      [] {
        (void)make({{"links", std::vector<std::string>{"2"}}});
      },
      {"parameters.link_k", "has 0 values", "parameters.links names 1"});
  expect_error(
      [] {
        (void)make({{"forces", std::vector<std::string>{"1", "2"}},
                    {"force_f0", std::vector<double>{0.0}}});
      },
      {"parameters.force_f0", "has 1 value,", "names 2"});
  expect_error(
      [] {
        (void)make({{"links", std::vector<std::string>{"2", "3"}},
                    {"link_k", std::vector<double>{1.0, 1.0}},
                    {"link_c", std::vector<double>{0.0, 0.0}},
                    {"link_x0", std::vector<double>{0.0, 0.0}},
                    {"link_v0", std::vector<double>{0.0, 0.0}}});
      },
      {"parameters.coupling", "\"f-d\"", "names 2", "\"d-d\""});
  expect_error(
      [] {
        (void)make({{"forces", std::vector<std::string>{"1", "1"}},
                    {"force_f0", std::vector<double>{0.0, 0.0}}});
      },
      {"parameters.forces", "\"1\" appears twice"});
  expect_error(
      [] {
        (void)make(
            {{"forces", std::vector<std::string>{""}}, {"force_f0", std::vector<double>{0.0}}});
      },
      {"parameters.forces", "non-empty"});
}

config::scenario preset(const std::string& model_keys) {
  return config::parse_scenario(
      "[model]\n" + model_keys + "\n[run]\nduration = 1.0\nmacro_step = 1e-3\n", "p.toml");
}

const config::subsystem_decl& decl(const config::scenario& sc, const std::string& name) {
  const config::subsystem_decl* d = sc.system.find(name);
  EXPECT_NE(d, nullptr) << name;
  if (d == nullptr) throw std::runtime_error("missing " + name);
  return *d;
}

// The start force of 000 Eq. (13), f0 = kc (x10 - x20) + cc |v10 - v20|^(p-1) (v10 - v20),
// from A.1's start values v0 = (100, -100) m/s: case 3 (cc = 10 N s/m, p = 1) gives 2000 N,
// A.3 (cc = 0.01 N s^2/m^2, p = 2) 0.01 * 200^2 = 400 N.
TEST(OscillatorPreset, ExpansionWritesThePartnersStartValues) {
  {
    const auto sc = preset("name = \"oscillator2\"\ncase = 3");
    ASSERT_EQ(sc.system.subsystems.size(), 2U);
    const auto& m1 = decl(sc, "mass1").parameters;
    const auto& m2 = decl(sc, "mass2").parameters;
    EXPECT_EQ(decl(sc, "mass1").type, "oscillator.mass");
    EXPECT_EQ(config::texts_param(m1, "links"), std::vector<std::string>{"2"});
    EXPECT_EQ(config::reals_param(m1, "link_x0"), std::vector<double>{0.0});
    EXPECT_EQ(config::reals_param(m1, "link_v0"), std::vector<double>{-100.0});
    EXPECT_EQ(config::reals_param(m1, "link_c"), std::vector<double>{10.0});
    EXPECT_EQ(config::texts_param(m2, "forces"), std::vector<std::string>{"1"});
    EXPECT_EQ(config::reals_param(m2, "force_f0"), std::vector<double>{2000.0});
    EXPECT_EQ(m2.count("links"), 0U);
    EXPECT_EQ(decl(sc, "mass1").at.where, "p.toml: model.name = \"oscillator2\" (preset)");
  }
  {
    const auto sc = preset("name = \"oscillator_nonlinear\"");
    const auto& m2 = decl(sc, "mass2").parameters;
    EXPECT_EQ(config::real_param(m2, "damper_exponent"), 2.0);
    ASSERT_EQ(config::reals_param(m2, "force_f0").size(), 1U);
    EXPECT_NEAR(config::reals_param(m2, "force_f0")[0], 400.0, 1e-9);
  }
  {
    const auto sc = preset("name = \"oscillator2\"\ncoupling = \"d-d\"\ncase = 3");
    const auto& m2 = decl(sc, "mass2").parameters;
    EXPECT_EQ(config::text_param(m2, "coupling"), "d-d");
    EXPECT_EQ(config::texts_param(m2, "links"), std::vector<std::string>{"1"});
    EXPECT_EQ(config::reals_param(m2, "link_v0"), std::vector<double>{100.0});
    EXPECT_EQ(m2.count("forces"), 0U);
    EXPECT_TRUE(sc.system.bonds.empty());
  }
}

// 000 Fig. 21 (A.2, f-d): masses 1 and 2 each hold an element to mass 3 and send its force.
TEST(OscillatorPreset, ThreeMassExpansionWiresEachElementAsABond) {
  const auto sc = preset("name = \"oscillator3\"\ncoupling = \"f-d\"");
  std::vector<std::string> names;
  for (const auto& d : sc.system.subsystems) names.push_back(d.name);
  EXPECT_EQ(names, (std::vector<std::string>{"mass1", "mass2", "mass3"}));
  std::vector<std::string> conns;
  for (const auto& c : sc.system.connections) conns.push_back(c.from + " -> " + c.to);
  EXPECT_EQ(conns, (std::vector<std::string>{"mass3.x -> mass1.x3", "mass3.v -> mass1.v3",
                                             "mass1.f -> mass3.f1", "mass3.x -> mass2.x3",
                                             "mass3.v -> mass2.v3", "mass2.f -> mass3.f2"}));
  ASSERT_EQ(sc.system.bonds.size(), 2U);
  EXPECT_EQ(sc.system.bonds[1].name, "link23");
  ASSERT_EQ(sc.system.bonds[1].terms.size(), 1U);
  EXPECT_EQ(sc.system.bonds[1].terms[0].effort, "mass2.f -> mass3.f2");
  EXPECT_EQ(sc.system.bonds[1].terms[0].flow, "mass3.v -> mass2.v3");
  EXPECT_EQ(config::texts_param(decl(sc, "mass3").parameters, "forces"),
            (std::vector<std::string>{"1", "2"}));
  std::vector<std::string> cols;
  for (const auto& r : sc.system.record) cols.push_back(r.as + "=" + r.ref);
  EXPECT_EQ(cols, (std::vector<std::string>{"x1=mass1.x", "x2=mass2.x", "x3=mass3.x", "v1=mass1.v",
                                            "v2=mass2.v", "v3=mass3.v"}));
}

// 004 Sect. 3.2: h1 = 10 ms (100 steps per fast cycle at 1 Hz), H = h2 = FR / 100 s.
TEST(OscillatorPreset, Paper004KeepsItsStepsAndIntegrators) {
  const auto sc = config::load_scenario(src + "/rt_config/scenarios/oscillator004.toml");
  EXPECT_DOUBLE_EQ(sc.run.macro_step, 0.3);
  EXPECT_DOUBLE_EQ(sc.sub("mass1").step, 0.01);
  EXPECT_DOUBLE_EQ(sc.sub("mass2").step, 0.3);
  EXPECT_EQ(sc.sub("mass1").integrator, "rk4");
  EXPECT_EQ(sc.sub("mass2").integrator, "trapezoidal");
}

std::string results_of(const config::scenario& sc, const cosim::test::temp_dir& tmp,
                       const std::string& name) {
  auto b = config::build(sc);
  const std::string csv = tmp / (name + ".csv");
  {
    cosim::csv_writer w(csv);
    const auto out = cosim::run_offline(b->sys, b->plan, b->limits, w, nullptr);
    EXPECT_EQ(out.status, cosim::run_status::completed);
    EXPECT_FALSE(w.failed());
  }
  return read_text(csv);
}

TEST(OscillatorSystemFiles, ReproduceTheirPresetsByteForByte) {
  cosim::test::temp_dir tmp;
  for (const char* name : {"oscillator2_fd_case1", "oscillator2_dd_case1"}) {
    SCOPED_TRACE(name);
    const auto sys = config::load_scenario(src + "/rt_config/systems/" + name + ".toml");
    const auto pre = config::load_scenario(src + "/rt_config/scenarios/" + name + ".toml");
    EXPECT_FALSE(sys.preset);
    EXPECT_TRUE(pre.preset);
    const std::string a = results_of(sys, tmp, std::string("system_") + name);
    const std::string b = results_of(pre, tmp, std::string("preset_") + name);
    EXPECT_GT(std::count(a.begin(), a.end(), '\n'), 1000);  // 10 s at 10 ms, and a header
    EXPECT_TRUE(a == b) << "results.csv differ";
  }
}

TEST(OscillatorSystemFiles, OutOfRangeParameterNamesFileLineAndKey) {
  std::string text = read_text(src + "/rt_config/systems/oscillator2_fd_case1.toml");
  const std::string from = "[subsystems.mass2.parameters]\nm = 1.0";
  const auto at = text.find(from);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, from.size(), "[subsystems.mass2.parameters]\nm = 0.0");
  const auto line =
      1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
  const std::string msg = expect_error([&] { (void)config::parse_scenario(text, "x.toml"); },
                                       {"subsystems.mass2.parameters.m", "out of range", "> 0"});
  // The line of the parameters table or of the key itself.
  EXPECT_TRUE(msg.find("x.toml:" + std::to_string(line) + ":") != std::string::npos ||
              msg.find("x.toml:" + std::to_string(line + 1) + ":") != std::string::npos)
      << msg;
}

TEST(OscillatorSystemFiles, MismatchedListsFailWhenBuiltNamingTheSubsystem) {
  std::string text = read_text(src + "/rt_config/systems/oscillator2_fd_case1.toml");
  const std::string from = "link_c = [0.0]";
  const auto at = text.find(from);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, from.size(), "link_c = [0.0, 1.0]");
  const auto sc = config::parse_scenario(text, "x.toml");
  expect_error([&] { (void)config::build(sc); },
               {"x.toml", "subsystems.mass1", "parameters.link_c", "has 2 values"});
}

// Two springs between two free masses, each owned by one side (f-d both ways): A.f uses only
// B's x and v, B.f only A's, so there is no algebraic loop, although each force output has
// direct feedthrough and each mass receives the other's force. It was refused as "algebraic
// loop A.f <- B.f <- A.f". Closed form (no ground springs, m = 1, k = 10 + 5): the
// separation d = xA - xB obeys d'' = -2 k d, the centre stays at 0.05 m:
// xA = 0.05 + 0.05 cos(w t), xB = 0.05 - 0.05 cos(w t), w = sqrt(30) rad/s.
TEST(OscillatorSystemFiles, TwoSpringsOwnedByEachSideAreNoAlgebraicLoop) {
  const std::string text = R"([run]
duration = 1.0
macro_step = 1e-4

[subsystems.A]
type = "oscillator.mass"
parameters = { m = 1.0, x0 = 0.1, coupling = "f-d", links = ["b"], link_k = [10.0], link_c = [0.0], link_x0 = [0.0], link_v0 = [0.0], forces = ["b"], force_f0 = [-0.5] }

[subsystems.B]
type = "oscillator.mass"
parameters = { m = 1.0, coupling = "f-d", links = ["a"], link_k = [5.0], link_c = [0.0], link_x0 = [0.1], link_v0 = [0.0], forces = ["a"], force_f0 = [1.0] }

[[connections]]
from = "B.x"
to = "A.xb"
[[connections]]
from = "B.v"
to = "A.vb"
[[connections]]
from = "A.x"
to = "B.xa"
[[connections]]
from = "A.v"
to = "B.va"
[[connections]]
from = "A.f"
to = "B.fa"
[[connections]]
from = "B.f"
to = "A.fb"

[output]
record = ["A.x", "B.x"]
)";
  const auto sc = config::parse_scenario(text, "twin.toml");
  cosim::test::temp_dir tmp;
  std::istringstream rows(results_of(sc, tmp, "twin"));
  std::string line;
  std::getline(rows, line);
  ASSERT_EQ(line.rfind("t,A.x,B.x,", 0), 0u) << line;
  const double w = std::sqrt(30.0);
  std::size_t n = 0;
  double worst = 0.0;
  while (std::getline(rows, line)) {
    double t = 0.0, xa = 0.0, xb = 0.0;
    ASSERT_EQ(std::sscanf(line.c_str(), "%lf,%lf,%lf", &t, &xa, &xb), 3) << line;
    worst = std::max({worst, std::abs(xa - (0.05 + 0.05 * std::cos(w * t))),
                      std::abs(xb - (0.05 - 0.05 * std::cos(w * t)))});
    ++n;
  }
  EXPECT_EQ(n, 10001u);
  // ZOH coupling error O(H): 6e-5 m at H = 0.1 ms against an amplitude of 0.05 m.
  EXPECT_LT(worst, 2e-4);
}

}  // namespace
