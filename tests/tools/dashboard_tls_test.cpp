// cosim run --serve ... --serve-cert/--serve-key (docs/dashboard.md "TLS on a bench network"):
// the page, the WebSocket and the stop over TLS, verified against a certificate made here with
// the openssl program; plain HTTP to the TLS port is not answered; unusable certificate or key
// files end the command before the run, naming the file.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "json_value.hpp"
#include "process_support.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
using cosim::test::temp_dir;
using cosim::test_process::slurp;
using cosim::test_process::spawn;
using cosim::test_process::wait_exit;
using cosim::test_process::wait_for;
using namespace std::chrono_literals;

const std::string exe = COSIM_EXE;
const std::string oscillator =
    std::string(COSIM_SOURCE_DIR) + "/rt_config/scenarios/oscillator004.toml";

/// A self-signed certificate for 127.0.0.1 and its key, made by the openssl program.
void make_certificate(const temp_dir& tmp, const std::string& cert, const std::string& key) {
  const pid_t pid =
      spawn({"/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
             "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", cert, "-days", "2",
             "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"},
            tmp / "openssl.out", tmp / "openssl.err");
  ASSERT_EQ(wait_exit(pid, 60s), 0) << slurp(tmp / "openssl.err");
}

std::vector<std::string> run_args(const std::string& out, const std::string& cert,
                                  const std::string& key) {
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
          "run.duration=60",
          "--set",
          "watchdog.max_overruns=1000000",
          "--set",
          "run.lock_memory=false",
          "--set",
          "safety.energy_residual_limit=1e6",
          "--serve",
          "0",
          "--serve-cert",
          cert,
          "--serve-key",
          key,
          "-q"};
}

/// A TLS client that trusts only `cert` and checks that it names 127.0.0.1.
class tls_client {
 public:
  tls_client(const std::string& cert, const std::string& port) : ctx_(ssl::context::tls_client) {
    ctx_.load_verify_file(cert);
    ctx_.set_verify_mode(ssl::verify_peer);
    stream_ = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(ioc_, ctx_);
    stream_->set_verify_callback(ssl::host_name_verification("127.0.0.1"));
    tcp::resolver resolver(ioc_);
    beast::get_lowest_layer(*stream_).expires_after(30s);
    beast::get_lowest_layer(*stream_).connect(resolver.resolve("127.0.0.1", port));
    stream_->handshake(ssl::stream_base::client);
    beast::get_lowest_layer(*stream_).expires_never();
  }
  http::response<http::string_body> request(http::verb verb, const std::string& target,
                                            const std::string& host, const std::string& token) {
    http::request<http::string_body> req{verb, target, 11};
    req.set(http::field::host, host);
    if (!token.empty()) req.set("X-Cosim-Token", token);
    req.prepare_payload();
    http::write(*stream_, req);
    beast::flat_buffer buf;
    http::response<http::string_body> res;
    http::read(*stream_, buf, res);
    return res;
  }
  beast::ssl_stream<beast::tcp_stream> release() { return std::move(*stream_); }

 private:
  net::io_context ioc_;
  ssl::context ctx_;
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> stream_;
};

