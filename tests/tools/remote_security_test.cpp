// DDS Security for remote subsystems (docs/distributed.md, "Security"), end to end with the
// crane of 003 and its hydraulics in a `cosim worker` process, the bench's files made by
// tools/scripts/cosim_pki.sh in the test's folder:
//  - secured, results.csv is the unsecured run's byte for byte; unsecured, both processes
//    warn and an eavesdropper on the partition reads the step commands (the control);
//  - a participant with an identity from another CA, and one without any, read no command
//    and inject nothing: the run's results are the unattacked run's bytes;
//  - an identity of the bench without a grant for a topic cannot create its writer or reader,
//    and one the permissions do not name at all cannot join;
//  - independently of security: a passive participant with a writer on the reply topic does
//    not delay remote_lost.
// Each test has a DDS domain of its own (the governance names it) and a partition per process.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cosim/dds/entities.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim_remote.h"
#include "process_support.hpp"
#include "temp_dir.hpp"

namespace {

namespace proc = cosim::test_process;
using cosim::test::temp_dir;
using proc::args;
using proc::field;
using namespace std::chrono_literals;
namespace dds = cosim::dds;

const std::string crane = COSIM_SOURCE_DIR "/rt_config/systems/crane_m1_fs.toml";
const std::string pki_script = COSIM_SOURCE_DIR "/tools/scripts/cosim_pki.sh";

std::string partition_of(const std::string& tag) {
  return "cosim-sec-" + tag + "-" + std::to_string(::getpid());
}

/// Runs cosim_pki.sh for `domain` and `partition` into `out` (extra arguments appended).
void make_pki(const temp_dir& dir, const std::string& out, std::uint32_t domain,
              const std::string& partition, const std::vector<std::string>& more = {}) {
  const int rc =
      proc::wait_exit(proc::spawn(args({"/bin/bash", pki_script, "--out", out, "--domain",
                                        std::to_string(domain), "--partition", partition},
                                       more),
                                  dir / "pki.out", dir / "pki.err"),
                      60s);
  ASSERT_EQ(rc, 0) << proc::slurp(dir / "pki.err");
}

/// [dds.security] of one process as --set overrides: the bench's files in `pki`, the
/// identity `who`.
std::vector<std::string> security_sets(const std::string& pki, const std::string& who) {
  return {"--set", "dds.security.identity_ca=" + pki + "/ca.pem",
          "--set", "dds.security.permissions_ca=" + pki + "/ca.pem",
          "--set", "dds.security.governance=" + pki + "/governance.p7s",
          "--set", "dds.security.permissions=" + pki + "/permissions.p7s",
          "--set", "dds.security.identity_certificate=" + pki + "/" + who + ".pem",
          "--set", "dds.security.private_key=" + pki + "/" + who + ".key"};
}

dds::security_options security_of(const std::string& pki, const std::string& who) {
  return {pki + "/ca.pem", pki + "/" + who + ".pem", pki + "/" + who + ".key",
          pki + "/ca.pem", pki + "/governance.p7s",  pki + "/permissions.p7s"};
}

struct remote_run {
  std::string csv, summary, master_err, worker_err;
  int master_rc = -1, worker_rc = -1;
};

/// The crane with hyd in a worker; `master_sets` / `worker_sets` after the common ones.
remote_run run_remote(const temp_dir& dir, const std::string& tag,
                      const std::vector<std::string>& common,
                      const std::vector<std::string>& master_sets,
                      const std::vector<std::string>& worker_sets) {
  const std::string out = dir / ("res-" + tag);
  const auto base = args({"--set", "subsystems.hyd.host=dds"}, common);
  const pid_t worker =
      proc::spawn(args(args({COSIM_EXE, "worker", crane, "--subsystem", "hyd"}, base), worker_sets),
                  dir / (tag + "-w.out"), dir / (tag + "-w.err"));
  const pid_t master =
      proc::spawn(args(args({COSIM_EXE, "run", crane, "--out", out}, base), master_sets),
                  dir / (tag + "-m.out"), dir / (tag + "-m.err"));
  remote_run r;
  r.master_rc = proc::wait_exit(master, 120s);
  r.worker_rc = proc::wait_exit(worker, 60s);
  r.csv = proc::slurp(out + "/results.csv");
  r.summary = proc::slurp(out + "/summary.json");
  r.master_err = proc::slurp(dir / (tag + "-m.err"));
  r.worker_err = proc::slurp(dir / (tag + "-w.err")) + proc::slurp(dir / (tag + "-w.out"));
  return r;
}

std::string local_csv(const temp_dir& dir, const std::vector<std::string>& sets) {
  const std::string out = dir / "local";
  EXPECT_EQ(proc::wait_exit(proc::spawn(args({COSIM_EXE, "run", crane, "--out", out}, sets),
                                        dir / "l.out", dir / "l.err"),
                            120s),
            0)
      << proc::slurp(dir / "l.err");
  return proc::slurp(out + "/results.csv");
}

/// A participant in the test process on the bench's domain and partition, as an attacker on
/// the network: counts the step commands it receives, answers each with forged outputs, and
/// keeps writing forged replies with guessed sequence numbers. `security` empty: no identity.
class intruder {
 public:
  intruder(std::uint32_t domain, std::string partition, dds::security_options security,
           bool forge = true)
      : domain_(domain),
        partition_(std::move(partition)),
        security_(std::move(security)),
        forge_(forge) {
    thread_ = std::thread([this] { run(); });
    // Its participant exists before the run starts.
    for (int i = 0; i < 500 && !ready_; ++i) std::this_thread::sleep_for(10ms);
  }
  intruder(const intruder&) = delete;
  intruder& operator=(const intruder&) = delete;
  ~intruder() { stop(); }
  /// Commands received; ends the intruder.
  std::int64_t stop() {
    done_ = true;
    if (thread_.joinable()) thread_.join();
    return received_;
  }
  [[nodiscard]] std::int64_t forged() const { return forged_; }
  [[nodiscard]] const std::string& error() const { return error_; }

