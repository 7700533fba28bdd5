// Coupling corrections from the scenario keys. Energy-based: the 000 A.1 oscillators against
// their closed form (000 Eq. (36)). Feedthrough: the f-s crane against the p-s crane (the
// two are one model once f_h sees the fresh rate, 003 Eq. (8)) and against a fine run at
// twice the published f-s limits, the oscillators against their closed form. Both:
// threaded = offline byte for byte, and the configuration errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "cosim/rt_config/model_registry.hpp"
#include "cosim/rt_config/scenario.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/threaded_executor.hpp"
#include "cosim/subsystems/oscillator.hpp"

namespace {

using namespace cosim;
namespace osc = cosim::osc;

const std::string dir = COSIM_SOURCE_DIR "/rt_config/scenarios/";

struct memory_sink final : row_sink {
  std::vector<std::string> columns;
  std::vector<std::vector<double>> rows;
  void begin(std::span<const std::string> c) override { columns.assign(c.begin(), c.end()); }
  void write(std::span<const double> row) noexcept override {
    rows.emplace_back(row.begin(), row.end());
  }
  void end() override {}
  [[nodiscard]] std::size_t col(const std::string& name) const {
    return static_cast<std::size_t>(std::find(columns.begin(), columns.end(), name) -
                                    columns.begin());
  }
};

struct result {
  run_outcome out;
  memory_sink sink;
  config::scenario sc;
};

void run(result& r, const std::string& file, const std::vector<std::string>& sets,
         bool threaded = false) {
  r.sc = config::load_scenario(dir + file, sets);
  auto b = config::build(r.sc);
  if (!threaded) {
    r.out = run_offline(b->sys, b->plan, b->limits, r.sink);
    return;
  }
  threaded_options opt = config::make_threaded_options(r.sc, *b);
  opt.lock_memory = false;
  opt.watchdog.max_overruns = 1'000'000;
  r.out = run_threaded(b->sys, b->plan, b->limits, r.sink, opt);
}

// Largest position error against the closed form and the largest excess of the mechanical
// energy over its conserved initial value (the undamped case conserves it exactly).
struct errors {
  double position = 0.0;
  double energy_excess = 0.0;
};

errors against_closed_form(const result& r) {
  const auto d = config::oscillator_definition_of(r.sc);
  EXPECT_TRUE(d.has_value());
  const osc::reference_solution ref(*d);
  std::vector<double> t;
  for (const auto& row : r.sink.rows) t.push_back(row[0]);
  const auto exact = ref.states_at(t);
  const std::size_t n = d->size();
  const Eigen::VectorXd z0 = osc::initial_state(*d);
  const double E0 = osc::mechanical_energy(*d, z0.head(static_cast<Eigen::Index>(n)),
                                           z0.tail(static_cast<Eigen::Index>(n)));
  errors e;
  for (std::size_t k = 0; k < r.sink.rows.size(); ++k) {
    Eigen::VectorXd x(static_cast<Eigen::Index>(n)), v(static_cast<Eigen::Index>(n));
    for (std::size_t i = 0; i < n; ++i) {
      const auto ii = static_cast<Eigen::Index>(i);
      std::string xc(1, 'x');  // appending avoids GCC 12's -Wrestrict false positive
      xc += std::to_string(i + 1);
      std::string vc(1, 'v');
      vc += std::to_string(i + 1);
      x[ii] = r.sink.rows[k][r.sink.col(xc)];
      v[ii] = r.sink.rows[k][r.sink.col(vc)];
      e.position = std::max(e.position, std::abs(x[ii] - exact[k][ii]));
    }
    e.energy_excess = std::max(e.energy_excess, osc::mechanical_energy(*d, x, v) - E0);
  }
  return e;
}

TEST(EnergyCorrectionScenarios, UndampedOscillatorCloserToClosedFormAndLessEnergy) {
  // 000 A.1 case 1 (undamped), force-displacement, Jacobi ZOH at H = 2 ms over 2 s.
  const std::vector<std::string> base{"run.macro_step=0.002", "run.duration=2",
                                      "run.output_interval=0.01"};
  std::vector<std::string> on = base;
  on.emplace_back("coupling.energy_correction=true");
  result plain, corr;
  run(plain, "oscillator2_fd_case1.toml", base);
  run(corr, "oscillator2_fd_case1.toml", on);
  ASSERT_EQ(plain.out.status, run_status::completed);
  ASSERT_EQ(corr.out.status, run_status::completed);
  const errors ep = against_closed_form(plain), ec = against_closed_form(corr);
  EXPECT_GT(ep.energy_excess, 0.0);  // the coupling creates energy (000 Sect. 3)
  EXPECT_LT(ec.energy_excess, 0.5 * ep.energy_excess);
  EXPECT_LT(ec.position, 0.5 * ep.position);
  EXPECT_LT(corr.out.energy_residual, plain.out.energy_residual);
}

// 000 A.1 force-displacement, Jacobi ZOH, H = 5 ms over 10 s, plain and with `corrected`:
// the two runs, both completed.
void oscillator_runs(result& plain, result& corr, const char* file,
                     const std::vector<std::string>& corrected) {
  std::vector<std::string> sets{"run.macro_step=0.005", "run.duration=10",
                                "run.output_interval=0.01"};
  run(plain, file, sets);
  sets.insert(sets.end(), corrected.begin(), corrected.end());
  run(corr, file, sets);
  EXPECT_EQ(plain.out.status, run_status::completed);
  EXPECT_EQ(corr.out.status, run_status::completed);
}

TEST(EnergyCorrectionScenarios, BalanceCloserToClosedFormDampedAndUndamped) {
  // Case 3 (c = 10): the coupling error is not only an energy gain, "remove" makes x1
  // worse, "balance" (two-sided) improves both masses. Case 1 (undamped): both improve.
  for (const char* file : {"oscillator2_fd_case3.toml", "oscillator2_fd_case1.toml"}) {
    SCOPED_TRACE(file);
    result plain, corr;
    oscillator_runs(
        plain, corr, file,
        {"coupling.energy_correction=true", "coupling.energy_correction_method=balance"});
    EXPECT_LT(against_closed_form(corr).position, 0.5 * against_closed_form(plain).position);
    EXPECT_LT(corr.out.energy_residual, plain.out.energy_residual);
  }
}

TEST(EnergyCorrectionScenarios, RefusesAnUnknownMethod) {
  try {
    (void)config::load_scenario(dir + "oscillator2_fd_case1.toml",
                                {"coupling.energy_correction_method=both"});
    FAIL() << "accepted";
  } catch (const error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("coupling.energy_correction_method"), std::string::npos) << m;
    EXPECT_NE(m.find("both"), std::string::npos) << m;
    EXPECT_EQ(e.code(), errc::config_value) << m;
  }
}

