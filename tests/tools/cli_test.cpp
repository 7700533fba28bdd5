// The cosim program as a user runs it: help texts, exit codes (0 completed, 1 stopped
// early, 2 bad input), the results.csv / summary.json contract of README.md, and compare.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "process_support.hpp"
#include "temp_dir.hpp"

namespace {

using cosim::test::temp_dir;

namespace fs = std::filesystem;

const std::string exe = COSIM_EXE;
const std::string scenarios = COSIM_SOURCE_DIR "/rt_config/scenarios/";

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct result {
  int code = -1;
  std::string out, err;
};

/// Runs `cosim ARGS` inside `dir`, capturing stdout and stderr.
result cosim(const temp_dir& dir, const std::string& args) {
  const std::string cmd = "cd '" + dir.path() + "' && '" + exe + "' " + args + " >'" +
                          (dir / ".stdout") + "' 2>'" + (dir / ".stderr") + "'";
  const int status = std::system(cmd.c_str());
  result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(dir / ".stdout");
  r.err = slurp(dir / ".stderr");
  return r;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) lines.push_back(l);
  return lines;
}

struct csv {
  std::vector<std::string> header;
  std::vector<std::vector<double>> rows;
  [[nodiscard]] std::size_t col(const std::string& name) const {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return i;
    ADD_FAILURE() << "no column " << name;
    return 0;
  }
};

csv read_csv(const std::string& path) {
  csv c;
  const auto lines = lines_of(slurp(path));
  if (lines.empty()) return c;
  std::istringstream h(lines[0]);
  for (std::string f; std::getline(h, f, ',');) c.header.push_back(f);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    std::vector<double> row;
    std::istringstream in(lines[i]);
    for (std::string f; std::getline(in, f, ',');) row.push_back(std::strtod(f.c_str(), nullptr));
    EXPECT_EQ(row.size(), c.header.size()) << path << " line " << i + 1;
    c.rows.push_back(std::move(row));
  }
  return c;
}

/// The value of "key" in a flat JSON text: the token after `"key":`.
std::string json_value(const std::string& json, const std::string& key) {
  const std::regex re("\"" + key + "\"\\s*:\\s*(\"[^\"]*\"|[^,\\s}\\]]+)");
  std::smatch m;
  if (!std::regex_search(json, m, re)) return {};
  std::string v = m[1];
  if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
  return v;
}

TEST(Cli, HelpTextsExitZeroAndSayWhatTheyDo) {
  temp_dir dir;
  const result top = cosim(dir, "--help");
  EXPECT_EQ(top.code, 0) << top.err;
  EXPECT_NE(top.out.find("co-simulation"), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("run"), std::string::npos);
  EXPECT_NE(top.out.find("compare"), std::string::npos);
  // A newcomer's page: first steps, where the docs are, one line per command (the paper
  // notation and formulas are in each command's own --help and in docs/).
  EXPECT_NE(top.out.find("First steps"), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("docs/tools.md"), std::string::npos) << top.out;
  EXPECT_EQ(top.out.find("Eq."), std::string::npos) << top.out;
  EXPECT_LE(std::count(top.out.begin(), top.out.end(), '\n'), 45) << top.out;

  const result run = cosim(dir, "run --help");
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.out.find("Run a scenario"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("--set"), std::string::npos);
  EXPECT_NE(run.out.find("--out"), std::string::npos);
  EXPECT_NE(run.out.find("run.macro_step"), std::string::npos);  // the key list
  // The dashboard's options, TLS among them (docs/dashboard.md "Options").
  for (const char* o : {"--serve ", "--serve-any", "--serve-cert FILE", "--serve-key FILE"})
    EXPECT_NE(run.out.find(o), std::string::npos) << o;

  const result cmp = cosim(dir, "compare --help");
  EXPECT_EQ(cmp.code, 0) << cmp.err;
  EXPECT_NE(cmp.out.find("Compare two results.csv"), std::string::npos) << cmp.out;
  EXPECT_NE(cmp.out.find("004 Eq. 7"), std::string::npos) << cmp.out;  // the whole text is here

  // No subcommand is a usage error.
  EXPECT_EQ(cosim(dir, "").code, 2);
}

