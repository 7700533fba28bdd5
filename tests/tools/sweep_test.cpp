// cosim sweep, cosim reference and cosim compare --measure, run in-process through the same
// CLI11 commands the program registers. Expected values come from independent
// computations: the hand-derived modal solution of 000 A.1, the closed form evaluated here,
// 004 Eqs. (7)-(8) written out here, the crane's printed equilibrium (003 Sect. 1.3).
#include <gtest/gtest.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "cosim/rt_config/model_registry.hpp"
#include "cosim/subsystems/oscillator.hpp"
#include "csv_table.hpp"
#include "process_support.hpp"
#include "sweep_support.hpp"

namespace {

using namespace cosim::test_cli;
namespace fs = std::filesystem;
namespace proc = cosim::test_process;
namespace osc = cosim::osc;

const std::string scenarios = COSIM_SOURCE_DIR "/rt_config/scenarios/";

TEST(Sweep, OneRowPerValueInInputOrderWithIndependentErrors) {
  temp_dir dir;
  const std::string out = dir / "sw";
  // Unsorted values; two workers.
  const auto r =
      cosim_cli({"sweep", scenarios + "oscillator2_fd_case1.toml", "--key", "run.macro_step",
                 "--values", "2e-4,1e-4,4e-4", "--set", "run.duration=1", "--reference",
                 "closed-form", "--jobs", "2", "--out", out});
  ASSERT_EQ(r.code, 0) << r.out;
  const table t = read_table(out + "/sweep.csv");
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(t.text(0, "value"), "2e-4");
  EXPECT_EQ(t.text(1, "value"), "1e-4");
  EXPECT_EQ(t.text(2, "value"), "4e-4");
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(t.text(i, "status"), "completed");
    EXPECT_EQ(t.text(i, "stop_reason"), "end_time");
    EXPECT_GT(t.num(i, "sum_abs_dE"), 0.0);  // f-d has a power bond
    EXPECT_GE(t.num(i, "wall_time_s"), 0.0);
  }
  for (const char* h :
       {"x1_max", "x1_rms", "x2_max", "v2_rms", "pos_err_x1", "pos_err_x2", "energy_err"})
    EXPECT_GE(t.column(h), 0) << h;
  // Each run directory; the errors recomputed here from its results.csv and the closed form.
  const auto d = osc::make_definition(osc::a1_params(1));
  const osc::reference_solution ref(d);
  const auto scale_w = osc::natural_frequencies(d);
  const double fr = scale_w[1] / scale_w[0];                        // sqrt(1110)/10
  const double cycles = 1.0 * scale_w[1] / (2 * std::numbers::pi);  // fast cycles in 1 s
  for (std::size_t i = 0; i < 3; ++i) {
    // --help: DIR/<n>_<key>=<value>, n the row in sweep.csv from 1.
    const std::string csv = out + "/" + std::to_string(i + 1) +
                            "_run.macro_step=" + t.text(i, "value") + "/results.csv";
    ASSERT_TRUE(fs::exists(csv)) << csv;
    const auto res = cosim::cli::read_csv(csv);
    double max1 = 0.0, sum = 0.0, sq = 0.0, esum = 0.0;
    for (const auto& row : res.rows) {
      const Eigen::VectorXd z = ref.state_at(row[0]);
      const double e = row[1] - z[0];
      max1 = std::max(max1, std::abs(e));
      sum += e * e;
      sq += z[0] * z[0];
      // 004 Eq. (8) with E = (1/2) v^T M v + (1/2) x^T K x of 000 Eq. (9), E0 = 1e4 J.
      const double x1 = row[1], x2 = row[2], v1 = row[3], v2 = row[4];
      const double E = 0.5 * (v1 * v1 + v2 * v2) + 0.5 * (10 * x1 * x1 + 1000 * x2 * x2) +
                       0.5 * 100 * (x1 - x2) * (x1 - x2);
      esum += (E - 1e4) / 1e4 * ((E - 1e4) / 1e4);
    }
    const double n = static_cast<double>(res.rows.size());
    EXPECT_NEAR(t.num(i, "x1_max"), max1, 1e-12 * (1 + max1));
    // 004 Eq. (7): (FR/N) sqrt(mean(((x - x_exact)/x_rms)^2)), x_rms = sqrt(mean(x_exact^2)).
    EXPECT_NEAR(t.num(i, "pos_err_x1"), fr / cycles * std::sqrt(sum / sq), 1e-9);
    EXPECT_NEAR(t.num(i, "energy_err"), fr / cycles * std::sqrt(esum / n), 1e-9);
  }
  // ZOH coupling is first order in H (see oscillator_scenarios_test): halving H halves it.
  EXPECT_NEAR(t.num(2, "x1_max") / t.num(0, "x1_max"), 2.0, 0.3);
  EXPECT_NEAR(t.num(0, "x1_max") / t.num(1, "x1_max"), 2.0, 0.3);
  EXPECT_NE(r.out.find("3 runs on 2 threads"), std::string::npos) << r.out;
}