bool same_rows(const memory_sink& a, const memory_sink& b) {
  if (a.columns != b.columns || a.rows.size() != b.rows.size()) return false;
  for (std::size_t k = 0; k < a.rows.size(); ++k)
    if (std::memcmp(a.rows[k].data(), b.rows[k].data(), a.rows[k].size() * sizeof(double)) != 0)
      return false;
  return true;
}

// Offline and threaded runs of `file` at H over 2 s with `corrected` give the same bytes,
// and not those of the run without.
void expect_threaded_equals_offline(const char* file, const std::string& H,
                                    const std::vector<std::string>& corrected) {
  const std::vector<std::string> base{"run.macro_step=" + H, "run.duration=2"};
  std::vector<std::string> sets = base;
  sets.insert(sets.end(), corrected.begin(), corrected.end());
  result off, thr, plain;
  run(off, file, sets);
  run(thr, file, sets, true);
  EXPECT_TRUE(same_rows(off.sink, thr.sink));
  run(plain, file, base);
  EXPECT_FALSE(same_rows(off.sink, plain.sink));  // the correction did act
}

TEST(EnergyCorrectionScenarios, ThreadedEqualsOfflineByteForByte) {
  // The crane at H = 16 ms (where the correction is busy every step) and the oscillator.
  for (const auto& [file, H] :
       {std::pair{"crane_m1_fs.toml", "0.016"}, std::pair{"oscillator2_fd_case1.toml", "0.002"}})
    for (const char* method : {"remove", "balance"}) {
      SCOPED_TRACE(file);
      SCOPED_TRACE(method);
      expect_threaded_equals_offline(file, H,
                                     {"coupling.energy_correction=true",
                                      std::string("coupling.energy_correction_method=") + method});
    }
}

