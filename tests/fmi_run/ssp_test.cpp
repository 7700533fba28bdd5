// SSP import (rt_config/src/ssp_reader.cpp): tests/ssp/decay_gain.ssd, as a bare .ssd and
// packed into an .ssp, runs to the same results.csv as its hand-written system file
// tests/ssp/decay_gain.toml; the parameter bindings reach the FMUs (closed form of the linear
// ODE); bad descriptions are refused naming the file, line, element and attribute.
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <stdlib.h>
#include <zip.h>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cosim/rt_config/run.hpp"
#include "cosim/rt_config/scenario.hpp"
#include "cosim/runtime/error.hpp"
#include "temp_dir.hpp"

namespace cosim::test {
namespace {

namespace fs = std::filesystem;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "the test's edit does not apply: " << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// tests/ssp/ copied into a fresh folder with the test FMUs under resources/; TMPDIR points
// into it so that unpacked packages and FMUs go away with it.
class SspTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* old = std::getenv("TMPDIR");
    old_tmpdir_ = old != nullptr ? old : "";
    had_tmpdir_ = old != nullptr;
    fs::create_directories(dir_ / "tmp");
    // NOLINTNEXTLINE(concurrency-mt-unsafe): set between runs, no other thread reads it then
    ::setenv("TMPDIR", (dir_ / "tmp").c_str(), 1);
    for (const char* f : {"decay_gain.ssd", "decay_gain.toml", "gain.ssv"})
      fs::copy_file(std::string(COSIM_SOURCE_DIR "/tests/ssp/") + f, dir_ / f);
    fs::create_directories(dir_ / "resources");
    for (const char* f : {"linear_ode_fmi2", "feedthrough_fmi2"})
      fs::copy_file(std::string(COSIM_BINARY_DIR "/tests/fmus/") + f + ".fmu",
                    dir_ / ("resources/" + std::string(f) + ".fmu"));
  }
  void TearDown() override {
    // NOLINTBEGIN(concurrency-mt-unsafe): as in SetUp
    if (had_tmpdir_)
      ::setenv("TMPDIR", old_tmpdir_.c_str(), 1);
    else
      ::unsetenv("TMPDIR");
    // NOLINTEND(concurrency-mt-unsafe)
  }

  // Runs `scenario` offline into a fresh folder; returns results.csv.
  std::string run(const std::string& scenario, const std::vector<std::string>& sets = {}) {
    config::run_request req;
    req.scenario = scenario;
    req.sets = sets;
    req.out_dir = dir_ / ("out" + std::to_string(runs_++));
    req.quiet = true;
    const config::run_report rep = config::run_scenario(req, nullptr);
    EXPECT_EQ(config::exit_code(rep.outcome), 0) << scenario;
    return read_text(req.out_dir + "/results.csv");
  }

  // Packs `entries` (archive name -> file in dir_) into dir_/name.
  std::string pack(const std::string& name,
                   const std::vector<std::pair<std::string, std::string>>& entries) {
    std::string path = dir_ / name;
    int err = 0;
    zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
    EXPECT_NE(z, nullptr);
    for (const auto& [entry, file] : entries) {
      const std::string src = dir_ / file;
      zip_source_t* s = zip_source_file(z, src.c_str(), 0, -1);
      EXPECT_NE(s, nullptr) << src;
      EXPECT_GE(zip_file_add(z, entry.c_str(), s, ZIP_FL_ENC_UTF_8), 0) << entry;
    }
    EXPECT_EQ(zip_close(z), 0);
    return path;
  }

  std::string pack_decay_gain(const std::string& ssd = "decay_gain.ssd") {
    return pack("decay_gain.ssp",
                {{"SystemStructure.ssd", ssd},
                 {"gain.ssv", "gain.ssv"},
                 {"resources/linear_ode_fmi2.fmu", "resources/linear_ode_fmi2.fmu"},
                 {"resources/feedthrough_fmi2.fmu", "resources/feedthrough_fmi2.fmu"}});
  }