TEST(Sweep, ReferenceFileGivesTheSameErrorsAsTheClosedForm) {
  temp_dir dir;
  const std::string ref = dir / "ref.csv";
  const std::string sc = scenarios + "oscillator3_dd.toml";
  ASSERT_EQ(
      cosim_cli({"reference", "--oscillator", sc, "--set", "run.duration=1", "--out", ref}).code,
      0);
  const auto a = cosim_cli({"sweep", sc, "--key", "coupling.extrapolation", "--values", "0,1",
                            "--set", "run.duration=1", "--reference", ref, "--out", dir / "file"});
  const auto b = cosim_cli({"sweep", sc, "--key", "coupling.extrapolation", "--values", "0,1",
                            "--set", "run.duration=1", "--reference", "closed-form", "--jobs", "1",
                            "--out", dir / "closed"});
  ASSERT_EQ(a.code, 0) << a.out;
  ASSERT_EQ(b.code, 0) << b.out;
  const table ta = read_table(dir / "file/sweep.csv"), tb = read_table(dir / "closed/sweep.csv");
  EXPECT_LT(ta.column("pos_err_x1"), 0);  // 004 measures need the closed form
  for (std::size_t i = 0; i < 2; ++i)
    for (const char* c : {"x1_max", "x3_rms", "v2_max"})
      EXPECT_DOUBLE_EQ(ta.num(i, c), tb.num(i, c)) << c;
  // m = 1 beats ZOH (second vs first order).
  EXPECT_LT(tb.num(1, "x1_max"), 0.1 * tb.num(0, "x1_max"));
}

TEST(Sweep, BadInput) {
  temp_dir dir;
  const std::string sc = scenarios + "oscillator2_fd_case1.toml";
  const std::string out = dir / "o";
  EXPECT_EQ(cosim_cli({"sweep", sc, "--key", "run.macro_step", "--values", "", "--out", out}).code,
            2);
  EXPECT_EQ(
      cosim_cli({"sweep", sc, "--key", "run.macro_step=1", "--values", "1e-3", "--out", out}).code,
      2);
  EXPECT_EQ(cosim_cli({"sweep", scenarios + "crane_m1_fs.toml", "--key", "run.macro_step",
                       "--values", "1e-3", "--reference", "closed-form", "--out", out})
                .code,
            2);
  EXPECT_EQ(cosim_cli({"sweep", sc, "--key", "run.macro_step", "--values", "1e-3", "--reference",
                       dir / "missing.csv", "--out", out})
                .code,
            2);
  EXPECT_EQ(cosim_cli({"sweep", sc, "--key", "run.macro_step", "--values", "1e-3", "--columns",
                       "x1", "--out", out})
                .code,
            2);  // --columns without --reference
  EXPECT_EQ(cosim_cli({"sweep", sc, "--values", "1e-3", "--out", out}).code, 2);  // no --key
  // An empty --out would silently mean the default folder.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", sc, "--out", ""},
        std::vector<std::string>{"sweep", sc, "--key", "run.macro_step", "--values", "1e-3",
                                 "--out", ""},
        std::vector<std::string>{"reference", "--manoeuvre", "M1", "--out", ""}}) {
    const auto r = cosim_cli(args);
    EXPECT_EQ(r.code, 2) << args[0];
    EXPECT_NE(r.err.find("--out: must not be empty"), std::string::npos) << r.err;
  }
  for (const char* jobs : {"-1", "x", "1.5"}) {
    const auto r = cosim_cli(
        {"sweep", sc, "--key", "run.macro_step", "--values", "1e-3", "--jobs", jobs, "--out", out});
    EXPECT_EQ(r.code, 2) << jobs;
    EXPECT_NE(r.err.find("--jobs: must be a whole number >= 0 (0: one per core), not '" +
                         std::string(jobs) + "'"),
              std::string::npos)
        << r.err;
  }
  // A key every value would fail on, and a column the closed form lacks: refused before
  // anything is written, naming the option.
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--key", "run.nonexistent", "--values", "1"},
        std::vector<std::string>{"--key", "run", "--values", "1"},
        std::vector<std::string>{"--key", "run.macro_step", "--values", "1e-3", "--reference",
                                 "closed-form", "--columns", "nosuch"}}) {
    std::vector<std::string> args{"sweep", sc, "--out", dir / "never"};
    args.insert(args.end(), bad.begin(), bad.end());
    const auto r = cosim_cli(args);
    EXPECT_EQ(r.code, 2) << bad[1];
    EXPECT_NE(r.err.find(bad.size() > 4 ? "--columns nosuch" : "--key " + bad[1]),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(dir / "never")) << bad[1];
  }
  // One bad value: its row says error, the others run, exit 2.
  const auto r = cosim_cli({"sweep", scenarios + "oscillator004.toml", "--key", "model.fr",
                            "--values", "3,0.5,5", "--set", "run.duration=5", "--reference",
                            "closed-form", "--out", dir / "fr"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("model.fr"), std::string::npos) << r.err;
  const table t = read_table(dir / "fr/sweep.csv");
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(t.text(0, "status"), "completed");
  EXPECT_EQ(t.text(1, "status"), "error");
  EXPECT_EQ(t.text(2, "status"), "completed");
}

