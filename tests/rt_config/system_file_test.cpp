// System files (docs/systems.md): every bad system is refused before anything runs, with
// one message naming the file, the line and the key; per-connection options reach the
// input ports. The base system is the f-d two-mass oscillator of 000 App. A.1 written by
// hand; its expected behaviour (ports, units, feedthrough) comes from 000 Sect. 2.4.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cosim/rt_config/scenario.hpp"
#include "cosim/runtime/error.hpp"
#include "row_table.hpp"
#include "temp_dir.hpp"

namespace {

using cosim::test::temp_dir;
namespace config = cosim::config;

// Two masses, 000 App. A.1 case 1, f-d: mass1 holds the coupling spring (000 Eq. (12)).
const std::string base = R"([run]
duration = 0.1
macro_step = 1e-3

[subsystems.mass1]
type = "oscillator.mass"
[subsystems.mass1.parameters]
m = 1.0
k = 10.0
v0 = 100.0
links = ["2"]
link_k = [100.0]
link_c = [0.0]
link_x0 = [0.0]
link_v0 = [-100.0]

[subsystems.mass2]
type = "oscillator.mass"
[subsystems.mass2.parameters]
m = 1.0
k = 1000.0
v0 = -100.0
forces = ["1"]
force_f0 = [0.0]

[[connections]]
from = "mass2.x"
to = "mass1.x2"

[[connections]]
from = "mass2.v"
to = "mass1.v2"

[[connections]]
from = "mass1.f"
to = "mass2.f1"

[[bonds]]
name = "link12"
terms = [{ effort = "mass1.f -> mass2.f1", flow = "mass2.v -> mass1.v2" }]

[output]
record = [{ ref = "mass1.x", as = "x1" }, "mass2.x"]
)";

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

// 1-based line of the first line containing `marker`.
int line_of(const std::string& text, const std::string& marker) {
  const auto at = text.find(marker);
  EXPECT_NE(at, std::string::npos) << marker;
  int line = 1;
  for (std::size_t i = 0; i < at && i < text.size(); ++i) line += text[i] == '\n' ? 1 : 0;
  return line;
}

// Loads (with `sets` as --set) and builds; returns the error message, or "" if both succeed.
std::string error_of(const temp_dir& dir, const std::string& text,
                     const std::vector<std::string>& sets = {}) {
  const std::string path = (dir / "sys.toml");
  std::ofstream(path) << text;
  try {
    const config::scenario sc = config::load_scenario(path, sets);
    (void)config::build(sc);
  } catch (const cosim::error& e) {
    return e.what();
  }
  return "";
}

void expect_names(const std::string& msg, int line, const std::string& key,
                  const std::string& why) {
  EXPECT_NE(msg.find("sys.toml:" + std::to_string(line) + ":"), std::string::npos)
      << "line " << line << " not named: " << msg;
  EXPECT_NE(msg.find(key), std::string::npos) << "key " << key << " not named: " << msg;
  EXPECT_NE(msg.find(why), std::string::npos) << "reason '" << why << "' missing: " << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << "one message, one line: " << msg;
}

TEST(SystemFile, BaseSystemBuildsWithItsColumnsAndBond) {
  temp_dir dir;
  std::ofstream(dir / "sys.toml") << base;
  const config::scenario sc = config::load_scenario((dir / "sys.toml"));
  EXPECT_FALSE(sc.preset);
  ASSERT_EQ(sc.system.subsystems.size(), 2u);
  EXPECT_EQ(sc.run.order, (std::vector<std::string>{"mass1", "mass2"}));  // file order
  const auto b = config::build(sc);
  ASSERT_EQ(b->sys.probes().size(), 2u);
  EXPECT_EQ(b->sys.probes()[0].column, "x1");
  EXPECT_EQ(b->sys.probes()[1].column, "mass2.x");  // no `as`: the reference itself
  ASSERT_EQ(b->sys.bonds().size(), 1u);
  EXPECT_EQ(b->sys.connections().size(), 3u);
}

TEST(SystemFile, UnknownType) {
  temp_dir dir;
  const std::string t = replace(base, "[subsystems.mass2]\ntype = \"oscillator.mass\"",
                                "[subsystems.mass2]\ntype = \"oscillator.spring\"");
  expect_names(error_of(dir, t), line_of(t, "oscillator.spring"), "subsystems.mass2.type",
               "unknown subsystem type");
}

