// cosim report (docs/report.md): DIR/report.html is one self-contained page that headless
// Chromium renders from disk without network, with every plot; large runs are decimated to
// min/max envelopes that keep every spike; bad input leaves no (half-written) report.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>

#include "cosim/runtime/error.hpp"
#include "process_support.hpp"
#include "report.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using cosim::test::temp_dir;
using cosim::test_process::slurp;
using cosim::test_process::spawn;
using cosim::test_process::wait_exit;
using namespace std::chrono_literals;

const std::string exe = COSIM_EXE;
const std::string oscillator =
    std::string(COSIM_SOURCE_DIR) + "/rt_config/scenarios/oscillator004.toml";

struct finished {
  int code = -1;
  std::string out, err;
};

finished run_cosim(const temp_dir& tmp, std::vector<std::string> args) {
  args.insert(args.begin(), exe);
  const pid_t pid = spawn(args, tmp / "stdout.txt", tmp / "stderr.txt");
  finished f;
  f.code = wait_exit(pid, 120s);
  f.out = slurp(tmp / "stdout.txt");
  f.err = slurp(tmp / "stderr.txt");
  return f;
}

std::vector<std::string> csv_header(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> cols;
  std::stringstream ss(line);
  for (std::string c; std::getline(ss, c, ',');) cols.push_back(c);
  return cols;
}

// The subsystem names in timing.csv's third column.
std::set<std::string> timing_threads(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::set<std::string> names;
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string f;
    for (int i = 0; i < 3; ++i) std::getline(ss, f, ',');
    names.insert(f);
  }
  return names;
}

std::string chromium() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (fs::exists(p)) return p;
  return "";
}