TEST(Sweep, DivergedRunIsReportedWithExitCode1) {
  temp_dir dir;
  // f-d A.1 with ZOH at H = 50 ms (k2 = 1000 N/m: w H = 1.6) blows up.
  const auto r =
      cosim_cli({"sweep", scenarios + "oscillator2_fd_case1.toml", "--key", "run.macro_step",
                 "--values", "1e-3,5e-2", "--set", "run.output_interval=0", "--set",
                 "safety.energy_residual_limit=1e6", "--out", dir / "d"});
  EXPECT_EQ(r.code, 1) << r.out;
  const table t = read_table(dir / "d/sweep.csv");
  EXPECT_EQ(t.text(0, "status"), "completed");
  EXPECT_NE(t.text(1, "status"), "completed");
}

TEST(Sweep, EqualValuesRunIntoFoldersOfTheirOwn) {
  // Three runs of one value at once once wrote into one folder: rows mixed or errors. Each
  // needs its own complete results: 1 s every 0.01 s = 101 rows.
  temp_dir dir;
  const auto r = cosim_cli({"sweep", scenarios + "oscillator2_fd_case1.toml", "--key",
                            "run.macro_step", "--values", "1e-3,1e-3,1e-3", "--set",
                            "run.duration=1", "--jobs", "3", "--out", dir / "eq"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const table t = read_table(dir / "eq/sweep.csv");
  ASSERT_EQ(t.rows.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(t.text(i, "status"), "completed");
    const std::string folder = dir / ("eq/" + std::to_string(i + 1) + "_run.macro_step=1e-3");
    ASSERT_TRUE(fs::exists(folder + "/summary.json")) << folder;
    const auto res = cosim::cli::read_csv(folder + "/results.csv");
    ASSERT_EQ(res.rows.size(), 101u) << folder;
    for (std::size_t k = 0; k < res.rows.size(); ++k)
      ASSERT_NEAR(res.rows[k][0], 0.01 * static_cast<double>(k), 1e-12) << folder;
  }
  // Ten values: the index is zero-padded, so ls lists the folders in input order.
  const auto ten = cosim_cli({"sweep", scenarios + "oscillator2_fd_case1.toml", "--key",
                              "coupling.extrapolation", "--values", "0,0,0,0,0,0,0,0,0,1", "--set",
                              "run.duration=0.1", "--out", dir / "ten"});
  ASSERT_EQ(ten.code, 0) << ten.out << ten.err;
  EXPECT_TRUE(fs::exists(dir / "ten/01_coupling.extrapolation=0/summary.json"));
  EXPECT_TRUE(fs::exists(dir / "ten/10_coupling.extrapolation=1/summary.json"));
  // Spaces after the commas are not part of the values (nor of the folder names).
  const auto spaced =
      cosim_cli({"sweep", scenarios + "oscillator2_fd_case1.toml", "--key", "run.macro_step",
                 "--values", "1e-3, 2e-3", "--set", "run.duration=0.1", "--out", dir / "sp"});
  ASSERT_EQ(spaced.code, 0) << spaced.err;
  EXPECT_TRUE(fs::exists(dir / "sp/2_run.macro_step=2e-3/summary.json"));
  EXPECT_EQ(read_table(dir / "sp/sweep.csv").text(1, "value"), "2e-3");
}

// A second, shorter sweep into the same DIR: the first one's folders for values it does not
// have go (they would sit beside a sweep.csv that does not list them); a folder that is not a
// sweep run's, or holds more than a run writes, stays.
TEST(Sweep, AShorterSweepIntoTheSameFolderLeavesNoRunsItDoesNotList) {
  temp_dir dir;
  const std::string out = dir / "re";
  const auto sweep = [&](const std::string& values) {
    return cosim_cli({"sweep", scenarios + "oscillator2_fd_case1.toml", "--key", "run.macro_step",
                      "--values", values, "--set", "run.duration=0.1", "--out", out});
  };
  ASSERT_EQ(sweep("1e-3,2e-3,5e-3,1e-2").code, 0);
  fs::create_directories(out + "/notes");
  fs::create_directories(out + "/4_run.macro_step=1e-2/plots");  // the user's own, kept
  const auto r = sweep("1e-3,2e-3");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("removed 1 run folder(s) of an earlier sweep"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(out + "/1_run.macro_step=1e-3/summary.json"));
  EXPECT_TRUE(fs::exists(out + "/2_run.macro_step=2e-3/summary.json"));
  EXPECT_FALSE(fs::exists(out + "/3_run.macro_step=5e-3"));
  EXPECT_TRUE(fs::exists(out + "/4_run.macro_step=1e-2/plots"));
  EXPECT_TRUE(fs::exists(out + "/notes"));
  EXPECT_EQ(read_table(out + "/sweep.csv").rows.size(), 2u);
}

TEST(Sweep, ProgressIsQuietOffATerminalUnlessForced) {
  temp_dir dir;
  const std::vector<std::string> base{"sweep",    scenarios + "oscillator2_fd_case1.toml",
                                      "--key",    "run.macro_step",
                                      "--values", "1e-3,2e-3",
                                      "--set",    "run.duration=0.1"};
  auto with = [&](std::vector<std::string> extra, const std::string& out) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    a.insert(a.end(), {"--out", dir / out});
    return cosim_cli(a);
  };
  // The test captures stderr into a file: not a terminal.
  const auto quiet = with({}, "q");
  ASSERT_EQ(quiet.code, 0) << quiet.err;
  EXPECT_EQ(quiet.err.find('\r'), std::string::npos) << quiet.err;
  EXPECT_EQ(quiet.err.find("runs,"), std::string::npos) << quiet.err;
  const auto forced = with({"--progress"}, "f");
  ASSERT_EQ(forced.code, 0) << forced.err;
  EXPECT_NE(forced.err.find("\rcosim sweep: 0/2 runs, "), std::string::npos) << forced.err;
  EXPECT_NE(forced.err.find("ETA"), std::string::npos) << forced.err;
  EXPECT_NE(forced.err.find("\rcosim sweep: 2/2 runs, "), std::string::npos) << forced.err;
  EXPECT_NE(forced.err.find(" elapsed"), std::string::npos) << forced.err;
  EXPECT_EQ(forced.err.back(), '\n');  // what follows starts on a line of its own
  EXPECT_EQ(with({"--progress", "--no-progress"}, "x").code, 2);
}

TEST(Sweep, ProgressOnATerminalByDefault) {
  temp_dir dir;
  const auto r = proc::run_on_pty(
      {COSIM_EXE, "sweep", scenarios + "oscillator2_fd_case1.toml", "--key", "run.macro_step",
       "--values", "1e-3,2e-3", "--set", "run.duration=0.1", "--out", dir / "t"},
      dir / "stdout", std::chrono::seconds(60));
  EXPECT_EQ(r.code, 0) << r.terminal;
  EXPECT_NE(r.terminal.find("\rcosim sweep: 2/2 runs, "), std::string::npos) << r.terminal;
  EXPECT_EQ(proc::slurp(dir / "stdout").find("cosim sweep:"), std::string::npos);
}

TEST(Sweep, SigintStopsStartingRunsAndWritesWhatItHas) {
  // Six runs of ~0.5 s one after the other (300 s at 0.1 ms); SIGINT once the first is done.
  temp_dir dir;
  const std::string out = dir / "s";
  const pid_t pid = proc::spawn(
      {COSIM_EXE, "sweep", scenarios + "oscillator2_fd_case1.toml", "--key", "run.macro_step",
       "--values", "1e-4,1e-4,1e-4,1e-4,1e-4,1e-4", "--set", "run.duration=300", "--set",
       "run.output_interval=0.1", "--jobs", "1", "--out", out},
      dir / "stdout", dir / "stderr");
  const bool first_done = proc::wait_for(
      pid, [&] { return fs::exists(out + "/1_run.macro_step=1e-4/summary.json"); },
      std::chrono::seconds(120));
  ASSERT_EQ(kill(pid, SIGINT), 0);
  const int code = proc::wait_exit(pid, std::chrono::seconds(60));
  ASSERT_TRUE(first_done) << proc::slurp(dir / "stderr");
  const std::string stdout_text = proc::slurp(dir / "stdout");
  EXPECT_EQ(code, 1) << stdout_text << proc::slurp(dir / "stderr");
  EXPECT_NE(stdout_text.find("INTERRUPTED"), std::string::npos) << stdout_text;
  const table t = read_table(out + "/sweep.csv");
  ASSERT_EQ(t.rows.size(), 6u);  // every value, in input order
  EXPECT_EQ(t.text(0, "status"), "completed");
  std::size_t stopped = 0;
  for (std::size_t i = 0; i < 6; ++i) {
    const std::string status = t.text(i, "status");
    const std::string folder = out + "/" + std::to_string(i + 1) + "_run.macro_step=1e-4";
    if (status == "completed") continue;
    ++stopped;
    EXPECT_EQ(t.text(i, "stop_reason"), "operator_signal") << i;
    if (status == "interrupted") {
      // The running run stopped in order: its summary says why.
      EXPECT_NE(proc::slurp(folder + "/summary.json").find("operator_signal"), std::string::npos);
    } else {
      EXPECT_EQ(status, "not_started") << i;
      EXPECT_FALSE(fs::exists(folder)) << folder;
    }
  }
  EXPECT_GE(stopped, 1u);
  EXPECT_EQ(t.text(5, "status"), "not_started");  // 2.5 s of work after the signal: never begun
}

TEST(Sweep, HelpExampleRunsAsWritten) {
  // The example of `cosim sweep --help`, pasted into a shell at the repository root.
  temp_dir dir;
  const std::string help_out = dir / "help.txt";
  ASSERT_EQ(proc::wait_exit(proc::spawn({COSIM_EXE, "sweep", "--help"}, help_out, dir / "help.err"),
                            std::chrono::seconds(30)),
            0);
  std::istringstream help(proc::slurp(help_out));
  std::string example;
  bool in_example = false;
  for (std::string line; std::getline(help, line);) {
    if (in_example) {
      example += line + "\n";
      if (line.empty() || line.back() != '\\') break;  // the command's last line
    } else if (line.rfind("Example", 0) == 0) {
      in_example = true;
    }
  }
  ASSERT_NE(example.find("build/tools/cosim sweep "), std::string::npos) << example;
  // A repository root: the scenarios, and the program where the example calls it.
  fs::create_directory_symlink(COSIM_SOURCE_DIR "/rt_config", dir / "rt_config");
  fs::create_directories(dir / "build/tools");
  fs::create_symlink(COSIM_EXE, dir / "build/tools/cosim");
  const int code =
      proc::wait_exit(proc::spawn({"/bin/sh", "-c", "cd '" + dir.path() + "' && " + example},
                                  dir / "ex.out", dir / "ex.err"),
                      std::chrono::seconds(120));
  EXPECT_EQ(code, 0) << example << proc::slurp(dir / "ex.out") << proc::slurp(dir / "ex.err");
  // The example's --out, relative to the root.
  const std::size_t o = example.find("--out ");
  ASSERT_NE(o, std::string::npos);
  std::string out_dir = example.substr(o + 6);
  out_dir = out_dir.substr(0, out_dir.find_first_of(" \\\n"));
  const table t = read_table(dir / (out_dir + "/sweep.csv"));
  ASSERT_FALSE(t.rows.empty());
  for (std::size_t i = 0; i < t.rows.size(); ++i) EXPECT_EQ(t.text(i, "status"), "completed");
}

TEST(Reference, OscillatorClosedFormMatchesHandModalSolution) {
  temp_dir dir;
  const std::string out = dir / "ref.csv";
  const auto r = cosim_cli({"reference", "--oscillator", "oscillator2_dd_case1", "--out", out});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("status: completed"), std::string::npos);
  const auto t = cosim::cli::read_csv(out);
  EXPECT_EQ(t.columns,
            (std::vector<std::string>{"t", "x1", "x2", "v1", "v2", "dP", "dE", "sum_abs_dE"}));
  ASSERT_EQ(t.rows.size(), 1001u);  // 10 s every 0.01 s (the scenario's output grid)
  // 000 A.1 case 1 by hand (see oscillator_test.cpp): w = 10, sqrt(1110) rad/s.
  const double a = 9000.0 / 101.0, b = 1100.0 / 101.0, w2 = std::sqrt(1110.0);
  for (std::size_t k : {0u, 1u, 137u, 500u, 1000u}) {
    const double tt = t.rows[k][0];
    EXPECT_NEAR(tt, 0.01 * static_cast<double>(k), 1e-12);
    const double s1 = a / 10.0 * std::sin(10.0 * tt), s2 = b / w2 * std::sin(w2 * tt);
    EXPECT_NEAR(t.rows[k][1], s1 + s2, 1e-8);
    EXPECT_NEAR(t.rows[k][2], 0.1 * s1 - 10.0 * s2, 1e-8);
    EXPECT_NEAR(t.rows[k][3], a * std::cos(10.0 * tt) + b * std::cos(w2 * tt), 1e-7);
  }
}

