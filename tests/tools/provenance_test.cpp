// Version and provenance as a bench user meets them: `cosim --version` and
// `cosim-device --version`, summary.json's software / host / started_at, the config keys in
// force at the run (threads, watchdog, run.*), and `cosim run DIR/summary.json` running the
// same system again to a byte-identical results.csv.
#include <gtest/gtest.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <regex>
#include <sstream>
#include <string>

#include "json_value.hpp"
#include "process_support.hpp"
#include "temp_dir.hpp"

namespace {

using cosim::cli::json_value;
using cosim::test::temp_dir;
using cosim::test_process::slurp;

const std::string exe = COSIM_EXE;
const std::string device_exe = std::string(COSIM_BINARY_DIR) + "/tools/device/cosim-device";
const std::string source_dir = COSIM_SOURCE_DIR;

struct result {
  int code = -1;
  std::string out, err;
};

result run(const temp_dir& dir, const std::string& program, const std::string& args) {
  const std::string cmd = "cd '" + dir.path() + "' && '" + program + "' " + args + " >'" +
                          (dir / ".stdout") + "' 2>'" + (dir / ".stderr") + "'";
  const int status = std::system(cmd.c_str());
  result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(dir / ".stdout");
  r.err = slurp(dir / ".stderr");
  return r;
}

/// Output of a shell command (stdout, trailing newline removed); "" when it fails.
std::string shell(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
  if (pclose(p) != 0) return "";
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

/// The version of CMakeLists.txt's project() line, read independently of the build.
std::string project_version() {
  const std::string cm = slurp(source_dir + "/CMakeLists.txt");
  std::smatch m;
  EXPECT_TRUE(std::regex_search(cm, m, std::regex(R"(project\(cosim VERSION ([0-9.]+))")));
  return m.size() > 1 ? m[1].str() : "";
}

/// The source tree's commit as git sees it now ("" outside a git checkout).
std::string git_commit() {
  return shell("git -C '" + source_dir + "' rev-parse --short=12 HEAD 2>/dev/null");
}

const json_value& at(const json_value& v, const std::string& key) {
  const json_value* f = v.find(key);
  EXPECT_NE(f, nullptr) << "no key " << key;
  static const json_value none;
  return f != nullptr ? *f : none;
}

/// The commit a binary reports: git's, possibly with "-dirty" (tracked files changed), or
/// "unknown" when the source is no git checkout.
void expect_commit(const std::string& reported) {
  const std::string git = git_commit();
  if (git.empty()) {
    EXPECT_EQ(reported, "unknown");
  } else {
    EXPECT_TRUE(reported == git || reported == git + "-dirty") << reported << " vs git " << git;
  }
}

TEST(Version, CosimAndDevicePrintVersionAndCommit) {
  temp_dir dir;
  for (const auto& [program, name] :
       {std::pair{exe, std::string("cosim")}, std::pair{device_exe, std::string("cosim-device")}}) {
    const result r = run(dir, program, "--version");
    EXPECT_EQ(r.code, 0) << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_match(
        r.out, m, std::regex(name + R"( ([0-9.]+) \(commit ([^,]+), ([^,]+), (.+)\)\n)")))
        << r.out;
    EXPECT_EQ(m[1].str(), project_version());
    expect_commit(m[2].str());
    EXPECT_FALSE(m[3].str().empty());
    EXPECT_FALSE(m[4].str().empty());
  }
}

std::time_t parse_utc(const std::string& iso) {
  std::tm t{};
  std::istringstream in(iso);
  in >> std::get_time(&t, "%Y-%m-%dT%H:%M:%S");
  EXPECT_FALSE(in.fail()) << iso;
  return timegm(&t);
}

TEST(Provenance, SummaryRecordsSoftwareHostAndStart) {
  temp_dir dir;
  const std::time_t before = std::time(nullptr);
  const result r = run(dir, exe,
                       "run '" + source_dir +
                           "/rt_config/scenarios/oscillator2_fd_case1.toml' --set run.duration=0.1 "
                           "--out out --quiet");
  const std::time_t after = std::time(nullptr);
  ASSERT_EQ(r.code, 0) << r.err;
  const json_value s = cosim::cli::parse_json(slurp(dir / "out/summary.json"));

  const json_value& sw = at(s, "software");
  EXPECT_EQ(at(sw, "version").str, project_version());
  expect_commit(at(sw, "commit").str);
  EXPECT_FALSE(at(sw, "build_type").str.empty());
  EXPECT_FALSE(at(sw, "compiler").str.empty());

  // The host as uname(2) reports it, a different interface from the /proc files read.
  utsname u{};
  ASSERT_EQ(uname(&u), 0);
  const json_value& host = at(s, "host");
  EXPECT_EQ(at(host, "hostname").str, u.nodename);
  EXPECT_EQ(at(host, "kernel").str, u.release);
  EXPECT_EQ(at(host, "kernel_version").str, u.version);
  EXPECT_EQ(at(host, "preempt_rt").k, json_value::kind::boolean);
  EXPECT_EQ(at(host, "preempt_rt").b,
            std::string(u.version).find("PREEMPT_RT") != std::string::npos ||
                shell("cat /sys/kernel/realtime 2>/dev/null") == "1");
  EXPECT_EQ(at(host, "cpu_model").str,
            shell("grep -m1 '^model name' /proc/cpuinfo | sed 's/^[^:]*: *//'"));
  EXPECT_EQ(at(host, "isolated_cpus").str, shell("cat /sys/devices/system/cpu/isolated"));

  const std::string started = at(s, "started_at").str;
  EXPECT_TRUE(std::regex_match(started, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")))
      << started;
  const std::time_t t = parse_utc(started);
  EXPECT_GE(t, before);
  EXPECT_LE(t, after);

  // The run's report shows them in one line.
  const result rep = run(dir, exe, "report out");
  ASSERT_EQ(rep.code, 0) << rep.err;
  const std::string html = slurp(dir / "out/report.html");
  EXPECT_NE(html.find("<p id=\"provenance\">cosim " + project_version() + " (commit " +
                      at(sw, "commit").str + ", "),
            std::string::npos);
  EXPECT_NE(html.find(std::string(") on ") + u.nodename + " (kernel " + u.release),
            std::string::npos);
  EXPECT_NE(html.find("started " + started + "</p>"), std::string::npos);
}

TEST(Provenance, ConfigKeepsRuntimeKeysInForce) {
  temp_dir dir;
  const result r =
      run(dir, exe,
          "run '" + source_dir +
              "/rt_config/scenarios/oscillator2_fd_case1.toml' --set run.duration=0.05 "
              "--set run.mode=threaded --set run.ring_capacity=32 --set run.lock_memory=false "
              "--set threads.mass1.stack_size=131072 --set threads.mass2.budget=0.0002 "
              "--set watchdog.max_overruns=7 --set watchdog.leak_steps=50 --set watchdog.grace=0.5 "
              "--out out --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  const json_value s = cosim::cli::parse_json(slurp(dir / "out/summary.json"));
  const json_value& c = at(s, "config");
  const json_value& runk = at(c, "run");
  EXPECT_EQ(at(runk, "mode").str, "threaded");
  EXPECT_EQ(at(runk, "ring_capacity").num, 32);
  EXPECT_FALSE(at(runk, "lock_memory").b);
  EXPECT_FALSE(at(runk, "require_realtime").b);
  EXPECT_FALSE(at(runk, "timing_csv").b);
  EXPECT_EQ(at(at(at(c, "threads"), "mass1"), "stack_size").num, 131072);
  EXPECT_EQ(at(at(at(c, "threads"), "mass2"), "budget").num, 0.0002);
  const json_value& wd = at(c, "watchdog");
  EXPECT_EQ(at(wd, "max_overruns").num, 7);
  EXPECT_EQ(at(wd, "leak_steps").num, 50);
  EXPECT_EQ(at(wd, "grace").num, 0.5);
  EXPECT_EQ(at(c, "drivers").k, json_value::kind::object);
}

// Everything after the first line, which names the file the system was written back from.
std::string body(const std::string& system_file) {
  const auto nl = system_file.find('\n');
  return nl == std::string::npos ? "" : system_file.substr(nl + 1);
}

TEST(Provenance, RunFromSummaryReproducesTheRunByteForByte) {
  temp_dir dir;
  // A preset with keys from every section changed on the command line, threaded.
  const std::string sets =
      "--set run.duration=0.5 --set run.macro_step=0.002 --set coupling.extrapolation=1 "
      "--set run.mode=threaded --set threads.multibody.stack_size=131072 "
      "--set watchdog.max_overruns=9 --set safety.energy_residual_limit=1000 "
      "--set run.output_interval=0.01";
  const std::string scenario = "'" + source_dir + "/rt_config/scenarios/crane_m1_fs.toml'";
  const result a = run(dir, exe, "run " + scenario + " " + sets + " --out a --quiet");
  ASSERT_EQ(a.code, 0) << a.err;
  const result printed = run(dir, exe, "run " + scenario + " " + sets + " --print-system");
  ASSERT_EQ(printed.code, 0) << printed.err;

  // --print-system on the summary gives the system that ran.
  const result again = run(dir, exe, "run a/summary.json --print-system");
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(body(again.out), body(printed.out));
  EXPECT_NE(again.out.find("max_overruns = 9"), std::string::npos);
  EXPECT_NE(again.out.find("stack_size = 131072"), std::string::npos);

  // Running the summary, and running the printed file, give the same bytes.
  const result b = run(dir, exe, "run a/summary.json --out b --quiet");
  ASSERT_EQ(b.code, 0) << b.err;
  const std::string rows = slurp(dir / "a/results.csv");
  ASSERT_GT(rows.size(), 1000U);
  EXPECT_EQ(slurp(dir / "b/results.csv"), rows);
  const std::string file = dir.file("again.toml", again.out);
  const result c = run(dir, exe, "run again.toml --out c --quiet");
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_EQ(slurp(dir / "c/results.csv"), rows);

  // And the second run keeps the same system.
  const json_value sa = cosim::cli::parse_json(slurp(dir / "a/summary.json"));
  const json_value sb = cosim::cli::parse_json(slurp(dir / "b/summary.json"));
  EXPECT_EQ(body(at(at(sb, "config"), "system_toml").str),
            body(at(at(sa, "config"), "system_toml").str));
}

TEST(Provenance, SummaryWithoutSystemIsRefusedNamingTheFile) {
  temp_dir dir;
  (void)dir.file("old.json", R"({"status":"completed","config":{"file":"x.toml"}})");
  const result r = run(dir, exe, "run old.json --print-system");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("old.json: no config.system_toml"), std::string::npos) << r.err;
  (void)dir.file("bad.json", R"({"config": [)");
  const result b = run(dir, exe, "run bad.json --out x");
  EXPECT_EQ(b.code, 2);
  EXPECT_NE(b.err.find("bad.json: not a summary.json"), std::string::npos) << b.err;
}

}  // namespace