TEST(Report, ChromiumRendersEveryPlotOfARunWithoutNetworkOrConsoleErrors) {
  const std::string browser = chromium();
  if (browser.empty())
    GTEST_SKIP() << "chromium is not installed (tools/scripts/install_deps.sh installs it)";
  temp_dir tmp;
  const std::string run = tmp / "run";
  const std::string other = tmp / "other";
  ASSERT_EQ(
      run_cosim(tmp, {"run", oscillator, "--out", run, "--set", "run.mode=threaded", "--set",
                      "run.timing_csv=true", "--set", "safety.energy_residual_limit=1e6", "-q"})
          .code,
      0);
  ASSERT_EQ(
      run_cosim(tmp, {"run", oscillator, "--out", other, "--set", "run.macro_step=0.1", "-q"}).code,
      0);
  const finished rep = run_cosim(tmp, {"report", run, "--compare", other});
  ASSERT_EQ(rep.code, 0) << rep.err;
  const std::string html_path = run + "/report.html";
  EXPECT_EQ(rep.out, html_path + "\n");
  const std::string html = slurp(html_path);
  // Self-contained: nothing to fetch (the only URL is the SVG namespace name).
  EXPECT_EQ(
      std::regex_replace(html, std::regex("xmlns=\"http://www.w3.org/2000/svg\""), "").find("http"),
      std::string::npos);
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);

  // The plots the page must have, from the inputs read here: every column of results.csv
  // with its difference to the second run (same columns), |dP| and sum_abs_dE, and the two
  // histograms of each thread in timing.csv.
  std::vector<std::string> want;
  for (const auto& c : csv_header(run + "/results.csv")) {
    if (c == "t") continue;
    want.push_back("col-" + c);
    want.push_back("diff-" + c);
  }
  want.push_back("energy-sum_abs_dE");
  want.push_back("power-dP");
  const auto threads = timing_threads(run + "/timing.csv");
  EXPECT_EQ(threads, (std::set<std::string>{"mass1", "mass2"}));
  for (const auto& t : threads) {
    want.push_back("wake-" + t);
    want.push_back("exec-" + t);
  }

  // Networking off: a namespace without network where possible, else an unreachable proxy.
  const bool netns = std::system("unshare -n true >/dev/null 2>&1") == 0;
  const std::string prefix = netns ? "unshare -n " : "";
  const std::string flags =
      " --headless --disable-gpu --no-sandbox --proxy-server=socks5://127.0.0.1:9"
      " --enable-logging=stderr --v=0 --window-size=1000,2600 ";
  const std::string dom = tmp / "dom.html";
  const std::string log = tmp / "chromium.log";
  ASSERT_EQ(std::system((prefix + browser + flags + "--dump-dom file://" + html_path + " >" + dom +
                         " 2>" + log)
                            .c_str()),
            0)
      << slurp(log);
  const std::string shot = tmp / "report.png";
  ASSERT_EQ(std::system((prefix + browser + flags + "--screenshot=" + shot + " file://" +
                         html_path + " >/dev/null 2>>" + log)
                            .c_str()),
            0)
      << slurp(log);
  const std::string rendered = slurp(dom);
  std::size_t plots = 0;
  for (std::size_t p = rendered.find("<svg class=\"plot\""); p != std::string::npos;
       p = rendered.find("<svg class=\"plot\"", p + 1))
    ++plots;
  for (const auto& id : want)
    EXPECT_NE(rendered.find("<svg class=\"plot\" id=\"" + id + "\""), std::string::npos) << id;
  EXPECT_EQ(plots, want.size());
  // Stop time on every time plot; the energy limit and the deadline drawn.
  EXPECT_NE(rendered.find("class=\"limit\""), std::string::npos);
  EXPECT_NE(rendered.find("class=\"deadline\""), std::string::npos);
  std::size_t stops = 0;
  for (std::size_t p = rendered.find("class=\"stop\""); p != std::string::npos;
       p = rendered.find("class=\"stop\"", p + 1))
    ++stops;
  EXPECT_EQ(stops, want.size() - 2 * threads.size());
  // No console output at all: the page has no script, and a failed load would log here.
  const std::string chrome_log = slurp(log);
  EXPECT_EQ(chrome_log.find("Uncaught"), std::string::npos) << chrome_log;
  EXPECT_EQ(chrome_log.find(":CONSOLE("), std::string::npos) << chrome_log;
  // A PNG of the page (the test's output; README's screenshot is made the same way).
  const std::string png = slurp(shot);
  ASSERT_GT(png.size(), 1000U);
  EXPECT_EQ(png.substr(1, 3), "PNG");
  if (const char* keep = std::getenv("COSIM_REPORT_SCREENSHOT"))
    fs::copy_file(shot, keep, fs::copy_options::overwrite_existing);
}

void write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

const char* const minimal_summary =
    R"({"status":"completed","stop_reason":"end_time","stop_time_s":1,"threads":[],)"
    R"("config":{"run":{"macro_step":0.001},"safety":{"energy_residual_limit":5,)"
    R"("residual_power_limit":null}}})";

TEST(Report, DecimationKeepsAOneSampleSpikeAndBoundsThePoints) {
  temp_dir tmp;
  // 100001 samples of 0 with one sample of 1000 at t = 0.5: the y range is [-50, 1050]
  // (5 % padding), so the spike's pixel is 24 + 220 - 1050 / 1100 * 220 = 34.0.
  std::ofstream csv(tmp / "results.csv");
  csv << "t,x\n";
  for (int i = 0; i <= 100000; ++i) csv << i * 1e-5 << ',' << (i == 50000 ? 1000 : 0) << '\n';
  csv.close();
  write(tmp / "summary.json", minimal_summary);
  const std::string html = cosim::cli::make_report({tmp.path(), "", ""});
  const std::size_t at = html.find("id=\"col-x\"");
  ASSERT_NE(at, std::string::npos);
  const std::size_t d0 = html.find(" d=\"", at) + 4;
  const std::string d = html.substr(d0, html.find('"', d0) - d0);
  EXPECT_NE(d.find(",34.0 "), std::string::npos) << "spike lost";
  const auto points = std::count(d.begin(), d.end(), 'L') + std::count(d.begin(), d.end(), 'M');
  EXPECT_LE(points, 2 * 880);  // two per pixel column of the 880 px plot
  EXPECT_GE(points, 880);
  EXPECT_NE(html.find("No timing.csv"), std::string::npos);
  EXPECT_NE(html.find("no sum_abs_dE or dP column"), std::string::npos);
}