TEST(Reference, NonlinearUsesFineRk4AndCraneKeepsThePaperEquilibrium) {
  temp_dir dir;
  const auto r = cosim_cli({"reference", "--oscillator", "oscillator_nonlinear", "--set",
                            "run.duration=0.5", "--step", "1e-4", "--out", dir / "nl.csv"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("monolithic RK4"), std::string::npos);
  const auto nl = cosim::cli::read_csv(dir / "nl.csv");
  EXPECT_EQ(nl.rows.size(), 51u);
  // Energy of the quadratic dampers' run decreases (000 Eq. (56) dissipates).
  auto energy = [](const std::vector<double>& row) {
    return 0.5 * (row[3] * row[3] + row[4] * row[4]) +
           0.5 * (10 * row[1] * row[1] + 1000 * row[2] * row[2]) +
           50 * (row[1] - row[2]) * (row[1] - row[2]);
  };
  EXPECT_NEAR(energy(nl.rows.front()), 1e4, 1e-9);
  EXPECT_LT(energy(nl.rows.back()), 0.95e4);

  const auto c =
      cosim_cli({"reference", "--manoeuvre", "M1", "--duration", "0.05", "--out", dir / "m1.csv"});
  ASSERT_EQ(c.code, 0) << c.err;
  const auto m1 = cosim::cli::read_csv(dir / "m1.csv");
  EXPECT_EQ(m1.columns, (std::vector<std::string>{"t", "kappa", "s", "sd", "p1", "p2", "fh"}));
  ASSERT_EQ(m1.rows.size(), 6u);
  // 003 Sect. 1.3: p1 = 3.1708 MPa, p2 = 4.5292 MPa, kappa0 = 0.4543,
  // f_h = 8829 N at s1 = 0.5 m; M1 holds kappa0 until t_a = 2 s.
  EXPECT_NEAR(m1.rows[0][4], 3.1708e6, 50.0);
  EXPECT_NEAR(m1.rows[0][5], 4.5292e6, 50.0);
  EXPECT_NEAR(m1.rows[5][1], 0.4543, 5e-5);
  EXPECT_NEAR(m1.rows[0][2], 0.5, 1e-9);
  EXPECT_NEAR(m1.rows[0][6], 8829.0, 0.5);
}

TEST(Reference, BadInput) {
  temp_dir dir;
  EXPECT_EQ(cosim_cli({"reference", "--manoeuvre", "M3", "--out", dir / "x.csv"}).code, 2);
  EXPECT_EQ(cosim_cli({"reference", "--manoeuvre", "M1", "--oscillator", "oscillator004"}).code, 2);
  EXPECT_EQ(cosim_cli({"reference"}).code, 2);
  EXPECT_EQ(cosim_cli({"reference", "--oscillator", "no_such_scenario"}).code, 2);
  EXPECT_EQ(cosim_cli({"reference", "--oscillator", "crane_m1_fs"}).code, 2);  // not an oscillator
  EXPECT_EQ(cosim_cli({"reference", "--manoeuvre", "M1", "--set", "model.fr=3"}).code, 2);
  EXPECT_EQ(cosim_cli({"reference", "--manoeuvre", "M1", "--step", "0"}).code, 2);
  EXPECT_EQ(cosim_cli({"reference", "--oscillator", "oscillator004", "--set", "model.fr=1"}).code,
            2);
}

TEST(Compare, MeasuresMatchEq7AndEq8) {
  temp_dir dir;
  const std::string sc = scenarios + "oscillator004.toml";
  ASSERT_EQ(cosim_cli({"run", sc, "--set", "run.duration=20", "--out", dir / "run"}).code, 0);
  ASSERT_EQ(cosim_cli({"reference", "--oscillator", sc, "--set", "run.duration=20", "--out",
                       dir / "ref.csv"})
                .code,
            0);
  const auto r = cosim_cli({"compare", dir / "run/results.csv", dir / "ref.csv", "--measure", "all",
                            "--scenario", sc, "--set", "run.duration=20"});
  ASSERT_EQ(r.code, 0) << r.err;
  // Independent: 004 Eq. (7) with FR = 30, N = 20 cycles, and Eq. (8) with 004 Eq. (2)'s
  // energy from the derived parameters (m1 = 1, m2 = 100, k1 = w2^2, k3 = 100 w2^2).
  const auto res = cosim::cli::read_csv(dir / "run/results.csv");
  const auto ref = cosim::cli::read_csv(dir / "ref.csv");
  ASSERT_EQ(res.rows.size(), ref.rows.size());
  const double w1 = 2 * std::numbers::pi, w2 = w1 / 30.0, k2 = (w1 * w1 - w2 * w2) / 1.01;
  double sum = 0.0, sq = 0.0, esum = 0.0;
  const double E0 = 0.5 * w2 * w2 * 121.0 + 0.5 * k2 * (11.0 - 9.99) * (11.0 - 9.99) +
                    0.5 * 100 * w2 * w2 * 9.99 * 9.99;
  for (std::size_t k = 0; k < res.rows.size(); ++k) {
    const double e = res.rows[k][1] - ref.rows[k][1];
    sum += e * e;
    sq += ref.rows[k][1] * ref.rows[k][1];
    const double x1 = res.rows[k][1], x2 = res.rows[k][2], v1 = res.rows[k][3], v2 = res.rows[k][4];
    const double E = 0.5 * v1 * v1 + 50 * v2 * v2 + 0.5 * w2 * w2 * x1 * x1 +
                     0.5 * k2 * (x1 - x2) * (x1 - x2) + 50 * w2 * w2 * x2 * x2;
    esum += (E - E0) / E0 * ((E - E0) / E0);
  }
  const double n = static_cast<double>(res.rows.size());
  const double dx = 30.0 / 20.0 * std::sqrt(sum / sq), dE = 30.0 / 20.0 * std::sqrt(esum / n);
  const std::string x1_line = r.out.substr(r.out.find("x1           dx = "));
  EXPECT_NEAR(std::stod(x1_line.substr(18)), dx, 1e-6 * dx) << r.out;
  const std::string e_line = r.out.substr(r.out.find("dE = "));
  EXPECT_NEAR(std::stod(e_line.substr(5)), dE, 1e-6 * dE) << r.out;
  // Without --scenario the energy measure is refused; position uses --fr/--cycles.
  EXPECT_EQ(
      cosim_cli({"compare", dir / "run/results.csv", dir / "ref.csv", "--measure", "energy"}).code,
      2);
  const auto p = cosim_cli({"compare", dir / "run/results.csv", dir / "ref.csv", "--measure",
                            "position", "--columns", "x1", "--fr", "30", "--cycles", "20"});
  ASSERT_EQ(p.code, 0);
  const std::string pl = p.out.substr(p.out.find("x1           dx = "));
  EXPECT_NEAR(std::stod(pl.substr(18)), dx, 1e-6 * dx);
  // The default stays the plain max/RMS table.
  const auto d = cosim_cli({"compare", dir / "run/results.csv", dir / "ref.csv"});
  EXPECT_EQ(d.out.find("004"), std::string::npos);
}

}  // namespace