TEST(SystemFile, UnknownPortListsThePorts) {
  temp_dir dir;
  const std::string t = replace(base, "to = \"mass1.x2\"", "to = \"mass1.x3\"");
  const std::string msg = error_of(dir, t);
  expect_names(msg, line_of(t, "mass1.x3"), "connections[0].to", "has no input 'x3'");
  EXPECT_NE(msg.find("x2 [m]"), std::string::npos) << "the real inputs are listed: " << msg;
}

TEST(SystemFile, UnitMismatch) {
  temp_dir dir;
  // A velocity [m/s] into a displacement input [m].
  const std::string t = replace(base, "from = \"mass2.x\"", "from = \"mass2.v\"");
  expect_names(error_of(dir, t), line_of(t, "from = \"mass2.v\"\nto = \"mass1.x2\""),
               "connections[0].from", "units differ");
}

TEST(SystemFile, InputFedTwice) {
  temp_dir dir;
  const std::string t = base + "\n[[connections]]\nfrom = \"mass2.x\"\nto = \"mass1.x2\"\n";
  // The `to` of the fourth [[connections]] table (two lines below it) is the one refused.
  int fourth = 3;
  for (std::size_t i = 0; i < t.rfind("[[connections]]"); ++i) fourth += t[i] == '\n' ? 1 : 0;
  expect_names(error_of(dir, t), fourth, "connections[3].to", "fed twice");
}

TEST(SystemFile, InputFedByNothing) {
  temp_dir dir;
  const std::string t =
      replace(base, "[[connections]]\nfrom = \"mass2.v\"\nto = \"mass1.v2\"\n", "");
  const std::string bad =
      replace(t, "flow = \"mass2.v -> mass1.v2\"", "flow = \"mass2.x -> mass1.x2\"");
  expect_names(error_of(dir, bad), line_of(bad, "[subsystems.mass1]"), "mass1.v2",
               "fed by nothing");
}

TEST(SystemFile, BondThatDoesNotPairUp) {
  temp_dir dir;
  // The flow must run back from the effort's consumer (mass2) to its producer (mass1);
  // mass1.f -> mass2.f1 as its own flow runs the same way.
  const std::string t =
      replace(base, "flow = \"mass2.v -> mass1.v2\"", "flow = \"mass1.f -> mass2.f1\"");
  expect_names(error_of(dir, t), line_of(t, "[[bonds]]"), "bonds[0].terms[0]", "do not pair up");
  // A term must name one of the connections.
  const std::string u =
      replace(base, "flow = \"mass2.v -> mass1.v2\"", "flow = \"mass2.x -> mass1.v2\"");
  expect_names(error_of(dir, u), line_of(u, "[[bonds]]"), "bonds[0].terms[0].flow",
               "is not one of the [[connections]]");
}

// One coupling, one bond term: the same bond twice, the same term twice in a bond or two
// bonds of one name made δP and δE twice the real residual (and a safety limit trip at
// half of it). Effort and flow swapped against the ports' declared roles are refused.
TEST(SystemFile, ACouplingCountedTwiceOrWithEffortAndFlowSwappedIsRefused) {
  temp_dir dir;
  const std::string bond = "[[bonds]]\nname = \"link12\"\n";
  const std::string term = "{ effort = \"mass1.f -> mass2.f1\", flow = \"mass2.v -> mass1.v2\" }";
  const std::string again = base + "\n[[bonds]]\nname = \"again\"\nterms = [" + term + "]\n";
  expect_names(error_of(dir, again), line_of(again, "name = \"again\"") - 1,
               "bonds[1].terms[0].effort", "is already the effort of bond \"link12\" terms[0]");
  const std::string twice =
      replace(base, "terms = [" + term + "]", "terms = [" + term + ", " + term + "]");
  expect_names(error_of(dir, twice), line_of(twice, bond), "bonds[0].terms[1].effort",
               "is already the effort");
  const std::string named = replace(again, "name = \"again\"", "name = \"link12\"");
  EXPECT_NE(error_of(dir, named).find("\"link12\" names two bonds"), std::string::npos)
      << error_of(dir, named);
  // mass2.v is a flow port and mass1.f an effort port (`cosim types`).
  const std::string swapped =
      replace(base, term, "{ effort = \"mass2.v -> mass1.v2\", flow = \"mass1.f -> mass2.f1\" }");
  expect_names(error_of(dir, swapped), line_of(swapped, bond), "bonds[0].terms[0]", "swapped?");
}

// "a.x -> b.y" in a bond term with any spaces around the arrow, or none: "mass2.v->mass1.v2"
// was refused, "mass2.v  ->  mass1.v2" said "has no output 'v '".
TEST(SystemFile, BondTermsTakeTheArrowWithOrWithoutSpaces) {
  temp_dir dir;
  for (const std::string flow : {"mass2.v->mass1.v2", "mass2.v  ->  mass1.v2"}) {
    const std::string t =
        replace(base, "flow = \"mass2.v -> mass1.v2\"", "flow = \"" + flow + "\"");
    EXPECT_EQ(error_of(dir, t), "") << flow;
  }
}

