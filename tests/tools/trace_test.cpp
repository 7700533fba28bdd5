// run.trace = true (docs/report.md): DIR/trace.json is Chrome / Perfetto trace-event JSON
// with one complete ("X") event per thread step, named threads and an instant event per
// overrun. The JSON is checked by Python's own parser, independent of the writer, and the
// step counts against summary.json (the executor's heartbeat counts).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "process_support.hpp"
#include "temp_dir.hpp"

namespace {

using cosim::test::temp_dir;
using cosim::test_process::slurp;
using cosim::test_process::spawn;
using cosim::test_process::wait_exit;
using namespace std::chrono_literals;

const std::string exe = COSIM_EXE;
const std::string oscillator =
    std::string(COSIM_SOURCE_DIR) + "/rt_config/scenarios/oscillator004.toml";

// Exit 0 only if trace.json parses, has the trace-event shape, and holds per thread exactly
// summary.json's step count of "X" events (ts/dur >= 0, steps 0..n-1 in order) and one
// "i" event per overrun; prints what it found.
const char* const checker = R"PY(
import json, sys
folder, want_realtime = sys.argv[1], sys.argv[2] == "1"
trace = json.load(open(folder + "/trace.json"))
summary = json.load(open(folder + "/summary.json"))
events = trace["traceEvents"]
assert isinstance(events, list)
names, steps, overruns = {}, {}, {}
for e in events:
    for k in ("ph", "pid", "tid", "name"):
        assert k in e, ("missing", k, e)
    if e["ph"] == "M" and e["name"] == "thread_name":
        names[e["tid"]] = e["args"]["name"]
    elif e["ph"] == "X":
        assert isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float)), e
        assert e["dur"] >= 0 and e["ts"] >= 0, e
        assert e["args"]["step"] == len(steps.setdefault(e["tid"], [])), e
        assert ("wakeup_latency_us" in e["args"]) == want_realtime, e
        steps[e["tid"]].append(e)
    elif e["ph"] == "i":
        overruns[e["tid"]] = overruns.get(e["tid"], 0) + 1
    else:
        assert e["ph"] == "M", e
threads = summary["threads"]
assert len(threads) == len(names) == len(steps), (names, len(steps))
for tid, name in names.items():
    t = next(t for t in threads if t["name"] == name)
    assert len(steps[tid]) == t["steps"], (name, len(steps[tid]), t["steps"])
    assert overruns.get(tid, 0) == t["overruns"], (name, overruns.get(tid, 0), t["overruns"])
    assert sum(1 for e in steps[tid] if e["args"].get("overrun", 0)) == t["overruns"]
print("ok", {names[t]: len(s) for t, s in steps.items()})
)PY";

int run_cosim(const temp_dir& tmp, std::vector<std::string> args) {
  args.insert(args.begin(), exe);
  const pid_t pid = spawn(args, tmp / "stdout.txt", tmp / "stderr.txt");
  return wait_exit(pid, 120s);
}

int check_trace(const temp_dir& tmp, const std::string& out, bool realtime) {
  const std::string script = tmp / "check_trace.py";
  std::ofstream(script) << checker;
  const std::string cmd = "python3 " + script + " " + out + " " + (realtime ? "1" : "0") + " >" +
                          (tmp / "check.txt") + " 2>&1";
  const int rc = std::system(cmd.c_str());
  std::cout << slurp(tmp / "check.txt");
  return rc;
}

TEST(Trace, ThreadedRunHasOneCompleteEventPerThreadStep) {
  if (std::system("python3 -c 'import json' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "python3 is not installed (the trace is checked with its json parser)";
  temp_dir tmp;
  const std::string out = tmp / "out";
  // 100 s at H = 0.3 s: 334 steps (the last one ends past 100 s) for each of two threads.
  ASSERT_EQ(run_cosim(tmp, {"run", oscillator, "--out", out, "--set", "run.mode=threaded", "--set",
                            "run.trace=true", "-q"}),
            0)
      << slurp(tmp / "stderr.txt");
  ASSERT_EQ(check_trace(tmp, out, false), 0);
  EXPECT_NE(slurp(tmp / "check.txt").find("'mass1': 334"), std::string::npos);
}

TEST(Trace, RealtimeRunCarriesWakeupLatencyAndOverruns) {
  if (std::system("python3 -c 'import json' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "python3 is not installed (the trace is checked with its json parser)";
  temp_dir tmp;
  const std::string out = tmp / "out";
  // Realtime, 2 s at H = 0.3 s: 7 steps per thread; overruns (if any) must match summary.json.
  const int rc = run_cosim(
      tmp, {"run", oscillator, "--out", out, "--set", "run.mode=realtime", "--set",
            "run.duration=2", "--set", "run.trace=true", "--set", "run.lock_memory=false", "-q"});
  ASSERT_TRUE(rc == 0 || rc == 1) << slurp(tmp / "stderr.txt");
  ASSERT_EQ(check_trace(tmp, out, true), 0);
}

TEST(Trace, OffByDefault) {
  temp_dir tmp;
  const std::string out = tmp / "out";
  ASSERT_EQ(run_cosim(tmp, {"run", oscillator, "--out", out, "--set", "run.mode=threaded", "-q"}),
            0);
  EXPECT_FALSE(std::filesystem::exists(out + "/trace.json"));
}

}  // namespace
