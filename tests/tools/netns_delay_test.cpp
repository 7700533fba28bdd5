// Delay on the link between master and worker in two network namespaces (issue 13: "tc netem
// delay/loss on that link produces counted late samples and, past the configured tolerance,
// the documented safety stop"; docs/distributed.md "Failures" and "Testing across two
// namespaces"). The delay is on everything the worker sends over the veth: tc netem where
// the kernel has it, else nfq_delay (tests/tools/nfq_delay.cpp) behind an NFQUEUE rule.
// The crane of 003 with its hydraulics `hyd` in the worker, H = 1 ms. Expected values come
// from the definitions of dds.timeout, dds.max_missed and the DDS deadline (the macro step)
// and from the all-local run, never from a delayed run's output; no time is asserted.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "netns_support.hpp"

namespace {

namespace proc = cosim::test_process;
using cosim::test::temp_dir;
using cosim::test_netns::count;
using cosim::test_netns::link_delay;
using cosim::test_netns::netns_pair;
using proc::args;
using proc::field;

class NetnsDelay : public cosim::test_netns::netns_fixture {};

/// Rows of results.csv whose p1, p2 and fh (the hydraulics' recorded values) equal the row
/// before: a held step repeats its last reply's values.
long long repeated_rows(const std::string& csv) {
  std::istringstream in(csv);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> r;
    std::istringstream l(line);
    for (std::string f; std::getline(l, f, ',');) r.push_back(f);
    rows.push_back(std::move(r));
  }
  if (rows.size() < 2) return -1;
  std::vector<std::size_t> cols;
  for (const char* name : {"p1", "p2", "fh"}) {
    const auto c = std::find(rows[0].begin(), rows[0].end(), name) - rows[0].begin();
    if (static_cast<std::size_t>(c) >= rows[0].size()) return -1;
    cols.push_back(static_cast<std::size_t>(c));
  }
  long long repeated = 0;
  for (std::size_t r = 2; r < rows.size(); ++r) {
    bool same = true;
    for (const std::size_t c : cols) same = same && rows[r][c] == rows[r - 1][c];
    repeated += same ? 1 : 0;
  }
  return repeated;
}

void print_delayer(link_delay& d) {
  std::cout << "delay by " << d.how() << ": " << d.stop();
}

