#include "cosim/runtime/csv_writer.hpp"

#include <fcntl.h>
#include <signal.h>  // NOLINT(modernize-deprecated-headers): sigaction is POSIX, not <csignal>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <utility>

#include "cosim/runtime/errno_text.hpp"
#include "cosim/runtime/error.hpp"
#include "cosim/runtime/fail_safe.hpp"

namespace cosim {

namespace {

constexpr std::size_t max_number_chars = 24;
constexpr std::size_t buffer_bytes = std::size_t{1} << 16;
// Rows reach the OS at least this often while a run goes on.
constexpr std::int64_t flush_period_ns = 1'000'000'000;

// A few ms of resolution is plenty for the flush period, and it is read without a system
// call (vDSO) at every row.
std::int64_t coarse_now_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// committed_ after a crash handler took the rows: the writer stops (no row twice).
constexpr std::size_t taken = static_cast<std::size_t>(-1);

// The writer whose file is open, for the crash and exit handlers (one results file per
// process at a time is what `cosim run` writes; a second open writer is not armed).
std::atomic<csv_writer*> g_active{nullptr};
constexpr std::array<int, 5> crash_signals = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
std::array<struct sigaction, crash_signals.size()> g_previous{};
std::atomic<bool> g_installed{false};

/// write(2) until all n bytes are out (async-signal-safe); false on an OS error.
bool write_all(int fd, const char* p, std::size_t n) noexcept {
  std::size_t done = 0;
  while (done < n) {
    const ssize_t w = ::write(fd, p + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    done += static_cast<std::size_t>(w);
  }
  return true;
}

void say(const char* s) noexcept {
  (void)write_all(STDERR_FILENO, s, std::strlen(s));
}

void say_rows(std::int64_t rows) noexcept {
  // Async-signal-safe integer formatting (std::to_chars does not allocate).
  std::array<char, 24> digits{};
  const auto r = std::to_chars(digits.data(), digits.data() + digits.size() - 1, rows);
  *r.ptr = '\0';
  say(digits.data());
}

const char* signal_name(int sig) noexcept {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV (invalid memory access)";
    case SIGBUS:
      return "SIGBUS (bus error)";
    case SIGFPE:
      return "SIGFPE (arithmetic exception)";
    case SIGILL:
      return "SIGILL (illegal instruction)";
    default:
      return "SIGABRT (abort)";
  }
}

void crash_handler(int sig) {
  // The bench first: the output drivers' safe values leave before anything else is tried.
  fail_safe::trip_all();
  csv_writer* w = g_active.exchange(nullptr);
  if (w != nullptr) {
    const std::int64_t rows = w->flush_for_crash();
    say("cosim: the process crashed with ");
    say(signal_name(sig));
    say(" during the run (inside an FMU or a model?); results.csv keeps the ");
    say_rows(rows);
    say(" rows completed before it; no summary.json is written\n");
  }
  // The handler that was there before (the default: core dump), for the same signal.
  for (std::size_t i = 0; i < crash_signals.size(); ++i)
    if (crash_signals[i] == sig) sigaction(sig, &g_previous[i], nullptr);
  raise(sig);  // delivered when this handler returns (a fault also recurs at the instruction)
}

void exit_handler() {
  // Normal ends close the file first: an open one here means exit() inside a run.
  csv_writer* w = g_active.exchange(nullptr);
  if (w == nullptr) return;
  fail_safe::trip_all();
  const std::int64_t rows = w->flush_for_crash();
  say("cosim: exit() was called during the run (by an FMU or a model?); results.csv keeps the ");
  say_rows(rows);
  say(" rows completed before it; no summary.json is written; exit code 1 (stopped early)\n");
  _exit(1);
}

void install_handlers() {
  if (g_installed.exchange(true)) return;
  for (std::size_t i = 0; i < crash_signals.size(); ++i) {
    struct sigaction sa {};
    sa.sa_handler = &crash_handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;
    sigaction(crash_signals[i], &sa, &g_previous[i]);
  }
  std::atexit(&exit_handler);
}

}  // namespace

std::string csv_header_field(const std::string& name) {
  // Readers drop the spaces around an unquoted field: a name " t" or "x2 " is quoted so that
  // it reads back as itself (and not as t, a second time).
  const bool spaced = !name.empty() && (name.front() == ' ' || name.back() == ' ');
  if (!spaced && name.find_first_of(",\"") == std::string::npos) return name;
  std::string q;
  q.reserve(name.size() + 4);
  q.push_back('"');
  for (const char c : name) {
    if (c == '"') q.push_back('"');  // RFC 4180: a quote inside is doubled
    q.push_back(c);
  }
  q.push_back('"');
  return q;
}

std::vector<std::string> csv_header_fields(const std::string& line) {
  std::string l = line;
  if (!l.empty() && l.back() == '\r') l.pop_back();
  std::vector<std::string> out;
  std::size_t i = 0;
  while (true) {
    std::string f;
    while (i < l.size() && l[i] == ' ') ++i;
    if (i < l.size() && l[i] == '"') {
      for (++i; i < l.size(); ++i) {
        if (l[i] != '"') {
          f += l[i];
        } else if (i + 1 < l.size() && l[i + 1] == '"') {
          f += '"';
          ++i;
        } else {
          ++i;
          break;
        }
      }
      while (i < l.size() && l[i] != ',') ++i;  // text after the closing quote: ignored
    } else {
      const std::size_t end = std::min(l.find(',', i), l.size());
      f = l.substr(i, end - i);
      while (!f.empty() && f.back() == ' ') f.pop_back();
      i = end;
    }
    out.push_back(std::move(f));
    if (i >= l.size()) break;
    ++i;  // the comma
  }
  return out;
}

csv_writer::csv_writer(const std::string& path, std::int64_t flush_every)
    : path_(path), flush_every_(flush_every) {}

csv_writer::~csv_writer() {
  csv_writer* self = this;
  g_active.compare_exchange_strong(self, nullptr);
  if (fd_ >= 0) {
    (void)flush_buffer();
    ::close(fd_);
  }
}

void csv_writer::fail() noexcept {
  if (!failed_) errno_ = errno;
  failed_ = true;
}

std::string csv_writer::failure() const {
  if (!failed_) return {};
  return "error writing " + path_ + ": " +
         (errno_ != 0 ? errno_text(errno_) : "value not representable");
}

bool csv_writer::flush_buffer() noexcept {
  std::size_t n = committed_.load(std::memory_order_acquire);
  // Once the rows are ours (committed_ = 0), a crash handler finds nothing to write.
  if (n == taken || !committed_.compare_exchange_strong(n, 0, std::memory_order_acq_rel))
    return false;  // a crash handler took them: the process is ending
  if (!write_all(fd_, buf_.data(), n)) return false;
  last_flush_ns_ = coarse_now_ns();
  rows_written_.store(rows_, std::memory_order_relaxed);
  used_ = 0;
  return true;
}

std::int64_t csv_writer::flush_for_crash() noexcept {
  const std::size_t n = committed_.exchange(taken, std::memory_order_acq_rel);
  std::int64_t rows = rows_written_.load(std::memory_order_relaxed);
  if (n == taken || !write_all(fd_, buf_.data(), n)) return rows;
  // Rows in the file: the written count plus the rows just written (the header went out in
  // begin(), before the handlers were armed).
  for (std::size_t i = 0; i < n; ++i) rows += buf_[i] == '\n' ? 1 : 0;
  return rows;
}

void csv_writer::prepare(std::span<const std::string> columns) {
  std::string header;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const std::string& c = columns[i];
    const auto before = columns.begin() + static_cast<std::ptrdiff_t>(i);
    const bool line_break = c.find_first_of("\r\n") != std::string::npos;
    if (line_break || std::find(columns.begin(), before, c) != before)
      throw error(errc::config_value,
                  path_ + ": results column \"" + c + "\" " +
                      (line_break ? "holds a line break"
                                  : "appears twice (rename one with `as` in [output] record)"));
    if (i != 0) header.push_back(',');
    header.append(csv_header_field(c));
  }
  header += '\n';
  // The longest shortest-round-trip double is 24 characters ("-2.2250738585072014e-308"),
  // plus its separator; a row of any width therefore fits.
  line_max_ = columns.size() * (max_number_chars + 1) + 2;
  buf_.assign(std::max(buffer_bytes, header.size() + line_max_), '\0');
  std::memcpy(buf_.data(), header.data(), header.size());
  used_ = header.size();
  committed_.store(used_, std::memory_order_release);
}

