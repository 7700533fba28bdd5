// Results that say "finished" are finished (docs/results.md): the data is synced before the
// summary and the summary's rename before the folder's entry (shown by a syscall trace);
// no file of the folder is written through a symbolic link; summary.json is JSON for any
// --out path; a start that fails (a remote worker that never appears, stopped by a signal)
// leaves the earlier run's files as they were; cosim sweep without a reference does not
// keep the runs' rows in memory.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "json_value.hpp"
#include "process_support.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
namespace proc = cosim::test_process;
using cosim::test::temp_dir;
using namespace std::chrono_literals;

const std::string exe = COSIM_EXE;
const std::string crane = std::string(COSIM_SOURCE_DIR) + "/rt_config/scenarios/crane_m1_fs.toml";

std::string find_program(const std::string& name) {
  for (const char* dir : {"/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin"})
    if (fs::exists(std::string(dir) + "/" + name)) return std::string(dir) + "/" + name;
  return {};
}

int run(const temp_dir& tmp, std::vector<std::string> args, const std::string& tag = "r") {
  return proc::wait_exit(proc::spawn(args, tmp / (tag + ".out"), tmp / (tag + ".err")), 120s);
}

// The fsyncs and renames of a traced run, in order, with the paths their descriptors were
// opened with ("fsync PATH", "rename FROM TO").
std::vector<std::string> sync_events(const std::string& trace) {
  std::istringstream in(trace);
  std::map<std::string, std::string> fd_path;  // descriptors are shared by the threads
  std::vector<std::string> events;
  const std::regex open_re(R"re(openat\(AT_FDCWD, "([^"]*)",.*\) = (\d+))re");
  const std::regex fsync_re(R"re((?:fsync|fdatasync)\((\d+)\) += 0)re");
  const std::regex rename_re(
      R"re(rename(?:at2?)?\((?:AT_FDCWD, )?"([^"]*)", (?:AT_FDCWD, )?"([^"]*)".*\) = 0)re");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, open_re))
      fd_path[m[2]] = m[1];
    else if (std::regex_search(line, m, fsync_re))
      events.push_back("fsync " + fd_path[m[1]]);
    else if (std::regex_search(line, m, rename_re))
      events.push_back("rename " + std::string(m[1]) + " " + std::string(m[2]));
  }
  return events;
}

std::ptrdiff_t index_of(const std::vector<std::string>& v, const std::string& s) {
  const auto it = std::find(v.begin(), v.end(), s);
  return it == v.end() ? -1 : it - v.begin();
}

TEST(DurableResults, DataIsSyncedBeforeTheSummaryAndTheFolderAfterItsRename) {
  const std::string strace = find_program("strace");
  ASSERT_FALSE(strace.empty()) << "strace is needed (tools/scripts/install_deps.sh installs it)";
  temp_dir tmp;
  const std::string out = tmp / "out";
  proc::add_sanitizer_option("detect_leaks=0");  // LeakSanitizer cannot run under ptrace
  const int code = run(tmp, {strace,
                             "-f",
                             "-o",
                             tmp / "trace.txt",
                             "-e",
                             "trace=fsync,fdatasync,rename,renameat,renameat2,openat",
                             exe,
                             "run",
                             crane,
                             "--set",
                             "run.mode=threaded",
                             "--set",
                             "run.lock_memory=false",
                             "--set",
                             "run.timing_csv=true",
                             "--set",
                             "run.trace=true",
                             "--set",
                             "run.duration=0.5",
                             "--out",
                             out});
  ASSERT_EQ(code, 0) << proc::slurp(tmp / "r.err");
  const std::vector<std::string> ev = sync_events(proc::slurp(tmp / "trace.txt"));
  std::string all;
  for (const auto& e : ev) all += e + "\n";
  const auto csv = index_of(ev, "fsync " + out + "/results.csv");
  const auto timing = index_of(ev, "fsync " + out + "/timing.csv");
  const auto trace = index_of(ev, "fsync " + out + "/trace.json");
  const auto tmp_sync = index_of(ev, "fsync " + out + "/summary.json.tmp");
  const auto rename = index_of(ev, "rename " + out + "/summary.json.tmp " + out + "/summary.json");
  const auto folder = index_of(ev, "fsync " + out);
  ASSERT_GE(csv, 0) << all;
  ASSERT_GE(timing, 0) << all;
  ASSERT_GE(trace, 0) << all;
  ASSERT_GE(tmp_sync, 0) << all;
  ASSERT_GE(rename, 0) << all;
  ASSERT_GE(folder, 0) << all;
  EXPECT_LT(csv, tmp_sync) << all;
  EXPECT_LT(timing, tmp_sync) << all;
  EXPECT_LT(trace, tmp_sync) << all;
  EXPECT_LT(tmp_sync, rename) << all;
  EXPECT_LT(rename, folder) << all;
}

