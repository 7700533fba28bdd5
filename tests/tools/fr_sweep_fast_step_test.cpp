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
};

// One test, three findings: ctest runs every test in a process of its own, and each would
// recompute the same 48 runs of the sweep (30 s under ASan).
void slowest_first_o0_is_best_between_25_and_50(const std::map<std::string, errors>& results) {
  const errors& sf0 = results.at("SF O0");
  for (const std::size_t i : {fr30, fr40})
    for (const auto& [tag, e] : results) {
      if (tag == "SF O0") continue;
      EXPECT_LT(sf0.pos[i], e.pos[i]) << tag << " FR " << frs[i];
      EXPECT_LT(sf0.energy[i], e.energy[i]) << tag << " FR " << frs[i];
    }
}

void fastest_first_peaks_near_fr_40(const std::map<std::string, errors>& results) {
  for (const char* tag : {"FF O2", "FF O3"}) {
    const errors& e = results.at(tag);
    EXPECT_GT(e.pos[fr40], e.pos[fr30]) << tag;
    EXPECT_GT(e.pos[fr40], e.pos[fr50]) << tag;
    EXPECT_GT(e.energy[fr40], e.energy[fr30]) << tag;
    EXPECT_GT(e.energy[fr40], e.energy[fr50]) << tag;
  }
  for (int order = 0; order <= 3; ++order) {  // slowest-first rises on through FR = 50
    const errors& e = results.at("SF O" + std::to_string(order));
    EXPECT_LT(e.pos[fr40], e.pos[fr50]) << "SF O" << order;
  }
}

void slowest_first_o3_is_good_below_25(const std::map<std::string, errors>& results) {
  const errors& e = results.at("SF O3");
  for (std::size_t i = 0; i < fr30; ++i) {  // FR = 2, 10, 20
    EXPECT_LT(e.pos[i], 0.02) << "FR " << frs[i];
    EXPECT_LT(e.energy[i], 2e-3) << "FR " << frs[i];
  }
}

TEST_F(FrSweepFastStep, Fig8RankingOfOrdersOverFr) {
  ASSERT_EQ(results().size(), 8u);
  {
    SCOPED_TRACE("slowest-first O0 is best between FR 25 and 50");
    slowest_first_o0_is_best_between_25_and_50(results());
  }
  {
    SCOPED_TRACE("fastest-first peaks near FR 40");
    fastest_first_peaks_near_fr_40(results());
  }
  {
    SCOPED_TRACE("slowest-first O3 is good below FR 25");
    slowest_first_o3_is_good_below_25(results());
  }
}

}  // namespace
