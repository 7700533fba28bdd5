// Live bench dashboard (dashboard.hpp, docs/dashboard.md): Boost.Beast HTTP + WebSocket on
// one io_context thread; rows and timing reach it through preallocated SPSC frame rings.
#include "dashboard.hpp"

#include <sys/stat.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <algorithm>
#include <atomic>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <system_error>
#include <thread>
#include <vector>

#include "cosim/rt_config/run.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/json_writer.hpp"
#include "json_value.hpp"

namespace cosim::cli {

namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;

std::int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Single producer (the recording thread), single consumer (the server thread); slots of
// slot_size doubles, all allocated by reset() before the run.
class frame_ring {
 public:
  void reset(std::size_t slot_size, std::size_t slots) {
    slot_ = slot_size;
    n_ = slots;
    slab_.assign(slot_size * slots, 0.0);
  }
  [[nodiscard]] std::size_t slot_size() const noexcept { return slot_; }
  /// The slot to fill, or null when full.
  double* slot_for_push() noexcept {
    const std::size_t h = head_.load(std::memory_order_relaxed);
    if (h - tail_.load(std::memory_order_acquire) == n_) return nullptr;
    return &slab_[(h % n_) * slot_];
  }
  void commit() noexcept {
    head_.store(head_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }
  const double* front() noexcept {
    const std::size_t t = tail_.load(std::memory_order_relaxed);
    if (head_.load(std::memory_order_acquire) == t) return nullptr;
    return &slab_[(t % n_) * slot_];
  }
  void pop() noexcept {
    tail_.store(tail_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }

 private:
  // head_ and the read-only fields share a cache line; tail_ (the consumer's) has its own.
  alignas(64) std::atomic<std::size_t> head_{0};
  std::vector<double> slab_;
  std::size_t slot_ = 0, n_ = 1;
  alignas(64) std::atomic<std::size_t> tail_{0};
};

constexpr std::size_t ring_slots = 64;  // 2.5 s of frames at 25 Hz
constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// Row frame: [rows, wall_s, then per column min, max, last].
void reset_rows(std::span<double> f) noexcept {
  f[0] = 0.0;
  for (std::size_t i = 2; i + 2 < f.size(); i += 3) {
    f[i] = inf;
    f[i + 1] = -inf;
    f[i + 2] = nan;
  }
}
void merge_rows(std::span<double> into, std::span<const double> f) noexcept {
  into[0] += f[0];
  into[1] = f[1];
  for (std::size_t i = 2; i + 2 < f.size(); i += 3) {
    into[i] = std::min(into[i], f[i]);
    into[i + 1] = std::max(into[i + 1], f[i + 1]);
    if (f[0] > 0) into[i + 2] = f[i + 2];
  }
}

// Timing frame: [wall_s, then per thread steps, wake_max, exec_max, slack_min, overruns] (ns).
constexpr std::size_t timing_fields = 5;
// One thread's fields (at `into` and `f`): sums, maxima, the minimum slack of steps seen.
void merge_thread(double* into, const double* f) noexcept {
  if (f[0] == 0) return;
  into[3] = into[0] == 0 ? f[3] : std::min(into[3], f[3]);
  into[0] += f[0];
  into[1] = std::max(into[1], f[1]);
  into[2] = std::max(into[2], f[2]);
  into[4] += f[4];
}
void merge_timing(std::span<double> into, std::span<const double> f) noexcept {
  into[0] = f[0];
  for (std::size_t i = 1; i + timing_fields <= f.size(); i += timing_fields)
    merge_thread(&into[i], &f[i]);
}

std::string random_token() {
  unsigned char bytes[16];
  std::ifstream in("/dev/urandom", std::ios::binary);
  in.read(reinterpret_cast<char*>(bytes), sizeof bytes);
  COSIM_INPUT_CHECK(in.gcount() == static_cast<std::streamsize>(sizeof bytes), errc::io,
                    "--serve: cannot read 16 random bytes from /dev/urandom for the stop token");
  static const char* const hex = "0123456789abcdef";
  std::string t;
  for (unsigned char b : bytes) {
    t += hex[b >> 4];
    t += hex[b & 15];
  }
  return t;
}

// Time does not depend on where the first difference is.
bool same_token(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size() || a.empty()) return false;
  unsigned diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    diff |=
        static_cast<unsigned>(static_cast<unsigned char>(a[i]) ^ static_cast<unsigned char>(b[i]));
  return diff == 0;
}

/// What the server does with a connected page (ws_session over plain TCP or TLS).
class ws_peer {
 public:
  ws_peer() = default;
  ws_peer(const ws_peer&) = delete;
  ws_peer& operator=(const ws_peer&) = delete;
  virtual ~ws_peer() = default;
  /// Queues `msg`; `replay`: history the page asked for when it reconnected.
  virtual void send(const std::shared_ptr<const std::string>& msg, bool final, bool replay) = 0;
  [[nodiscard]] virtual bool saw_final() const noexcept = 0;
  virtual void close() = 0;
};

/// An IPv4 client of a dual-stack [::] listener arrives as ::ffff:a.b.c.d: one client, one key.
net::ip::address client_address(const net::ip::address& a) {
  if (a.is_v6() && a.to_v6().is_v4_mapped())
    return net::ip::make_address_v4(net::ip::v4_mapped, a.to_v6());
  return a;
}

}  // namespace

struct dashboard::impl {
  impl(const serve_options& o, stop_source& s, dashboard_info i)
      : opt(o), stop(s), info(std::move(i)), token(random_token()), acceptor(ioc), timer(ioc) {}

