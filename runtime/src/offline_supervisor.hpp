#pragma once
// The supervisor of a run whose models step on the caller's thread (offline). The decision
// to stop (a signal, a dashboard stop) is taken on another thread; this one puts the bench
// into its safe state at once, and if the model thread has not come back from the model code
// it is inside within the grace, takes the run over: the model thread is parked for good
// when it returns (it never touches the results again) and `abandon` (the run's results out,
// then the process ends) runs here.
//
// The model thread marks the model code it runs: enter() .. leave(), with at() naming the
// subsystem. Outside those marks it owns the results; inside, the supervisor may take them.
// Each mark is one atomic operation, per macro step.
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

#include "cosim/runtime/stop_source.hpp"
#include "cosim/runtime/system.hpp"

namespace cosim::detail {

class offline_supervisor {
 public:
  /// Runs on the supervisor thread once it took the run over (never returns).
  using abandon_fn = std::function<void(std::size_t stuck_subsystem)>;

  /// Starts the supervisor thread, watching `stop` (the run's source: raised there or
  /// upstream) every 10 ms.
  offline_supervisor(system& sys, const stop_source& stop, std::int64_t grace_ns,
                     abandon_fn abandon);
  offline_supervisor(const offline_supervisor&) = delete;
  offline_supervisor& operator=(const offline_supervisor&) = delete;
  /// Ends the supervisor thread (the run is over).
  ~offline_supervisor();

  void enter() noexcept { state_.store(in_model, std::memory_order_release); }
  void at(std::size_t subsystem) noexcept { current_.store(subsystem, std::memory_order_relaxed); }
  /// Back from the model: the results are the model thread's again, unless the supervisor
  /// took the run over meanwhile; then this thread stops here for good.
  void leave() noexcept {
    int expected = in_model;
    // acq_rel: the supervisor's take-over (and what it wrote) is seen, or ours is.
    if (!state_.compare_exchange_strong(expected, idle, std::memory_order_acq_rel)) park();
  }

 private:
  enum : int { idle = 0, in_model = 1, taken = 2 };
  [[noreturn]] static void park() noexcept;
  void watch();

  system& sys_;
  const stop_source& stop_;
  std::int64_t grace_ns_;
  abandon_fn abandon_;
  std::atomic<int> state_{idle};
  std::atomic<std::size_t> current_{0};
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;  // guarded by m_
  std::thread thread_;
};

}  // namespace cosim::detail