// A misspelt key is read as missing before the unknown-key check runs: the message names
// the misspelling too (it only said "missing key 'run.duration'").
TEST(SystemFile, AMissingKeyNamesAnAlikeKeyOfItsTable) {
  temp_dir dir;
  const std::string t = replace(base, "duration = 0.1", "durration = 0.1");
  const std::string m = error_of(dir, t);
  EXPECT_NE(m.find("missing key 'run.duration'"), std::string::npos) << m;
  EXPECT_NE(m.find("'run.durration', which nothing reads"), std::string::npos) << m;
}

TEST(SystemFile, ParameterOutOfRange) {
  temp_dir dir;
  // 000 Eq. (10): a zero mass makes the mass matrix singular.
  const std::string t = replace(base, "m = 1.0\nk = 1000.0", "m = 0.0\nk = 1000.0");
  const std::string msg = error_of(dir, t);
  // The value's own line, not its table's.
  expect_names(msg, line_of(t, "m = 0.0\nk = 1000.0"), "subsystems.mass2.parameters.m",
               "out of range");
  EXPECT_NE(msg.find("> 0"), std::string::npos) << "the allowed range is named: " << msg;
}

TEST(SystemFile, UnknownParameter) {
  temp_dir dir;
  const std::string t = replace(base, "m = 1.0\nk = 10.0", "mass = 1.0\nk = 10.0");
  expect_names(error_of(dir, t), line_of(t, "[subsystems.mass1.parameters]"),
               "subsystems.mass1.parameters.mass", "has no parameter");
}

TEST(SystemFile, ForceLinksBothWaysAreNoAlgebraicLoop) {
  temp_dir dir;
  // Each mass holds an f-d link to the other. Both force outputs have direct feedthrough
  // (000 Eq. (24)), but of the neighbour's x and v only (000 Eq. (13)), which are states:
  // f1 and f2 never need each other at a communication point. This system was refused as
  // "algebraic loop mass1.f <- mass2.f <- mass1.f"; a real loop (feedthrough through each
  // other's outputs) is still refused:
  // FmuRun.AlgebraicLoopOfFeedthroughFmusIsRefusedUnderGaussSeidel.
  std::string t = replace(base, "forces = [\"1\"]\nforce_f0 = [0.0]",
                          "forces = [\"1\"]\nforce_f0 = [0.0]\nlinks = [\"1\"]\nlink_k = [1.0]\n"
                          "link_c = [0.0]\nlink_x0 = [0.0]\nlink_v0 = [100.0]");
  t = replace(t, "link_v0 = [-100.0]", "link_v0 = [-100.0]\nforces = [\"2\"]\nforce_f0 = [0.0]");
  t += "\n[[connections]]\nfrom = \"mass2.f\"\nto = \"mass1.f2\"\n"
       "[[connections]]\nfrom = \"mass1.x\"\nto = \"mass2.x1\"\n"
       "[[connections]]\nfrom = \"mass1.v\"\nto = \"mass2.v1\"\n";
  EXPECT_EQ(error_of(dir, t), "");
}

TEST(SystemFile, ConnectionOrdersOverrideCoupling) {
  temp_dir dir;
  std::string t = replace(base, "from = \"mass2.v\"\nto = \"mass1.v2\"",
                          "from = \"mass2.v\"\nto = \"mass1.v2\"\nextrapolation = 2");
  t = replace(t, "from = \"mass1.f\"\nto = \"mass2.f1\"",
              "from = \"mass1.f\"\nto = \"mass2.f1\"\nhold = true");
  t = replace(t, "macro_step = 1e-3", "macro_step = 1e-3\n\n[coupling]\nextrapolation = 1");
  std::ofstream(dir / "sys.toml") << t;
  const auto b = config::build(config::load_scenario((dir / "sys.toml")));
  const auto& sys = b->sys;
  auto order_of = [&](const std::string& ref) {
    const auto& c = sys.connections()[sys.connection_to(ref)];
    return sys.at(c.to).input(c.input).order();
  };
  EXPECT_EQ(order_of("mass1.x2"), 1);  // [coupling] default
  EXPECT_EQ(order_of("mass1.v2"), 2);  // its own
  EXPECT_EQ(order_of("mass2.f1"), 0);  // held
  const std::string bad = replace(t, "hold = true", "hold = true\nextrapolation = 1");
  expect_names(error_of(dir, bad), line_of(bad, "hold = true"), "connections[2].hold",
               "cannot also extrapolate");
}