// Each file the folder holds, as a link to a file outside it: refused (exit 2, the message
// names the link), the target unchanged, nothing of the earlier run touched.
TEST(DurableResults, ASymbolicLinkInTheFolderIsRefusedAndItsTargetUntouched) {
  for (const std::string name : {"results.csv", "summary.json", "summary.json.tmp", ".cosim.lock",
                                 "timing.csv", "trace.json", "report.html"}) {
    temp_dir tmp;
    const std::string out = tmp / "out";
    ASSERT_EQ(run(tmp, {exe, "run", crane, "--set", "run.duration=0.1", "--out", out}), 0);
    const std::string target = tmp.file("target.txt", "precious\n");
    fs::remove(out + "/" + name);
    fs::create_symlink(target, out + "/" + name);
    const std::string summary = proc::slurp(out + "/summary.json");
    const std::string rows = proc::slurp(out + "/results.csv");
    EXPECT_EQ(run(tmp, {exe, "run", crane, "--set", "run.mode=threaded", "--set",
                        "run.timing_csv=true", "--set", "run.trace=true", "--set",
                        "run.lock_memory=false", "--set", "run.duration=0.1", "--out", out}),
              2)
        << name;
    const std::string err = proc::slurp(tmp / "r.err");
    EXPECT_NE(err.find(out + "/" + name + " is a symbolic link (to " + target + ")"),
              std::string::npos)
        << name << ": " << err;
    EXPECT_EQ(proc::slurp(target), "precious\n") << name;
    EXPECT_TRUE(fs::is_symlink(out + "/" + name)) << name;
    EXPECT_EQ(proc::slurp(out + "/summary.json"), summary) << name;
    EXPECT_EQ(proc::slurp(out + "/results.csv"), rows) << name;
  }
}

TEST(DurableResults, TheReportIsNotWrittenThroughALink) {
  temp_dir tmp;
  const std::string out = tmp / "out";
  ASSERT_EQ(run(tmp, {exe, "run", crane, "--set", "run.duration=0.1", "--out", out}), 0);
  const std::string target = tmp.file("target.txt", "precious\n");
  fs::create_symlink(target, out + "/report.html.tmp");
  EXPECT_EQ(run(tmp, {exe, "report", out}), 2);
  EXPECT_NE(proc::slurp(tmp / "r.err").find("is a symbolic link"), std::string::npos)
      << proc::slurp(tmp / "r.err");
  EXPECT_EQ(proc::slurp(target), "precious\n");
}

// A folder name in Latin-1 ("r\xe9sultats" and a lone continuation byte): the summary is
// strict UTF-8 JSON (python3's decoder and the project's reader agree), the path's invalid
// bytes written as U+FFFD.
TEST(DurableResults, SummaryIsValidJsonForANonUtf8OutPath) {
  temp_dir tmp;
  const std::string out = tmp / "r\xe9sultats\x80";
  ASSERT_EQ(run(tmp, {exe, "run", crane, "--set", "run.duration=0.1", "--out", out}), 0)
      << proc::slurp(tmp / "r.err");
  const std::string summary = proc::slurp(out + "/summary.json");
  const cosim::cli::json_value j = cosim::cli::parse_json(summary);
  const cosim::cli::json_value* results = j.find("results");
  ASSERT_NE(results, nullptr);
  const std::string python = find_program("python3");
  ASSERT_FALSE(python.empty()) << "python3 is needed";
  // The file's bytes must decode as UTF-8 and parse; it prints the results path's ending.
  const int code = run(tmp,
                       {python, "-c",
                        "import json,sys; d=json.loads(open(sys.argv[1],'rb').read().decode("
                        "'utf-8')); print(ascii(d['results'][-22:]))",
                        out + "/summary.json"},
                       "py");
  EXPECT_EQ(code, 0) << proc::slurp(tmp / "py.err");
  EXPECT_EQ(proc::slurp(tmp / "py.out"), "'r\\ufffdsultats\\ufffd/results.csv'\n");
}