  // ---- recording thread side
  class rows_tap final : public row_sink {
   public:
    explicit rows_tap(impl& d) : d_(d) {}
    void units(std::span<const std::string> units) override {
      std::lock_guard lock(d_.info_mutex);
      d_.units.assign(units.begin(), units.end());
    }
    void begin(std::span<const std::string> cols) override {
      {
        std::lock_guard lock(d_.info_mutex);
        d_.columns.assign(cols.begin(), cols.end());
        ++d_.info_version;
      }
      d_.row_ring.reset(2 + 3 * cols.size(), ring_slots);
      acc_.assign(2 + 3 * cols.size(), 0.0);
      reset_rows(acc_);
      d_.wall0_ns.store(now_ns(), std::memory_order_relaxed);
      next_ = now_ns() + d_.opt.period_ns;
      d_.rows_ready.store(true, std::memory_order_release);
    }
    void write(std::span<const double> row) noexcept override {
      acc_[0] += 1.0;
      for (std::size_t c = 0; c < row.size() && 2 + 3 * c + 2 < acc_.size(); ++c) {
        double* f = &acc_[2 + 3 * c];
        f[0] = std::min(f[0], row[c]);
        f[1] = std::max(f[1], row[c]);
        f[2] = row[c];
      }
      const std::int64_t now = now_ns();
      if (now >= next_ && publish(now)) next_ = now + d_.opt.period_ns;
    }
    void end() override {
      // The last partial interval; a full ring gets a moment to drain (the run is over).
      for (int i = 0; i < 200 && acc_.size() >= 2 && acc_[0] > 0 && !publish(now_ns()); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }

   private:
    // Full ring: keep merging into acc_ (nothing lost), retry at the next row.
    bool publish(std::int64_t now) noexcept {
      double* slot = d_.row_ring.slot_for_push();
      if (slot == nullptr) return false;
      acc_[1] = static_cast<double>(now - d_.wall0_ns.load(std::memory_order_relaxed)) * 1e-9;
      std::copy(acc_.begin(), acc_.end(), slot);
      d_.row_ring.commit();
      reset_rows(acc_);
      return true;
    }
    impl& d_;
    std::vector<double> acc_;
    std::int64_t next_ = 0;
  };

  class timing_tap final : public timing_observer {
   public:
    explicit timing_tap(impl& d) : d_(d) {}
    void begin(const system& run_sys) override {
      std::vector<std::string> names;
      std::vector<std::size_t> stats;
      for (std::size_t i = 0; i < run_sys.size(); ++i) {
        names.push_back(run_sys.at(i).name());
        if (run_sys.at(i).has_statistics()) stats.push_back(i);
      }
      {
        std::lock_guard lock(d_.info_mutex);
        d_.threads = std::move(names);
        d_.stat_subsystems = std::move(stats);
        d_.sys = &run_sys;
        ++d_.info_version;
      }
      d_.timing_ring.reset(1 + timing_fields * run_sys.size(), ring_slots);
      pending_.assign(1 + timing_fields * run_sys.size(), 0.0);
      d_.timing_ready.store(true, std::memory_order_release);
    }
    void timing(std::span<const thread_timing> interval) noexcept override {
      for (std::size_t i = 0; i < interval.size() && 1 + timing_fields * (i + 1) <= pending_.size();
           ++i) {
        const thread_timing& t = interval[i];
        const double f[timing_fields] = {
            static_cast<double>(t.steps), static_cast<double>(t.wake_max_ns),
            static_cast<double>(t.exec_max_ns), static_cast<double>(t.slack_min_ns),
            static_cast<double>(t.overruns)};
        merge_thread(&pending_[1 + timing_fields * i], f);
      }
      pending_[0] =
          static_cast<double>(now_ns() - d_.wall0_ns.load(std::memory_order_relaxed)) * 1e-9;
      push();
    }
    void end() noexcept override {
      for (int i = 0; i < 100 && has_pending() && !push(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      std::lock_guard lock(d_.info_mutex);
      d_.sys = nullptr;  // the system goes away after the run
    }

   private:
    bool has_pending() const noexcept {
      for (std::size_t i = 1; i < pending_.size(); i += timing_fields)
        if (pending_[i] != 0) return true;
      return false;
    }
    bool push() noexcept {
      double* slot = d_.timing_ring.slot_for_push();
      if (slot == nullptr) return false;  // kept in pending_, merged with the next interval
      std::copy(pending_.begin(), pending_.end(), slot);
      d_.timing_ring.commit();
      const double wall = pending_[0];
      std::fill(pending_.begin(), pending_.end(), 0.0);
      pending_[0] = wall;
      return true;
    }
    impl& d_;
    std::vector<double> pending_;
  };

  // ---- server thread side
  void start_accept();
  void tick();
  void schedule_tick();
  void send_data();
  /// True if an HTTP Host header names this server: the address it listens on (as in the
  /// printed URL) and its port, or localhost:PORT on a loopback address.
  /// On a wildcard bind (0.0.0.0, ::) the address is the one the connection arrived at
  /// (`local`), so every address of the host is served, each only under its own name.
  [[nodiscard]] bool host_ok(const std::string& host, const net::ip::address& local) const;
  /// The page's set-up message; `mark_sent`: the version everyone has seen (a broadcast).
  std::string hello_json(bool mark_sent = true);
  void broadcast(const std::shared_ptr<const std::string>& msg, bool final);
  void shut_down();
  void check_done();
  void remove(ws_peer* s);
  bool request_stop(std::string_view tok, const char* via);
  /// Sends `s` the data updates after `after` that the history still holds.
  void replay(ws_peer& s, std::uint64_t after);
  /// Per-address bounds (server thread): a connection is admitted while the address has
  /// fewer than max_connections_per_client open; a request takes one token of its bucket.
  [[nodiscard]] bool admit(const net::ip::address& a);
  [[nodiscard]] bool take_request(const net::ip::address& a);
  void opened(const net::ip::address& a) { ++clients[a].open; }
  void closed(const net::ip::address& a);

  serve_options opt;
  stop_source& stop;
  dashboard_info info;
  std::string token;
  // Declared before ioc, so destroyed after it: handlers still pending when ioc goes are
  // destroyed with it, and an http_session among them updates these in its destructor.
  // Open plain-HTTP connections (server thread). Bounded: idle connections cannot take every
  // descriptor of the process (the stop button needs one).
  std::size_t http_connections = 0;
  static constexpr std::size_t max_http_connections = 64;
  // Per client address: open HTTP connections and a token bucket of requests (refilled at
  // rate_per_s, at most burst), so one client can neither take every connection nor keep
  // the server thread busy; the others' stop still gets through.
  struct client_state {
    std::size_t open = 0;
    double tokens = burst;
    std::int64_t refilled_ns = 0;
  };
  static constexpr std::size_t max_connections_per_client = 16;
  static constexpr double rate_per_s = 50.0;
  static constexpr double burst = 100.0;
  // Addresses remembered at once; idle ones (no connection, full bucket) are forgotten first.
  static constexpr std::size_t max_clients = 4096;
  std::map<net::ip::address, client_state> clients;
  // TLS (--serve-cert/--serve-key): set before the server starts, then read only.
  std::optional<net::ssl::context> ssl;
  net::io_context ioc;
  tcp::acceptor acceptor;
  net::steady_timer timer;
  net::steady_timer accept_retry{ioc};
  std::thread thread;
  std::string tls_fingerprint;
  // Refused stops are logged at most once a second (a flood on a slow stderr pipe must not
  // hold the server thread): the ones in between are counted into the next line.
  std::int64_t refused_logged_ns = 0;
  std::uint64_t refused_unlogged = 0;

  rows_tap rows{*this};
  timing_tap timing{*this};
  frame_ring row_ring, timing_ring;
  std::atomic<bool> rows_ready{false}, timing_ready{false};
  std::atomic<std::int64_t> wall0_ns{now_ns()};

  std::mutex info_mutex;  // columns, threads, sys: written by begin()/end(), read here
  std::vector<std::string> columns, units, threads;  // units: one per column, "" for none
  std::vector<std::size_t> stat_subsystems;
  const system* sys = nullptr;
  int info_version = 0;

  // Server thread only.
  int sent_version = -1;
  std::vector<double> row_merge, timing_merge;
  std::vector<std::int64_t> overruns_total;
  std::vector<std::shared_ptr<ws_peer>> sessions;
  std::size_t handshakes = 0;  // WebSocket upgrades accepted, not yet in sessions
  std::shared_ptr<const std::string> final_msg;
  // The last data updates, for pages that reconnect (?after=SEQ): the page's own window
  // (1500 updates, a minute at 25 Hz) and at most 16 MiB of text.
  struct kept_update {
    std::uint64_t seq;
    std::shared_ptr<const std::string> msg;
  };
  std::deque<kept_update> history;
  std::size_t history_bytes = 0;
  static constexpr std::size_t history_updates = 1500;
  static constexpr std::size_t history_max_bytes = std::size_t{16} << 20;
  std::uint64_t next_seq = 1;   // of the next data update; 0 means "none yet" to a page
  std::uint64_t rows_sent = 0;  // rows in the data updates so far: the next one's row0
  // For GET /status.json: each column's newest value, the newest times, the drivers' counters.
  std::vector<double> last_row;
  double last_sim_s = 0.0, last_wall_s = 0.0;
  std::string last_drivers;
  [[nodiscard]] std::string status_json();

  std::mutex done_mutex;
  std::condition_variable done_cv;
  bool done = false;
};

namespace {

/// 300 s (Beast's suggested server timeout), or COSIM_DASHBOARD_IDLE_S seconds (1 .. 3600).
std::chrono::seconds ws_idle_timeout() {
  // NOLINTNEXTLINE(concurrency-mt-unsafe): read on the server thread; nothing sets it
  if (const char* v = std::getenv("COSIM_DASHBOARD_IDLE_S"); v != nullptr) {
    const long s = std::strtol(v, nullptr, 10);
    if (s >= 1 && s <= 3600) return std::chrono::seconds(s);
  }
  return std::chrono::seconds(300);
}

constexpr bool is_tls(const beast::tcp_stream*) noexcept {
  return false;
}
constexpr bool is_tls(const beast::ssl_stream<beast::tcp_stream>*) noexcept {
  return true;
}

/// One page's WebSocket over `Next` (beast::tcp_stream, or beast::ssl_stream of it with TLS).
template <class Next>
class ws_session final : public ws_peer, public std::enable_shared_from_this<ws_session<Next>> {
 public:
  ws_session(Next&& s, dashboard::impl& d) : ws_(std::move(s)), d_(d) {}

