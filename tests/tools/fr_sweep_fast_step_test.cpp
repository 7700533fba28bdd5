// 004 Fig. 8 through `cosim sweep` with run.delivery = "fast-step", i.e. 004's interface:
// exchange at every fast step h1 = 10 ms, the slow mass on its own grid h2 = FR h1, ahead
// (slowest-first, SF) or behind (fastest-first, FF), inputs on 004's polynomial points
// (004 Sect. 2.1). Coupling d-d: as in 004 Fig. 5 each side evaluates the spring k2 from
// the other's position. Errors are 004 Eqs. (7)-(8) against each run's closed form, Eq. (3).
//
// Asserted, from the text around 004 Fig. 8 (Sect. 3.4):
//  - "For 25 < FR < 50, SF integration without interpolation (O0) seems to be the most
//    suitable strategy": SF O0 has the lowest position and energy error of all
//    configurations at FR = 30 and 40;
//  - "FF ... leads to a numerical instability ... a peak in the error graphics around
//    FR = 40": FF O2 and O3 errors are higher at FR = 40 than at 30 and at 50, and SF has
//    no such peak;
//  - "For FR < 25, SF ... with cubic interpolation (O3) ... attaining good position and
//    energy error levels": SF O3 keeps both small up to FR = 20.
// Not reproduced (see docs/coupling.md): SF O3 is not the best at FR < 25 here; SF O0 is.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "sweep_support.hpp"

namespace {

using namespace cosim::test_cli;

const std::string scenario = COSIM_SOURCE_DIR "/rt_config/scenarios/oscillator004.toml";
const std::vector<double> frs{2.0, 10.0, 20.0, 30.0, 40.0, 50.0};
const char* const fr_values = "2,10,20,30,40,50";
constexpr std::size_t fr30 = 3, fr40 = 4, fr50 = 5;

struct errors {
  std::vector<double> pos, energy;  // per FR
};

class FrSweepFastStep : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    static temp_dir dir;
    for (const char* sync : {"SF", "FF"})
      for (int order = 0; order <= 3; ++order) {
        const std::string tag = std::string(sync) + " O" + std::to_string(order);
        const std::string out = dir / (std::string(sync) + std::to_string(order));
        const auto r = cosim_cli(
            {"sweep", scenario, "--key", "model.fr", "--values", fr_values, "--set",
             "run.delivery=fast-step", "--set", "model.coupling=d-d", "--set",
             std::string("run.sync=") + (sync[0] == 'S' ? "slowest-first" : "fastest-first"),
             "--set", "coupling.extrapolation=" + std::to_string(order), "--reference",
             "closed-form", "--out", out});
        ASSERT_EQ(r.code, 0) << tag << "\n" << r.out << r.err;
        const table t = read_table(out + "/sweep.csv");
        ASSERT_EQ(t.rows.size(), frs.size());
        errors e;
        for (std::size_t i = 0; i < frs.size(); ++i) {
          EXPECT_EQ(t.text(i, "status"), "completed") << tag << " FR " << frs[i];
          e.pos.push_back(t.num(i, "pos_err_x1"));
          e.energy.push_back(t.num(i, "energy_err"));
        }
        results()[tag] = e;
      }
    std::printf(
        "  004 Fig. 8, fast-step delivery, d-d: position error (Eq. 7) of x1 / energy "
        "error (Eq. 8)\n  %-6s",
        "FR");
    for (double fr : frs) std::printf(" %19g", fr);
    std::printf("\n");
    for (const auto& [tag, e] : results()) {
      std::printf("  %-6s", tag.c_str());
      for (std::size_t i = 0; i < frs.size(); ++i)
        std::printf("  %8.2e/%8.2e", e.pos[i], e.energy[i]);
      std::printf("\n");
    }
  }
  static std::map<std::string, errors>& results() {
    static std::map<std::string, errors> r;
    return r;
  }
  static const errors& get(const std::string& tag) { return results().at(tag); }
};

TEST_F(FrSweepFastStep, SlowestFirstO0IsBestBetween25And50) {
  ASSERT_EQ(results().size(), 8u);
  const errors& sf0 = get("SF O0");
  for (const std::size_t i : {fr30, fr40})
    for (const auto& [tag, e] : results()) {
      if (tag == "SF O0") continue;
      EXPECT_LT(sf0.pos[i], e.pos[i]) << tag << " FR " << frs[i];
      EXPECT_LT(sf0.energy[i], e.energy[i]) << tag << " FR " << frs[i];
    }
}

TEST_F(FrSweepFastStep, FastestFirstPeaksNearFr40) {
  for (const char* tag : {"FF O2", "FF O3"}) {
    const errors& e = get(tag);
    EXPECT_GT(e.pos[fr40], e.pos[fr30]) << tag;
    EXPECT_GT(e.pos[fr40], e.pos[fr50]) << tag;
    EXPECT_GT(e.energy[fr40], e.energy[fr30]) << tag;
    EXPECT_GT(e.energy[fr40], e.energy[fr50]) << tag;
  }
  for (int order = 0; order <= 3; ++order) {  // slowest-first rises on through FR = 50
    const errors& e = get("SF O" + std::to_string(order));
    EXPECT_LT(e.pos[fr40], e.pos[fr50]) << "SF O" << order;
  }
}

TEST_F(FrSweepFastStep, SlowestFirstO3IsGoodBelow25) {
  const errors& e = get("SF O3");
  for (std::size_t i = 0; i < fr30; ++i) {  // FR = 2, 10, 20
    EXPECT_LT(e.pos[i], 0.02) << "FR " << frs[i];
    EXPECT_LT(e.energy[i], 2e-3) << "FR " << frs[i];
  }
}

}  // namespace
