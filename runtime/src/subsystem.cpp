#include "cosim/runtime/subsystem.hpp"

namespace cosim {

std::size_t subsystem::add_input(port_desc desc) {
  inputs_.emplace_back(std::move(desc));
  return inputs_.size() - 1;
}

std::size_t subsystem::add_output(port_desc desc) {
  outputs_.push_back(std::move(desc));
  output_values_.push_back(0.0);
  return outputs_.size() - 1;
}

std::size_t subsystem::add_partial_capture(std::size_t o, std::size_t i) {
  for (std::size_t k = 0; k < partial_captures_.size(); ++k)
    if (partial_captures_[k].output == o && partial_captures_[k].input == i) return k;
  partial_captures_.push_back({o, i});
  return partial_captures_.size() - 1;
}

void subsystem::add_variable(std::string name, std::string unit, const double* value) {
  variables_.push_back({std::move(name), std::move(unit), value});
}

std::size_t subsystem::find_input(const std::string& port) const noexcept {
  for (std::size_t i = 0; i < inputs_.size(); ++i)
    if (inputs_[i].desc().name == port) return i;
  return npos;
}

std::size_t subsystem::find_output(const std::string& port) const noexcept {
  for (std::size_t i = 0; i < outputs_.size(); ++i)
    if (outputs_[i].name == port) return i;
  return npos;
}

}  // namespace cosim