  /// `after`: the page's last data update (its seq) when it reconnects; the updates since
  /// then are sent from the server's history before the live ones.
  void run(http::request<http::string_body>&& req, std::optional<std::uint64_t> after) {
    req_ = std::move(req);  // kept until the handshake is done
    // Pings at half the idle timeout, which the browser answers by itself: a page that only
    // listens is not idle, and a dead one is found (the default, no pings, dropped every page
    // after 300 s). COSIM_DASHBOARD_IDLE_S shortens it (tests).
    auto t = websocket::stream_base::timeout::suggested(beast::role_type::server);
    t.idle_timeout = ws_idle_timeout();
    t.keep_alive_pings = true;
    ws_.set_option(t);
    ws_.read_message_max(4096);
    ++d_.handshakes;
    ws_.async_accept(req_, [self = this->shared_from_this(), after](beast::error_code ec) {
      --self->d_.handshakes;
      if (ec) return;
      self->d_.sessions.push_back(self);
      // A hello to this page only: a hello rebuilds a page, so the pages already open keep
      // their plots (each viewer that connected reset every other one).
      self->send(std::make_shared<const std::string>(self->d_.hello_json(false)), false, false);
      if (after) self->d_.replay(*self, *after);
      self->read();
    });
  }

  void send(const std::shared_ptr<const std::string>& msg, bool final, bool replay) override {
    // A page that cannot keep up loses live data messages (never the final one, nor the
    // history it asked for, which is bounded by the server's).
    if (!final && !replay && queue_.size() >= 64 + replay_queued_) return;
    queue_.push_back({msg, final, replay});
    if (replay) ++replay_queued_;
    if (queue_.size() == 1) write();
  }
  [[nodiscard]] bool saw_final() const noexcept override { return saw_final_; }
  /// The page sees the connection close (and keeps what it shows). A FIN after the last
  /// message, not a close(): that would send a reset if the page's bytes are unread,
  /// and a reset can discard the final message before the page reads it.
  void close() override {
    beast::error_code ec;
    beast::get_lowest_layer(ws_).socket().shutdown(tcp::socket::shutdown_send, ec);
  }

 private:
  struct queued {
    std::shared_ptr<const std::string> msg;
    bool final = false;
    bool replay = false;
  };

  void read() {
    ws_.async_read(buf_, [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) {
        self->d_.remove(self.get());
        return;
      }
      self->on_message(beast::buffers_to_string(self->buf_.data()));
      self->buf_.consume(self->buf_.size());
      self->read();
    });
  }

  void on_message(const std::string& text) {
    std::string reply;
    try {
      const json_value v = parse_json(text);
      const json_value* type = v.find("type");
      const json_value* tok = v.find("token");
      if (type == nullptr || type->str != "stop") {
        reply =
            R"j({"type":"error","message":"unknown request; the page sends {\"type\":\"stop\",\"token\":...}"})j";
      } else if (d_.request_stop(tok != nullptr ? std::string_view(tok->str) : "", "page")) {
        reply = R"j({"type":"stop_accepted"})j";
      } else {
        reply =
            R"j({"type":"error","message":"stop refused: the token is missing or wrong (cosim run prints it at start)"})j";
      }
    } catch (const std::exception&) {
      reply = R"j({"type":"error","message":"request is not JSON"})j";
    }
    send(std::make_shared<const std::string>(std::move(reply)), false, false);
  }

