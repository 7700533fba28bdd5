// Regression guard for refactoring: every shipped offline scenario gives the same
// results.csv as before the change, byte for byte. The hashes below are of results.csv as
// produced by the release of 95049ee, whose crane results were validated against paper 003
// and the monolithic reference (crane_benchmark_test.cpp, monolithic_agreement_test.cpp) and
// whose oscillators against their closed forms (oscillator_scenarios_test.cpp). This test
// does not re-prove them: it proves that a change kept every byte. A change that is meant to
// alter results must say so and update the table with the reason in its commit message.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "cosim/rt_config/scenario.hpp"
#include "cosim/runtime/csv_writer.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;

// FNV-1a, 64 bit: enough to notice any changed byte.
std::uint64_t fnv1a(const std::string& bytes) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string hex(std::uint64_t v) {
  std::ostringstream os;
  os << std::hex << v;
  return os.str();
}

const std::map<std::string, std::string> expected{
#include "shipped_results.inc"
};

TEST(ShippedScenarios, OfflineResultsAreByteIdenticalToTheValidatedRelease) {
  cosim::test::temp_dir tmp;
  int checked = 0;
  for (const auto& e :
       fs::directory_iterator(std::string(COSIM_SOURCE_DIR) + "/rt_config/scenarios")) {
    if (e.path().extension() != ".toml") continue;
    const std::string name = e.path().stem().string();
    if (name == "bench_udp") continue;  // needs hardware input in wall-clock time
    SCOPED_TRACE(name);
    const auto it = expected.find(name);
    ASSERT_NE(it, expected.end()) << "new scenario: add its hash to shipped_results.inc";
    const auto sc = cosim::config::load_scenario(e.path().string(), {"run.mode=\"offline\""});
    auto built = cosim::config::build(sc);
    const std::string csv = tmp / (name + ".csv");
    {
      cosim::csv_writer w(csv);
      const auto out = cosim::run_offline(built->sys, built->plan, built->limits, w, nullptr);
      EXPECT_FALSE(w.failed());
      EXPECT_GT(out.rows, 10);
    }
    std::ifstream in(csv, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    EXPECT_EQ(hex(fnv1a(ss.str())), it->second);
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(expected.size()));
}

}  // namespace
