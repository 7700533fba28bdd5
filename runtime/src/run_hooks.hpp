#pragma once
// The subsystems' run hooks (subsystem::start / stop) around one run, shared by every
// executor: started in order, and stopped on every exit path, fail-safe unless the run
// completed.
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>

#include "cosim/runtime/executor.hpp"
#include "cosim/runtime/json_writer.hpp"
#include "cosim/runtime/system.hpp"

namespace cosim::detail {

class started_subsystems {
 public:
  /// Starts every subsystem; if one throws, those already started are stopped fail-safe.
  started_subsystems(system& sys, stop_source& stop) : sys_(sys) {
    try {
      for (; started_ < sys_.size(); ++started_) sys_.at(started_).start(stop);
    } catch (...) {
      finish(false);
      throw;
    }
  }
  started_subsystems(const started_subsystems&) = delete;
  started_subsystems& operator=(const started_subsystems&) = delete;
  /// An exception left the run: fail-safe.
  ~started_subsystems() { finish(false); }

  /// Stops every started subsystem once; fail-safe unless `completed`.
  void finish(bool completed) noexcept {
    for (std::size_t i = 0; i < started_; ++i) sys_.at(i).stop(!completed);
    started_ = 0;
  }
  /// A supervisor abandons the subsystems in `stuck` (still inside a step on their thread):
  /// the others are stopped fail-safe, those are left alone.
  void finish_except(std::span<const std::size_t> stuck) noexcept {
    for (std::size_t i = 0; i < started_; ++i)
      if (std::find(stuck.begin(), stuck.end(), i) == stuck.end()) sys_.at(i).stop(true);
    started_ = 0;
  }

 private:
  system& sys_;
  std::size_t started_ = 0;
};

/// Counts an executor's start (runs_started()).
void count_run_start() noexcept;

class offline_supervisor;
/// initialize_and_exchange as model code the supervisor (if any) watches.
void supervised_initialize(system& sys, const run_plan& plan, offline_supervisor* supervisor);
/// sink.end() where nothing may throw any more (an abandoned run's last act).
void end_sink(row_sink& sink) noexcept;

/// Hands a run whose supervisor abandoned the threads of out.abandoned (the run's outcome
/// otherwise final, every row in the sink) to limits.abandon, which ends the process;
/// _exit(exit_abandoned) should it return or be unset. The message says what was abandoned.
[[noreturn]] inline void abandon_run(const safety_limits& limits, run_outcome& out) noexcept {
  try {
    std::string names;
    for (const std::string& n : out.abandoned) names += (names.empty() ? "'" : ", '") + n + "'";
    out.message += std::string(out.message.empty() ? "" : "; ") + "subsystem " + names +
                   " did not return from its step within watchdog.grace (" +
                   format_double(static_cast<double>(limits.grace_ns) / 1e9) +
                   " s) after the stop: abandoned, the process ends without waiting for it";
  } catch (...) {
    // Out of memory: the outcome still names the abandoned subsystems.
  }
  if (limits.abandon != nullptr) limits.abandon(limits.abandon_ctx, out);
  ::_exit(exit_abandoned);
}

}  // namespace cosim::detail
