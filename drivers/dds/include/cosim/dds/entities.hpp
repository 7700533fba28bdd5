#pragma once
// A thin RAII layer over Cyclone DDS's C API (dds/dds.h): a participant, keyless topics,
// and a writer/reader pair per topic with explicit QoS. Construction may throw
// cosim::error; write() and take() are noexcept and copy into caller-owned, preallocated
// samples (fixed-size IDL structs), so the step path allocates nothing on our side.
// Cyclone itself serialises into its own buffers on write and keeps received samples in the
// reader's history cache until take(); those are Cyclone's allocations, on its threads and
// in dds_write (see docs/distributed.md).
#include <dds/dds.h>

#include <cstdint>
#include <string>

namespace cosim::dds {

/// Owns one Cyclone entity handle; deleting it deletes its children.
class entity {
 public:
  entity() noexcept = default;
  explicit entity(dds_entity_t h) noexcept : h_(h) {}
  entity(const entity&) = delete;
  entity& operator=(const entity&) = delete;
  entity(entity&& o) noexcept : h_(o.h_) { o.h_ = 0; }
  entity& operator=(entity&& o) noexcept;
  ~entity();
  [[nodiscard]] dds_entity_t get() const noexcept { return h_; }

 private:
  dds_entity_t h_ = 0;
};

/// QoS of both ends of a topic: reliable, keep-last `depth`, a deadline (0: none) and
/// automatic liveliness with `lease_ns`, in partition `partition`.
struct qos_options {
  std::string partition;
  std::int32_t depth = 1;
  std::int64_t deadline_ns = 0;
  std::int64_t lease_ns = DDS_SECS(1);
  bool ignore_local = false;  // a reader that does not see its own participant's writers
};

/// DDS Security with Cyclone's authentication, access control and cryptography plugins
/// (docs/distributed.md, "Security"): absolute paths of one participant's identity and of
/// the bench's trust anchors and signed documents. All empty: no security.
struct security_options {
  std::string identity_ca;           // CA that signed every identity of the bench (PEM)
  std::string identity_certificate;  // this participant's certificate (PEM)
  std::string private_key;           // its private key (PEM, unencrypted)
  std::string permissions_ca;        // CA that signed governance and permissions (PEM)
  std::string governance;            // signed governance document (S/MIME)
  std::string permissions;           // signed permissions document (S/MIME)
  [[nodiscard]] bool enabled() const noexcept { return !identity_ca.empty(); }
};

/// Folder of Cyclone's security plugins found at build time (libdds_security_auth.so, ...);
/// empty if the build found none.
[[nodiscard]] const char* security_plugin_dir() noexcept;

/// Creates `domain` in this process with the participant lease `lease_ns` (Cyclone's
/// Discovery/LeaseDuration, appended to $CYCLONEDDS_URI) and, if `shared_memory`, Cyclone's
/// iceoryx transport (SharedMemory/Enable) for endpoints on this host; later calls for the
/// same domain keep the first configuration. Setup only (may throw cosim::error, also when
/// `shared_memory` and no RouDi runs: Cyclone would wait for it forever).
/// `config` (optional): more Cyclone XML for that domain, after $CYCLONEDDS_URI.
void configure_domain(std::uint32_t domain, std::int64_t lease_ns, bool shared_memory = false,
                      const std::string& config = {});

/// True if iceoryx's RouDi daemon (iox-roudi, Debian package iceoryx) answers on this host:
/// its IPC socket /tmp/roudi (iceoryx 2.0) accepts a connection.
[[nodiscard]] bool roudi_running() noexcept;

/// A participant in `domain` with a publisher and a subscriber in one partition. The first
/// participant of a domain in this process creates the domain with the participant lease
/// `lease_ns` (Cyclone's Discovery/LeaseDuration, appended to $CYCLONEDDS_URI): automatic
/// liveliness of a killed process is detected only when its participant lease expires.
/// With `security` enabled the participant authenticates with its identity and is subject to
/// the governance and permissions (may throw cosim::error naming the files).
class participant {
 public:
  participant(std::uint32_t domain, const std::string& partition,
              std::int64_t lease_ns = DDS_SECS(1), bool shared_memory = false,
              const std::string& config = {}, const security_options& security = {});
  [[nodiscard]] dds_entity_t get() const noexcept { return participant_.get(); }
  [[nodiscard]] dds_entity_t publisher() const noexcept { return publisher_.get(); }
  [[nodiscard]] dds_entity_t subscriber() const noexcept { return subscriber_.get(); }

 private:
  entity participant_;
  entity publisher_;
  entity subscriber_;
};

/// Creates topic `name` of type `desc` (owned by the participant).
dds_entity_t make_topic(const participant& p, const dds_topic_descriptor_t* desc,
                        const std::string& name);

class writer {
 public:
  writer(const participant& p, dds_entity_t topic, const qos_options& q);
  /// Publishes one sample; false on failure.
  bool write(const void* sample) noexcept { return dds_write(w_.get(), sample) == DDS_RETCODE_OK; }
  /// Matched readers now.
  [[nodiscard]] std::uint32_t matched() const noexcept;
  [[nodiscard]] std::uint32_t deadline_missed() const noexcept;
  [[nodiscard]] dds_entity_t get() const noexcept { return w_.get(); }

 private:
  entity w_;
};

enum class take_result { sample, timeout, lost };

class reader {
 public:
  reader() noexcept = default;  // none (get() == 0)
  reader(const participant& p, dds_entity_t topic, const qos_options& q);
  /// Waits up to `timeout_ns` for one sample and copies it into `sample` (a preallocated
  /// struct of the topic's type). `lost`: every writer that was alive lost its liveliness
  /// (lease expired or writer gone) and no sample is pending.
  take_result take(void* sample, std::int64_t timeout_ns) noexcept;
  /// The writer of the last sample take() returned.
  [[nodiscard]] dds_instance_handle_t last_writer() const noexcept { return last_writer_; }
  /// From now on only `writer` counts for liveliness: `lost` when it is no longer matched or
  /// lost its liveliness, whatever other writers on the topic do (a passive participant's
  /// writer that never writes must not keep a dead peer alive).
  void bind_peer(dds_instance_handle_t writer) noexcept { peer_ = writer; }
  [[nodiscard]] dds_instance_handle_t peer() const noexcept { return peer_; }
  /// Matched writers that are alive now / were ever alive.
  [[nodiscard]] std::uint32_t alive_writers() const noexcept;
  [[nodiscard]] bool ever_alive() const noexcept { return ever_alive_; }
  /// Writers matched now, alive or not (setup only).
  [[nodiscard]] std::uint32_t matched_writers() const noexcept;
  [[nodiscard]] std::uint32_t deadline_missed() const noexcept;
  [[nodiscard]] dds_entity_t get() const noexcept { return r_.get(); }
  /// True once a writer was alive and none is now (records an alive one as seen); once a
  /// peer is bound, true when that writer is gone.
  bool writers_lost() noexcept;

 private:
  [[nodiscard]] bool peer_matched() const noexcept;

  entity r_;
  entity waitset_;
  bool ever_alive_ = false;
  dds_instance_handle_t last_writer_ = 0;
  dds_instance_handle_t peer_ = 0;
  bool peer_lost_ = false;
};

/// Waits (polling, setup only) until `w` has a matched reader and `r` an alive writer, up
/// to timeout_ns. False on timeout.
bool wait_for_peer(const writer& w, reader& r, std::int64_t timeout_ns);

}  // namespace cosim::dds
