// `cosim check` (docs/ci.md): verdicts, exit codes and the JUnit XML, parsed with pugixml.
// The reference is the run's own results.csv with one value of x1 moved by a known delta,
// so the largest difference is that delta by construction.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <pugixml.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const std::string cosim_exe = COSIM_EXE;
const std::string scenarios = std::string(COSIM_SOURCE_DIR) + "/rt_config/scenarios";

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct cmd_result {
  int code = -1;
  std::string out;
};

cmd_result run(const std::string& args, const fs::path& log) {
  const int rc = std::system((cosim_exe + " " + args + " > " + log.string() + " 2>&1").c_str());
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, slurp(log)};
}

class Check : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("cosim_check_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // 10 s at H = 1 ms, rows every 10 ms: 1001 rows, 10000 macro steps.
    ASSERT_EQ(
        run("run " + scenarios + "/oscillator2_dd_case1.toml --out " + (dir_ / "run").string(),
            dir_ / "run.log")
            .code,
        0);
    // Reference: the same rows, x1 of row 500 moved by +1e-3.
    std::ifstream in(dir_ / "run" / "results.csv");
    std::ofstream ref(dir_ / "ref.csv");
    std::string line;
    std::getline(in, line);
    ref << line << "\n";
    std::stringstream header(line);
    std::string cell;
    std::size_t x1 = 0;
    for (std::size_t i = 0; std::getline(header, cell, ','); ++i)
      if (cell == "x1") x1 = i;
    ASSERT_GT(x1, 0U);
    for (int row = 1; std::getline(in, line); ++row) {
      if (row == 500) {
        std::vector<std::string> cells;
        std::stringstream ls(line);
        while (std::getline(ls, cell, ',')) cells.push_back(cell);
        std::ostringstream v;
        v.precision(17);
        v << std::stod(cells[x1]) + 1e-3;
        cells[x1] = v.str();
        line.clear();
        for (std::size_t i = 0; i < cells.size(); ++i) line += (i ? "," : "") + cells[i];
      }
      ref << line << "\n";
    }
  }
  static fs::path dir_;
};
fs::path Check::dir_;

TEST_F(Check, PassesInsideTheTolerance) {
  const cmd_result r =
      run("check " + (dir_ / "run").string() + " --reference " + (dir_ / "ref.csv").string() +
              " --tolerance x1=1.001e-3,x2=0 --stop-reason end_time"
              " --bound macro_steps=10000:10000",
          dir_ / "pass.log");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("4 of 4 checks passed"), std::string::npos) << r.out;
}

TEST_F(Check, FailsOutsideTheToleranceAndWritesJunit) {
  const fs::path xml = dir_ / "junit.xml";
  const cmd_result r =
      run("check " + (dir_ / "run").string() + " --reference " + (dir_ / "ref.csv").string() +
              " --tolerance x1=0.999e-3,x2=0 --stop-reason stale_input"
              " --bound macro_steps=10000: --bound rows=:1000 --junit " +
              xml.string(),
          dir_ / "fail.log");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("2 of 5 checks passed"), std::string::npos) << r.out;
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_file(xml.c_str())) << slurp(xml);
  const pugi::xml_node suites = doc.child("testsuites");
  EXPECT_EQ(suites.attribute("tests").as_int(), 5);
  EXPECT_EQ(suites.attribute("failures").as_int(), 3);
  const pugi::xml_node suite = suites.child("testsuite");
  EXPECT_EQ(suite.attribute("tests").as_int(), 5);
  EXPECT_EQ(suite.attribute("failures").as_int(), 3);
  std::vector<std::string> failures;
  int cases = 0;
  for (const pugi::xml_node tc : suite.children("testcase")) {
    ++cases;
    if (const pugi::xml_node f = tc.child("failure"))
      failures.push_back(std::string(tc.attribute("name").value()) + " | " +
                         f.attribute("message").value());
  }
  EXPECT_EQ(cases, 5);
  ASSERT_EQ(failures.size(), 3U);
  // The measured value (the 1e-3 put into the reference, at row 500's time) and the tolerance.
  EXPECT_NE(failures[0].find("max |x1 - reference|"), std::string::npos) << failures[0];
  std::smatch m;
  ASSERT_TRUE(std::regex_search(failures[0], m, std::regex("\\| = ([0-9.eE+-]+) at")))
      << failures[0];
  EXPECT_NEAR(std::stod(m[1]), 1e-3, 1e-12) << failures[0];
  EXPECT_NE(failures[0].find("at t = 4.99 s"), std::string::npos) << failures[0];
  EXPECT_NE(failures[0].find("exceeds the tolerance 0.000999"), std::string::npos) << failures[0];
  EXPECT_NE(failures[1].find("stopped with end_time, expected stale_input"), std::string::npos)
      << failures[1];
  EXPECT_NE(failures[2].find("rows = 1001 is outside  .. 1000"), std::string::npos) << failures[2];
}

TEST_F(Check, ChecksFromTomlAndDriverCounters) {
  std::ofstream(dir_ / "checks.toml") << "[[checks]]\nreference = \"ref.csv\"\n"
                                         "tolerance = { x1 = 2e-3 }\n"
                                         "[[checks]]\nstop_reason = \"end_time\"\n"
                                         "[[checks]]\nvalue = \"stop_time_s\"\nmin = 9.999\n";
  const cmd_result ok =
      run("check " + (dir_ / "run").string() + " --checks " + (dir_ / "checks.toml").string(),
          dir_ / "toml.log");
  EXPECT_EQ(ok.code, 0) << ok.out;
  EXPECT_NE(ok.out.find("3 of 3 checks passed"), std::string::npos) << ok.out;
  // A key that is absent (no drivers in this run) fails, naming it.
  const cmd_result absent =
      run("check " + (dir_ / "run").string() + " --bound drivers.joystick.stale_events=1:",
          dir_ / "absent.log");
  EXPECT_EQ(absent.code, 1) << absent.out;
  EXPECT_NE(absent.out.find("drivers.joystick.stale_events is not a number"), std::string::npos)
      << absent.out;
}

TEST_F(Check, BadInputIsExitTwo) {
  EXPECT_EQ(run("check " + (dir_ / "run").string() + " --tolerance x1=1", dir_ / "b1.log").code, 2);
  EXPECT_EQ(run("check " + (dir_ / "run").string() + " --reference " + (dir_ / "ref.csv").string() +
                    " --tolerance x1=abc",
                dir_ / "b2.log")
                .code,
            2);
  EXPECT_NE(slurp(dir_ / "b2.log").find("x1=abc"), std::string::npos);
  EXPECT_EQ(run("check " + (dir_ / "run").string(), dir_ / "b3.log").code, 2);
  std::ofstream(dir_ / "bad.toml") << "[[checks]]\nstop_reason = \"x\"\nvalue = \"rows\"\n";
  const cmd_result b4 =
      run("check " + (dir_ / "run").string() + " --checks " + (dir_ / "bad.toml").string(),
          dir_ / "b4.log");
  EXPECT_EQ(b4.code, 2);
  EXPECT_NE(b4.out.find("checks[0]"), std::string::npos) << b4.out;
}

}  // namespace