// A remote subsystem whose worker never appears, stopped by SIGINT while the master waits
// for it: the run ends at once (not after dds.discovery_timeout), the earlier run's
// results.csv and summary.json as they were.
TEST(DurableResults, AFailedStartAnswersSignalsAndLeavesTheEarlierRunAsItWas) {
  const std::string system = std::string(COSIM_SOURCE_DIR) + "/rt_config/systems/crane_m1_fs.toml";
  for (const int sig : {SIGINT, SIGTERM}) {
    temp_dir tmp;
    const std::string out = tmp / "out";
    ASSERT_EQ(run(tmp, {exe, "run", system, "--set", "run.duration=0.1", "--out", out}), 0);
    const std::string rows = proc::slurp(out + "/results.csv");
    const std::string summary = proc::slurp(out + "/summary.json");
    const pid_t pid = proc::spawn({exe, "run", system, "--set", "subsystems.hyd.host=dds", "--set",
                                   "dds.partition=cosim-nobody-" + std::to_string(::getpid()),
                                   "--set", "dds.discovery_timeout=600", "--out", out},
                                  tmp / "m.out", tmp / "m.err");
    // The master is waiting once it holds the folder's lock file it wrote its pid into.
    ASSERT_TRUE(proc::wait_for(
        pid, [&] { return proc::slurp(out + "/.cosim.lock") == std::to_string(pid) + "\n"; }, 60s));
    std::this_thread::sleep_for(300ms);
    ::kill(pid, sig);
    EXPECT_EQ(proc::wait_exit(pid, 30s), 2) << proc::slurp(tmp / "m.err");
    const std::string err = proc::slurp(tmp / "m.err");
    EXPECT_NE(err.find(std::string("stopped by the operator (SIG") + sigabbrev_np(sig) +
                       ") while waiting for its worker; the run did not start"),
              std::string::npos)
        << err;
    EXPECT_EQ(proc::slurp(out + "/results.csv"), rows);
    EXPECT_EQ(proc::slurp(out + "/summary.json"), summary);
  }
}

// 6 x 10^5 rows of 10 columns are 48 MB as doubles: a sweep that kept them would peak that
// much above the same sweep of a tenth of the duration; without --reference the rows stay in
// results.csv only. The short run is the baseline (a sanitizer build's shadow memory alone is
// about 120 MB, the same for both).
struct sweep_peak {
  long rss_kib = 0;
  std::ptrdiff_t lines = 0, columns = 0;
};

sweep_peak sweep_one_run(const temp_dir& tmp, const std::string& name, int duration_s) {
  sweep_peak r;
  const std::string out = tmp / name;
  const std::vector<std::string> args{exe,
                                      "sweep",
                                      crane,
                                      "--key",
                                      "run.output_interval",
                                      "--values",
                                      "0.001",
                                      "--set",
                                      "model.manoeuvre=hold",
                                      "--set",
                                      "run.duration=" + std::to_string(duration_s),
                                      "--jobs",
                                      "1",
                                      "--out",
                                      out};
  const pid_t pid = proc::spawn(args, tmp / (name + ".out"), tmp / (name + ".err"));
  int status = 0;
  rusage usage{};
  EXPECT_EQ(::wait4(pid, &status, 0, &usage), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << proc::slurp(tmp / (name + ".err"));
  std::string csv;
  for (const auto& e : fs::directory_iterator(out))
    if (e.is_directory()) csv = proc::slurp((e.path() / "results.csv").string());
  r.lines = std::count(csv.begin(), csv.end(), '\n');
  const auto header = csv.substr(0, csv.find('\n'));
  r.columns = std::count(header.begin(), header.end(), ',') + 1;
  r.rss_kib = usage.ru_maxrss;
  return r;
}

TEST(DurableResults, SweepWithoutReferenceDoesNotKeepTheRowsInMemory) {
  temp_dir tmp;
  const sweep_peak shorter = sweep_one_run(tmp, "short", 60);
  const sweep_peak longer = sweep_one_run(tmp, "long", 600);
  // The rows are all there, in the files: header, t = 0 and one row per ms.
  ASSERT_EQ(shorter.lines, 60'000 + 2);
  ASSERT_EQ(longer.lines, 600'000 + 2);
  const double extra_rows_mb =
      static_cast<double>((longer.lines - shorter.lines) * longer.columns * 8) / (1024.0 * 1024.0);
  const double growth_mb = static_cast<double>(longer.rss_kib - shorter.rss_kib) / 1024.0;
  EXPECT_LT(growth_mb, 0.5 * extra_rows_mb)
      << "peak RSS " << shorter.rss_kib << " KiB for 60 s, " << longer.rss_kib << " KiB for 600 s";
}

}  // namespace