TEST(DashboardTls, ServesThePageWebSocketAndStopOverTlsOnly) {
  temp_dir tmp;
  const std::string cert = tmp / "cert.pem", key = tmp / "key.pem";
  make_certificate(tmp, cert, key);
  // A key the group can read is used, with a warning.
  fs::permissions(key, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  const std::string out = tmp / "run";
  const pid_t pid = spawn(run_args(out, cert, key), tmp / "out.txt", tmp / "err.txt");
  std::string port, token;
  const std::regex re(R"(dashboard: https://127\.0\.0\.1:([0-9]+)/#token=([0-9a-f]+)\n)");
  ASSERT_TRUE(wait_for(
      pid,
      [&] {
        std::smatch m;
        const std::string text = slurp(tmp / "out.txt");
        if (!std::regex_search(text, m, re)) return false;
        port = m[1];
        token = m[2];
        return true;
      },
      30s))
      << slurp(tmp / "out.txt") << slurp(tmp / "err.txt");
  EXPECT_NE(slurp(tmp / "out.txt").find("TLS certificate SHA-256: "), std::string::npos);
  EXPECT_NE(
      slurp(tmp / "err.txt").find("--serve-key " + key + " can be read by other users (mode 640)"),
      std::string::npos)
      << slurp(tmp / "err.txt");
  const std::string host = "127.0.0.1:" + port;

  // Plain HTTP to the TLS port: no HTTP answer, the connection is closed.
  {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(std::stoi(port)));
    ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    const timeval tv{.tv_sec = 30, .tv_usec = 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ASSERT_EQ(::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a), 0);
    const std::string req = "GET / HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n";
    ASSERT_GT(::send(fd, req.data(), req.size(), MSG_NOSIGNAL), 0);
    std::string got;
    std::array<char, 4096> buf{};
    for (ssize_t n = 0; (n = ::recv(fd, buf.data(), buf.size(), 0)) > 0;)
      got.append(buf.data(), static_cast<std::size_t>(n));
    ::close(fd);
    EXPECT_EQ(got.find("HTTP/1.1"), std::string::npos) << got;
    EXPECT_EQ(got.find("<html"), std::string::npos);
  }

  // The page over HTTPS, the certificate verified.
  {
    tls_client c(cert, port);
    const auto page = c.request(http::verb::get, "/", host, "");
    EXPECT_EQ(page.result(), http::status::ok);
    EXPECT_NE(page.body().find("id=\"stop\""), std::string::npos);
    // A wrong token is refused over TLS too (same connection: keep-alive).
    EXPECT_EQ(c.request(http::verb::post, "/stop", host, std::string(32, '0')).result(),
              http::status::forbidden);
  }
  // The WebSocket over TLS (wss://), with the page's Origin: hello, then data.
  {
    tls_client c(cert, port);
    beast::websocket::stream<beast::ssl_stream<beast::tcp_stream>> ws(c.release());
    ws.set_option(beast::websocket::stream_base::decorator(
        [&](beast::websocket::request_type& r) { r.set(http::field::origin, "https://" + host); }));
    ws.handshake(host, "/ws");
    bool hello = false, data = false;
    for (int i = 0; i < 200 && !(hello && data); ++i) {
      beast::flat_buffer buf;
      ws.read(buf);
      const auto m = cosim::cli::parse_json(beast::buffers_to_string(buf.data()));
      const std::string type = m.find("type")->str;
      hello = hello || type == "hello";
      data = data || (type == "data" && m.find("rows") != nullptr);
    }
    EXPECT_TRUE(hello);
    EXPECT_TRUE(data);
  }
  // The stop with the token over HTTPS ends the run as SIGINT does.
  {
    tls_client c(cert, port);
    EXPECT_EQ(c.request(http::verb::post, "/stop", host, token).result(), http::status::accepted);
  }
  EXPECT_EQ(wait_exit(pid, 30s), 1) << slurp(tmp / "err.txt");
  EXPECT_EQ(cosim::test_process::field(slurp(out + "/summary.json"), "stop_reason"),
            "operator_signal");
}

TEST(DashboardTls, UnusableCertificateOrKeyFilesExitTwoNamingTheFile) {
  temp_dir tmp;
  const std::string cert = tmp / "cert.pem", key = tmp / "key.pem";
  make_certificate(tmp, cert, key);
  const std::string other_cert = tmp / "other_cert.pem", other_key = tmp / "other_key.pem";
  make_certificate(tmp, other_cert, other_key);
  const std::string garbage = tmp / "garbage.pem";
  std::ofstream(garbage) << "not a certificate\n";
  const std::string missing = tmp / "missing.pem";
  struct bad_case {
    std::vector<std::string> tls;
    std::string says;
  };
  const std::vector<bad_case> cases{
      {{"--serve-cert", missing, "--serve-key", key}, "--serve-cert " + missing + ": cannot read"},
      {{"--serve-cert", cert, "--serve-key", missing}, "--serve-key " + missing + ": cannot read"},
      {{"--serve-cert", garbage, "--serve-key", key},
       "--serve-cert " + garbage + ": not a PEM certificate"},
      {{"--serve-cert", cert, "--serve-key", garbage},
       "--serve-key " + garbage + ": not an unencrypted PEM private key"},
      {{"--serve-cert", cert, "--serve-key", other_key},
       "--serve-key " + other_key + ": the key does not match the certificate in --serve-cert " +
           cert},
      {{"--serve-cert", cert}, "--serve-cert " + cert + " needs --serve-key"},
  };
  for (const auto& c : cases) {
    const std::string out = tmp / "run";
    std::vector<std::string> args{exe, "run", oscillator, "--out", out, "--serve", "0"};
    args.insert(args.end(), c.tls.begin(), c.tls.end());
    const pid_t pid = spawn(args, tmp / "out.txt", tmp / "err.txt");
    EXPECT_EQ(wait_exit(pid, 60s), 2) << c.says;
    EXPECT_NE(slurp(tmp / "err.txt").find(c.says), std::string::npos) << slurp(tmp / "err.txt");
    EXPECT_FALSE(fs::exists(out)) << c.says;
  }
  // TLS without --serve is a mistake, not ignored.
  const pid_t pid = spawn(
      {exe, "run", oscillator, "--out", tmp / "run", "--serve-cert", cert, "--serve-key", key},
      tmp / "out.txt", tmp / "err.txt");
  EXPECT_EQ(wait_exit(pid, 60s), 2);
  EXPECT_NE(slurp(tmp / "err.txt").find("needs --serve [ADDR:]PORT"), std::string::npos)
      << slurp(tmp / "err.txt");
}

}  // namespace
