#include "progress.hpp"
#include <CLI/CLI.hpp>

#include <spdlog/sinks/sink.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace cosim::cli {

void add_progress_flags(CLI::App& app, progress_mode& mode) {
  auto* on = app.add_flag_callback(
      "--progress", [&mode] { mode = progress_mode::on; },
      "Show progress on stderr even when it is not a terminal");
  auto* off = app.add_flag_callback(
      "--no-progress", [&mode] { mode = progress_mode::off; },
      "No progress line (default when stderr is not a terminal)");
  on->excludes(off);
}

std::string format_duration(double seconds) {
  char buf[48];
  if (!std::isfinite(seconds) || seconds < 0.0) return "?";
  if (seconds < 60.0) {
    std::snprintf(buf, sizeof buf, "%.1f s", seconds);
  } else if (seconds < 3600.0) {
    const long s = std::lround(seconds);
    std::snprintf(buf, sizeof buf, "%ld min %02ld s", s / 60, s % 60);
  } else {
    const long m = std::lround(seconds / 60.0);
    std::snprintf(buf, sizeof buf, "%ld h %02ld min", m / 60, m % 60);
  }
  return buf;
}

namespace {

/// Wraps one of the default logger's sinks while a progress line is shown.
class line_clearing_sink final : public spdlog::sinks::sink {
 public:
  line_clearing_sink(std::shared_ptr<spdlog::sinks::sink> inner, progress& bar)
      : inner_(std::move(inner)), bar_(bar) {
    set_level(inner_->level());
  }
  void log(const spdlog::details::log_msg& msg) override {
    bar_.around_log([&] {
      inner_->log(msg);
      inner_->flush();
    });
  }
  void flush() override { inner_->flush(); }
  void set_pattern(const std::string& pattern) override { inner_->set_pattern(pattern); }
  void set_formatter(std::unique_ptr<spdlog::formatter> f) override {
    inner_->set_formatter(std::move(f));
  }

 private:
  std::shared_ptr<spdlog::sinks::sink> inner_;
  progress& bar_;
};

}  // namespace

bool progress::shown(progress_mode mode) {
  return mode == progress_mode::on ||
         (mode == progress_mode::automatic && isatty(STDERR_FILENO) == 1);
}

progress::progress(std::string what, std::string unit, std::size_t total, progress_mode mode)
    : what_(std::move(what)),
      unit_(std::move(unit)),
      total_(total),
      enabled_(shown(mode)),
      t0_(std::chrono::steady_clock::now()),
      last_draw_(t0_) {
  if (!enabled_) return;
  // Before the line is first drawn and before any run thread exists: nothing logs yet.
  logger_ = spdlog::default_logger();
  if (logger_) {
    logger_sinks_ = logger_->sinks();
    for (auto& sink : logger_->sinks()) sink = std::make_shared<line_clearing_sink>(sink, *this);
  }
  {
    const std::lock_guard<std::mutex> lock(m_);
    draw_locked("");
  }
  ticker_ = std::thread([this] { tick(); });
}

void progress::around_log(const std::function<void()>& write) {
  const std::lock_guard<std::mutex> lock(m_);
  if (finished_) {
    write();
    return;
  }
  std::fprintf(stderr, "\r%s\r", std::string(last_len_, ' ').c_str());
  last_len_ = 0;
  write();
  draw_locked("");
}

progress::~progress() {
  finish();
}

void progress::tick() {
  std::unique_lock<std::mutex> lock(m_);
  while (!finished_) {
    cv_.wait_for(lock, period_);
    if (finished_) break;
    draw_locked("");
  }
}

void progress::follow(std::function<std::size_t()> done_now, std::chrono::milliseconds period) {
  if (!enabled_) return;
  {
    const std::lock_guard<std::mutex> lock(m_);
    done_now_ = std::move(done_now);
    period_ = period;
  }
  cv_.notify_all();
}

void progress::advance(std::size_t n) {
  if (!enabled_) return;
  const std::lock_guard<std::mutex> lock(m_);
  done_ += n;
  if (finished_) return;
  const auto now = std::chrono::steady_clock::now();
  if (done_ >= total_ || now - last_draw_ >= std::chrono::milliseconds(100)) draw_locked("");
}

void progress::finish(const std::string& note) {
  if (!enabled_) return;
  {
    const std::lock_guard<std::mutex> lock(m_);
    if (finished_) return;
    finished_ = true;
    draw_locked(note);
    std::fputc('\n', stderr);
    std::fflush(stderr);
  }
  cv_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  // The run's threads have ended: nothing logs while the sinks are put back.
  if (logger_) logger_->sinks() = logger_sinks_;
  logger_.reset();
}

void progress::draw_locked(const std::string& note) {
  if (done_now_) done_ = done_now_();
  const auto now = std::chrono::steady_clock::now();
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - t0_).count();
  std::string line = what_ + ": " + std::to_string(done_) + "/" + std::to_string(total_) + " " +
                     unit_ + ", " + format_duration(elapsed) + " elapsed";
  if (!note.empty()) {
    line += ", " + note;
  } else if (done_ < total_) {
    // Assumes the remaining work goes at the average rate so far.
    line += done_ == 0 ? ", ETA ?"
                       : ", ETA " + format_duration(elapsed / static_cast<double>(done_) *
                                                    static_cast<double>(total_ - done_));
  }
  // Blanks over the rest of a longer previous line (no terminal escape codes: --progress
  // may write into a file).
  const std::size_t len = line.size();
  if (len < last_len_) line.append(last_len_ - len, ' ');
  last_len_ = len;
  std::fprintf(stderr, "\r%s", line.c_str());
  std::fflush(stderr);
}

}  // namespace cosim::cli
