#pragma once
// Live bench dashboard of `cosim run ... --serve [ADDR:]PORT` (docs/dashboard.md): one
// self-contained page and a WebSocket that streams the run at ~25 Hz, served by Boost.Beast
// on its own thread (never a real-time one), and a stop button guarded by a random token.
//
// Data path: the recording thread (the caller's thread of run_offline / run_threaded, not a
// subsystem thread) hands rows and per-thread timing over through preallocated SPSC frame
// rings. It never allocates, locks or waits there: when a ring is full it keeps merging
// min/max into its pending frame, so a slow server merges intervals but loses no spike.
//
// Server side: the last data updates are kept (bounded) so that a page that reconnects gets
// what it missed; connections and requests are bounded per client address; optional TLS.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cosim/runtime/executor.hpp"
#include "cosim/runtime/stop_source.hpp"
#include "cosim/runtime/threaded_executor.hpp"

namespace cosim::cli {

struct serve_options {
  std::string address = "127.0.0.1";
  std::uint16_t port = 0;  // 0: any free port (printed)
  /// Allow a non-loopback address (--serve-any): the page and the stop then reach the network.
  bool any_address = false;
  /// After the run: serve until every connected page got the final message, at most this.
  double grace_s = 2.0;
  /// Recording thread hand-over and broadcast period.
  std::int64_t period_ns = 40'000'000;
  /// --serve-cert/--serve-key: PEM certificate (chain) and its unencrypted private key; both
  /// set: HTTPS and WSS only (docs/dashboard.md "TLS on a bench network").
  std::string cert_file, key_file;
};

/// Parses --serve's "[ADDR:]PORT" (IPv4 or [IPv6]); throws cosim::error (config_value)
/// naming the option, the value and the allowed forms, also for a non-loopback address
/// without `any_address`.
serve_options parse_serve(const std::string& spec, bool any_address);

/// What the page shows before the run starts (from the loaded scenario).
struct dashboard_info {
  std::string scenario;
  std::string mode;
  double macro_step_s = 0.0;
  double duration_s = 0.0;
  double energy_limit_J = 0.0;     // infinity: none
  double power_limit_W = 0.0;      // infinity: none
  std::vector<alarm_spec> alarms;  // [[alarms]]: their limits, and values beside them live
};

class dashboard {
 public:
  /// Pages connected at once; one more is answered 503 (docs/dashboard.md).
  static constexpr std::size_t max_viewers = 16;

  /// Binds and listens (nothing is served before start()). Throws cosim::error (io) when
  /// the address cannot be bound, e.g. the port is in use. `stop` (not owned) is the
  /// operator's stop source, the one SIGINT raises.
  dashboard(const serve_options& opt, stop_source& stop, dashboard_info info);
  dashboard(const dashboard&) = delete;
  dashboard& operator=(const dashboard&) = delete;
  ~dashboard();

  [[nodiscard]] std::uint16_t port() const noexcept;
  /// 128 random bits as 32 hex digits: a stop request must carry it.
  [[nodiscard]] const std::string& token() const noexcept;
  /// http://ADDR:PORT/#token=TOKEN (https:// with TLS)
  [[nodiscard]] std::string url() const;
  /// SHA-256 fingerprint of the TLS certificate (AA:BB:...), empty without TLS.
  [[nodiscard]] const std::string& tls_fingerprint() const noexcept;

  /// For run_request::also and run_request::observer; used on the recording thread.
  [[nodiscard]] row_sink& rows() noexcept;
  [[nodiscard]] timing_observer& observer() noexcept;

  /// Starts the server thread.
  void start();
  /// Sends the final message (status, stop reason) and returns once every connected page
  /// received it, or after grace_s; then the server is stopped.
  void finish(const run_outcome& o);
  /// The run ended with an exception (bad input found late, I/O error): status "error".
  void finish_error(const std::string& message);

  struct impl;

 private:
  std::unique_ptr<impl> impl_;
};

/// The page (HTML + JavaScript, no external resource); dashboard_page.cpp.
const std::string& dashboard_page();

}  // namespace cosim::cli
