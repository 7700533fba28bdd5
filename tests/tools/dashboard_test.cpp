// cosim run --serve (docs/dashboard.md): the page and the WebSocket of a realtime run, the
// token-guarded stop through the operator stop source (stop_reason operator_signal, exit 1),
// refusals that leave the run going, bad --serve input, a headless Chromium driving the
// page through the DevTools protocol, and the real-time path staying allocation-free with
// the dashboard on.
#define COSIM_DEFINE_ALLOC_COUNTER
#include "alloc_counter.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <array>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "cosim/rt_config/scenario.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/threaded_executor.hpp"
#include "dashboard.hpp"
#include "json_value.hpp"
#include "process_support.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using cosim::cli::json_value;
using cosim::cli::parse_json;
using cosim::test::temp_dir;
using cosim::test_process::slurp;
using cosim::test_process::spawn;
using cosim::test_process::wait_exit;
using cosim::test_process::wait_for;
using namespace std::chrono_literals;

const std::string exe = COSIM_EXE;
const std::string oscillator =
    std::string(COSIM_SOURCE_DIR) + "/rt_config/scenarios/oscillator004.toml";

// A realtime run long enough to be stopped: H = 2 ms, 30 s; the shared machine's noise must
// not end it (watchdog), nor the energy limit.
std::vector<std::string> realtime_run(const std::string& out, const std::string& serve) {
  return {exe,
          "run",
          oscillator,
          "--out",
          out,
          "--set",
          "run.mode=realtime",
          "--set",
          "run.macro_step=0.002",
          "--set",
          "run.duration=30",
          "--set",
          "watchdog.max_overruns=1000000",
          "--set",
          "run.lock_memory=false",
          "--set",
          "safety.energy_residual_limit=1e6",
          "--serve",
          serve,
          "-q"};
}

struct served {
  std::string host;
  std::string port;
  std::string token;
};

// Waits for "dashboard: http://HOST:PORT/#token=T" on the child's stdout.
served wait_for_url(pid_t pid, const std::string& out_path) {
  served s;
  const std::regex re(R"(dashboard: http://([0-9.]+):([0-9]+)/#token=([0-9a-f]+)\n)");
  wait_for(
      pid,
      [&] {
        std::smatch m;
        const std::string out = slurp(out_path);
        if (!std::regex_search(out, m, re)) return false;
        s = {m[1], m[2], m[3]};
        return true;
      },
      20s);
  return s;
}

http::response<http::string_body> http_request(const served& s, http::verb verb,
                                               const std::string& target,
                                               const std::string& token_header = "") {
  net::io_context ioc;
  beast::tcp_stream stream(ioc);
  tcp::resolver resolver(ioc);
  stream.connect(resolver.resolve(s.host, s.port));
  http::request<http::string_body> req{verb, target, 11};
  req.set(http::field::host, s.host + ":" + s.port);
  if (!token_header.empty()) req.set("X-Cosim-Token", token_header);
  req.prepare_payload();
  http::write(stream, req);
  beast::flat_buffer buf;
  http::response<http::string_body> res;
  http::read(stream, buf, res);
  beast::error_code ec;
  stream.socket().shutdown(tcp::socket::shutdown_both, ec);
  return res;
}

// A blocking WebSocket client (the dashboard's own or Chromium's DevTools endpoint).
class ws_client {
 public:
  ws_client(const std::string& host, const std::string& port, const std::string& target)
      : ws_(ioc_) {
    tcp::resolver resolver(ioc_);
    net::connect(ws_.next_layer(), resolver.resolve(host, port));
    ws_.read_message_max(std::size_t{64} * 1024 * 1024);  // screenshots
    ws_.handshake(host + ":" + port, target);
  }
  void send(const std::string& text) { ws_.write(net::buffer(text)); }
  /// The next message; empty when the server closed the connection.
  std::string receive() {
    beast::flat_buffer buf;
    beast::error_code ec;
    ws_.read(buf, ec);
    if (ec) return "";
    return beast::buffers_to_string(buf.data());
  }
  /// The next message of `type` (other types are skipped); null type when closed.
  json_value receive(const std::string& type) {
    for (;;) {
      const std::string text = receive();
      if (text.empty()) return {};
      json_value v = parse_json(text);
      if (const json_value* t = v.find("type"); t != nullptr && t->str == type) return v;
    }
  }

 private:
  net::io_context ioc_;
  websocket::stream<tcp::socket> ws_;
};

