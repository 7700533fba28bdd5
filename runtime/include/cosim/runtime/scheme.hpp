#pragma once
// Step primitives shared by every executor (offline, threaded, realtime), so that all
// modes have one step semantics: what a subsystem does over one communication interval,
// and how its outputs reach its consumers.
#include <cstddef>

#include "cosim/runtime/system.hpp"

namespace cosim::scheme {

/// H/h internal steps of subsystem s from t, then its outputs at t + H.
/// Returns false if the state or an output became non-finite.
bool advance(subsystem& s, time_point t, duration H) noexcept;
/// Push every output of subsystem `from` as a sample at time t into its consumers.
void deliver(system& sys, std::size_t from, time_point t) noexcept;
bool outputs_finite(const subsystem& s) noexcept;

}  // namespace cosim::scheme