  // The message load_scenario throws for decay_gain.ssd with `from` replaced by `to`.
  std::string error_of(const std::string& from, const std::string& to,
                       const std::string& name = "bad.ssd") {
    const std::string path =
        dir_.file(name, replaced(read_text(dir_ / "decay_gain.ssd"), from, to));
    try {
      (void)config::load_scenario(path);
    } catch (const error& e) {
      // Every refusal of the description starts with "bad.ssd:LINE:".
      std::string msg = e.what();
      EXPECT_EQ(msg.rfind(path + ":", 0), 0u) << msg;
      EXPECT_TRUE(msg.size() > path.size() + 1 &&
                  std::isdigit(static_cast<unsigned char>(msg[path.size() + 1])) != 0)
          << "no line number: " << msg;
      return msg;
    }
    ADD_FAILURE() << "no error for " << to;
    return "";
  }

  temp_dir dir_;
  int runs_ = 0;

 private:
  std::string old_tmpdir_;
  bool had_tmpdir_ = false;
};

// Column `name` of a results.csv.
std::vector<double> column(const std::string& csv, const std::string& name) {
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  std::size_t index = 0, k = 0;
  bool found = false;
  std::stringstream header(line);
  for (std::string cell; std::getline(header, cell, ','); ++k)
    if (cell == name) {
      index = k;
      found = true;
    }
  EXPECT_TRUE(found) << name << " not in " << line;
  std::vector<double> out;
  while (std::getline(in, line)) {
    std::stringstream row(line);
    std::string cell;
    for (std::size_t i = 0; i <= index; ++i) std::getline(row, cell, ',');
    out.push_back(std::stod(cell));
  }
  return out;
}

TEST_F(SspTest, DescriptionRunsLikeItsSystemFileByteForByte) {
  const std::string by_hand = run(dir_ / "decay_gain.toml");
  EXPECT_EQ(run(dir_ / "decay_gain.ssd"), by_hand);
  // The same description packed with its resources.
  EXPECT_EQ(run(pack_decay_gain()), by_hand);
  // Unpacked once per content: a second run reuses the folder.
  EXPECT_EQ(run(dir_ / "decay_gain.ssp"), by_hand);
}

TEST_F(SspTest, Fmi3ComponentsAndThreadedMode) {
  // The same system of FMI 3.0 FMUs.
  for (const char* f : {"linear_ode_fmi3", "feedthrough_fmi3"})
    fs::copy_file(std::string(COSIM_BINARY_DIR "/tests/fmus/") + f + ".fmu",
                  dir_ / ("resources/" + std::string(f) + ".fmu"));
  auto fmi3 = [](std::string text) {
    for (auto at = text.find("_fmi2.fmu"); at != std::string::npos; at = text.find("_fmi2.fmu"))
      text.replace(at, 9, "_fmi3.fmu");
    return text;
  };
  const std::string ssd = dir_.file("fmi3.ssd", fmi3(read_text(dir_ / "decay_gain.ssd")));
  const std::string toml = dir_.file("fmi3.toml", fmi3(read_text(dir_ / "decay_gain.toml")));
  const std::string by_hand = run(toml);
  EXPECT_EQ(run(ssd), by_hand);
  const std::vector<double> t = column(by_hand, "t"), x = column(by_hand, "ode.x");
  ASSERT_EQ(t.size(), 51u);
  EXPECT_NEAR(x.back(), 3.0 * std::exp(-2.0 * t.back()), 1e-13);
  // Threaded, the description still runs like its system file (and like offline).
  EXPECT_EQ(run(dir_ / "decay_gain.ssd", {"run.mode=threaded"}),
            run(dir_ / "decay_gain.toml", {"run.mode=threaded"}));
}