  void write() {
    ws_.text(true);
    ws_.async_write(net::buffer(*queue_.front().msg),
                    [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                      if (ec) {
                        self->d_.remove(self.get());
                        return;
                      }
                      if (self->queue_.front().final) {
                        self->saw_final_ = true;
                        self->d_.check_done();
                      }
                      if (self->queue_.front().replay) --self->replay_queued_;
                      self->queue_.pop_front();
                      if (!self->queue_.empty()) self->write();
                    });
  }

  websocket::stream<Next> ws_;
  http::request<http::string_body> req_;
  beast::flat_buffer buf_;
  std::deque<queued> queue_;
  std::size_t replay_queued_ = 0;
  bool saw_final_ = false;
  dashboard::impl& d_;
};

/// "/ws" (nullopt inside), "/ws?after=SEQ" (SEQ inside), anything else: nothing.
std::optional<std::optional<std::uint64_t>> ws_target(std::string_view target) {
  if (target == "/ws") return std::optional<std::uint64_t>{};
  constexpr std::string_view prefix = "/ws?after=";
  if (!target.starts_with(prefix)) return std::nullopt;
  const std::string_view digits = target.substr(prefix.size());
  if (digits.empty() || digits.size() > 18 ||
      digits.find_first_not_of("0123456789") != std::string_view::npos)
    return std::nullopt;
  return std::optional<std::uint64_t>{std::stoull(std::string(digits))};
}

/// One HTTP connection over `Stream` (beast::tcp_stream, or beast::ssl_stream of it).
template <class Stream>
class http_session : public std::enable_shared_from_this<http_session<Stream>> {
 public:
  static constexpr bool tls = is_tls(static_cast<const Stream*>(nullptr));

  http_session(Stream&& s, dashboard::impl& d) : stream_(std::move(s)), d_(d) {
    ++d_.http_connections;
    beast::error_code ec;
    auto& sock = beast::get_lowest_layer(stream_).socket();
    local_ = sock.local_endpoint(ec).address();
    remote_ = client_address(sock.remote_endpoint(ec).address());
    d_.opened(remote_);
  }
  http_session(const http_session&) = delete;
  http_session& operator=(const http_session&) = delete;
  ~http_session() {
    --d_.http_connections;
    d_.closed(remote_);
  }

  void start() {
    if constexpr (tls) {
      // Plain HTTP (or anything but a TLS client hello) fails the handshake: closed unanswered.
      beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(10));
      stream_.async_handshake(net::ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code ec) {
                                if (!ec) self->read();
                              });
    } else {
      read();
    }
  }

 private:
  void read() {
    req_ = {};
    beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(30));
    http::async_read(stream_, buf_, req_,
                     [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                       if (!ec) self->on_request();
                     });
  }

  void on_request() {
    // Every request counts, the WebSocket upgrade among them: one client's flood is refused
    // before it costs more than this check, and the other clients (and their stop) are served.
    if (!d_.take_request(remote_)) {
      reply(http::status::too_many_requests, "text/plain",
            "too many requests from this address; retry in a second\n");
      return;
    }
    const std::string target(req_.target());
    if (websocket::is_upgrade(req_)) {
      // A page of another site (DNS rebinding, a cross-site WebSocket) has another Origin.
      const auto origin = req_.find(http::field::origin);
      const std::string host(req_[http::field::host]);
      const auto after = ws_target(target);
      if (!after || !d_.host_ok(host, local_) ||
          (origin != req_.end() &&
           origin->value() != std::string(tls ? "https://" : "http://") + host)) {
        reply(http::status::forbidden, "text/plain", "WebSocket refused: path or origin\n");
        return;
      }
      // Each page costs the server thread a copy of every message: a bounded number of them
      // keeps a runaway client (or many tabs) from loading the machine the run is on.
      if (d_.sessions.size() + d_.handshakes >= dashboard::max_viewers) {
        reply(http::status::service_unavailable, "text/plain",
              "too many dashboard pages open (" + std::to_string(dashboard::max_viewers) +
                  "): close one and reload\n");
        return;
      }
      beast::get_lowest_layer(stream_).expires_never();
      std::make_shared<ws_session<Stream>>(std::move(stream_), d_)->run(std::move(req_), *after);
      return;
    }
    // DNS rebinding: a foreign name resolving to this address reaches the server with its
    // own Host (and a matching Origin); only the address the server was started on is served.
    if (!d_.host_ok(std::string(req_[http::field::host]), local_)) {
      reply(http::status::forbidden, "text/plain",
            "refused: Host is not the address cosim run printed\n");
      return;
    }
    if (target == "/" || target == "/index.html") {
      if (req_.method() != http::verb::get && req_.method() != http::verb::head) {
        reply(http::status::method_not_allowed, "text/plain", "GET only\n");
        return;
      }
      reply(http::status::ok, "text/html; charset=utf-8", dashboard_page());
      return;
    }
    if (target == "/status.json") {
      if (req_.method() != http::verb::get && req_.method() != http::verb::head) {
        reply(http::status::method_not_allowed, "text/plain", "GET only\n");
        return;
      }
      reply(http::status::ok, "application/json", d_.status_json());
      return;
    }
    if (target == "/stop") {
      if (req_.method() != http::verb::post) {
        reply(http::status::method_not_allowed, "text/plain", "POST /stop with X-Cosim-Token\n");
        return;
      }
      const auto tok = req_.find("X-Cosim-Token");
      if (d_.request_stop(tok != req_.end() ? std::string_view(tok->value()) : "", "POST /stop")) {
        reply(http::status::accepted, "text/plain", "stop requested\n");
      } else {
        reply(http::status::forbidden, "text/plain",
              "stop refused: X-Cosim-Token is missing or wrong (cosim run prints it at start)\n");
      }
      return;
    }
    reply(http::status::not_found, "text/plain", "not found\n");
  }