TEST(SystemFile, UnknownKeyInAConnection) {
  temp_dir dir;
  const std::string t = replace(base, "to = \"mass1.x2\"", "to = \"mass1.x2\"\norder = 1");
  expect_names(error_of(dir, t), line_of(t, "order = 1"), "connections[0].order", "unknown key");
}

TEST(SystemFile, UnknownRecordedVariableNamesItsLine) {
  temp_dir dir;
  const std::string t = replace(base, "record = [{ ref = \"mass1.x\", as = \"x1\" }, \"mass2.x\"]",
                                "record = [\n  \"mass2.x\",\n  \"mass2.nope\",\n]");
  expect_names(error_of(dir, t), line_of(t, "\"mass2.nope\""), "output.record[1]",
               "no variable, output or input 'nope'");
}

// Scenario files take <subsystem>.step; in a system file the same key written that way says
// where it belongs.
// Every results.csv has t, dP, dE, sum_abs_dE (and iterations, defect with iterative
// coupling): a record named like one of them made a header with a column twice, which
// `cosim compare` then refused. An empty `as` was silently ignored.
// An input is recorded as the value the subsystem sees at the row's time: with ZOH Jacobi the
// sample its producer delivered one macro step earlier (000 Sect. 2.2), so mass2's force
// input at row n + 1 is mass1's force output at row n, and mass1's position inputs likewise.
TEST(SystemFile, InputsAreRecordedAsTheSubsystemSeesThem) {
  temp_dir dir;
  const std::string t = replace(base, "record = [{ ref = \"mass1.x\", as = \"x1\" }, \"mass2.x\"]",
                                "record = [\"mass1.f\", \"mass2.f1\", \"mass2.x\", \"mass1.x2\"]");
  std::ofstream(dir / "sys.toml") << t;
  const auto b = config::build(config::load_scenario(dir / "sys.toml"));
  cosim::test::row_table rows;
  ASSERT_EQ(cosim::run_offline(b->sys, b->plan, b->limits, rows).status,
            cosim::run_status::completed);
  ASSERT_EQ(rows.rows(), 101u);
  EXPECT_EQ(rows.at(0, "mass2.f1"), rows.at(0, "mass1.f"));  // the start-up exchange
  for (std::size_t r = 1; r < rows.rows(); ++r) {
    EXPECT_EQ(rows.at(r, "mass2.f1"), rows.at(r - 1, "mass1.f")) << "row " << r;
    EXPECT_EQ(rows.at(r, "mass1.x2"), rows.at(r - 1, "mass2.x")) << "row " << r;
  }
  EXPECT_NE(rows.at(50, "mass2.f1"), rows.at(50, "mass1.f"));  // it does lag

  // A subsystem on its own time grid reads its inputs there only: refused, naming the entry.
  const std::string own =
      replace(replace(t, "[subsystems.mass2]\ntype = \"oscillator.mass\"\n",
                      "[subsystems.mass2]\ntype = \"oscillator.mass\"\nnon_matching = true\n"),
              "record = [\"mass1.f\", \"mass2.f1\", \"mass2.x\", \"mass1.x2\"]",
              "record = [\"mass1.f\",\n  \"mass2.f1\"]");
  expect_names(error_of(dir, own), line_of(own, "  \"mass2.f1\"]"), "output.record[1]",
               "'mass2' steps on its own time grid");
}

TEST(SystemFile, ARecordNamedLikeABuiltInColumnOrEmptyIsRefused) {
  temp_dir dir;
  const std::string record = "{ ref = \"mass1.x\", as = \"x1\" }";
  for (const std::string as : {"t", "dP", "dE", "sum_abs_dE", "iterations", "defect"}) {
    const std::string text = replace(base, record, "{ ref = \"mass1.x\", as = \"" + as + "\" }");
    const std::string m = error_of(dir, text);
    EXPECT_NE(m.find("column \"" + as + "\""), std::string::npos) << as << ": " << m;
    EXPECT_NE(m.find("results.csv always has"), std::string::npos) << as << ": " << m;
  }
  const std::string text = replace(base, record, "{ ref = \"mass1.x\", as = \"\" }");
  expect_names(error_of(dir, text), line_of(text, "as = \"\""), "output.record[0].as",
               "it is empty");
}

