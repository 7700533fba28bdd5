#pragma once
// Feedthrough correction: removes the lag that direct feedthrough adds to explicit Jacobi
// coupling (000 Eq. (24) and Sect. 2.2: "the performance of explicit Jacobi schemes can be
// severely degraded if one or more subsystems present direct feedthrough").
//
// A producer P whose output y depends directly on an input u that the consumer C feeds
// computes y(t_{n+1}) with its own extrapolation u~(t_{n+1}) of C's output, not with C's
// value at t_{n+1}, which in Jacobi it cannot have yet. Hydraulic crane, f-s (003 Eq. (8)):
// f_h = (p2 - p1) a_p - c sd uses the rate sd received one macro step earlier, so the
// multibody feels its viscous friction c = 1e5 N s/m one step late, which makes f-s
// unstable at a third of p-s's step (003 Sect. 5).
//
// With the partial derivatives d_k = dy/du_k of P at t_{n+1} and the values u~_k it used,
// C replaces the sample it received by
//   y^ = y + sum_k d_k (y_C,k - u~_k)
// where y_C,k is C's own output at t_{n+1} that feeds u_k: P's output as if it had seen
// C's fresh values, exact when y is linear in u_k (f_h is: it then equals what p-s
// coupling, where the multibody evaluates 003 Eq. (8) with its own sd, gives). Everything
// needed is at hand in every executor: P captures (d_k, u~_k) on its own thread right after
// its outputs (subsystem::capture_partials), they travel with the sample, and C applies the
// correction on its own thread at the start of its next interval, before the step uses the
// input. For an FMU, d_k comes from its directional derivatives.
//
// Jacobi only: in Gauss-Seidel the later subsystem already sees its inputs at t_{n+1} (the
// correction would be zero) or the earlier one would need the consumer's values before it
// computed them.
#include <cstddef>

namespace cosim {

class input_port;
class subsystem;
class system;

namespace feedthrough {

/// Turns on the correction of connection `c`'s consumer input. The producer's output must
/// have direct feedthrough from at least one input the consumer feeds, and the producer
/// must give the partial derivatives (subsystem::provides_partial). Setup only
/// (allocates); throws cosim::error naming the ports. Asking twice is harmless.
void enable(system& sys, std::size_t c);

/// The d_k and u~_k that go with a sample from `producer` to `port` (its captures after
/// the last capture_partials), into d and u (port.feedthrough().count each). On the
/// producer's thread.
void fill(const subsystem& producer, const input_port& port, double* d, double* u) noexcept;

}  // namespace feedthrough
}  // namespace cosim