  void reply(http::status st, const char* type, std::string body) {
    auto res = std::make_shared<http::response<http::string_body>>(st, req_.version());
    res->set(http::field::server, "cosim");
    res->set(http::field::content_type, type);
    res->set(http::field::cache_control, "no-store");
    if (st == http::status::too_many_requests) res->set(http::field::retry_after, "1");
    // Nothing but this origin: the page fetches nothing from the network.
    res->set("Content-Security-Policy",
             "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
             "img-src data:; connect-src 'self'");
    res->keep_alive(req_.keep_alive());
    if (req_.method() == http::verb::head) {
      res->content_length(body.size());
    } else {
      res->body() = std::move(body);
      res->prepare_payload();
    }
    http::async_write(stream_, *res,
                      [self = this->shared_from_this(), res](beast::error_code ec, std::size_t) {
                        if (!ec && res->keep_alive()) {
                          self->read();
                        } else {
                          self->end();
                        }
                      });
  }

  void end() {
    if constexpr (tls) {
      // close_notify first, so a TLS client sees a clean end; bounded by the stream's timeout.
      beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(5));
      stream_.async_shutdown([self = this->shared_from_this()](beast::error_code) {
        beast::error_code ignored;
        beast::get_lowest_layer(self->stream_)
            .socket()
            .shutdown(tcp::socket::shutdown_send, ignored);
      });
    } else {
      beast::error_code ignored;
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    }
  }

  Stream stream_;
  beast::flat_buffer buf_;
  http::request<http::string_body> req_;
  dashboard::impl& d_;
  net::ip::address local_, remote_;
};

}  // namespace

void dashboard::impl::start_accept() {
  acceptor.async_accept([this](beast::error_code ec, tcp::socket s) {
    if (ec == net::error::operation_aborted || !acceptor.is_open()) return;  // closed
    if (ec) {
      // EMFILE, ENFILE, ENOBUFS, ECONNABORTED, ...: the listening socket is fine, so back off
      // and accept again; giving up here would leave the stop button dead for the run.
      accept_retry.expires_after(std::chrono::milliseconds(50));
      accept_retry.async_wait([this](beast::error_code e) {
        if (!e) start_accept();
      });
      return;
    }
    beast::error_code rec;
    const auto remote = client_address(s.remote_endpoint(rec).address());
    if (rec || http_connections >= max_http_connections || !admit(remote)) {
      beast::error_code ignored;
      s.close(ignored);  // over a bound: refused at once, the descriptor is back
    } else if (ssl) {
      std::make_shared<http_session<beast::ssl_stream<beast::tcp_stream>>>(
          beast::ssl_stream<beast::tcp_stream>(beast::tcp_stream(std::move(s)), *ssl), *this)
          ->start();
    } else {
      std::make_shared<http_session<beast::tcp_stream>>(beast::tcp_stream(std::move(s)), *this)
          ->start();
    }
    start_accept();
  });
}

bool dashboard::impl::admit(const net::ip::address& a) {
  if (const auto it = clients.find(a); it != clients.end())
    return it->second.open < max_connections_per_client;
  if (clients.size() >= max_clients) {
    // Forget the addresses that hold nothing: no connection and a full bucket again.
    const std::int64_t now = now_ns();
    std::erase_if(clients, [now](const auto& kv) {
      const client_state& c = kv.second;
      return c.open == 0 &&
             c.tokens + static_cast<double>(now - c.refilled_ns) * 1e-9 * rate_per_s >= burst;
    });
    if (clients.size() >= max_clients) return false;  // that many busy addresses: new ones wait
  }
  return true;
}

bool dashboard::impl::take_request(const net::ip::address& a) {
  client_state& c = clients[a];
  const std::int64_t now = now_ns();
  if (c.refilled_ns != 0)
    c.tokens =
        std::min(burst, c.tokens + static_cast<double>(now - c.refilled_ns) * 1e-9 * rate_per_s);
  c.refilled_ns = now;
  if (c.tokens < 1.0) return false;
  c.tokens -= 1.0;
  return true;
}

void dashboard::impl::closed(const net::ip::address& a) {
  if (const auto it = clients.find(a); it != clients.end() && it->second.open > 0)
    --it->second.open;
}

std::string dashboard::impl::status_json() {
  // Server thread (as send_data): a script's view of the run without a WebSocket.
  json_writer j;
  j.begin_object();
  j.key("scenario").value(info.scenario);
  j.key("mode").value(info.mode);
  j.key("status").value(final_msg ? "ended" : rows_sent > 0 ? "running" : "starting");
  j.key("rows").value(static_cast<std::int64_t>(rows_sent));
  j.key("sim_s").value(last_sim_s);
  j.key("wall_s").value(last_wall_s);
  {
    std::lock_guard lock(info_mutex);
    j.key("last").begin_object();
    for (std::size_t c = 0; c < columns.size() && c < last_row.size(); ++c)
      j.key(columns[c]).value(last_row[c]);
    j.end_object();
    j.key("units").begin_object();
    for (std::size_t c = 0; c < columns.size() && c < units.size(); ++c)
      j.key(columns[c]).value(units[c]);
    j.end_object();
  }
  if (!last_drivers.empty()) j.key("drivers").raw(last_drivers);
  // The end message as the page gets it (status, stop reason, exit code).
  if (final_msg) j.key("end").raw(*final_msg);
  j.end_object();
  return j.str() + "\n";
}

void dashboard::impl::replay(ws_peer& s, std::uint64_t after) {
  // The page learns what it asked for, what comes and how much is gone (older than the
  // history); after >= next_seq means another run (a page left open across runs): it resets.
  const std::uint64_t first = history.empty() ? next_seq : history.front().seq;
  const std::uint64_t from = std::max(after + 1, first);
  json_writer j;
  j.begin_object();
  j.key("type").value("resume");
  j.key("after").value(static_cast<std::int64_t>(after));
  j.key("next").value(static_cast<std::int64_t>(next_seq));
  j.key("missed").value(static_cast<std::int64_t>(after < next_seq ? from - after - 1 : 0));
  j.end_object();
  s.send(std::make_shared<const std::string>(j.str()), false, true);
  for (const kept_update& u : history)
    if (u.seq > after) s.send(u.msg, false, true);
}