TEST(Report, EnergyLimitFromTheSummaryIsDrawn) {
  temp_dir tmp;
  write(tmp / "results.csv", "t,dP,sum_abs_dE\n0,0,0\n1,-3,2\n2,1,4\n");
  write(tmp / "summary.json", minimal_summary);
  const std::string html = cosim::cli::make_report({tmp.path(), "", ""});
  EXPECT_NE(html.find("safety.energy_residual_limit 5 J"), std::string::npos);
  EXPECT_EQ(html.find("safety.residual_power_limit"), std::string::npos);  // null: none
  EXPECT_NE(html.find("id=\"power-dP\""), std::string::npos);
}

// summary.json counted 3 rows, results.csv holds 2 (a copy cut short): the report says so
// instead of plotting the shorter run as if it were the whole one; equal counts say nothing.
TEST(Report, FewerRowsThanTheSummaryCountedAreFlagged) {
  temp_dir tmp;
  const std::string summary = std::string(minimal_summary).insert(1, "\"rows\":3,");
  write(tmp / "summary.json", summary);
  write(tmp / "results.csv", "t,x\n0,1\n1,2\n");
  std::string html = cosim::cli::make_report({tmp.path(), "", ""});
  const std::size_t at = html.find("id=\"rows-mismatch\"");
  ASSERT_NE(at, std::string::npos);
  EXPECT_NE(html.find("holds 2 rows", at), std::string::npos);
  EXPECT_NE(html.find("counts 3", at), std::string::npos);
  write(tmp / "results.csv", "t,x\n0,1\n1,2\n2,3\n");
  html = cosim::cli::make_report({tmp.path(), "", ""});
  EXPECT_EQ(html.find("rows-mismatch"), std::string::npos);
}

TEST(Report, BadInputNamesTheFileExitsTwoAndKeepsTheEarlierReport) {
  temp_dir tmp;
  const std::string run = tmp / "run";
  ASSERT_EQ(run_cosim(tmp, {"run", oscillator, "--out", run, "--set", "run.mode=threaded", "--set",
                            "run.timing_csv=true", "-q"})
                .code,
            0);
  ASSERT_EQ(run_cosim(tmp, {"report", run}).code, 0);
  const std::string before = slurp(run + "/report.html");
  ASSERT_GT(before.size(), 1000U);

  const auto expect_refused = [&](const std::string& file, const std::string& bad) {
    const std::string keep = slurp(run + "/" + file);
    write(run + "/" + file, bad);
    const finished f = run_cosim(tmp, {"report", run});
    EXPECT_EQ(f.code, 2) << file;
    EXPECT_NE(f.err.find(run + "/" + file), std::string::npos) << f.err;
    EXPECT_EQ(slurp(run + "/report.html"), before) << file;
    EXPECT_FALSE(fs::exists(run + "/report.html.tmp"));
    write(run + "/" + file, keep);
  };
  expect_refused("summary.json", "{\"status\": ");
  expect_refused("results.csv", "t,x1\n0,1\nzero,2\n");
  expect_refused("timing.csv", "step,t,subsystem,wakeup_latency_us,exec_us\n0,0.3,mass1,x,1\n");
}

// A run killed before its summary: the report shows the rows there are and says the run did
// not finish, instead of refusing.
TEST(Report, ARunWithoutSummaryIsReportedAsNotFinished) {
  temp_dir tmp;
  write(tmp / "results.csv", "t,x\n0,1\n0.5,2\n1.25,3\n");
  const finished f = run_cosim(tmp, {"report", tmp.path()});
  ASSERT_EQ(f.code, 0) << f.err;
  EXPECT_NE(f.err.find("summary.json is missing: the run did not finish"), std::string::npos)
      << f.err;
  const std::string html = slurp(tmp / "report.html");
  EXPECT_NE(html.find("did not finish"), std::string::npos);
  EXPECT_NE(html.find("the 3 rows results.csv holds, up to t = 1.25 s"), std::string::npos);
  EXPECT_NE(html.find("id=\"col-x\""), std::string::npos);
}