TEST(EnergyCorrectionScenarios, RefusesAConnectionOutsideEveryBond) {
  // The crane's position connection (the system file's first) carries no power.
  try {
    (void)config::build(config::load_scenario(COSIM_SOURCE_DIR
                                              "/rt_config/systems/crane_m1_fs.toml",
                                              {"connections[0].energy_correction=true"}));
    FAIL() << "accepted";
  } catch (const error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("connections[0].energy_correction"), std::string::npos) << m;
    EXPECT_NE(m.find("not part of any power bond"), std::string::npos) << m;
  }
}

TEST(EnergyCorrectionScenarios, RefusesASystemWithoutBonds) {
  try {
    (void)config::build(config::load_scenario(dir + "oscillator2_dd_case1.toml",
                                              {"coupling.energy_correction=true"}));
    FAIL() << "accepted";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("coupling.energy_correction"), std::string::npos)
        << e.what();
  }
}

// Largest difference of a column between two runs of equal rows.
double largest_difference(const result& a, const result& b, const std::string& column) {
  EXPECT_EQ(a.sink.rows.size(), b.sink.rows.size());
  const std::size_t ca = a.sink.col(column), cb = b.sink.col(column);
  double d = 0.0;
  for (std::size_t k = 0; k < std::min(a.sink.rows.size(), b.sink.rows.size()); ++k)
    d = std::max(d, std::abs(a.sink.rows[k][ca] - b.sink.rows[k][cb]));
  return d;
}

TEST(FeedthroughCorrectionScenarios, CraneFsBecomesPsCoupling) {
  // p-s: the multibody evaluates f_h = (p2 - p1) a_p - c sd (003 Eq. (8)) with its own sd.
  // f-s: the hydraulics evaluate it with the sd they received; corrected by d f_h / d sd = -c
  // times (fresh sd - received sd) it is the same number, so with h_M = H and ZOH both
  // couplings give the same run up to rounding, also at H = 30 ms where plain f-s is far
  // beyond its published 15 ms limit (003 Sect. 5).
  for (const char* m : {"m1", "m2"}) {
    for (const char* H : {"0.01", "0.03"}) {
      SCOPED_TRACE(std::string(m) + " H = " + H);
      const std::vector<std::string> base{std::string("run.macro_step=") + H,
                                          "run.output_interval=0.03"};
      std::vector<std::string> on = base;
      on.emplace_back("coupling.feedthrough_correction=true");
      result ps, fs, corrected;
      run(ps, std::string("crane_") + m + "_ps.toml", base);
      run(fs, std::string("crane_") + m + "_fs.toml", base);
      run(corrected, std::string("crane_") + m + "_fs.toml", on);
      ASSERT_EQ(ps.out.status, run_status::completed);
      ASSERT_EQ(corrected.out.status, run_status::completed);
      for (const char* col : {"s", "sd", "p1", "p2"}) {
        double scale = 0.0;
        for (const auto& row : ps.sink.rows)
          scale = std::max(scale, std::abs(row[ps.sink.col(col)]));
        EXPECT_LE(largest_difference(ps, corrected, col), 1e-10 * scale) << col;
      }
      if (fs.out.status == run_status::completed) {
        EXPECT_GT(largest_difference(ps, fs, "s"), 1e-6);  // without it they differ
      }
    }
  }
}