bool dashboard::impl::request_stop(std::string_view tok, const char* via) {
  if (!same_token(tok, token)) {
    const std::int64_t now = now_ns();
    if (refused_logged_ns != 0 && now - refused_logged_ns < 1'000'000'000) {
      ++refused_unlogged;
      return false;
    }
    refused_logged_ns = now;
    std::fprintf(stderr,
                 "cosim: dashboard: stop refused (%s): missing or wrong token (%llu more refused "
                 "in the second before, not logged)\n",
                 via, static_cast<unsigned long long>(refused_unlogged));
    refused_unlogged = 0;
    return false;
  }
  // The same source and cause as SIGINT (run_command.cpp): summary.json says operator_signal.
  stop.raise(stop_cause::operator_signal);
  std::fprintf(stderr, "cosim: dashboard: stop requested (%s)\n", via);
  return true;
}

std::string dashboard::impl::hello_json(bool mark_sent) {
  json_writer j;
  j.begin_object();
  j.key("type").value("hello");
  j.key("scenario").value(info.scenario);
  j.key("mode").value(info.mode);
  j.key("macro_step_s").value(info.macro_step_s);
  j.key("duration_s").value(info.duration_s);
  j.key("energy_limit_J").value(info.energy_limit_J);  // null when infinite: no limit
  j.key("power_limit_W").value(info.power_limit_W);
  j.key("alarms").begin_array();
  for (const alarm_spec& a : info.alarms) {
    j.begin_object();
    j.key("name").value(a.name);
    j.key("variable").value(a.variable);
    j.key("min").value(a.min);  // null when infinite: no such limit
    j.key("max").value(a.max);
    j.key("rate_max").value(a.rate_max);
    j.key("debounce_s").value(to_seconds(a.debounce));
    j.key("action").value(to_string(a.action));
    j.end_object();
  }
  j.end_array();
  std::lock_guard lock(info_mutex);
  j.key("columns").begin_array();
  for (const auto& c : columns) j.value(c);
  j.end_array();
  j.key("units").begin_array();
  for (std::size_t c = 0; c < columns.size(); ++c) j.value(c < units.size() ? units[c] : "");
  j.end_array();
  j.key("threads").begin_array();
  for (const auto& t : threads) j.value(t);
  j.end_array();
  if (mark_sent) sent_version = info_version;
  j.end_object();
  return j.str();
}

void dashboard::impl::broadcast(const std::shared_ptr<const std::string>& msg, bool final) {
  for (auto& s : sessions) s->send(msg, final, false);
}

void dashboard::impl::send_data() {
  // Drain both rings into one message per tick.
  bool any = false;
  if (rows_ready.load(std::memory_order_acquire)) {
    if (row_merge.size() != row_ring.slot_size()) {
      row_merge.assign(row_ring.slot_size(), 0.0);
      reset_rows(row_merge);
    }
    for (const double* f = row_ring.front(); f != nullptr; f = row_ring.front()) {
      merge_rows(row_merge, std::span<const double>(f, row_merge.size()));
      row_ring.pop();
      any = true;
    }
  }
  if (timing_ready.load(std::memory_order_acquire)) {
    if (timing_merge.size() != timing_ring.slot_size()) {
      timing_merge.assign(timing_ring.slot_size(), 0.0);
      overruns_total.assign((timing_merge.size() - 1) / timing_fields, 0);
    }
    for (const double* f = timing_ring.front(); f != nullptr; f = timing_ring.front()) {
      merge_timing(timing_merge, std::span<const double>(f, timing_merge.size()));
      timing_ring.pop();
      any = true;
    }
  }
  if (!any) return;
  json_writer j;
  j.begin_object();
  j.key("type").value("data");
  // seq numbers the updates (a reconnecting page asks for those after its last); row0 is the
  // index of the update's first row among the run's rows (results.csv's data rows).
  const std::uint64_t seq = next_seq++;
  const auto nrows = static_cast<std::uint64_t>(row_merge.empty() ? 0 : row_merge[0]);
  j.key("seq").value(static_cast<std::int64_t>(seq));
  j.key("row0").value(static_cast<std::int64_t>(rows_sent));
  rows_sent += nrows;
  const double row_wall = row_merge.size() >= 2 ? row_merge[1] : 0.0;
  const double timing_wall = timing_merge.empty() ? 0.0 : timing_merge[0];
  j.key("wall_s").value(std::max(row_wall, timing_wall));
  j.key("rows").value(static_cast<std::int64_t>(row_merge.empty() ? 0 : row_merge[0]));
  last_wall_s = std::max(row_wall, timing_wall);
  if (!row_merge.empty() && row_merge[0] > 0) {
    j.key("sim_s").value(row_merge[4]);  // last value of column 0, t
    last_sim_s = row_merge[4];
    last_row.clear();
    for (std::size_t i = 4; i < row_merge.size(); i += 3) last_row.push_back(row_merge[i]);
    for (int part = 0; part < 3; ++part) {
      j.key(part == 0 ? "min" : part == 1 ? "max" : "last").begin_array();
      for (std::size_t i = 2 + static_cast<std::size_t>(part); i < row_merge.size(); i += 3)
        j.value(row_merge[i]);
      j.end_array();
    }
  }
  if (!timing_merge.empty()) {
    j.key("threads").begin_array();
    for (std::size_t k = 0; k < overruns_total.size(); ++k) {
      const double* f = &timing_merge[1 + timing_fields * k];
      overruns_total[k] += static_cast<std::int64_t>(f[4]);
      j.begin_object();
      j.key("steps").value(static_cast<std::int64_t>(f[0]));
      if (f[0] > 0) {
        j.key("wake_max_us").value(f[1] * 1e-3);
        j.key("exec_max_us").value(f[2] * 1e-3);
        if (info.mode == "realtime") j.key("slack_min_us").value(f[3] * 1e-3);
      }
      j.key("overruns").value(static_cast<std::int64_t>(f[4]));
      j.key("overruns_total").value(overruns_total[k]);
      j.end_object();
    }
    j.end_array();
  }
  {
    std::lock_guard lock(info_mutex);
    if (sys != nullptr && !stat_subsystems.empty()) {
      json_writer d;
      d.begin_array();
      for (std::size_t i : stat_subsystems) sys->at(i).write_statistics(d);
      d.end_array();
      last_drivers = d.str();
      j.key("drivers").raw(last_drivers);
    }
  }
  j.end_object();
  if (!row_merge.empty()) reset_rows(row_merge);
  if (!timing_merge.empty()) std::fill(timing_merge.begin() + 1, timing_merge.end(), 0.0);
  auto msg = std::make_shared<const std::string>(j.str());
  history.push_back({seq, msg});
  history_bytes += msg->size();
  while (history.size() > history_updates || history_bytes > history_max_bytes) {
    history_bytes -= history.front().msg->size();
    history.pop_front();
  }
  broadcast(msg, false);
}