// 3 ms on the link, within dds.timeout (5 s): every reply is waited for, so results.csv is the
// all-local run's byte for byte (the transport changes timing, never arithmetic), no step is
// held, no reply is late. The lateness shows in deadline_missed: the reply reader's DDS
// deadline is the macro step H = 1 ms, and each reply comes at least 3 ms after the one
// before (its command is written only after that reply arrived).
TEST_F(NetnsDelay, DelayWithinTimeoutMissesDeadlinesAndKeepsResults) {
  netns_pair ns(ip_, "e");
  ASSERT_TRUE(ns.ok()) << "could not set up the namespaces and veth pair";
  temp_dir dir;
  link_delay delay(ns, {3.0, 0.0, 0.0}, dir / "delay");
  if (const std::string why = delay.prepare(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  ASSERT_TRUE(delay.on()) << delay.how();
  const std::vector<std::string> sets = {"--set", "run.duration=0.2"};
  const std::string local = local_run(dir, sets);
  const std::string out = run_pair(ns, dir, "e" + std::to_string(::getpid()), sets, 0);
  const std::string summary = proc::slurp(out + "/summary.json");
  EXPECT_EQ(field(summary, "stop_reason"), "end_time");
  EXPECT_EQ(count(summary, "held_steps"), 0);
  EXPECT_EQ(count(summary, "late_samples"), 0);
  EXPECT_GT(count(summary, "deadline_missed"), 0) << summary;
  ASSERT_GT(local.size(), 1000U);
  EXPECT_TRUE(local == proc::slurp(out + "/results.csv"))
      << "results.csv differs between the local run and the delayed link";
  print_delayer(delay);
  if (delay.how() == "nfq_delay") {
    EXPECT_GT(delay.delayed(), 200);  // one reply per step at least
  }
}

/// The first data row of results.csv (t0), empty if none.
std::string first_row(const std::string& csv) {
  const auto a = csv.find('\n');
  if (a == std::string::npos) return {};
  return csv.substr(a + 1, csv.find('\n', a + 1) - a - 1);
}

// 20 ms on the link, twice dds.timeout = 10 ms, dds.max_missed = 1000: no reply can come
// within dds.timeout of its command, so every one of the 50 macro steps is held at the last
// reply before the run, the start-up exchange's at t0 (which waits up to
// dds.discovery_timeout, as a setup exchange: it is never held). So every row repeats the
// local run's t0 row in the hydraulics' values, and the late replies, counted, are never
// applied. Counts follow from the delay exceeding the timeout, not from the machine's speed.
TEST_F(NetnsDelay, DelayTwiceTheTimeoutHoldsEveryStep) {
  netns_pair ns(ip_, "a");
  ASSERT_TRUE(ns.ok()) << "could not set up the namespaces and veth pair";
  temp_dir dir;
  link_delay delay(ns, {20.0, 0.0, 0.0}, dir / "delay");
  if (const std::string why = delay.prepare(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  ASSERT_TRUE(delay.on()) << delay.how();
  const std::vector<std::string> sets = {"--set", "run.duration=0.05", "--set",
                                         "sources[0].signal=manoeuvre:M2"};
  const std::string local = local_run(dir, sets);
  const std::string out =
      run_pair(ns, dir, "a" + std::to_string(::getpid()),
               args(sets, {"--set", "dds.timeout=0.01", "--set", "dds.max_missed=1000"}), 0);
  const std::string summary = proc::slurp(out + "/summary.json");
  EXPECT_EQ(field(summary, "stop_reason"), "end_time");
  ASSERT_EQ(count(summary, "macro_steps"), 50) << summary;
  EXPECT_EQ(count(summary, "held_steps"), 50) << summary;
  const long long late = count(summary, "late_samples");
  EXPECT_GT(late, 0) << summary;
  EXPECT_LE(late, 50) << summary;
  const std::string csv = proc::slurp(out + "/results.csv");
  EXPECT_EQ(first_row(csv), first_row(local)) << "the t0 row must not hold initialize's reply";
  EXPECT_EQ(repeated_rows(csv), 50);
  print_delayer(delay);
}

// 10 ± 6 ms (uniform) on the link against dds.timeout = 10 ms, dds.max_missed = 1000: about
// half the replies come after the master stopped waiting. Holding changes the master's
// arithmetic (docs/distributed.md "Holding and late replies"), so instead of byte identity
// the documented promises: the run completes with all its rows, the t0 row is the local
// run's; each held step repeats the last reply's values (manoeuvre M2 moves the crane every
// step: the local run has no such row) and no other row does, so no late reply was applied;
// the late replies are counted. Every late reply answers a held command, so late_samples <=
// held_steps; equality needs every late reply in before the run's last wait ends, which the
// link's delay bound (16 ms < 2 x dds.timeout) makes likely but the machine's scheduling does
// not guarantee.
TEST_F(NetnsDelay, DelayAroundTheTimeoutHoldsSomeStepsAndCountsLateReplies) {
  netns_pair ns(ip_, "h");
  ASSERT_TRUE(ns.ok()) << "could not set up the namespaces and veth pair";
  temp_dir dir;
  link_delay delay(ns, {10.0, 6.0, 0.0}, dir / "delay");
  if (const std::string why = delay.prepare(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  ASSERT_TRUE(delay.on()) << delay.how();
  const std::vector<std::string> sets = {"--set", "run.duration=0.2", "--set",
                                         "sources[0].signal=manoeuvre:M2"};
  const std::string local = local_run(dir, sets);
  ASSERT_EQ(repeated_rows(local), 0) << "the local run must move every step for this check";
  const std::string out =
      run_pair(ns, dir, "h" + std::to_string(::getpid()),
               args(sets, {"--set", "dds.timeout=0.01", "--set", "dds.max_missed=1000"}), 0);
  const std::string summary = proc::slurp(out + "/summary.json");
  EXPECT_EQ(field(summary, "stop_reason"), "end_time");
  const long long held = count(summary, "held_steps");
  const long long late = count(summary, "late_samples");
  EXPECT_GT(held, 0) << summary;
  EXPECT_GT(late, 0) << summary;
  EXPECT_LE(late, held) << summary;
  const std::string csv = proc::slurp(out + "/results.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), std::count(local.begin(), local.end(), '\n'));
  EXPECT_EQ(first_row(csv), first_row(local));
  const long long repeated = repeated_rows(csv);
  EXPECT_EQ(repeated, held) << "a late reply was applied, or a held step not held";
  std::cout << "held_steps " << held << ", late_samples " << late << ", repeated rows " << repeated
            << "\n";
  print_delayer(delay);
}

// 200 ms (200 macro steps) on the link once the run is going, dds.timeout = 50 ms,
// dds.max_missed = 2: no reply can come within 3 x 50 ms of its command any more, so two
// steps are held and the third miss is the documented safety stop remote_deadline: exit 1,
// rows up to the stop kept.
TEST_F(NetnsDelay, DelayPastMaxMissedEndsInRemoteDeadlineWithRowsKept) {
  netns_pair ns(ip_, "s");
  ASSERT_TRUE(ns.ok()) << "could not set up the namespaces and veth pair";
  temp_dir dir;
  link_delay delay(ns, {200.0, 0.0, 0.0}, dir / "delay");
  if (const std::string why = delay.prepare(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  constexpr double timeout = 0.05;
  const std::string out =
      run_pair(ns, dir, "s" + std::to_string(::getpid()),
               {"--set", "run.duration=100000", "--set", "sources[0].signal=manoeuvre:hold",
                "--set", "dds.timeout=0.05", "--set", "dds.max_missed=2"},
               1, [&] { EXPECT_TRUE(delay.on()) << delay.how(); });
  const std::string summary = proc::slurp(out + "/summary.json");
  EXPECT_EQ(field(summary, "status"), "safety_stop");
  EXPECT_EQ(field(summary, "stop_reason"), "remote_deadline");
  EXPECT_EQ(count(summary, "held_steps"), 2) << summary;
  // Two held waits and the one that stopped, each dds.timeout, since the last reply (1 % for
  // the rates of Cyclone's clock and the steady clock, as in remote_failure_test.cpp).
  const std::string silence = field(summary, "silence_s");
  EXPECT_GE(silence.empty() ? std::nan("") : std::stod(silence), 0.99 * 3 * timeout) << summary;
  const long long rows = count(summary, "rows");
  EXPECT_GT(rows, 100);
  const std::string csv = proc::slurp(out + "/results.csv");
  EXPECT_EQ(static_cast<long long>(std::count(csv.begin(), csv.end(), '\n')), rows + 1);
  print_delayer(delay);
}

}  // namespace