void expect_bad_input(const temp_dir& dir, const std::string& args,
                      const std::vector<std::string>& needles) {
  const result r = cosim(dir, args + " --out out");
  EXPECT_EQ(r.code, 2) << args << "\n" << r.out << r.err;
  const auto err_lines = lines_of(r.err);
  ASSERT_EQ(err_lines.size(), 1u) << "expected one error line, got:\n" << r.err;
  for (const auto& n : needles)
    EXPECT_NE(err_lines[0].find(n), std::string::npos) << "'" << n << "' not in: " << r.err;
  EXPECT_FALSE(fs::exists(dir / "out/results.csv")) << args;
  EXPECT_FALSE(fs::exists(dir / "out/summary.json")) << args;
}

TEST(Cli, BadScenarioExitsTwoWithOneClearLineAndNoResults) {
  temp_dir dir;
  std::string text = slurp(scenarios + "crane_m1_fs.toml");
  // Append an unknown key to [coupling] (the last table) and find its line number.
  text += "extrapolaton = 1\n";
  const auto line = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  std::ofstream(dir / "bad.toml") << text;
  expect_bad_input(dir, "run bad.toml",
                   {"bad.toml:" + std::to_string(line) + ":", "coupling.extrapolaton"});

  // A bad value given on the command line names the --set key.
  expect_bad_input(dir, "run " + scenarios + "crane_m1_fs.toml --set run.macro_step=-1",
                   {"--set run.macro_step", "positive"});
  expect_bad_input(dir, "run " + scenarios + "crane_m1_fs.toml --set run.bogus=1",
                   {"--set run.bogus"});

  // Wrong type on a known line: run.duration is on the line that starts with "duration".
  std::string typed = slurp(scenarios + "crane_m1_fs.toml");
  const auto pos = typed.find("duration = 10.0");
  ASSERT_NE(pos, std::string::npos);
  const auto dline =
      1 + static_cast<int>(std::count(typed.begin(), typed.begin() + static_cast<long>(pos), '\n'));
  typed.replace(pos, 15, "duration = \"ten\"");
  std::ofstream(dir / "typed.toml") << typed;
  expect_bad_input(dir, "run typed.toml",
                   {"typed.toml:" + std::to_string(dline) + ":", "run.duration"});

  // A scenario that does not exist.
  const result r = cosim(dir, "run nope.toml --out out");
  EXPECT_EQ(r.code, 2);
  EXPECT_FALSE(fs::exists(dir / "out/results.csv"));
}