void dashboard::impl::tick() {
  bool changed = false;
  {
    std::lock_guard lock(info_mutex);
    changed = info_version != sent_version;
  }
  if (changed) broadcast(std::make_shared<const std::string>(hello_json()), false);
  send_data();
  if (final_msg) {
    // A page that connects after the end gets the whole story at once.
    for (auto& s : sessions)
      if (!s->saw_final()) s->send(final_msg, true, false);
  }
}

void dashboard::impl::schedule_tick() {
  timer.expires_after(std::chrono::nanoseconds(opt.period_ns));
  timer.async_wait([this](beast::error_code ec) {
    if (ec) return;
    tick();
    schedule_tick();
  });
}

// On the server thread: nothing more is accepted or sent; pages see the connection close.
void dashboard::impl::shut_down() {
  beast::error_code ec;
  acceptor.close(ec);
  timer.cancel();
  for (auto& s : sessions) s->close();
  sessions.clear();
}

void dashboard::impl::remove(ws_peer* s) {
  std::erase_if(sessions, [s](const auto& p) { return p.get() == s; });
  check_done();
}

void dashboard::impl::check_done() {
  if (!final_msg) return;
  for (const auto& s : sessions)
    if (!s->saw_final()) return;
  std::lock_guard lock(done_mutex);
  done = true;
  done_cv.notify_all();
}

namespace {

// Never prompts on the terminal for a passphrase (OpenSSL's default would, holding the start).
int no_passphrase(char* /*buf*/, int /*size*/, int /*rwflag*/, void* /*u*/) {
  return -1;
}

void check_readable(const char* option, const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  const int err = errno;
  COSIM_INPUT_CHECK(in.good(), errc::io,
                    std::string(option) + " " + file + ": cannot read the file: " +
                        std::error_code(err, std::generic_category()).message());
}

/// The server's TLS context from PEM files; every failure names the option and the file.
/// Returns the certificate's SHA-256 fingerprint (AA:BB:...), for checking a self-signed one.
std::string load_tls(net::ssl::context& ctx, const std::string& cert, const std::string& key) {
  check_readable("--serve-cert", cert);
  check_readable("--serve-key", key);
  // Whoever reads the key can pose as this dashboard: say so, as ssh does, but go on (a bench
  // user may have reasons, e.g. a group of operators).
  if (struct stat st{}; ::stat(key.c_str(), &st) == 0 && (st.st_mode & 077) != 0)
    std::fprintf(stderr,
                 "cosim: dashboard: WARNING: --serve-key %s can be read by other users (mode "
                 "%03o); chmod 600 it\n",
                 key.c_str(), static_cast<unsigned>(st.st_mode & 0777));
  SSL_CTX* native = ctx.native_handle();
  // TLS 1.2 and 1.3 only; the library's default cipher lists.
  SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
  SSL_CTX_set_default_passwd_cb(native, &no_passphrase);
  beast::error_code ec;
  ctx.use_certificate_chain_file(cert, ec);
  COSIM_INPUT_CHECK(!ec, errc::config_value,
                    "--serve-cert " + cert + ": not a PEM certificate (chain): " + ec.message());
  // The key is read here, not by use_private_key_file, to tell a file that holds no
  // (unencrypted) key from a key of another certificate.
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_file(key.c_str(), "r"), &BIO_free);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> pkey(
      bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, &no_passphrase, nullptr) : nullptr,
      &EVP_PKEY_free);
  COSIM_INPUT_CHECK(pkey != nullptr, errc::config_value,
                    "--serve-key " + key +
                        ": not an unencrypted PEM private key (an encrypted one: openssl pkey "
                        "-in KEY -out NEW_KEY, and keep NEW_KEY mode 0600)");
  COSIM_INPUT_CHECK(
      SSL_CTX_use_PrivateKey(native, pkey.get()) == 1 && SSL_CTX_check_private_key(native) == 1,
      errc::config_value,
      "--serve-key " + key + ": the key does not match the certificate in " + "--serve-cert " +
          cert);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  std::string fp;
  if (X509* x = SSL_CTX_get0_certificate(native);
      x != nullptr && X509_digest(x, EVP_sha256(), md, &n) == 1) {
    static const char* const hex = "0123456789ABCDEF";
    for (unsigned int i = 0; i < n; ++i) {
      if (i > 0) fp += ':';
      fp += hex[md[i] >> 4];
      fp += hex[md[i] & 15];
    }
  }
  return fp;
}

}  // namespace

serve_options parse_serve(const std::string& spec, bool any_address) {
  serve_options o;
  o.any_address = any_address;
  const std::string forms =
      "; expected PORT, ADDR:PORT or [IPV6]:PORT with PORT in 0..65535 (0: any free port), "
      "e.g. --serve 127.0.0.1:8080";
  std::string addr = o.address;
  std::string port = spec;
  if (const auto colon = spec.rfind(':'); colon != std::string::npos) {
    addr = spec.substr(0, colon);
    port = spec.substr(colon + 1);
    if (addr.size() >= 2 && addr.front() == '[' && addr.back() == ']')
      addr = addr.substr(1, addr.size() - 2);
  }
  COSIM_INPUT_CHECK(!port.empty() && port.size() <= 5 &&
                        port.find_first_not_of("0123456789") == std::string::npos &&
                        std::stoi(port) <= 65535,
                    errc::config_value, "--serve " + spec + ": bad port '" + port + "'" + forms);
  o.port = static_cast<std::uint16_t>(std::stoi(port));
  beast::error_code ec;
  const auto a = net::ip::make_address(addr, ec);
  COSIM_INPUT_CHECK(!ec, errc::config_value,
                    "--serve " + spec + ": '" + addr + "' is not an IP address" + forms);
  COSIM_INPUT_CHECK(a.is_loopback() || any_address, errc::config_value,
                    "--serve " + spec + ": " + addr +
                        " is not a loopback address: the dashboard and its stop button would be "
                        "reachable from the network; pass --serve-any to allow it");
  o.address = addr;
  return o;
}

