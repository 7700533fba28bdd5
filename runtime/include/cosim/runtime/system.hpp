#pragma once
// The co-simulation graph: subsystems, connections between their ports, power bonds
// (pairs of effort/flow connections, 000 Sect. 3.1) and recorded columns (probes).
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cosim/runtime/subsystem.hpp"

namespace cosim {

struct connection {
  std::size_t from = 0;  // subsystem index
  std::size_t output = 0;
  std::size_t to = 0;
  std::size_t input = 0;
};

/// A connection resolved for delivery (scheme::deliver): the consumer's input port and the
/// producer's output value as pointers, so a macro step does no index lookups.
struct route {
  input_port* port = nullptr;
  const double* value = nullptr;  // the producer's output
  std::size_t output = 0;
  bool derivatives = false;  // the output declares time derivatives (port_desc::derivative_order)
};

/// One effort/flow pair of a power bond: power = gain * effort * flow. The effort travels
/// on connection `effort` (producer -> consumer) and the flow on `flow` in the opposite
/// direction.
struct bond_term {
  std::size_t effort = 0;  // connection index
  std::size_t flow = 0;    // connection index
  double gain = 1.0;
};

struct power_bond {
  std::string name;
  std::vector<bond_term> terms;
};

/// A recorded column: one of a subsystem's variables or outputs. Values are read by the
/// subsystem's own thread at the end of its step (so threaded runs can snapshot them).
struct probe {
  std::string column;
  std::string unit;
  std::size_t subsystem = 0;
  const double* value = nullptr;
  bool input = false;  // an input of the subsystem (subsystem::record_input)
};

class system {
 public:
  std::size_t add(std::unique_ptr<subsystem> s);
  [[nodiscard]] std::size_t size() const noexcept { return subsystems_.size(); }
  /// subsystem::trip_fail_safe() of every subsystem: any thread, async-signal-safe.
  void trip_fail_safe() noexcept {
    for (auto& s : subsystems_) s->trip_fail_safe();
  }
  [[nodiscard]] subsystem& at(std::size_t i) noexcept { return *subsystems_[i]; }
  [[nodiscard]] const subsystem& at(std::size_t i) const noexcept { return *subsystems_[i]; }
  /// Index by name; throws cosim::error naming the subsystem if absent.
  [[nodiscard]] std::size_t index_of(const std::string& name) const;

  /// "subsystem.port" -> "subsystem.port". Checks that both ports exist and their units
  /// match; an input may have only one producer. Returns the connection index.
  std::size_t connect(const std::string& from, const std::string& to);
  [[nodiscard]] const std::vector<connection>& connections() const noexcept { return connections_; }
  /// The connections whose producer is subsystem `from`, in connection order.
  [[nodiscard]] std::span<const connection> connections_from(std::size_t from) const noexcept {
    return from < outgoing_.size() ? std::span<const connection>(outgoing_[from])
                                   : std::span<const connection>();
  }
  /// Resolves every connection into a route (setup only: allocates). Ports and outputs must
  /// not be added afterwards; connect() drops the routes until the next call.
  void resolve_routes();
  /// Producer `from`'s connections as routes, in connection order; empty until
  /// resolve_routes() (scheme::deliver then walks connections_from()).
  [[nodiscard]] std::span<const route> routes_from(std::size_t from) const noexcept {
    return from < routes_.size() ? std::span<const route>(routes_[from]) : std::span<const route>();
  }
  [[nodiscard]] bool routes_resolved() const noexcept { return routes_resolved_; }
  /// Connection feeding the given "subsystem.port" input; throws if none.
  [[nodiscard]] std::size_t connection_to(const std::string& to) const;

  void add_bond(power_bond bond) { bonds_.push_back(std::move(bond)); }
  [[nodiscard]] const std::vector<power_bond>& bonds() const noexcept { return bonds_; }

  /// Records "subsystem.variable" (a variable, or else an output) as `column`.
  void add_probe(const std::string& column, const std::string& ref);
  [[nodiscard]] const std::vector<probe>& probes() const noexcept { return probes_; }

  /// Every input must be fed by a connection or a signal source.
  void check_complete() const;

 private:
  std::vector<std::unique_ptr<subsystem>> subsystems_;
  std::vector<connection> connections_;
  std::vector<std::vector<connection>> outgoing_;  // connections_ per producer (deliver)
  std::vector<std::vector<route>> routes_;         // outgoing_ resolved (resolve_routes)
  bool routes_resolved_ = false;
  std::vector<power_bond> bonds_;
  std::vector<probe> probes_;
};

}  // namespace cosim