// Kills the child if the test gets stuck on a blocking read (the socket then closes).
class kill_after {
 public:
  kill_after(pid_t pid, std::chrono::seconds limit)
      : th_([this, pid, limit] {
          std::unique_lock lock(m_);
          if (!cv_.wait_for(lock, limit, [this] { return done_; })) kill(pid, SIGKILL);
        }) {}
  ~kill_after() {
    {
      std::lock_guard lock(m_);
      done_ = true;
    }
    cv_.notify_all();
    th_.join();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread th_;
};

std::vector<std::string> strings(const json_value& arr) {
  std::vector<std::string> v;
  for (const auto& e : arr.arr) v.push_back(e.str);
  return v;
}

TEST(Dashboard, ParseServeAcceptsLoopbackAndRefusesOthersWithoutServeAny) {
  using cosim::cli::parse_serve;
  EXPECT_EQ(parse_serve("8080", false).address, "127.0.0.1");
  EXPECT_EQ(parse_serve("8080", false).port, 8080);
  EXPECT_EQ(parse_serve("127.0.0.2:0", false).address, "127.0.0.2");
  EXPECT_EQ(parse_serve("[::1]:9000", false).address, "::1");
  EXPECT_EQ(parse_serve("0.0.0.0:80", true).address, "0.0.0.0");
  for (const char* bad :
       {"0.0.0.0:8080", "192.168.1.5:1", "65536", "x", "localhost:80", ":80", "127.0.0.1:", "-1"}) {
    try {
      (void)parse_serve(bad, false);
      ADD_FAILURE() << bad << " accepted";
    } catch (const cosim::error& e) {
      EXPECT_EQ(e.code(), cosim::errc::config_value);
      EXPECT_NE(std::string(e.what()).find(std::string("--serve ") + bad), std::string::npos)
          << e.what();
    }
  }
}

TEST(Dashboard, BadServeInputOrAPortInUseExitsTwoBeforeTheResultsFolderIsTouched) {
  temp_dir tmp;
  // A port in use: this test listens on it.
  net::io_context ioc;
  tcp::acceptor busy(ioc, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
  const std::string port = std::to_string(busy.local_endpoint().port());
  struct bad_case {
    std::vector<std::string> extra;
    std::string says;
  };
  const std::vector<bad_case> cases{
      {{"--serve", "127.0.0.1:" + port}, "--serve 127.0.0.1:" + port + ": cannot listen"},
      {{"--serve", "0.0.0.0:0"}, "pass --serve-any"},
      {{"--serve", "99999"}, "PORT in 0..65535"},
  };
  for (const auto& c : cases) {
    const std::string out = tmp / "run";
    std::vector<std::string> args{exe, "run", oscillator, "--out", out};
    args.insert(args.end(), c.extra.begin(), c.extra.end());
    const pid_t pid = spawn(args, tmp / "out.txt", tmp / "err.txt");
    EXPECT_EQ(wait_exit(pid, 60s), 2) << c.says;
    EXPECT_NE(slurp(tmp / "err.txt").find(c.says), std::string::npos) << slurp(tmp / "err.txt");
    EXPECT_FALSE(fs::exists(out)) << c.says;
  }
}

TEST(Dashboard, StreamsTheRunAndStopsItOnlyWithTheToken) {
  temp_dir tmp;
  const std::string out = tmp / "run";
  const pid_t pid = spawn(realtime_run(out, "0"), tmp / "out.txt", tmp / "err.txt");
  kill_after guard(pid, 90s);
  const served s = wait_for_url(pid, tmp / "out.txt");
  ASSERT_FALSE(s.port.empty()) << slurp(tmp / "out.txt") << slurp(tmp / "err.txt");
  EXPECT_EQ(s.host, "127.0.0.1");
  EXPECT_EQ(s.token.size(), 32U);  // 128 bits in hex

  // The page: self-contained (no external script, style or URL), with the stop button.
  const auto page = http_request(s, http::verb::get, "/");
  EXPECT_EQ(page.result(), http::status::ok);
  EXPECT_NE(page.body().find("id=\"stop\""), std::string::npos);
  EXPECT_EQ(page.body().find("http://"), std::string::npos);
  EXPECT_EQ(page.body().find("https://"), std::string::npos);
  EXPECT_EQ(page.body().find(" src="), std::string::npos);
  EXPECT_EQ(page.body().find("<link rel=\"stylesheet"), std::string::npos);

  ws_client ws(s.host, s.port, "/ws");
  // Columns and threads of the system (hello again once the run knows them).
  json_value hello;
  for (int i = 0; i < 100; ++i) {
    hello = ws.receive("hello");
    ASSERT_EQ(hello.k, json_value::kind::object);
    if (!hello.find("threads")->arr.empty()) break;
  }
  EXPECT_EQ(strings(*hello.find("threads")), (std::vector<std::string>{"mass1", "mass2"}));
  const auto columns = strings(*hello.find("columns"));
  ASSERT_GE(columns.size(), 4U);
  EXPECT_EQ(columns.front(), "t");
  EXPECT_EQ(columns.back(), "sum_abs_dE");
  EXPECT_EQ(hello.find("mode")->str, "realtime");
  EXPECT_EQ(hello.find("energy_limit_J")->num, 1e6);

  // Data messages parse, their envelopes hold the last value, sim time advances, and the
  // per-thread timing arrives (slack at most one period of 2000 us).
  auto data_with_rows = [&] {
    for (;;) {
      json_value d = ws.receive("data");
      if (d.k != json_value::kind::object || d.find("sim_s") != nullptr) return d;
    }
  };
  const json_value d1 = data_with_rows();
  ASSERT_EQ(d1.k, json_value::kind::object);
  json_value d2 = d1;
  bool timing_seen = false;
  for (int i = 0; i < 50 && (d2.find("sim_s")->num <= d1.find("sim_s")->num || !timing_seen); ++i) {
    d2 = data_with_rows();
    ASSERT_EQ(d2.k, json_value::kind::object);
    const auto& mn = d2.find("min")->arr;
    const auto& mx = d2.find("max")->arr;
    const auto& last = d2.find("last")->arr;
    ASSERT_EQ(mn.size(), columns.size());
    for (std::size_t c = 0; c < columns.size(); ++c) {
      EXPECT_LE(mn[c].num, last[c].num) << columns[c];
      EXPECT_LE(last[c].num, mx[c].num) << columns[c];
    }
    if (const json_value* th = d2.find("threads"); th != nullptr && th->arr.size() == 2) {
      for (const auto& t : th->arr)
        if (t.find("steps")->num > 0) {
          timing_seen = true;
          EXPECT_LE(t.find("slack_min_us")->num, 2000.0);
          EXPECT_GE(t.find("exec_max_us")->num, 0.0);
        }
    }
  }
  EXPECT_GT(d2.find("sim_s")->num, d1.find("sim_s")->num);
  EXPECT_TRUE(timing_seen);

  // Pages beyond dashboard::max_viewers are refused (503, so the handshake fails); the ones
  // open stay served, and a page that closed frees its place.
  {
    std::vector<std::unique_ptr<ws_client>> more;
    for (std::size_t i = 1; i < cosim::cli::dashboard::max_viewers; ++i)
      more.push_back(std::make_unique<ws_client>(s.host, s.port, "/ws"));
    EXPECT_THROW(ws_client(s.host, s.port, "/ws"), boost::system::system_error);
    more.pop_back();
    bool admitted = false;
    for (int i = 0; i < 200 && !admitted; ++i) {
      try {
        more.push_back(std::make_unique<ws_client>(s.host, s.port, "/ws"));
        admitted = true;
      } catch (const boost::system::system_error&) {
        std::this_thread::sleep_for(10ms);  // the server has not seen the close yet
      }
    }
    EXPECT_TRUE(admitted);
  }
  ASSERT_EQ(data_with_rows().k, json_value::kind::object);

  // Refused: no token (HTTP), a wrong token (HTTP and WebSocket); the run goes on.
  EXPECT_EQ(http_request(s, http::verb::post, "/stop").result(), http::status::forbidden);
  EXPECT_EQ(http_request(s, http::verb::post, "/stop", std::string(32, '0')).result(),
            http::status::forbidden);
  ws.send(R"({"type":"stop","token":"0123"})");
  const json_value refused = ws.receive("error");
  ASSERT_EQ(refused.k, json_value::kind::object);
  EXPECT_NE(refused.find("message")->str.find("stop refused"), std::string::npos);
  ws.send(R"({"type":"stop"})");
  EXPECT_EQ(ws.receive("error").k, json_value::kind::object);
  const double before = d2.find("sim_s")->num;
  const json_value d3 = data_with_rows();
  ASSERT_EQ(d3.k, json_value::kind::object);
  EXPECT_GT(d3.find("sim_s")->num, before);
  EXPECT_EQ(waitpid(pid, nullptr, WNOHANG), 0) << "the run ended after a refused stop";

  // Accepted with the token: the run ends as after SIGINT.
  ws.send(R"({"type":"stop","token":")" + s.token + "\"}");
  EXPECT_EQ(ws.receive("stop_accepted").k, json_value::kind::object);
  const json_value end = ws.receive("end");
  ASSERT_EQ(end.k, json_value::kind::object);
  EXPECT_EQ(end.find("status")->str, "safety_stop");
  EXPECT_EQ(end.find("stop_reason")->str, "operator_signal");
  EXPECT_EQ(end.find("exit_code")->num, 1);
  EXPECT_LT(end.find("sim_time_s")->num, 30.0);
  EXPECT_EQ(wait_exit(pid, 30s), 1);
  const json_value summary = parse_json(slurp(out + "/summary.json"));
  EXPECT_EQ(summary.find("stop_reason")->str, "operator_signal");
  EXPECT_EQ(summary.find("sim_time_s")->num, end.find("sim_time_s")->num);
  EXPECT_NE(slurp(tmp / "err.txt").find("stop refused"), std::string::npos);
}

// ---------------------------------------------------------------- headless Chromium (CDP)

std::string chromium() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (fs::exists(p)) return p;
  return "";
}