TEST(FeedthroughCorrectionScenarios, CraneFsWithinTwentyMillimetresAtTwiceThePublishedLimits) {
  // 003 Sect. 5: f-s reaches about 15 ms (M1) and 19 ms (M2) before it turns unstable.
  // With the correction, twice those steps stay within 20 mm of a 1 ms run.
  for (const auto& [file, H] :
       {std::pair{"crane_m1_fs.toml", "0.03"}, std::pair{"crane_m2_fs.toml", "0.038"}}) {
    SCOPED_TRACE(file);
    result fine, coarse;
    const std::string rows = std::string("run.output_interval=") + H;
    run(fine, file, {"run.macro_step=0.001", rows});
    run(coarse, file,
        {std::string("run.macro_step=") + H, rows, "coupling.feedthrough_correction=true"});
    ASSERT_EQ(coarse.out.status, run_status::completed);
    ASSERT_EQ(fine.sink.rows.size(), coarse.sink.rows.size());
    EXPECT_LT(largest_difference(fine, coarse, "s"), 0.02);
  }
}

TEST(FeedthroughCorrectionScenarios, OscillatorsCloserToClosedForm) {
  // d f / d x2 = -kc, d f / d v2 = -cc (000 Eq. (13)).
  for (const char* file : {"oscillator2_fd_case1.toml", "oscillator2_fd_case3.toml"}) {
    SCOPED_TRACE(file);
    result plain, corr;
    oscillator_runs(plain, corr, file, {"coupling.feedthrough_correction=true"});
    EXPECT_LT(against_closed_form(corr).position, 0.6 * against_closed_form(plain).position);
  }
}

TEST(FeedthroughCorrectionScenarios, ThreadedEqualsOfflineByteForByte) {
  for (const auto& [file, H] :
       {std::pair{"crane_m1_fs.toml", "0.03"}, std::pair{"oscillator2_fd_case1.toml", "0.002"}}) {
    SCOPED_TRACE(file);
    expect_threaded_equals_offline(file, H, {"coupling.feedthrough_correction=true"});
  }
}

std::string build_error(const std::string& file, const std::vector<std::string>& sets) {
  try {
    (void)config::build(config::load_scenario(file, sets));
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::config_value) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "accepted";
  return {};
}

TEST(FeedthroughCorrectionScenarios, RefusedWhereItCannotWork) {
  const std::string crane = COSIM_SOURCE_DIR "/rt_config/systems/crane_m1_fs.toml";
  // mbs.s -> hyd.s: the multibody's position does not depend on what it receives.
  std::string m = build_error(crane, {"connections[0].feedthrough_correction=true"});
  EXPECT_NE(m.find("connections[0].feedthrough_correction"), std::string::npos) << m;
  EXPECT_NE(m.find("'mbs.s' has no direct feedthrough"), std::string::npos) << m;
  m = build_error(crane, {"coupling.feedthrough_correction=true", "run.scheme=gauss-seidel"});
  EXPECT_NE(m.find("coupling.feedthrough_correction"), std::string::npos) << m;
  EXPECT_NE(m.find("jacobi"), std::string::npos) << m;
  m = build_error(dir + "oscillator2_dd_case1.toml", {"coupling.feedthrough_correction=true"});
  EXPECT_NE(m.find("nothing to correct"), std::string::npos) << m;
}

TEST(FeedthroughCorrectionScenarios, AConnectionSetToFalseOptsOutOfTheCouplingKey) {
  // The crane's force connection (connections[2], hyd.fh -> mbs.fh) opts out of both
  // [coupling] corrections; the flow input mbs.sd -> hyd.sd keeps its energy correction.
  const auto b = config::build(config::load_scenario(
      COSIM_SOURCE_DIR "/rt_config/systems/crane_m1_fs.toml",
      {"coupling.energy_correction=true", "coupling.feedthrough_correction=true",
       "connections[2].energy_correction=false", "connections[2].feedthrough_correction=false",
       "connections[0].feedthrough_correction=false"}));
  const subsystem& mbs = b->sys.at(b->sys.index_of("mbs"));
  const subsystem& hyd = b->sys.at(b->sys.index_of("hyd"));
  EXPECT_EQ(mbs.input(mbs.find_input("fh")).feedthrough().count, 0u);
  EXPECT_TRUE(mbs.corrections().empty());
  ASSERT_EQ(hyd.corrections().size(), 1u);
  EXPECT_EQ(hyd.corrections()[0].input, hyd.find_input("sd"));
}

}  // namespace
