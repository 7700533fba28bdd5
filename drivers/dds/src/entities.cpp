#include "cosim/dds/entities.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <string_view>
#include <thread>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cosim/runtime/error.hpp"

namespace cosim::dds {

namespace {

dds_entity_t checked(dds_entity_t h, const char* what) {
  if (h < 0)
    throw error(errc::runtime,
                std::string("Cyclone DDS: cannot create ") + what + ": " + dds_strretcode(h));
  return h;
}

// One QoS object for the lifetime of a call.
class qos {
 public:
  qos() : q_(dds_create_qos()) {}
  qos(const qos&) = delete;
  qos& operator=(const qos&) = delete;
  ~qos() { dds_delete_qos(q_); }
  [[nodiscard]] dds_qos_t* get() const noexcept { return q_; }

 private:
  dds_qos_t* q_;
};

// Reliable keep-last: the handshake never loses a command, and a stale one is overwritten
// rather than queued. Deadline and liveliness let each side see the other stop.
void endpoint_qos(const qos& q, const qos_options& o) {
  dds_qset_reliability(q.get(), DDS_RELIABILITY_RELIABLE, DDS_SECS(1));
  dds_qset_history(q.get(), DDS_HISTORY_KEEP_LAST, o.depth);
  dds_qset_durability(q.get(), DDS_DURABILITY_VOLATILE);
  if (o.deadline_ns > 0) dds_qset_deadline(q.get(), o.deadline_ns);
  dds_qset_liveliness(q.get(), DDS_LIVELINESS_AUTOMATIC, o.lease_ns);
  if (o.ignore_local) dds_qset_ignorelocal(q.get(), DDS_IGNORELOCAL_PARTICIPANT);
}

// Cyclone's security plugins take their configuration from the participant's QoS properties
// (the dds.sec.* names of the OMG DDS Security specification; dds_security_api_defs.h).
// Paths as "file:" URIs; the plugins by absolute path, since Debian installs them in a
// private folder outside the loader's search path.
void security_qos(const qos& q, const security_options& s) {
  const std::string dir = security_plugin_dir();
  if (dir.empty())
    throw error(errc::config_value,
                "dds.security: this build of cosim found no Cyclone DDS security plugins "
                "(libdds_security_auth.so; Debian package libddsc0debian)");
  struct plugin {
    const char* kind;
    const char* file;
    const char* init;
    const char* fini;
  };
  for (const plugin& p :
       {plugin{"auth", "libdds_security_auth.so", "init_authentication", "finalize_authentication"},
        plugin{"access", "libdds_security_ac.so", "init_access_control", "finalize_access_control"},
        plugin{"crypto", "libdds_security_crypto.so", "init_crypto", "finalize_crypto"}}) {
    const std::string path = dir + "/" + p.file;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
      throw error(errc::config_value, "dds.security: Cyclone DDS security plugin " + path +
                                          " is missing (Debian package libddsc0debian)");
    const std::string prefix = std::string("dds.sec.") + p.kind + ".library.";
    dds_qset_prop(q.get(), (prefix + "path").c_str(), path.c_str());
    dds_qset_prop(q.get(), (prefix + "init").c_str(), p.init);
    dds_qset_prop(q.get(), (prefix + "finalize").c_str(), p.fini);
  }
  const auto file = [&](const char* name, const std::string& path) {
    dds_qset_prop(q.get(), name, ("file:" + path).c_str());
  };
  file("dds.sec.auth.identity_ca", s.identity_ca);
  file("dds.sec.auth.identity_certificate", s.identity_certificate);
  file("dds.sec.auth.private_key", s.private_key);
  file("dds.sec.access.permissions_ca", s.permissions_ca);
  file("dds.sec.access.governance", s.governance);
  file("dds.sec.access.permissions", s.permissions);
}

// Cyclone's receive threads decrypt incoming messages with OpenSSL until the domain is
// deleted, and a domain outlives the participants (it is deleted at the library's unload).
// OpenSSL frees its state in its own exit handler: a message arriving then crashes the
// process at exit. Exit handlers run in reverse order of registration, so one registered
// after the first secured participant exists (after OpenSSL registered its own) deletes
// every DDS entity, stopping those threads, before OpenSSL cleans up.
void stop_dds_before_openssl_at_exit() {
  static std::once_flag once;
  std::call_once(once, [] { std::atexit([] { (void)dds_delete(DDS_CYCLONEDDS_HANDLE); }); });
}

}  // namespace

const char* security_plugin_dir() noexcept {
  return COSIM_DDS_SECURITY_DIR;
}

bool roudi_running() noexcept {
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  constexpr std::string_view path = "/tmp/roudi";
  std::copy(path.begin(), path.end(), std::begin(a.sun_path));
  // A stale socket file of a killed RouDi refuses the connection.
  const bool up = ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;  // NOLINT
  ::close(fd);
  return up;
}

void configure_domain(std::uint32_t domain, std::int64_t lease_ns, bool shared_memory,
                      const std::string& config) {
  static std::mutex m;
  static std::set<std::uint32_t> done;
  const std::lock_guard<std::mutex> lock(m);
  if (done.count(domain) > 0) return;
  if (shared_memory && !roudi_running())
    throw error(errc::runtime,
                "dds.shared_memory = true needs iceoryx's RouDi daemon on this host, and none "
                "runs (no /tmp/roudi socket): start `iox-roudi` first (Debian package iceoryx)");
  done.insert(domain);
  std::string cfg;
  if (const char* env = std::getenv("CYCLONEDDS_URI"); env != nullptr && *env != '\0')
    cfg = std::string(env) + ",";
  if (!config.empty()) cfg += config + ",";
  cfg += "<CycloneDDS><Domain><Discovery><LeaseDuration>" +
         std::to_string(std::max<std::int64_t>(lease_ns / 1'000'000, 1)) +
         "ms</LeaseDuration></Discovery>" +
         (shared_memory ? "<SharedMemory><Enable>true</Enable></SharedMemory>" : "") +
         "</Domain></CycloneDDS>";
  const dds_entity_t d = dds_create_domain(domain, cfg.c_str());
  // Already there (a participant created it with the defaults): keep it.
  if (d < 0 && d != DDS_RETCODE_PRECONDITION_NOT_MET)
    throw error(errc::runtime, std::string("Cyclone DDS: cannot create domain ") +
                                   std::to_string(domain) + ": " + dds_strretcode(d));
}

entity& entity::operator=(entity&& o) noexcept {
  if (this != &o) {
    if (h_ > 0) dds_delete(h_);
    h_ = o.h_;
    o.h_ = 0;
  }
  return *this;
}

entity::~entity() {
  if (h_ > 0) dds_delete(h_);
}

participant::participant(std::uint32_t domain, const std::string& partition, std::int64_t lease_ns,
                         bool shared_memory, const std::string& config,
                         const security_options& security) {
  configure_domain(domain, lease_ns, shared_memory, config);
  if (security.enabled()) {
    const qos sq;
    security_qos(sq, security);
    const dds_entity_t h = dds_create_participant(domain, sq.get(), nullptr);
    // Cyclone validates the identity, the permissions and the governance here; its own log
    // (stderr) says which check failed.
    if (h < 0)
      throw error(
          errc::config_value,
          std::string("Cyclone DDS refused the DDS Security configuration (") + dds_strretcode(h) +
              "): identity_certificate " + security.identity_certificate + " with private_key " +
              security.private_key + " must be signed by identity_ca " + security.identity_ca +
              " and named in permissions " + security.permissions + " for domain " +
              std::to_string(domain) + "; permissions and governance " + security.governance +
              " must be signed by permissions_ca " + security.permissions_ca + " and valid now");
    participant_ = entity(h);
    stop_dds_before_openssl_at_exit();
  } else {
    participant_ = entity(checked(dds_create_participant(domain, nullptr, nullptr), "participant"));
  }
  const qos q;
  dds_qset_partition1(q.get(), partition.c_str());
  publisher_ = entity(checked(dds_create_publisher(get(), q.get(), nullptr), "publisher"));
  subscriber_ = entity(checked(dds_create_subscriber(get(), q.get(), nullptr), "subscriber"));
}

dds_entity_t make_topic(const participant& p, const dds_topic_descriptor_t* desc,
                        const std::string& name) {
  return checked(dds_create_topic(p.get(), desc, name.c_str(), nullptr, nullptr),
                 ("topic " + name).c_str());
}

writer::writer(const participant& p, dds_entity_t topic, const qos_options& o) {
  const qos q;
  endpoint_qos(q, o);
  w_ = entity(checked(dds_create_writer(p.publisher(), topic, q.get(), nullptr), "writer"));
}

std::uint32_t writer::matched() const noexcept {
  dds_publication_matched_status_t s{};
  if (dds_get_publication_matched_status(w_.get(), &s) != DDS_RETCODE_OK) return 0;
  return s.current_count;
}

std::uint32_t writer::deadline_missed() const noexcept {
  dds_offered_deadline_missed_status_t s{};
  if (dds_get_offered_deadline_missed_status(w_.get(), &s) != DDS_RETCODE_OK) return 0;
  return s.total_count;
}

reader::reader(const participant& p, dds_entity_t topic, const qos_options& o) {
  const qos q;
  endpoint_qos(q, o);
  r_ = entity(checked(dds_create_reader(p.subscriber(), topic, q.get(), nullptr), "reader"));
  // The waitset wakes on data and on liveliness changes, so a lost writer ends a wait early.
  dds_set_status_mask(r_.get(), DDS_DATA_AVAILABLE_STATUS | DDS_LIVELINESS_CHANGED_STATUS);
  waitset_ = entity(checked(dds_create_waitset(p.get()), "waitset"));
  const dds_return_t rc = dds_waitset_attach(waitset_.get(), r_.get(), r_.get());
  if (rc != DDS_RETCODE_OK)
    throw error(errc::runtime, std::string("Cyclone DDS: waitset: ") + dds_strretcode(rc));
}

std::uint32_t reader::alive_writers() const noexcept {
  dds_liveliness_changed_status_t s{};
  if (dds_get_liveliness_changed_status(r_.get(), &s) != DDS_RETCODE_OK) return 0;
  return s.alive_count;
}

std::uint32_t reader::deadline_missed() const noexcept {
  dds_requested_deadline_missed_status_t s{};
  if (dds_get_requested_deadline_missed_status(r_.get(), &s) != DDS_RETCODE_OK) return 0;
  return s.total_count;
}

std::uint32_t reader::matched_writers() const noexcept {
  const dds_return_t n = dds_get_matched_publications(r_.get(), nullptr, 0);
  return n > 0 ? static_cast<std::uint32_t>(n) : 0;
}

bool reader::peer_matched() const noexcept {
  // A fixed array: no allocation. More matched writers than it holds can only be extra
  // participants on the topic; the peer is then assumed matched (the count check below and
  // its liveliness still apply).
  std::array<dds_instance_handle_t, 16> h{};
  const dds_return_t n = dds_get_matched_publications(r_.get(), h.data(), h.size());
  if (n < 0) return false;
  if (static_cast<std::size_t>(n) > h.size()) return true;
  return std::find(h.begin(), h.begin() + n, peer_) != h.begin() + n;
}

bool reader::writers_lost() noexcept {
  dds_liveliness_changed_status_t s{};
  if (dds_get_liveliness_changed_status(r_.get(), &s) != DDS_RETCODE_OK) return false;
  if (s.alive_count > 0) ever_alive_ = true;
  if (peer_ == 0) return ever_alive_ && s.alive_count == 0;
  // Only the peer's writer counts. Its loss shows as a liveliness change (the counts read
  // here reset on each read); then it is either the writer that changed last, or no longer
  // matched (a lease expiry deletes the peer's participant with its writers).
  if (!peer_lost_ && (s.alive_count_change != 0 || s.not_alive_count_change != 0)) {
    if (s.not_alive_count_change > 0 && s.last_publication_handle == peer_) peer_lost_ = true;
    if (!peer_matched()) peer_lost_ = true;
  }
  return peer_lost_ || s.alive_count == 0;
}

take_result reader::take(void* sample, std::int64_t timeout_ns) noexcept {
  const dds_time_t until = dds_time() + timeout_ns;
  for (;;) {
    void* buf[1] = {sample};
    dds_sample_info_t info[1];
    const dds_return_t n = dds_take(r_.get(), buf, info, 1, 1);
    if (n > 0 && info[0].valid_data) {
      last_writer_ = info[0].publication_handle;
      return take_result::sample;
    }
    if (n > 0) continue;  // an invalid sample (a writer's dispose/unregister): look again
    if (writers_lost()) return take_result::lost;
    const dds_time_t now = dds_time();
    if (now >= until) return take_result::timeout;
    dds_waitset_wait_until(waitset_.get(), nullptr, 0, until);
  }
}

bool wait_for_peer(const writer& w, reader& r, std::int64_t timeout_ns) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout_ns);
  while (std::chrono::steady_clock::now() < until) {
    if (w.matched() > 0 && r.alive_writers() > 0) {
      (void)r.writers_lost();  // records that the peer was alive
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

}  // namespace cosim::dds