dashboard::dashboard(const serve_options& opt, stop_source& stop, dashboard_info info)
    : impl_(std::make_unique<impl>(opt, stop, std::move(info))) {
  COSIM_INPUT_CHECK(opt.cert_file.empty() == opt.key_file.empty(), errc::config_value,
                    opt.cert_file.empty() ? "--serve-key " + opt.key_file + " needs --serve-cert"
                                          : "--serve-cert " + opt.cert_file + " needs --serve-key");
  if (!opt.cert_file.empty()) {
    impl_->ssl.emplace(net::ssl::context::tls_server);
    impl_->tls_fingerprint = load_tls(*impl_->ssl, opt.cert_file, opt.key_file);
  }
  beast::error_code ec;
  const tcp::endpoint ep(net::ip::make_address(opt.address), opt.port);
  const std::string where = "--serve " + opt.address + ":" + std::to_string(opt.port);
  impl_->acceptor.open(ep.protocol(), ec);
  if (!ec) impl_->acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) impl_->acceptor.bind(ep, ec);
  if (!ec) impl_->acceptor.listen(net::socket_base::max_listen_connections, ec);
  COSIM_INPUT_CHECK(!ec, errc::io,
                    where + ": cannot listen: " + ec.message() +
                        " (another program uses the port? --serve 0 picks a "
                        "free one)");
  if (!ep.address().is_loopback() && impl_->ssl)
    std::fprintf(
        stderr,
        "cosim: dashboard: --serve-any: serving on %s beyond this host over TLS: "
        "anyone who reaches it and has the stop token can stop the run; check the "
        "certificate's SHA-256 fingerprint in the browser: %s\n",
        (opt.address + ":" + std::to_string(impl_->acceptor.local_endpoint(ec).port())).c_str(),
        impl_->tls_fingerprint.c_str());
  else if (!ep.address().is_loopback())
    std::fprintf(
        stderr,
        "cosim: dashboard: WARNING: --serve-any: serving on %s beyond this host, over "
        "plain HTTP: the stop token in the printed URL travels unencrypted, so anyone "
        "who can read the bench network's traffic (or the URL) can stop the run\n",
        (opt.address + ":" + std::to_string(impl_->acceptor.local_endpoint(ec).port())).c_str());
}

dashboard::~dashboard() {
  impl* d = impl_.get();
  try {
    if (d->thread.joinable()) {
      net::post(d->ioc, [d] {
        d->shut_down();
        d->ioc.stop();
      });
      d->thread.join();
    }
  } catch (const std::exception& e) {
    // Only a failed join gets here (never the server thread itself): ending the process
    // beats leaving a thread that uses the state freed below.
    std::fprintf(stderr, "cosim: dashboard: %s\n", e.what());
    std::terminate();
  }
  d->sessions.clear();
}

bool dashboard::impl::host_ok(const std::string& host, const net::ip::address& local) const {
  beast::error_code ec;
  const auto ep = acceptor.local_endpoint(ec);
  if (ec) return false;
  auto a = ep.address();
  if (a.is_unspecified()) {
    a = local;
    // An IPv4 client of a dual-stack [::] listener arrives as ::ffff:a.b.c.d.
    if (a.is_v6() && a.to_v6().is_v4_mapped())
      a = net::ip::make_address_v4(net::ip::v4_mapped, a.to_v6());
  }
  const std::string port = ":" + std::to_string(ep.port());
  const std::string addr = a.is_v6() ? "[" + a.to_string() + "]" : a.to_string();
  return host == addr + port || (a.is_loopback() && host == "localhost" + port);
}

std::uint16_t dashboard::port() const noexcept {
  beast::error_code ec;
  return impl_->acceptor.local_endpoint(ec).port();  // 0 once closed
}
const std::string& dashboard::token() const noexcept {
  return impl_->token;
}
const std::string& dashboard::tls_fingerprint() const noexcept {
  return impl_->tls_fingerprint;
}
std::string dashboard::url() const {
  beast::error_code ec;
  const auto a = impl_->acceptor.local_endpoint(ec).address();
  const std::string host = a.is_v6() ? "[" + a.to_string() + "]" : a.to_string();
  return std::string(impl_->ssl ? "https://" : "http://") + host + ":" + std::to_string(port()) +
         "/#token=" + impl_->token;
}
row_sink& dashboard::rows() noexcept {
  return impl_->rows;
}
timing_observer& dashboard::observer() noexcept {
  return impl_->timing;
}

void dashboard::start() {
  impl_->start_accept();
  impl_->schedule_tick();
  impl_->thread = std::thread([d = impl_.get()] {
    // Not a real-time thread: default policy, no CPU pinning (inherits the caller's).
    for (;;) {
      try {
        d->ioc.run();
        return;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "cosim: dashboard: %s\n", e.what());
      }
    }
  });
}

void dashboard::finish(const run_outcome& o) {
  json_writer j;
  j.begin_object();
  j.key("type").value("end");
  j.key("status").value(to_string(o.status));
  j.key("stop_reason").value(o.stop_reason);
  j.key("message").value(o.message);
  j.key("sim_time_s").value(o.sim_time_s);
  j.key("wall_time_s").value(o.wall_time_s);
  j.key("macro_steps").value(o.macro_steps);
  j.key("energy_residual_J").value(o.energy_residual);
  j.key("max_residual_power_W").value(o.max_residual_power);
  j.key("exit_code").value(config::exit_code(o));
  j.key("alarms").begin_array();
  for (const alarm_report& a : o.alarms) {
    j.begin_object();
    j.key("name").value(a.name);
    j.key("action").value(to_string(a.action));
    j.key("count").value(a.count);
    if (a.count > 0) j.key("first_time_s").value(a.first_time_s);
    j.end_object();
  }
  j.end_array();
  j.end_object();
  auto msg = std::make_shared<const std::string>(j.str());
  impl* d = impl_.get();
  net::post(d->ioc, [d, msg] {
    d->tick();  // the rows and timing still in the rings go first
    d->final_msg = msg;
    d->tick();
    d->check_done();
  });
  {
    std::unique_lock lock(d->done_mutex);
    d->done_cv.wait_for(lock, std::chrono::duration<double>(d->opt.grace_s),
                        [d] { return d->done; });
  }
  net::post(d->ioc, [d] {
    d->shut_down();
    d->ioc.stop();
  });
  if (d->thread.joinable()) d->thread.join();
}

void dashboard::finish_error(const std::string& message) {
  run_outcome o;
  o.status = run_status::error;
  o.stop_reason = "error";
  o.message = message;
  finish(o);
}

}  // namespace cosim::cli
