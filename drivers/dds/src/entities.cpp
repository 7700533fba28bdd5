#include "cosim/dds/entities.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
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
}

}  // namespace

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
                         bool shared_memory, const std::string& config) {
  configure_domain(domain, lease_ns, shared_memory, config);
  participant_ = entity(checked(dds_create_participant(domain, nullptr, nullptr), "participant"));
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

bool reader::writers_lost() noexcept {
  const std::uint32_t alive = alive_writers();
  if (alive > 0) ever_alive_ = true;
  return ever_alive_ && alive == 0;
}

take_result reader::take(void* sample, std::int64_t timeout_ns) noexcept {
  const dds_time_t until = dds_time() + timeout_ns;
  for (;;) {
    void* buf[1] = {sample};
    dds_sample_info_t info[1];
    const dds_return_t n = dds_take(r_.get(), buf, info, 1, 1);
    if (n > 0 && info[0].valid_data) return take_result::sample;
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