TEST_F(SspTest, ReadsIntoTheSystemDescription) {
  const config::scenario sc = config::load_scenario(dir_ / "decay_gain.ssd");
  EXPECT_FALSE(sc.preset);
  EXPECT_DOUBLE_EQ(sc.run.duration, 0.5);     // DefaultExperiment stopTime - startTime
  EXPECT_DOUBLE_EQ(sc.run.macro_step, 0.01);  // the cosim.run annotation
  EXPECT_EQ(sc.run.order, (std::vector<std::string>{"ode", "scale", "offset"}));  // SSD order
  ASSERT_EQ(sc.system.subsystems.size(), 3u);
  const config::subsystem_decl* ode = sc.system.find("ode");
  ASSERT_NE(ode, nullptr);
  EXPECT_EQ(ode->type, "fmu:" + (dir_ / "resources/linear_ode_fmi2.fmu"));
  // k from the component's set; x0 = 3000 mm from the system's set (prefix "ode."), which
  // takes precedence over the component's 7 and is converted to the FMU's unit m.
  EXPECT_EQ(ode->parameters.at("k"), config::param_value(2.0));
  EXPECT_EQ(ode->parameters.at("x0"), config::param_value(3.0));
  EXPECT_EQ(sc.system.find("scale")->parameters.at("gain"), config::param_value(0.5));  // gain.ssv
  EXPECT_TRUE(sc.system.find("offset")->parameters.empty());
  // Written "scale.u <- ode.x" (end to start): the kinds give the direction.
  ASSERT_EQ(sc.system.connections.size(), 1u);
  EXPECT_EQ(sc.system.connections[0].from, "ode.x");
  EXPECT_EQ(sc.system.connections[0].to, "scale.u");
  // The system input "level", bound to 0.25, feeds offset.u.
  ASSERT_EQ(sc.system.sources.size(), 1u);
  EXPECT_EQ(sc.system.sources[0].to, "offset.u");
  EXPECT_EQ(sc.system.sources[0].signal, "constant:0.25");
  // Every FMU output, then the system output "scaled" as a column of that name.
  std::vector<std::string> refs, columns;
  for (const auto& r : sc.system.record) {
    refs.push_back(r.ref);
    columns.push_back(r.as.empty() ? r.ref : r.as);
  }
  EXPECT_EQ(refs, (std::vector<std::string>{"ode.x", "scale.y", "offset.y", "scale.y"}));
  EXPECT_EQ(columns, (std::vector<std::string>{"ode.x", "scale.y", "offset.y", "scaled"}));
}

TEST_F(SspTest, ParameterBindingsReachTheFmus) {
  const std::string csv = run(dir_ / "decay_gain.ssd");
  const std::vector<double> t = column(csv, "t"), x = column(csv, "ode.x"),
                            y = column(csv, "scale.y"), z = column(csv, "offset.y");
  ASSERT_EQ(t.size(), 51u);  // 0.5 s in steps of 0.01 s
  for (std::size_t n = 0; n < t.size(); ++n) {
    // x' = -k x, x(0) = x0: x0 = 3 m (3000 mm), k = 2 1/s.
    EXPECT_NEAR(x[n], 3.0 * std::exp(-2.0 * t[n]), 1e-13) << "t = " << t[n];
    // offset: the FMU's default gain 2 times the system input bound to 0.25.
    EXPECT_EQ(z[n], 0.5) << "t = " << t[n];
    // scale: gain 0.5 (gain.ssv) times the x it was given (Jacobi: the previous step's).
    EXPECT_EQ(y[n], 0.5 * x[n == 0 ? 0 : n - 1]) << "t = " << t[n];
  }
  EXPECT_EQ(column(csv, "scaled"), y);
  // A --set overrides a binding like any key of the system file it stands for.
  const std::vector<double> x2 =
      column(run(dir_ / "decay_gain.ssd", {"subsystems.ode.parameters.k=1.0"}), "ode.x");
  EXPECT_NEAR(x2.back(), 3.0 * std::exp(-0.5), 1e-13);
}

TEST_F(SspTest, PrintedSystemRunsToTheSameResults) {
  const std::string printed = config::system_toml(config::load_scenario(pack_decay_gain()));
  EXPECT_NE(printed.find("fmu = \""), std::string::npos) << printed;
  EXPECT_EQ(run(dir_.file("printed.toml", printed)), run(dir_ / "decay_gain.toml"));
}

