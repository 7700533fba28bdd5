#include "cosim/drivers/sequence_tracker.hpp"

namespace cosim::drivers {

const char* to_string(sequence_class c) noexcept {
  switch (c) {
    case sequence_class::fresh:
      return "fresh";
    case sequence_class::duplicate:
      return "duplicate";
    case sequence_class::out_of_order:
      return "out_of_order";
  }
  return "unknown";
}

sequence_class sequence_tracker::observe(std::uint32_t sequence) noexcept {
  if (!started_) {
    started_ = true;
    newest_ = sequence;
    ++received_fresh_;
    return sequence_class::fresh;
  }
  const std::int32_t distance = sequence_distance(newest_, sequence);
  if (distance > 0) {
    lost_ += static_cast<std::uint64_t>(distance) - 1;
    newest_ = sequence;
    ++received_fresh_;
    return sequence_class::fresh;
  }
  if (distance == 0) {
    ++duplicates_;
    return sequence_class::duplicate;
  }
  ++out_of_order_;
  return sequence_class::out_of_order;
}

void sequence_tracker::reset() noexcept {
  *this = sequence_tracker{};
}

sequence_class sequence_tracker::restart_at(std::uint32_t sequence) noexcept {
  if (out_of_order_ > 0) --out_of_order_;
  started_ = false;
  ++restarts_;
  return observe(sequence);
}

std::optional<std::uint32_t> sequence_tracker::newest() const noexcept {
  return started_ ? std::optional<std::uint32_t>{newest_} : std::nullopt;
}

}  // namespace cosim::drivers
