#include "offline_supervisor.hpp"

#include <unistd.h>

#include <chrono>

#include "cosim/runtime/rt_thread.hpp"

namespace cosim::detail {

namespace {
// How often the supervisor looks at the stop source: the bench hears of an operator's stop
// within this (the signal handler itself already tripped the process's drivers).
constexpr std::chrono::milliseconds poll_period{10};
}  // namespace

offline_supervisor::offline_supervisor(system& sys, const stop_source& stop, std::int64_t grace_ns,
                                       abandon_fn abandon)
    : sys_(sys), stop_(stop), grace_ns_(grace_ns), abandon_(std::move(abandon)) {
  thread_ = std::thread([this] { watch(); });
}

offline_supervisor::~offline_supervisor() {
  {
    const std::lock_guard<std::mutex> lock(m_);
    done_ = true;
  }
  cv_.notify_one();
  thread_.join();
}

void offline_supervisor::park() noexcept {
  for (;;) ::pause();
}

void offline_supervisor::watch() {
  std::int64_t stop_seen_ns = -1;
  std::unique_lock<std::mutex> lock(m_);
  while (!cv_.wait_for(lock, poll_period, [this] { return done_; })) {
    if (!stop_.stop_requested()) continue;
    const std::int64_t now = monotonic_now_ns();
    if (stop_seen_ns < 0) {
      stop_seen_ns = now;
      sys_.trip_fail_safe();  // the bench does not wait for the model thread
    }
    if (now - stop_seen_ns < grace_ns_) continue;
    int expected = in_model;
    if (state_.compare_exchange_strong(expected, taken, std::memory_order_acq_rel)) {
      lock.unlock();
      abandon_(current_.load(std::memory_order_relaxed));
      park();  // abandon_ ends the process; should it return, the run stays taken
    }
  }
}

}  // namespace cosim::detail