TEST_F(SspTest, MacroStepFromTheFmusAndDurationFromSet) {
  // Without the annotation: the FMUs' DefaultExperiment stepSize (both 0.01 s).
  const std::string no_step =
      replaced(read_text(dir_ / "decay_gain.ssd"),
               R"(<ssc:Annotation type="cosim.run"><Run macroStep="0.01"/></ssc:Annotation>)", "");
  EXPECT_DOUBLE_EQ(config::load_scenario(dir_.file("a.ssd", no_step)).run.macro_step, 0.01);
  // Without stopTime the duration must be given.
  const std::string no_stop = replaced(no_step, R"(stopTime="0.5")", "");
  const std::string path = dir_.file("b.ssd", no_stop);
  try {
    (void)config::load_scenario(path);
    ADD_FAILURE() << "no error without a duration";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": no run duration"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("--set run.duration="), std::string::npos) << e.what();
  }
  EXPECT_DOUBLE_EQ(config::load_scenario(path, {"run.duration=0.2"}).run.duration, 0.2);
}

// Another master's fixed-step annotation is the macro step (the FMUs say 0.01 s): the rows
// come at its spacing. libcosim's (OSP) in the DefaultExperiment, OMSimulator's in the system.
TEST_F(SspTest, FixedStepAnnotationsOfOtherMastersGiveTheMacroStep) {
  const std::string own =
      R"(<ssc:Annotation type="cosim.run"><Run macroStep="0.01"/></ssc:Annotation>)";
  const std::string osp = replaced(
      read_text(dir_ / "decay_gain.ssd"), own,
      R"(<ssc:Annotation type="com.opensimulationplatform"><osp:Algorithm )"
      R"(xmlns:osp="http://opensimulationplatform.com/SSP/OSPAnnotations">)"
      R"(<osp:FixedStepAlgorithm baseStepSize="0.005"/></osp:Algorithm></ssc:Annotation>)");
  const std::string oms = replaced(
      replaced(read_text(dir_ / "decay_gain.ssd"), own, ""), "  </ssd:System>",
      R"(<ssd:Annotations><ssc:Annotation type="org.openmodelica"><oms:Annotations )"
      R"(xmlns:oms="https://raw.githubusercontent.com/OpenModelica/OMSimulator/master/schema/oms.xsd">)"
      R"(<oms:SimulationInformation><oms:FixedStepMaster description="oms-ma" stepSize="0.0025" )"
      R"(absoluteTolerance="0.0001" relativeTolerance="0.0001"/></oms:SimulationInformation>)"
      R"(</oms:Annotations></ssc:Annotation></ssd:Annotations></ssd:System>)");
  for (const auto& [text, h] : {std::pair{osp, 0.005}, std::pair{oms, 0.0025}}) {
    SCOPED_TRACE(h);
    const std::string path = dir_.file("step.ssd", text);
    EXPECT_EQ(config::load_scenario(path).run.macro_step, h);
    const std::vector<double> t = column(run(path), "t");
    ASSERT_EQ(t.size(), static_cast<std::size_t>(std::lround(0.5 / h)) + 1);
    for (std::size_t n = 1; n < t.size(); ++n) EXPECT_NEAR(t[n] - t[n - 1], h, 1e-12) << n;
  }
  // cosim's own annotation wins over another master's.
  const std::string both =
      replaced(read_text(dir_ / "decay_gain.ssd"), own,
               own + R"(<ssc:Annotation type="com.opensimulationplatform">)"
                     R"(<osp:Algorithm xmlns:osp="x"><osp:FixedStepAlgorithm )"
                     R"(baseStepSize="0.005"/></osp:Algorithm></ssc:Annotation>)");
  EXPECT_EQ(config::load_scenario(dir_.file("both.ssd", both)).run.macro_step, 0.01);
  // Without any, the step taken from the FMUs is shown with where it came from.
  const std::string none =
      dir_.file("none.ssd", replaced(read_text(dir_ / "decay_gain.ssd"), own, ""));
  std::ostringstream log;
  const auto old_logger = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log)));
  (void)config::load_scenario(none);
  spdlog::set_default_logger(old_logger);
  const std::string said = log.str();
  EXPECT_NE(said.find(none + ": macro step 0.01 s from the finest DefaultExperiment stepSize of "
                             "its FMUs (ode: 0.01 s, scale: 0.01 s, offset: 0.01 s)"),
            std::string::npos)
      << said;
}