void csv_writer::open() {
  // O_NOFOLLOW: a results.csv that is a symbolic link is refused, its target untouched.
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  COSIM_INPUT_CHECK(fd_ >= 0, errc::io,
                    "cannot open " + path_ + " for writing: " +
                        (errno == ELOOP ? std::string("it is a symbolic link (not followed)")
                                        : errno_text(errno)));
  errno = 0;
  if (!flush_buffer()) fail();
  install_handlers();
  csv_writer* none = nullptr;
  g_active.compare_exchange_strong(none, this);
}

void csv_writer::begin(std::span<const std::string> columns) {
  prepare(columns);  // checked before the file is touched
  open();
}

void csv_writer::write(std::span<const double> row) noexcept {
  if (failed_) return;
  if (line_max_ < row.size() * (max_number_chars + 1) + 2) {  // wider than the header
    errno = 0;
    fail();
    return;
  }
  if (used_ + line_max_ > buf_.size() && !flush_buffer()) {
    fail();
    return;
  }
  char* const start = buf_.data() + used_;
  char* p = start;
  char* const end = start + line_max_ - 2;
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (i != 0) *p++ = ',';
    const auto r = std::to_chars(p, end, row[i]);
    if (r.ec != std::errc{}) {
      errno = 0;
      fail();
      return;
    }
    p = r.ptr;
  }
  *p++ = '\n';
  used_ += static_cast<std::size_t>(p - start);
  ++rows_;
  // A whole row: from here on a crash handler writes it (unless one already took the rows).
  std::size_t before = committed_.load(std::memory_order_relaxed);
  if (before == taken ||
      !committed_.compare_exchange_strong(before, used_, std::memory_order_acq_rel)) {
    fail();
    return;
  }
  const std::int64_t now = coarse_now_ns();
  if ((rows_ % flush_every_ == 0 || now - last_flush_ns_ >= flush_period_ns) && !flush_buffer())
    fail();
}

void csv_writer::end() {
  if (fd_ < 0) return;
  csv_writer* self = this;
  g_active.compare_exchange_strong(self, nullptr);
  errno = 0;
  if (!failed_ && !flush_buffer()) fail();
  // Durable before anything that says the run finished (summary.json) is written. EINVAL:
  // a file that cannot be synced (a pipe, /dev/null) has nothing to make durable.
  if (!failed_ && ::fsync(fd_) != 0 && errno != EINVAL) fail();
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0 && !failed_ && errno != EINTR) fail();
}

}  // namespace cosim