// A '.' in a subsystem name, quoted ([subsystems."mass.2"]) or not ([subsystems.mass.2] is
// TOML for a subsystem 'mass' holding a table '2'), is named with the table's line. Before,
// the quoted one printed "subsystems.mass.2 = <missing>" without a line and the unquoted one
// complained that 'mass' had no type.
TEST(SystemFile, ADotInASubsystemNameIsNamedWithItsLine) {
  temp_dir dir;
  for (const std::string table : {"[subsystems.\"mass.2\"]", "[subsystems.mass.2]"}) {
    std::string text = replace(base, "[subsystems.mass2]", table);
    text = replace(text, "[subsystems.mass2.parameters]",
                   table.substr(0, table.size() - 1) + ".parameters]");
    expect_names(error_of(dir, text), line_of(text, table), "'mass.2'",
                 "may not be empty or contain '.'");
  }
}

TEST(SystemFile, ASubsystemKeyOutsideItsTableSaysWhereItBelongs) {
  temp_dir dir;
  const std::string path = dir / "sys.toml";
  std::ofstream(path) << base;
  try {
    (void)config::load_scenario(path, {"mass1.step=5e-4"});
    ADD_FAILURE() << "no error";
  } catch (const cosim::error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("unknown key 'mass1.step'"), std::string::npos) << m;
    EXPECT_NE(m.find("subsystems.mass1.step"), std::string::npos) << m;
  }
}

// A bad parameter value is placed where it came from: its own line in the file, or the
// --set that gave it (the message named the file's line of the value it replaced).
TEST(SystemFile, BadParameterNamesItsLineOrTheSetThatGaveIt) {
  temp_dir dir;
  const std::string m = error_of(dir, base, {"subsystems.mass2.parameters.k=-1.0"});
  EXPECT_EQ(m.rfind("--set subsystems.mass2.parameters.k: ", 0), 0U) << m;
  EXPECT_NE(m.find("value -1 is out of range"), std::string::npos) << m;
  const std::string text = replace(base, "k = 1000.0", "k = -1.0");
  expect_names(error_of(dir, text), line_of(text, "k = -1.0"), "subsystems.mass2.parameters.k",
               "value -1 is out of range");
}

TEST(SystemFile, CommandLineExitsTwoAndWritesNothing) {
  temp_dir dir;
  const std::string sys =
      dir.file("sys.toml", replace(base, "to = \"mass1.x2\"", "to = \"mass1.x9\""));
  const std::string out = dir / "out";
  const std::string cmd =
      std::string(COSIM_EXE) + " run " + sys + " --out " + out + " 2>" + (dir / "err.txt");
  const int rc = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(rc));
  EXPECT_EQ(WEXITSTATUS(rc), 2);
  EXPECT_FALSE(std::filesystem::exists(out + "/results.csv"));
  std::ifstream err(dir / "err.txt");
  const std::string text((std::istreambuf_iterator<char>(err)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("sys.toml:" + std::to_string(line_of(base, "to = \"mass1.x2\"")) + ":"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("has no input 'x9'"), std::string::npos) << text;
}

}  // namespace

namespace {

// README.md's complete example must run to the same results as the preset it claims to
// equal (docs that cannot drift).
TEST(SystemFile, ReadmeExampleEqualsItsPreset) {
  std::ifstream readme(std::string(COSIM_SOURCE_DIR) + "/README.md");
  const std::string text((std::istreambuf_iterator<char>(readme)),
                         std::istreambuf_iterator<char>());
  const auto section = text.find("## Your own system");
  ASSERT_NE(section, std::string::npos);
  const auto begin = text.find("```toml\n", section);
  ASSERT_NE(begin, std::string::npos);
  const auto end = text.find("```", begin + 8);
  ASSERT_NE(end, std::string::npos);
  temp_dir dir;
  const std::string sys = dir.file("readme.toml", text.substr(begin + 8, end - begin - 8));
  const std::string exe = COSIM_EXE;
  const std::string preset =
      std::string(COSIM_SOURCE_DIR) + "/rt_config/scenarios/oscillator2_fd_case1.toml";
  ASSERT_EQ(std::system((exe + " run " + sys + " --out " + (dir / "a") + " >/dev/null").c_str()),
            0);
  ASSERT_EQ(std::system((exe + " run " + preset + " --out " + (dir / "b") + " >/dev/null").c_str()),
            0);
  std::ifstream a(dir / "a/results.csv"), b(dir / "b/results.csv");
  const std::string ta((std::istreambuf_iterator<char>(a)), std::istreambuf_iterator<char>());
  const std::string tb((std::istreambuf_iterator<char>(b)), std::istreambuf_iterator<char>());
  EXPECT_GT(ta.size(), 1000u);
  EXPECT_TRUE(ta == tb) << "README example differs from " << preset;
}

}  // namespace
