// The example CI pipeline of docs/ci.md, run exactly as documented:
//   tools/ci_example/run.sh BUILD_DIR OUT_DIR
// (only PORT_BASE is moved, so that parallel test runs do not share ports).
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <pugixml.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(CiExample, RunsAsDocumentedAndPasses) {
  const fs::path out =
      fs::temp_directory_path() / ("cosim_ci_example_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const int port = 30000 + static_cast<int>(::getpid() % 2000) * 4;
  const std::string cmd = "PORT_BASE=" + std::to_string(port) + " " + COSIM_SOURCE_DIR +
                          "/tools/ci_example/run.sh " + COSIM_BINARY_DIR + " " + out.string() +
                          " > " + out.string() + ".log 2>&1";
  const int rc = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(rc));
  EXPECT_EQ(WEXITSTATUS(rc), 0) << slurp(out.string() + ".log");
  const std::string log = slurp(out.string() + ".log");
  EXPECT_NE(log.find("cosim run exited with 1"), std::string::npos) << log;  // the safety stop
  EXPECT_NE(log.find("8 of 8 checks passed"), std::string::npos) << log;

  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_file((out / "junit.xml").c_str()));
  const pugi::xml_node suite = doc.child("testsuites").child("testsuite");
  EXPECT_EQ(suite.attribute("tests").as_int(), 8);
  EXPECT_EQ(suite.attribute("failures").as_int(), 0);
  std::vector<std::string> names;
  for (const pugi::xml_node tc : suite.children("testcase"))
    names.emplace_back(tc.attribute("name").value());
  ASSERT_EQ(names.size(), 8U);
  EXPECT_EQ(names[0], "max |s - reference|");
  EXPECT_EQ(names[2], "stop_reason");

  // The event is listed with its firing time; the stop is the stale-input one.
  const std::string summary = slurp(out / "run" / "summary.json");
  EXPECT_NE(summary.find("\"stop_reason\": \"stale_input\""), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"action\": \"silence\""), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"fired_s\": 5"), std::string::npos) << summary;
  // The valve's log ends with the safe value 0 (safe_repeats = 5), stamped with the stop's
  // simulation time.
  std::ifstream valve(out / "valve.csv");
  std::vector<std::string> lines;
  for (std::string l; std::getline(valve, l);) lines.push_back(l);
  ASSERT_GE(lines.size(), 6U);
  EXPECT_EQ(lines[0].rfind("sim_time_s,", 0), 0U);
  for (std::size_t i = lines.size() - 5; i < lines.size(); ++i) {
    std::vector<std::string> cells;
    std::stringstream ls(lines[i]);
    for (std::string c; std::getline(ls, c, ',');) cells.push_back(c);
    ASSERT_GE(cells.size(), 8U) << lines[i];
    EXPECT_EQ(cells[0], "5.500000000") << lines[i];
    EXPECT_EQ(std::stod(cells[7]), 0.0) << lines[i];
  }
}

}  // namespace