// Each refusal names the file and line, the element and the attribute.
void expect_message(const std::string& msg, const std::vector<std::string>& parts) {
  for (const auto& p : parts)
    EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
}

TEST_F(SspTest, UnknownComponentInAConnection) {
  const std::string bad = dir_ / "bad.ssd";
  expect_message(
      error_of(R"(startElement="scale" startConnector="u")",
               R"(startElement="nope" startConnector="u")"),
      {bad + ":", "<ssd:Connection> startElement=\"nope\"", "components: ode, scale, offset"});
}

TEST_F(SspTest, ConnectorTheFmuDoesNotHave) {
  const std::string bad = dir_ / "bad.ssd";
  expect_message(
      error_of(R"(<ssd:Connector name="y" kind="output"><ssc:Real/></ssd:Connector>)",
               R"(<ssd:Connector name="yy" kind="output"><ssc:Real/></ssd:Connector>)"),
      {bad + ":", "<ssd:Connector> name=\"yy\"", "has no variable of that name", "outputs: y"});
  // A connection to a connector the component does not declare.
  expect_message(
      error_of(R"(endElement="ode" endConnector="x")", R"(endElement="ode" endConnector="der_x")"),
      {"<ssd:Connection> endConnector=\"der_x\"", "declares no connector", "x, k, x0"});
  // A declared kind that is not the FMU's causality.
  expect_message(error_of(R"(<ssd:Connector name="k" kind="parameter">)",
                          R"(<ssd:Connector name="k" kind="input">)"),
                 {"<ssd:Connector> kind=\"input\"", "causality \"parameter\""});
}

TEST_F(SspTest, BadParameterBindings) {
  const std::string bad = dir_ / "bad.ssd";
  expect_message(error_of(R"(<ssv:Parameter name="k">)", R"(<ssv:Parameter name="kk">)"),
                 {bad + ":", "<ssv:Parameter> name=\"kk\"", "has no variable of that name",
                  "parameters: k, x0"});
  // A unit that does not convert to the connector's.
  expect_message(error_of(R"(value="3000" unit="mm")", R"(value="3000" unit="s")"),
                 {"<ssv:Real> unit=\"s\"", "connector's unit \"m\""});
  // A parameter file that is missing.
  expect_message(error_of(R"(source="gain.ssv")", R"(source="nope.ssv")"),
                 {"<ssd:ParameterBinding> source=\"nope.ssv\"", "no such file"});
  // Outputs are not parameters.
  expect_message(error_of(R"(<ssv:Parameter name="k">)", R"(<ssv:Parameter name="x">)"),
                 {"<ssv:Parameter> name=\"x\"", "causality \"output\""});
}