std::string base64_decode(const std::string& in) {
  std::string out;
  unsigned buf = 0;
  int bits = 0;
  for (char ch : in) {
    int v = -1;
    if (ch >= 'A' && ch <= 'Z') v = ch - 'A';
    if (ch >= 'a' && ch <= 'z') v = ch - 'a' + 26;
    if (ch >= '0' && ch <= '9') v = ch - '0' + 52;
    if (ch == '+') v = 62;
    if (ch == '/') v = 63;
    if (v < 0) continue;
    buf = (buf << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buf >> bits) & 0xFF);
    }
  }
  return out;
}

std::string json_quote(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

// One page target of Chromium's DevTools protocol.
class devtools {
 public:
  devtools(const std::string& port, const std::string& target) : ws_("127.0.0.1", port, target) {}
  json_value call(const std::string& method, const std::string& params) {
    const int id = ++id_;
    ws_.send("{\"id\":" + std::to_string(id) + ",\"method\":\"" + method +
             "\",\"params\":" + params + "}");
    for (;;) {
      const std::string text = ws_.receive();
      if (text.empty()) return {};
      json_value v = parse_json(text);
      if (const json_value* i = v.find("id"); i != nullptr && i->num == id) return v;
    }
  }
  /// The string value of a JavaScript expression in the page.
  std::string eval(const std::string& expr) {
    const json_value r = call("Runtime.evaluate",
                              "{\"expression\":" + json_quote(expr) + ",\"returnByValue\":true}");
    const json_value* res = r.find("result");
    if (res == nullptr || res->find("result") == nullptr) return "";
    const json_value* v = res->find("result")->find("value");
    if (v == nullptr) return "";
    return v->str;  // a number keeps its text as written
  }
  std::string text_of(const std::string& id) {
    return eval("(document.getElementById('" + id + "')||{}).textContent||''");
  }

 private:
  ws_client ws_;
  int id_ = 0;
};

// Headless Chromium with its DevTools session on its about:blank page (dt null on failure;
// the log says why).
struct browser_page {
  browser_page(const std::string& browser, const temp_dir& tmp) : log(tmp / "chromium.log") {
    chrome = spawn({browser, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
                    "--user-data-dir=" + (tmp / "profile"), "--remote-debugging-port=0",
                    "--window-size=1200,1500", "about:blank"},
                   tmp / "chromium.out", log);
    std::smatch m;
    const std::regex listening(R"(DevTools listening on ws://127\.0\.0\.1:([0-9]+)/)");
    std::string port;
    const bool up = wait_for(
        chrome,
        [&] {
          const std::string l = slurp(log);
          if (!std::regex_search(l, m, listening)) return false;
          port = m[1];
          return true;
        },
        30s);
    if (!up) return;
    const auto list = http_request({"127.0.0.1", port, ""}, http::verb::get, "/json/list");
    std::string page_ws;
    for (const auto& t : parse_json(list.body()).arr)
      if (t.find("type")->str == "page") page_ws = t.find("webSocketDebuggerUrl")->str;
    if (page_ws.empty()) return;
    dt = std::make_unique<devtools>(port, page_ws.substr(page_ws.find('/', 5)));
    dt->call("Runtime.enable", "{}");
  }
  std::string log;
  pid_t chrome = -1;
  std::unique_ptr<devtools> dt;
};

TEST(Dashboard, ShowsTheAlarmsLimitsAndHowOftenTheyFired) {
  temp_dir tmp;
  // A clock alarm stops the realtime run 1.5 s in; a warn alarm fires at t0 and clears at 0.5.
  const std::string file = tmp / "alarmed.toml";
  std::ofstream(file) << slurp(oscillator)
                      << "\n[[alarms]]\nname = \"clock\"\nvariable = \"t\"\nmax = 1.5\n"
                         "[[alarms]]\nname = \"early\"\nvariable = \"t\"\nmin = 0.5\n"
                         "action = \"warn\"\n";
  std::vector<std::string> args = realtime_run(tmp / "run", "0");
  args[2] = file;
  const pid_t pid = spawn(args, tmp / "out.txt", tmp / "err.txt");
  kill_after guard(pid, 90s);
  const served s = wait_for_url(pid, tmp / "out.txt");
  ASSERT_FALSE(s.port.empty()) << slurp(tmp / "out.txt") << slurp(tmp / "err.txt");
  ws_client ws(s.host, s.port, "/ws");
  const json_value hello = ws.receive("hello");
  ASSERT_EQ(hello.k, json_value::kind::object);
  const auto& alarms = hello.find("alarms")->arr;
  ASSERT_EQ(alarms.size(), 2U);
  EXPECT_EQ(alarms[0].find("name")->str, "clock");
  EXPECT_EQ(alarms[0].find("variable")->str, "t");
  EXPECT_EQ(alarms[0].find("max")->num, 1.5);
  EXPECT_EQ(alarms[0].find("min")->k, json_value::kind::null);
  EXPECT_EQ(alarms[1].find("action")->str, "warn");
  const json_value end = ws.receive("end");
  ASSERT_EQ(end.k, json_value::kind::object);
  EXPECT_EQ(end.find("stop_reason")->str, "alarm");
  EXPECT_NE(end.find("message")->str.find("alarm 'clock': t = "), std::string::npos);
  EXPECT_EQ(end.find("exit_code")->num, 1.0);
  const auto& fired = end.find("alarms")->arr;
  ASSERT_EQ(fired.size(), 2U);
  EXPECT_EQ(fired[0].find("count")->num, 1.0);
  EXPECT_GT(fired[0].find("first_time_s")->num, 1.5);
  EXPECT_EQ(fired[1].find("count")->num, 1.0);
  EXPECT_EQ(fired[1].find("first_time_s")->num, 0.0);
  EXPECT_EQ(wait_exit(pid, 30s), 1);
  // The page has the alarm table it fills.
  EXPECT_NE(cosim::cli::dashboard_page().find("id=\"alarms\""), std::string::npos);
}

TEST(Dashboard, ChromiumSeesValuesUpdateIsRefusedWithoutTheTokenAndStopsTheRunWithIt) {
  const std::string browser = chromium();
  if (browser.empty())
    GTEST_SKIP() << "chromium is not installed (tools/scripts/install_deps.sh installs it)";
  temp_dir tmp;
  const std::string out = tmp / "run";
  const pid_t run = spawn(realtime_run(out, "0"), tmp / "out.txt", tmp / "err.txt");
  kill_after run_guard(run, 90s);
  const served s = wait_for_url(run, tmp / "out.txt");
  ASSERT_FALSE(s.port.empty()) << slurp(tmp / "err.txt");

  browser_page page(browser, tmp);
  ASSERT_TRUE(page.dt) << slurp(page.log);
  devtools& dt = *page.dt;
  const pid_t chrome = page.chrome;
  const std::string& log = page.log;
  kill_after chrome_guard(chrome, 90s);
  // Without the token in the URL: the user has not entered it yet.
  dt.call("Page.navigate", "{\"url\":\"http://" + s.host + ":" + s.port + "/\"}");

  auto updates = [&] { return std::atoi(dt.text_of("updates").c_str()); };
  auto sim_time = [&] { return std::atof(dt.text_of("sim-time").c_str()); };
  ASSERT_TRUE(wait_for(
      run, [&] { return updates() >= 3; }, 20s))
      << slurp(log);
  const int u1 = updates();
  const double t1 = sim_time();
  ASSERT_TRUE(wait_for(
      run, [&] { return updates() > u1 + 5 && sim_time() > t1; }, 20s));
  EXPECT_EQ(dt.text_of("status"), "running");
  EXPECT_EQ(dt.text_of("thread-mass1").empty(), false);

  // The page's connection drops: it reconnects by itself, gets the updates it missed and
  // shows every row since its first update (its row count continuous, none missed).
  dt.eval("ws.close(), ''");
  ASSERT_TRUE(wait_for(
      run, [&] { return dt.text_of("conn").starts_with("reconnected"); }, 20s))
      << dt.text_of("conn");
  const int u_back = updates();
  ASSERT_TRUE(wait_for(
      run, [&] { return updates() > u_back + 5; }, 20s));
  EXPECT_EQ(dt.eval("String(missedRows)"), "0");
  EXPECT_EQ(dt.eval("String(nextRow - firstRow)"), dt.text_of("rows"));
  EXPECT_TRUE(dt.eval("String(document.getElementById('missed').hidden)") == "true");

  // Stop without the token: refused on the page, the run goes on.
  dt.eval("document.getElementById('stop').click(), ''");
  ASSERT_TRUE(wait_for(
      run, [&] { return dt.text_of("stop-result").find("refused") != std::string::npos; }, 10s))
      << dt.text_of("stop-result");
  const int u2 = updates();
  const double t2 = sim_time();
  ASSERT_TRUE(wait_for(
      run, [&] { return updates() > u2 + 5 && sim_time() > t2; }, 20s));
  EXPECT_EQ(waitpid(run, nullptr, WNOHANG), 0) << "the run ended after a refused stop";

  // The screenshot of a running bench (README's picture).
  const json_value shot = dt.call("Page.captureScreenshot", "{\"format\":\"png\"}");
  const std::string png = base64_decode(shot.find("result")->find("data")->str);
  ASSERT_GT(png.size(), 1000U);
  EXPECT_EQ(png.substr(1, 3), "PNG");
  std::ofstream(tmp / "dashboard.png", std::ios::binary) << png;
  if (const char* keep = std::getenv("COSIM_DASHBOARD_SCREENSHOT"))
    fs::copy_file(tmp / "dashboard.png", keep, fs::copy_options::overwrite_existing);

  // The operator types the token printed on the console and presses stop.
  dt.eval("document.getElementById('token').value = '" + s.token +
          "'; document.getElementById('stop').click(), ''");
  // Polled past the run's exit: the final message may still be on its way to the page.
  bool stopped = false;
  for (auto end = std::chrono::steady_clock::now() + 20s;
       !stopped && std::chrono::steady_clock::now() < end; std::this_thread::sleep_for(10ms))
    stopped = dt.text_of("stop-reason") == "operator_signal";
  ASSERT_TRUE(stopped) << dt.text_of("stop-result") << " " << dt.text_of("conn");
  EXPECT_EQ(dt.text_of("status"), "safety_stop");
  EXPECT_EQ(wait_exit(run, 30s), 1);
  const json_value summary = parse_json(slurp(out + "/summary.json"));
  EXPECT_EQ(summary.find("stop_reason")->str, "operator_signal");
  // The end residuals as summary.json has them, to the page's 6 digits.
  const double dE = summary.find("energy_residual_J")->num;
  EXPECT_NEAR(std::atof(dt.text_of("end-energy").c_str()), dE, 1e-5 * std::abs(dE) + 1e-300)
      << dt.text_of("end-energy");
  const double dP = summary.find("max_residual_power_W")->num;
  EXPECT_NEAR(std::atof(dt.text_of("end-power").c_str()), dP, 1e-5 * std::abs(dP) + 1e-300)
      << dt.text_of("end-power");
  kill(chrome, SIGTERM);
  wait_exit(chrome, 10s);
  // No script error in the page.
  EXPECT_EQ(slurp(log).find("Uncaught"), std::string::npos) << slurp(log);
}

// A page opened mid-run gets the run from its first row, titles carry the
// units, axes have rounded ticks and never go below zero for a latency, the cursor reads
// values, a drag zooms every plot, every driver counter has a column, and /status.json
// serves the same state to a script.
TEST(Dashboard, APageOpenedMidRunShowsTheWholeRunWithUnitsTicksCursorAndZoom) {
  const std::string browser = chromium();
  ASSERT_FALSE(browser.empty()) << "chromium is not installed (tools/scripts/install_deps.sh)";
  temp_dir tmp;
  const std::string out = tmp / "run";
  const pid_t run = spawn(realtime_run(out, "0"), tmp / "out.txt", tmp / "err.txt");
  kill_after run_guard(run, 90s);
  const served s = wait_for_url(run, tmp / "out.txt");
  ASSERT_FALSE(s.port.empty()) << slurp(tmp / "err.txt");

  // A script polls /status.json until the run is 0.5 s in: no WebSocket, no token.
  json_value st;
  ASSERT_TRUE(wait_for(
      run,
      [&] {
        const auto r = http_request(s, http::verb::get, "/status.json");
        if (r.result() != http::status::ok) return false;
        st = parse_json(r.body());
        return st.find("status")->str == "running" && st.find("sim_s")->num >= 0.5;
      },
      20s));
  EXPECT_EQ(st.find("mode")->str, "realtime");
  EXPECT_GT(st.find("rows")->num, 0.0);
  EXPECT_EQ(st.find("last")->find("t")->num, st.find("sim_s")->num);
  // oscillator004: positions in m, velocities in m/s (its model), the residual columns.
  EXPECT_EQ(st.find("units")->find("t")->str, "s");
  EXPECT_EQ(st.find("units")->find("sum_abs_dE")->str, "J");
  EXPECT_EQ(st.find("units")->find("dP")->str, "W");
  EXPECT_EQ(http_request(s, http::verb::post, "/status.json").result(),
            http::status::method_not_allowed);

  browser_page page(browser, tmp);
  ASSERT_TRUE(page.dt) << slurp(page.log);
  devtools& dt = *page.dt;
  kill_after chrome_guard(page.chrome, 90s);
  dt.call("Page.navigate", "{\"url\":\"http://" + s.host + ":" + s.port + "/\"}");
  ASSERT_TRUE(wait_for(
      run, [&] { return std::atoi(dt.text_of("updates").c_str()) >= 5; }, 20s));
  // Opened half a second in, it still starts at the run's first row, with none missed.
  EXPECT_EQ(dt.eval("String(firstRow)"), "0");
  EXPECT_EQ(dt.eval("String(missedRows)"), "0");
  EXPECT_EQ(dt.text_of("conn").rfind("connected", 0), 0U) << dt.text_of("conn");

  // Every column's title is "name [unit]" with the unit /status.json gives.
  const json_value& units = *st.find("units");
  int titled = 0;
  for (const auto& [name, unit] : units.obj) {
    if (name == "t" || unit.str.empty()) continue;
    const std::string title = dt.eval("(()=>{const i=hello.columns.indexOf(" + json_quote(name) +
                                      ");const c=document.getElementById('col-'+i);return "
                                      "c?c.parentNode.firstChild.textContent:''})()");
    EXPECT_EQ(title, name + " [" + unit.str + "]");
    ++titled;
  }
  EXPECT_GE(titled, 4);

  // Ticks at 1-2-5 steps with labels rounded to the step (closed form: [0, 1] in 4 -> 0.2).
  EXPECT_EQ(dt.eval("ticks(0, 1, 4).values.map(v => tickText(v, 0.2)).join(' ')"),
            "0 0.2 0.4 0.6 0.8 1");
  EXPECT_EQ(dt.eval("ticks(-3e-5, 7e-5, 4).step.toPrecision(3)"), "0.0000200");
  // A step-time plot's axis starts at zero, not below (the envelope's lower edge is 0).
  EXPECT_EQ(dt.eval("String(document.getElementById('exec-mass1')._map.y0)"), "0");
  // Plots fill their grid cell (they used two thirds of the page).
  EXPECT_EQ(dt.eval("(()=>{const c=document.getElementById('plot-energy');"
                    "return String(c.clientWidth >= c.parentNode.clientWidth - 4)})()"),
            "true");

  // Cursor: a pointer over the energy plot reads the time, min and max there.
  const std::string at_plot =
      "(()=>{const c=document.getElementById('plot-energy'),r=c.getBoundingClientRect();"
      "const ev=(type,f)=>c.dispatchEvent(new MouseEvent(type,{clientX:r.left+f*r.width,"
      "clientY:r.top+40,bubbles:true}));";
  dt.eval(at_plot + "ev('mousemove',0.5);return ''})()");
  ASSERT_TRUE(wait_for(
      run,
      [&] {
        return dt.eval("document.getElementById('plot-energy').dataset.readout||''")
            .starts_with("t ");
      },
      10s));
  EXPECT_NE(dt.eval("document.getElementById('plot-energy').dataset.readout").find(" min "),
            std::string::npos);
  // Zoom: dragging from 30 % to 60 % of the plot sets the time window of every plot;
  // a double-click follows the run again.
  dt.eval(at_plot + "ev('mousedown',0.3);ev('mousemove',0.6);ev('mouseup',0.6);return ''})()");
  EXPECT_EQ(dt.eval("String(view !== null && view.x1 > view.x0)"), "true");
  EXPECT_EQ(dt.text_of("zoom").rfind("zoomed to t = ", 0), 0U) << dt.text_of("zoom");
  EXPECT_TRUE(wait_for(
      run,
      [&] {
        return dt.eval("String(document.getElementById('col-1')._map.x0 === view.x0)") == "true";
      },
      10s));
  dt.eval("document.getElementById('plot-energy').dispatchEvent(new MouseEvent('dblclick')), ''");
  EXPECT_EQ(dt.eval("String(view)"), "null");

  // Drivers: every counter a driver reports gets a column (the page names none itself).
  dt.eval(
      "onData({type:'data',wall_s:1,rows:0,drivers:[{name:'valve',auth:'v2',received:1,"
      "rejected_source:2,clamped:3,wrong_channel_count:4,stale_session:5,unsent:6}]}), ''");
  EXPECT_EQ(
      dt.eval(
          "Array.from(document.querySelectorAll('#driver-keys th')).map(t=>t.textContent).join()"),
      "name,auth,received,rejected source,clamped,wrong channel count,stale session,unsent");
  EXPECT_EQ(
      dt.eval("Array.from(document.querySelectorAll('#drivers td')).map(t=>t.textContent).join()"),
      "valve,v2,1,2,3,4,5,6");

  EXPECT_EQ(http_request(s, http::verb::post, "/stop", s.token).result(), http::status::accepted);
  EXPECT_EQ(wait_exit(run, 30s), 1);
  // summary.json carries the same units.
  const json_value summary = parse_json(slurp(out + "/summary.json"));
  for (const auto& [name, unit] : units.obj)
    EXPECT_EQ(summary.find("units")->find(name)->str, unit.str) << name;
  kill(page.chrome, SIGTERM);
  wait_exit(page.chrome, 10s);
  EXPECT_EQ(slurp(page.log).find("Uncaught"), std::string::npos) << slurp(page.log);
}

// ---------------------------------------------------- RT path allocation-free, dashboard on

struct rt_path_probe {
  std::array<std::uint64_t, 8> alloc_begin{}, alloc_end{};
  static void hook(void* ctx, std::size_t s, bool begin) noexcept {
    auto* self = static_cast<rt_path_probe*>(ctx);
    (begin ? self->alloc_begin : self->alloc_end)[s] = cosim::test::alloc_count_this_thread();
  }
};

// Counts the recording thread's allocations inside the dashboard's per-row and per-interval
// calls (its begin()s may allocate: they run before the threads start).
class counting_sink final : public cosim::row_sink {
 public:
  explicit counting_sink(cosim::row_sink& inner) : inner_(inner) {}
  void begin(std::span<const std::string> c) override { inner_.begin(c); }
  void write(std::span<const double> row) noexcept override {
    const cosim::test::alloc_window w;
    inner_.write(row);
    allocations += w.allocations();
    ++rows;
  }
  void end() override { inner_.end(); }
  std::uint64_t allocations = 0, rows = 0;

 private:
  cosim::row_sink& inner_;
};
class counting_observer final : public cosim::timing_observer {
 public:
  explicit counting_observer(cosim::timing_observer& inner) : inner_(inner) {}
  void begin(const cosim::system& sys) override { inner_.begin(sys); }
  void timing(std::span<const cosim::thread_timing> t) noexcept override {
    const cosim::test::alloc_window w;
    inner_.timing(t);
    allocations += w.allocations();
    ++calls;
    for (const auto& x : t) steps += static_cast<std::uint64_t>(x.steps);
  }
  void end() noexcept override { inner_.end(); }
  std::uint64_t allocations = 0, calls = 0, steps = 0;

 private:
  cosim::timing_observer& inner_;
};

TEST(Dashboard, RealTimeThreadsAndTheRecordingThreadsHandOverAllocateNothing) {
  for (const char* mode : {"threaded", "realtime"}) {
    auto sc = cosim::config::load_scenario(
        oscillator, {std::string("run.mode=") + mode, "run.macro_step=0.002", "run.duration=0.6",
                     "watchdog.max_overruns=1000000"});
    auto built = cosim::config::build(sc);
    cosim::threaded_options opt = cosim::config::make_threaded_options(sc, *built);
    rt_path_probe probe;
    opt.hook = &rt_path_probe::hook;
    opt.hook_ctx = &probe;
    cosim::stop_source stop;
    cosim::cli::serve_options so;
    so.grace_s = 0.5;
    so.period_ns = 5'000'000;  // many hand-overs in a short run
    cosim::cli::dashboard dash(so, stop, {"oscillator004", mode, 0.002, 0.6, 1e6, 1e6, {}});
    dash.start();
    // A page is connected, so the server serialises and sends while the run goes on.
    const served s{"127.0.0.1", std::to_string(dash.port()), dash.token()};
    ws_client ws(s.host, s.port, "/ws");
    std::atomic<int> messages{0};
    std::thread reader([&] {
      while (!ws.receive().empty()) ++messages;
    });
    counting_sink sink(dash.rows());
    counting_observer obs(dash.observer());
    opt.observer = &obs;
    opt.observer_period_ns = 5'000'000;
    const cosim::run_outcome o =
        cosim::run_threaded(built->sys, built->plan, built->limits, sink, opt, &stop);
    dash.finish(o);
    reader.join();
    ASSERT_EQ(o.status, cosim::run_status::completed) << mode << " " << o.stop_reason;
    for (std::size_t i = 0; i < built->sys.size(); ++i)
      EXPECT_EQ(probe.alloc_end[i] - probe.alloc_begin[i], 0U) << mode << " thread " << i;
    EXPECT_EQ(sink.allocations, 0U) << mode;
    EXPECT_EQ(obs.allocations, 0U) << mode;
    EXPECT_EQ(sink.rows, static_cast<std::uint64_t>(o.rows)) << mode;
    // Every step of every thread reaches the observer once: 300 steps x 2 threads.
    EXPECT_EQ(obs.steps, 300U * built->sys.size()) << mode;
    // Realtime: 0.6 s of wall time hands over every 5 ms (a threaded run may end sooner).
    EXPECT_GE(obs.calls, std::string(mode) == "realtime" ? 20U : 1U) << mode;
    EXPECT_GT(messages.load(), 1) << mode;
  }
}

}  // namespace