 private:
  void run() {
    try {
      const dds::participant p(domain_, partition_, DDS_SECS(1), false, {}, security_);
      dds::qos_options q;
      q.partition = partition_;
      dds::reader cmd_r(p, dds::make_topic(p, &cosim_remote_command_desc, "cosim_cmd_hyd"), q);
      dds::writer reply_w(p, dds::make_topic(p, &cosim_remote_reply_desc, "cosim_reply_hyd"), q);
      auto cmd = std::make_unique<cosim_remote_command>();
      auto forged = std::make_unique<cosim_remote_reply>();
      *forged = cosim_remote_reply{};
      forged->n_values = 64;
      for (double& v : forged->values) v = 12345.0;
      ready_ = true;
      std::uint64_t guess = 1;
      while (!done_) {
        if (cmd_r.take(cmd.get(), 1'000'000) == dds::take_result::sample) {
          ++received_;
          forged->seq = cmd->seq;
          if (forge_ && reply_w.write(forged.get())) ++forged_;
        }
        if (!forge_) continue;
        forged->seq = guess++;
        if (reply_w.write(forged.get())) ++forged_;
      }
    } catch (const std::exception& e) {
      error_ = e.what();
      ready_ = true;
    }
  }

  std::uint32_t domain_;
  std::string partition_;
  dds::security_options security_;
  bool forge_;
  std::atomic<bool> ready_{false};
  std::atomic<bool> done_{false};
  std::atomic<std::int64_t> received_{0};
  std::atomic<std::int64_t> forged_{0};
  std::string error_;
  std::thread thread_;
};

const char* const unauthenticated_warning = "DDS traffic of remote subsystems is not authenticated";

TEST(RemoteSecurity, SecuredRunIsByteIdenticalToTheUnsecuredOne) {
  temp_dir dir;
  constexpr std::uint32_t domain = 171;
  const std::string part = partition_of("same");
  make_pki(dir, dir / "pki", domain, part);
  const std::vector<std::string> common = {"--set", "run.duration=1",
                                           "--set", "dds.domain=" + std::to_string(domain),
                                           "--set", "dds.partition=" + part};
  // Unsecured: an eavesdropper reads the commands (what security is for), both sides warn.
  intruder eavesdropper(domain + 1, part, {}, false);
  const auto plain_common =
      args({"--set", "run.duration=1", "--set", "dds.domain=" + std::to_string(domain + 1), "--set",
            "dds.partition=" + part},
           {});
  const remote_run plain = run_remote(dir, "plain", plain_common, {}, {});
  const std::int64_t overheard = eavesdropper.stop();
  EXPECT_GT(overheard, 0) << "the unsecured eavesdropper read no command: " << eavesdropper.error();
  EXPECT_NE(plain.master_err.find(unauthenticated_warning), std::string::npos) << plain.master_err;
  EXPECT_NE(plain.worker_err.find(unauthenticated_warning), std::string::npos) << plain.worker_err;
  EXPECT_EQ(plain.master_rc, 0) << plain.master_err;

  const std::string pki = dir / "pki";
  const remote_run secured = run_remote(dir, "secured", common, security_sets(pki, "master"),
                                        security_sets(pki, "worker1"));
  EXPECT_EQ(secured.master_rc, 0) << secured.master_err;
  EXPECT_EQ(secured.worker_rc, 0) << secured.worker_err;
  EXPECT_EQ(field(secured.summary, "stop_reason"), "end_time");
  EXPECT_EQ(secured.master_err.find(unauthenticated_warning), std::string::npos);
  EXPECT_EQ(secured.worker_err.find(unauthenticated_warning), std::string::npos);
  ASSERT_GT(plain.csv.size(), 1000U);
  EXPECT_TRUE(secured.csv == plain.csv) << "results.csv of the secured run differs";
  // And both are the all-local run's bytes (remote_test.cpp).
  EXPECT_TRUE(plain.csv == local_csv(dir, {"--set", "run.duration=1"}));
}

TEST(RemoteSecurity, ParticipantsWithoutTheBenchsIdentityCanNeitherReadNorInject) {
  temp_dir dir;
  constexpr std::uint32_t domain = 173;
  const std::string part = partition_of("foreign");
  const std::string pki = dir / "pki", other = dir / "other";
  make_pki(dir, pki, domain, part);
  make_pki(dir, other, domain, part);  // another bench's CA, same domain and partition
  // Long enough (several seconds of wall time) for discovery and handshakes to be tried.
  const std::vector<std::string> common = {"--set", "run.duration=10",
                                           "--set", "dds.domain=" + std::to_string(domain),
                                           "--set", "dds.partition=" + part};
  intruder foreign(domain, part, security_of(other, "master"));
  ASSERT_EQ(foreign.error(), "");
  // Without any identity: an unsecured `cosim worker` of the same subsystem (it would take
  // and answer every command it could read). Cyclone refuses an unsecured participant in a
  // process whose domain has secured ones, so it is a process of its own.
  const pid_t anonymous =
      proc::spawn(args({COSIM_EXE, "worker", crane, "--subsystem", "hyd", "--set",
                        "subsystems.hyd.host=dds", "--set", "dds.discovery_timeout=15"},
                       common),
                  dir / "anon.out", dir / "anon.err");
  const remote_run r = run_remote(dir, "attacked", common, security_sets(pki, "master"),
                                  security_sets(pki, "worker1"));
  EXPECT_GT(foreign.forged(), 0);
  EXPECT_EQ(foreign.stop(), 0) << "a participant of another CA read step commands";
  // It gives up waiting for a master: it never received a command.
  EXPECT_EQ(proc::wait_exit(anonymous, 60s), 1);
  const std::string anon = proc::slurp(dir / "anon.out");
  EXPECT_NE(anon.find("stopped after 0 commands"), std::string::npos)
      << "a participant without identity read step commands: " << anon;
  EXPECT_EQ(r.master_rc, 0) << r.master_err;
  EXPECT_EQ(r.worker_rc, 0) << r.worker_err;
  EXPECT_EQ(field(r.summary, "stop_reason"), "end_time");
  EXPECT_EQ(field(r.summary, "late_samples"), "0");
  EXPECT_EQ(field(r.summary, "foreign_replies"), "");
  const std::string local = local_csv(dir, {"--set", "run.duration=10"});
  ASSERT_GT(local.size(), 1000U);
  EXPECT_TRUE(r.csv == local) << "results.csv of the attacked run differs from the local run";
}

TEST(RemoteSecurity, IdentityWithoutPermissionIsRefused) {
  temp_dir dir;
  constexpr std::uint32_t domain = 175;
  const std::string part = partition_of("perm");
  const std::string pki = dir / "pki";
  make_pki(dir, pki, domain, part);
  dds::qos_options q;
  q.partition = part;
  {
    // A worker's identity may read commands and write replies, nothing else.
    const dds::participant p(domain, part, DDS_SECS(1), false, {}, security_of(pki, "worker1"));
    const dds_entity_t cmd = dds::make_topic(p, &cosim_remote_command_desc, "cosim_cmd_hyd");
    const dds_entity_t reply = dds::make_topic(p, &cosim_remote_reply_desc, "cosim_reply_hyd");
    EXPECT_NO_THROW((void)dds::reader(p, cmd, q));
    EXPECT_NO_THROW((void)dds::writer(p, reply, q));
    EXPECT_THROW((void)dds::writer(p, cmd, q), cosim::error) << "a worker identity wrote commands";
    EXPECT_THROW((void)dds::reader(p, reply, q), cosim::error) << "a worker identity read replies";
    // No grant in another partition.
    dds::qos_options elsewhere = q;
    elsewhere.partition = part + "-elsewhere";
    const dds::participant p2(domain, part + "-elsewhere", DDS_SECS(1), false, {},
                              security_of(pki, "worker1"));
    EXPECT_THROW(
        (void)dds::reader(p2, dds::make_topic(p2, &cosim_remote_command_desc, "cosim_cmd_hyd"),
                          elsewhere),
        cosim::error);
  }
  // An identity signed by the bench's CA that the bench's permissions do not name: refused
  // when it creates its participant. In a domain of its own: Cyclone 0.10's access control
  // plugin keeps the first participant's local permissions per domain and process, and would
  // give them to a later participant of the same process.
  const std::string other = dir / "other", more = dir / "more";
  const std::uint32_t domain2 = domain + 1;
  make_pki(dir, other, domain2, part);
  make_pki(dir, more, domain2, part, {"--ca-from", other, "--worker", "stranger"});
  dds::security_options stranger = security_of(other, "worker1");
  stranger.identity_certificate = more + "/stranger.pem";
  stranger.private_key = more + "/stranger.key";
  EXPECT_THROW((void)dds::participant(domain2, part, DDS_SECS(1), false, {}, stranger),
               cosim::error)
      << "an identity the permissions do not name joined the domain";
}

TEST(RemoteSecurity, PassiveParticipantDoesNotDelayRemoteLost) {
  temp_dir dir;
  constexpr std::uint32_t domain = 177;
  const std::string part = partition_of("passive");
  // A participant with a writer on the reply topic that never writes: its liveliness must not
  // stand in for the worker's.
  const dds::participant p(domain, part, DDS_SECS(1));
  dds::qos_options q;
  q.partition = part;
  // QoS the master's reply reader accepts (deadline the macro step, lease dds.lease).
  q.deadline_ns = 1'000'000;
  q.lease_ns = 300'000'000;
  const dds::writer passive(p, dds::make_topic(p, &cosim_remote_reply_desc, "cosim_reply_hyd"), q);
  const std::string out = dir / "lost";
  // dds.timeout far above the lease: a remote_deadline would come only after 20 s.
  const auto rs =
      args({"--set", "subsystems.hyd.host=dds", "--set", "run.duration=100000", "--set",
            "dds.lease=0.3", "--set", "dds.timeout=20", "--set", "sources[0].signal=manoeuvre:hold",
            "--set", "dds.domain=" + std::to_string(domain), "--set", "dds.partition=" + part},
           {});
  const pid_t worker = proc::spawn(args({COSIM_EXE, "worker", crane, "--subsystem", "hyd"}, rs),
                                   dir / "w.out", dir / "w.err");
  const pid_t master =
      proc::spawn(args({COSIM_EXE, "run", crane, "--out", out}, rs), dir / "m.out", dir / "m.err");
  ASSERT_TRUE(proc::wait_for(
      master,
      [&] {
        std::error_code ec;
        return std::filesystem::file_size(out + "/results.csv", ec) > 20000 && !ec;
      },
      60s))
      << proc::slurp(dir / "m.err");
  ASSERT_TRUE(proc::wait_for(
      master, [&] { return passive.matched() >= 1; }, 30s))
      << "the passive writer is not matched with the master: " << proc::slurp(dir / "m.err")
      << proc::slurp(dir / "m.out");
  ::kill(worker, SIGKILL);
  EXPECT_EQ(proc::wait_exit(worker, 10s), 128 + SIGKILL);
  EXPECT_EQ(proc::wait_exit(master, 60s), 1) << proc::slurp(dir / "m.err");
  const std::string summary = proc::slurp(out + "/summary.json");
  EXPECT_EQ(field(summary, "stop_reason"), "remote_lost") << summary;
  const std::string silence = field(summary, "silence_s");
  EXPECT_LT(silence.empty() ? 1e9 : std::stod(silence), 2.0) << summary;
}

}  // namespace