TEST_F(SspTest, ElementsThatWouldChangeTheMeaningAreRefused) {
  expect_message(error_of(R"(<ssd:ConnectionGeometry pointsX="1 2" pointsY="1 2"/>)",
                          R"(<ssc:LinearTransformation factor="2"/>)"),
                 {"<ssc:LinearTransformation>", "not supported: transformations"});
  expect_message(error_of(R"(<ssd:Component name="offset")",
                          R"(<ssd:System name="inner"/><ssd:Component name="offset")"),
                 {"<ssd:System>", "not supported: nested systems"});
  expect_message(
      error_of(
          R"(<ssd:ParameterBinding source="gain.ssv"/>)",
          R"(<ssd:ParameterBinding source="gain.ssv"><ssd:ParameterMapping/></ssd:ParameterBinding>)"),
      {"<ssd:ParameterMapping>", "not supported: parameter mappings"});
  expect_message(error_of(R"(startTime="0")", R"(startTime="1")"),
                 {"<ssd:DefaultExperiment> startTime=\"1\"", "t = 0"});
  expect_message(
      error_of(R"(type="application/x-fmu-sharedlibrary")", R"(type="application/x-ssp-package")"),
      {"<ssd:Component>", "application/x-ssp-package"});
  // A system input nothing is bound to.
  expect_message(error_of(R"(<ssv:Parameter name="level">)", R"(<ssv:Parameter name="ode.k">)"),
                 {"system input \"level\" feeds offset.u", "ParameterBinding"});
}

TEST_F(SspTest, BadXmlAndBadPackages) {
  const std::string bad = dir_ / "bad.ssd";
  expect_message(error_of("</ssd:Elements>", "</ssd:Element>"), {bad + ":", "not well-formed XML"});
  expect_message(
      error_of(R"(source="resources/feedthrough_fmi2.fmu">)", R"(source="resources/missing.fmu">)"),
      {"<ssd:Component> source=\"resources/missing.fmu\"", "no such file"});
  // A package without SystemStructure.ssd.
  const std::string no_ssd = pack("no_ssd.ssp", {{"Other.ssd", "decay_gain.ssd"}});
  try {
    (void)config::load_scenario(no_ssd);
    ADD_FAILURE() << "no error for a package without SystemStructure.ssd";
  } catch (const error& e) {
    expect_message(e.what(), {no_ssd + ":", "no SystemStructure.ssd"});
  }
  // Not a zip.
  const std::string not_zip = dir_.file("text.ssp", "not a zip");
  try {
    (void)config::load_scenario(not_zip);
    ADD_FAILURE() << "no error for a package that is not a zip";
  } catch (const error& e) {
    expect_message(e.what(), {not_zip + ":", "not a readable SSP"});
  }
  // Inside a package a component may not name a file outside it, not even by a file URI.
  {
    const std::string outside = dir_ / "resources/feedthrough_fmi2.fmu";
    (void)dir_.file("abs.ssd", replaced(read_text(dir_ / "decay_gain.ssd"),
                                        R"(source="resources/feedthrough_fmi2.fmu">)",
                                        R"(source="file://)" + outside + "\">"));
    // A bare description may (docs/systems.md).
    EXPECT_NO_THROW((void)config::load_scenario(dir_ / "abs.ssd"));
    const std::string pkg =
        pack("abs.ssp", {{"SystemStructure.ssd", "abs.ssd"},
                         {"gain.ssv", "gain.ssv"},
                         {"resources/linear_ode_fmi2.fmu", "resources/linear_ode_fmi2.fmu"},
                         {"resources/feedthrough_fmi2.fmu", "resources/feedthrough_fmi2.fmu"}});
    try {
      (void)config::load_scenario(pkg);
      ADD_FAILURE() << "a file URI out of a package was accepted";
    } catch (const error& e) {
      expect_message(e.what(), {pkg + "!/SystemStructure.ssd:", "source=\"file://" + outside,
                                "points outside the package"});
    }
  }
  // Inside a package, messages name the package and the entry.
  const std::string bad_in_pkg =
      replaced(read_text(dir_ / "decay_gain.ssd"), R"(startElement="scale" startConnector="u")",
               R"(startElement="nope" startConnector="u")");
  (void)dir_.file("bad_pkg.ssd", bad_in_pkg);
  const std::string pkg = pack_decay_gain("bad_pkg.ssd");
  try {
    (void)config::load_scenario(pkg);
    ADD_FAILURE() << "no error for an unknown element in a package";
  } catch (const error& e) {
    expect_message(e.what(), {pkg + "!/SystemStructure.ssd:", "startElement=\"nope\""});
  }
}

}  // namespace
}  // namespace cosim::test