TEST(Cli, GoodRunWritesResultsAndSummary) {
  temp_dir dir;
  const result r = cosim(dir, "run " + scenarios + "crane_m1_fs.toml --out out");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const csv c = read_csv(dir / "out/results.csv");
  const std::vector<std::string> first{"t", "kappa", "s", "sd", "p1", "p2", "fh"};
  ASSERT_GE(c.header.size(), first.size());
  EXPECT_EQ(std::vector<std::string>(c.header.begin(), c.header.begin() + 7), first);
  for (const char* col : {"dP", "dE", "sum_abs_dE"})
    EXPECT_NE(std::find(c.header.begin(), c.header.end(), col), c.header.end()) << col;
  // 10 s at H = 1 ms: 10000 macro steps + the t = 0 row.
  ASSERT_EQ(c.rows.size(), 10001u);
  EXPECT_EQ(c.rows.front()[0], 0.0);
  EXPECT_NEAR(c.rows.back()[0], 10.0, 1e-12);
  for (std::size_t i = 1; i < c.rows.size(); ++i)
    ASSERT_NEAR(c.rows[i][0] - c.rows[i - 1][0], 1e-3, 1e-9);
  // The start state is the equilibrium of 003 Sect. 1.3 (Eq. (18) to the printed digits).
  EXPECT_NEAR(c.rows[0][c.col("s")], 0.5, 1e-9);
  EXPECT_EQ(std::round(c.rows[0][c.col("p1")] / 1e2) / 1e4, 3.1708);
  EXPECT_EQ(std::round(c.rows[0][c.col("p2")] / 1e2) / 1e4, 4.5292);
  EXPECT_EQ(std::round(c.rows[0][c.col("kappa")] * 1e4) / 1e4, 0.4543);
  EXPECT_EQ(std::round(c.rows[0][c.col("fh")]), 8829.0);
  // M1 opens the valve by -0.01 after t_a = 2 s (003 Eq. (19)).
  EXPECT_NEAR(c.rows[3000][c.col("kappa")] - c.rows[0][c.col("kappa")], -0.01, 1e-12);

  const std::string json = slurp(dir / "out/summary.json");
  EXPECT_EQ(json_value(json, "status"), "completed") << json;
  EXPECT_EQ(json_value(json, "stop_reason"), "end_time");
  EXPECT_NEAR(std::stod(json_value(json, "sim_time_s")), 10.0, 1e-9);
  EXPECT_GT(std::stod(json_value(json, "wall_time_s")), 0.0);
  EXPECT_EQ(json_value(json, "macro_steps"), "10000");
  EXPECT_GT(std::stod(json_value(json, "energy_residual_J")), 0.0);
  EXPECT_GT(std::stod(json_value(json, "max_residual_power_W")), 0.0);
  EXPECT_NE(json.find("\"config\""), std::string::npos);
  EXPECT_EQ(json_value(json, "macro_step"), "0.001");  // from the resolved config
  // The last row's running sum |dE| is the summary's energy residual.
  EXPECT_NEAR(c.rows.back()[c.col("sum_abs_dE")], std::stod(json_value(json, "energy_residual_J")),
              1e-9 * c.rows.back()[c.col("sum_abs_dE")]);
}

TEST(Cli, OutputIntervalThinsRows) {
  temp_dir dir;
  const result r =
      cosim(dir, "run " + scenarios + "crane_m1_fs.toml --set run.output_interval=0.01 --out out");
  ASSERT_EQ(r.code, 0) << r.err;
  const csv c = read_csv(dir / "out/results.csv");
  ASSERT_EQ(c.rows.size(), 1001u);  // 10 s / 10 ms + 1
  for (std::size_t i = 1; i < c.rows.size(); ++i)
    ASSERT_NEAR(c.rows[i][0] - c.rows[i - 1][0], 0.01, 1e-9);
}

TEST(Cli, UnstableRunExitsOneKeepingRowsBeforeTheStop) {
  // f-s M1 at H = 40 ms is far beyond the ~15 ms limit of 003 Sect. 5.1.
  temp_dir dir;
  const result r =
      cosim(dir, "run " + scenarios + "crane_m1_fs.toml --set run.macro_step=0.04 --out out");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const std::string json = slurp(dir / "out/summary.json");
  EXPECT_EQ(json_value(json, "status"), "diverged") << json;
  EXPECT_EQ(json_value(json, "stop_reason"), "non_finite");
  const double stop = std::stod(json_value(json, "stop_time_s"));
  EXPECT_GT(stop, 0.0);
  EXPECT_LT(stop, 10.0);
  const csv c = read_csv(dir / "out/results.csv");
  ASSERT_GE(c.rows.size(), 2u);
  for (std::size_t i = 1; i < c.rows.size(); ++i) {
    EXPECT_GT(c.rows[i][0], c.rows[i - 1][0]) << "row " << i;
    EXPECT_NEAR(c.rows[i][0] - c.rows[i - 1][0], 0.04, 1e-9) << "row " << i;  // none missing
  }
  for (const auto& row : c.rows)
    for (double v : row) EXPECT_TRUE(std::isfinite(v));
  EXPECT_LT(c.rows.back()[0], 10.0);
  EXPECT_LT(c.rows.back()[0], stop);
  EXPECT_NEAR(c.rows.back()[0], stop - 0.04, 1e-9);  // every step before the stop is kept
}

