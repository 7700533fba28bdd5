#pragma once
// One progress line for cosim run, sweep and tune: done/total, elapsed time and an estimate
// of the time left, on stderr, rewritten in place with '\r'. Shown only when stderr is a
// terminal (a log file or a pipe gets no progress noise) unless --progress / --no-progress
// say otherwise.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI
namespace spdlog {
class logger;
namespace sinks {
class sink;
}  // namespace sinks
}  // namespace spdlog

namespace cosim::cli {

enum class progress_mode { automatic, on, off };

/// Adds --progress and --no-progress (mutually exclusive) to a subcommand.
void add_progress_flags(CLI::App& app, progress_mode& mode);

/// "4.2 s", "3 min 05 s", "2 h 07 min".
std::string format_duration(double seconds);

class progress {
 public:
  /// `what` starts the line ("cosim sweep"), `unit` follows the count ("runs").
  progress(std::string what, std::string unit, std::size_t total, progress_mode mode);
  /// Whether a line is shown in `mode` (automatic: when stderr is a terminal).
  [[nodiscard]] static bool shown(progress_mode mode);
  ~progress();
  progress(const progress&) = delete;
  progress& operator=(const progress&) = delete;

  /// Thread-safe: n more done. Redraws at most every 100 ms and on the last one.
  void advance(std::size_t n = 1);
  /// From now on the count is `done_now()`, read every `period` (for work counted
  /// elsewhere, e.g. the simulated time a run's recording thread has reached).
  void follow(std::function<std::size_t()> done_now, std::chrono::milliseconds period);
  /// The final line (with `note`, e.g. "interrupted", if not empty) and a newline, so that
  /// what follows starts on a fresh line. Idempotent.
  void finish(const std::string& note = "");
  [[nodiscard]] bool enabled() const noexcept { return enabled_; }
  /// Runs `write` (a log line going to stderr) with the progress line taken off the
  /// terminal, then draws the line again below it. The default logger's sinks do this
  /// while the line is shown, so warnings never land in the middle of it.
  void around_log(const std::function<void()>& write);

 private:
  void draw_locked(const std::string& note);
  void tick();

  std::string what_, unit_;
  std::size_t total_;
  std::size_t done_ = 0;
  bool enabled_;
  bool finished_ = false;
  std::chrono::steady_clock::time_point t0_, last_draw_;
  std::size_t last_len_ = 0;
  std::function<std::size_t()> done_now_;
  // The default logger and its own sinks, put back by finish().
  std::shared_ptr<spdlog::logger> logger_;
  std::vector<std::shared_ptr<spdlog::sinks::sink>> logger_sinks_;
  std::chrono::milliseconds period_{1000};
  std::mutex m_;
  std::condition_variable cv_;
  // Redraws every period_ (a second unless followed) so that elapsed time moves.
  std::thread ticker_;
};

}  // namespace cosim::cli
