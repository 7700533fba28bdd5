#pragma once
// What must reach the bench when a run stops early, however it stops. An output driver
// registers an action while it runs (subsystem::start .. stop); trip_all() runs every
// registered action. The supervisors (watchdog, recorder, the offline supervisor) trip the
// run's own subsystems through subsystem::trip_fail_safe(); trip_all() is for the paths that
// know no system: the crash-signal handlers and the operator-signal handler.
//
// Lock-free atomics only: add/remove/trip_all are async-signal-safe, and so must every
// action be (an output driver's is an encode into a stack buffer and a sendto(2)).
namespace cosim::fail_safe {

using action = void (*)(void* ctx) noexcept;

/// Most actions registered at once (one per running output driver).
inline constexpr int capacity = 64;

/// Registers (a, ctx); false when `capacity` actions are registered already.
bool add(action a, void* ctx) noexcept;
/// Unregisters every action of ctx. An action running concurrently on another thread (a
/// crash handler) may still finish: ctx must stay valid until the process ends or the
/// caller knows no trip is running.
void remove(void* ctx) noexcept;
/// Runs every registered action once, in registration order.
void trip_all() noexcept;

}  // namespace cosim::fail_safe