TEST(Cli, RunProgressFollowsSimulatedTimeToTheStop) {
  temp_dir dir;
  // stderr is a file here: no progress line unless forced.
  const result quiet = cosim(dir, "run " + scenarios + "crane_m1_fs.toml --out q");
  ASSERT_EQ(quiet.code, 0) << quiet.err;
  EXPECT_EQ(quiet.err.find("ms simulated"), std::string::npos) << quiet.err;

  const result done = cosim(dir, "run " + scenarios + "crane_m1_fs.toml --progress --out d");
  ASSERT_EQ(done.code, 0) << done.err;
  EXPECT_NE(done.err.find("\rcosim run crane_m1_fs: 0/10000 ms simulated, "), std::string::npos)
      << done.err;
  EXPECT_NE(done.err.find("\rcosim run crane_m1_fs: 10000/10000 ms simulated, "), std::string::npos)
      << done.err;
  EXPECT_NE(done.err.find(" elapsed, completed\n"), std::string::npos) << done.err;

  // A diverging run: the line ends at the last row kept (one step before the stop) and
  // names the status and reason of summary.json.
  const result bad = cosim(
      dir, "run " + scenarios + "crane_m1_fs.toml --set run.macro_step=0.04 --progress --out b");
  ASSERT_EQ(bad.code, 1) << bad.err;
  const csv c = read_csv(dir / "b/results.csv");
  ASSERT_FALSE(c.rows.empty());
  const long last_ms = std::lround(c.rows.back()[0] * 1e3);
  ASSERT_LT(last_ms, 10000);
  const std::string line =
      "\rcosim run crane_m1_fs: " + std::to_string(last_ms) + "/10000 ms simulated, ";
  const std::size_t at = bad.err.rfind(line);
  ASSERT_NE(at, std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find(" elapsed, diverged (non_finite)\n", at), std::string::npos) << bad.err;
  EXPECT_EQ(cosim(dir, "run " + scenarios + "crane_m1_fs.toml --progress --no-progress").code, 2);
}

TEST(Cli, RunProgressLineMakesWayForLogLines) {
  // Two iterations a step against a tolerance no step meets: every one of the 500 steps is
  // reported unconverged in one warning at the end of the run.
  temp_dir dir;
  const result r = cosim(dir, "run " + scenarios +
                                  "crane_m1_fs.toml --set run.duration=0.5 --set run.iterations=2 "
                                  "--set run.iteration_tolerance.rel=1e-15 --set "
                                  "run.iteration_tolerance.abs=0 --progress --out w");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::size_t w = r.err.find("warning: 500 of 500 macro steps did not converge");
  ASSERT_NE(w, std::string::npos) << r.err;
  // The warning starts its own line: the progress line was blanked and the cursor put back
  // to the line start, only the log's time stamp comes before the level.
  const std::size_t start = r.err.find_last_of("\r\n", w);
  ASSERT_NE(start, std::string::npos);
  EXPECT_EQ(r.err[start], '\r');
  EXPECT_TRUE(std::regex_match(r.err.substr(start + 1, w - start - 1),
                               std::regex(R"(\[\d\d:\d\d:\d\d\.\d\d\d\] )")))
      << r.err.substr(start + 1, w - start - 1);
  // ... and the progress line comes back below it, up to date.
  EXPECT_NE(r.err.find("\rcosim run crane_m1_fs: 500/500 ms simulated, ", w), std::string::npos)
      << r.err;
}

TEST(Cli, RunProgressOnATerminalByDefault) {
  temp_dir dir;
  const auto r = cosim::test_process::run_on_pty(
      {exe, "run", scenarios + "crane_m1_fs.toml", "--set", "run.duration=2", "--out", dir / "t"},
      dir / "stdout", std::chrono::seconds(60));
  EXPECT_EQ(r.code, 0) << r.terminal;
  EXPECT_NE(r.terminal.find("\rcosim run crane_m1_fs: 2000/2000 ms simulated, "), std::string::npos)
      << r.terminal;
  // The line is stderr's: stdout (the summary lines) has none of it.
  EXPECT_EQ(slurp(dir / "stdout").find("ms simulated"), std::string::npos);
}

