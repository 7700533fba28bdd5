#pragma once
// Plain configuration of one UDP driver (filled by rt_config from [drivers.<name>]).
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <netinet/in.h>

#include "cosim/drivers/bench_auth.hpp"
#include "cosim/drivers/bench_protocol.hpp"

namespace cosim::drivers {

enum class driver_direction { input, output };

/// What protects the driver's datagrams (PROTOCOL.md): version 2 with an HMAC-SHA-512-256
/// tag and challenge sessions, or, only when a scenario asks for it, unauthenticated version 1.
enum class driver_auth { hmac_sha512_256, none };

struct channel_config {
  std::string name;
  std::string unit = "1";  // of the port this channel is: checked against what it connects to
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  double initial = 0.0;      // input: value before the first packet
  bool initial_set = false;  // given in the scenario (else the model may choose it)
  double safe_value = 0.0;   // output: sent on a safety stop / operator signal
  std::string from;          // output: "subsystem.port" feeding this channel
};

struct driver_config {
  std::string name;
  driver_direction direction = driver_direction::input;
  driver_auth auth = driver_auth::hmac_sha512_256;
  std::string backend = "asio";      // asio | io_uring
  std::string bind = "127.0.0.1:0";  // local address (input: where devices send to)
  std::string to;                    // output: destination "host:port"
  std::vector<std::string> peers;    // input: allowlist of "host:port" senders
  message_type type = message_type::command;
  std::vector<channel_config> channels;
  double stale_after = 0.05;     // [s] no fresh packet for this long: hold and count
  double stop_after = 0.5;       // [s] no fresh packet for this long: safety stop
  double startup_timeout = 5.0;  // [s] before the first packet, stop only after this
  int safe_repeats = 5;
  // run.mode = "lockstep" (PROTOCOL.md, "Lockstep"): one exchange per macro step, paced by
  // simulation time; a device that does not answer within lockstep_timeout stops the run.
  bool lockstep = false;
  double lockstep_timeout = 1.0;  // [s] wall clock, per exchange
  // input: an [[events]] "silence" fault: from this simulation time [s] on (at the first
  // communication point at or after it) no received value is used, as if the device had
  // gone silent; < 0: never. Lockstep runs keep exchanging with the device (in step).
  double silence_at = -1.0;
  // With silence_at: how many new values are dropped ("drop" event, count); -1: all
  // ("silence").
  std::int64_t silence_count = -1;
  int cpu = -1;  // I/O thread placement
  int priority = 0;
  std::string key_file;  // where `key` was read from (messages and summary only)
  bench_key key;         // the shared secret (read from key_file by rt_config)
};

/// "a.b.c.d:port" or "localhost:port" -> sockaddr_in. Returns false on anything else.
bool parse_udp_address(const std::string& text, sockaddr_in& out) noexcept;
std::string to_string(const sockaddr_in& a);

}  // namespace cosim::drivers
