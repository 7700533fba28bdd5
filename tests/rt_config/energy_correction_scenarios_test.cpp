// Energy-based coupling correction from the scenario keys: the 000 A.1 oscillators against
// their closed form (000 Eq. (36)), threaded = offline byte for byte with the correction on,
// and the configuration errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
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

TEST(EnergyCorrectionScenarios, BalanceCloserToClosedFormDampedAndUndamped) {
  // 000 A.1 force-displacement, Jacobi ZOH, H = 5 ms over 10 s, against the closed form.
  // Case 3 (c = 10): the coupling error is not only an energy gain, "remove" makes x1
  // worse, "balance" (two-sided) improves both masses. Case 1 (undamped): both improve.
  for (const char* file : {"oscillator2_fd_case3.toml", "oscillator2_fd_case1.toml"}) {
    SCOPED_TRACE(file);
    const std::vector<std::string> base{"run.macro_step=0.005", "run.duration=10",
                                        "run.output_interval=0.01"};
    std::vector<std::string> bal = base;
    bal.emplace_back("coupling.energy_correction=true");
    bal.emplace_back("coupling.energy_correction_method=balance");
    result plain, corr;
    run(plain, file, base);
    run(corr, file, bal);
    ASSERT_EQ(plain.out.status, run_status::completed);
    ASSERT_EQ(corr.out.status, run_status::completed);
    const errors ep = against_closed_form(plain), eb = against_closed_form(corr);
    EXPECT_LT(eb.position, 0.5 * ep.position);
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

TEST(EnergyCorrectionScenarios, ThreadedEqualsOfflineByteForByte) {
  // The crane at H = 16 ms (where the correction is busy every step) and the oscillator.
  for (const auto& [file, H] :
       {std::pair{"crane_m1_fs.toml", "0.016"}, std::pair{"oscillator2_fd_case1.toml", "0.002"}})
    for (const char* method : {"remove", "balance"}) {
      SCOPED_TRACE(file);
      SCOPED_TRACE(method);
      const std::vector<std::string> sets{
          std::string("run.macro_step=") + H, "run.duration=2", "coupling.energy_correction=true",
          std::string("coupling.energy_correction_method=") + method};
      result off, thr, plain;
      run(off, file, sets);
      run(thr, file, sets, true);
      EXPECT_TRUE(same_rows(off.sink, thr.sink));
      run(plain, file, {std::string("run.macro_step=") + H, "run.duration=2"});
      EXPECT_FALSE(same_rows(off.sink, plain.sink));  // the correction did act
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

}  // namespace