/// Parses compare's table (the lines after its header): column -> (max_abs, rms).
std::vector<std::pair<std::string, std::pair<double, double>>> parse_compare(
    const std::string& out) {
  std::vector<std::pair<std::string, std::pair<double, double>>> rows;
  bool in_table = false;
  for (const auto& l : lines_of(out)) {
    std::istringstream in(l);
    std::string name, max_s, rms_s;
    in >> name >> max_s >> rms_s;
    if (name == "column") in_table = true;
    if (!in_table || name == "column" || rms_s.empty()) continue;
    rows.push_back(
        {name, {std::strtod(max_s.c_str(), nullptr), std::strtod(rms_s.c_str(), nullptr)}});
  }
  return rows;
}

TEST(Cli, CompareGivesZerosForItselfAndDifferencesOtherwise) {
  temp_dir dir;
  ASSERT_EQ(cosim(dir, "run " + scenarios + "crane_m1_fs.toml --out a").code, 0);
  ASSERT_EQ(
      cosim(dir, "run " + scenarios + "crane_m1_fs.toml --set run.macro_step=0.002 --out b").code,
      0);

  const result same = cosim(dir, "compare a/results.csv a/results.csv");
  ASSERT_EQ(same.code, 0) << same.err;
  const auto zeros = parse_compare(same.out);
  ASSERT_GE(zeros.size(), 6u) << same.out;
  bool saw_s = false;
  for (const auto& [name, v] : zeros) {
    EXPECT_EQ(v.first, 0.0) << name << " max in:\n" << same.out;
    EXPECT_EQ(v.second, 0.0) << name << " rms in:\n" << same.out;
    saw_s = saw_s || name == "s";
  }
  EXPECT_TRUE(saw_s);

  const result diff = cosim(dir, "compare b/results.csv a/results.csv --columns s,p1");
  ASSERT_EQ(diff.code, 0) << diff.err;
  const auto d = parse_compare(diff.out);
  ASSERT_EQ(d.size(), 2u) << diff.out;
  EXPECT_EQ(d[0].first, "s");
  EXPECT_GT(d[0].second.first, 0.0);
  EXPECT_GT(d[0].second.second, 0.0);
  EXPECT_LE(d[0].second.second, d[0].second.first);  // rms <= max
  EXPECT_EQ(d[1].first, "p1");
  EXPECT_GT(d[1].second.first, 0.0);

  // A column that does not exist is an input error.
  EXPECT_EQ(cosim(dir, "compare a/results.csv b/results.csv --columns nope").code, 2);
}

// docs/tools.md shows what `cosim run` prints for crane_m1_fs: the sample is the program's
// output (all but the wall time), so the page cannot drift from it again.
TEST(Cli, TheDocumentedRunOutputIsThePrograms) {
  temp_dir dir;
  const result r = cosim(dir, "run " + std::string(COSIM_SOURCE_DIR) +
                                  "/rt_config/scenarios/crane_m1_fs.toml --out out -q");
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream doc(std::string(COSIM_SOURCE_DIR) + "/docs/tools.md");
  const std::string page((std::istreambuf_iterator<char>(doc)), std::istreambuf_iterator<char>());
  const std::regex wall(R"(in [0-9.e+-]+ s wall)");
  const auto first_two = [&](const std::string& text, std::size_t from) {
    const std::size_t a = text.find("rt_config/scenarios/crane_m1_fs.toml: completed", from);
    if (a == std::string::npos) return std::string();
    const std::size_t b = text.find('\n', text.find('\n', a) + 1);
    return std::regex_replace(text.substr(a, b - a), wall, "in W s wall");
  };
  const std::string printed = first_two(r.out, 0);
  ASSERT_FALSE(printed.empty()) << r.out;
  EXPECT_EQ(first_two(page, 0), printed);
}

}  // namespace