// Recorded columns carry their units: the oscillator of 004 records
// positions x1, x2 [m] and velocities v1, v2 [m/s]; summary.json has them, the plots say them.
TEST(Report, ColumnTitlesCarryTheirUnits) {
  temp_dir tmp;
  const std::string run = tmp / "run";
  ASSERT_EQ(run_cosim(tmp, {"run", oscillator, "--out", run, "-q"}).code, 0);
  const finished f = run_cosim(tmp, {"report", run});
  ASSERT_EQ(f.code, 0) << f.err;
  const std::string html = slurp(run + "/report.html");
  for (const char* title : {"x1 [m]", "x2 [m]", "v1 [m/s]", "v2 [m/s]", "dE [J]"})
    EXPECT_NE(html.find(std::string("class=\"title\">") + title + "<"), std::string::npos) << title;
}

// The wake-up histogram's counts are on a log axis: reading the axis at a bar's top (between
// the two labelled lines around it, on the same log10(1 + count) scale) gives the bar's count.
// 1 step at 27 ms among 999 at about 10 us must read as 1, not as thousands.
TEST(Report, TheHistogramAxisReadsEachBarsCount) {
  temp_dir tmp;
  write(tmp / "results.csv", "t,x\n0,1\n1,2\n");
  write(tmp / "summary.json", minimal_summary);
  std::ofstream timing(tmp / "timing.csv");
  timing << "step,t,subsystem,wakeup_latency_us,exec_us,overrun,skipped_periods\n";
  for (int i = 0; i < 1000; ++i)
    timing << i << ',' << i * 0.001 << ",m," << (i == 500 ? 27000.0 : 10.0 + (i % 7)) << ",5,0,0\n";
  timing.close();
  const std::string html = cosim::cli::make_report({tmp.path(), "", ""});
  const std::size_t at = html.find("id=\"wake-");
  ASSERT_NE(at, std::string::npos);
  const std::string svg = html.substr(at, html.find("</svg>", at) - at);
  // Labelled lines: (pixel row, value).
  std::vector<std::pair<double, double>> ticks;
  const std::regex tick_re(
      R"re(<line x1="\d+" x2="\d+" y1="([0-9.]+)" y2="[0-9.]+" stroke="#eee"/><text class="ytick"[^>]*>([0-9.e+]+)</text>)re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tick_re);
       it != std::sregex_iterator(); ++it)
    ticks.emplace_back(std::stod((*it)[1]), std::stod((*it)[2]));
  ASSERT_GE(ticks.size(), 3u) << svg;
  const std::regex bar_re(R"re(class="bar" data-count="(\d+)" x="[0-9.]+" y="([0-9.]+)")re");
  int bars = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), bar_re); it != std::sregex_iterator();
       ++it) {
    const double count = std::stod((*it)[1]);
    const double y = std::stod((*it)[2]);
    // The labelled lines just below and above the bar's top (pixel rows grow downwards).
    std::pair<double, double> below{1e9, 0}, above{-1e9, 0};
    for (const auto& tk : ticks) {
      if (tk.first >= y && tk.first < below.first) below = tk;
      if (tk.first <= y && tk.first > above.first) above = tk;
    }
    ASSERT_LT(below.first, 1e9) << "no labelled line below the bar of " << count;
    ASSERT_GT(above.first, -1e9) << "no labelled line above the bar of " << count;
    const double lb = std::log10(1 + below.second), la = std::log10(1 + above.second);
    const double f =
        below.first == above.first ? 0.0 : (below.first - y) / (below.first - above.first);
    const double read = std::pow(10.0, lb + f * (la - lb)) - 1;
    EXPECT_NEAR(read, count, 0.02 * count + 0.05) << "bar of " << count << " at y " << y;
    ++bars;
  }
  EXPECT_GE(bars, 2);  // the slow step's bar and the others
  EXPECT_NE(svg.find("data-count=\"1\""), std::string::npos);
}

}  // namespace
