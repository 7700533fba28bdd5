#pragma once
// Every row of a run in memory, by column name (a row_sink, e.g. run_request::also).
#include <algorithm>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "cosim/runtime/executor.hpp"

namespace cosim::test {

class row_table final : public cosim::row_sink {
 public:
  void begin(std::span<const std::string> c) override { columns_.assign(c.begin(), c.end()); }
  void write(std::span<const double> row) noexcept override {
    rows_.emplace_back(row.begin(), row.end());
  }
  void end() override {}

  [[nodiscard]] std::size_t rows() const { return rows_.size(); }
  [[nodiscard]] double at(std::size_t r, const std::string& col) const {
    const auto it = std::find(columns_.begin(), columns_.end(), col);
    if (it == columns_.end()) throw std::runtime_error("no column " + col);
    return rows_.at(r).at(static_cast<std::size_t>(it - columns_.begin()));
  }

 private:
  std::vector<std::string> columns_;
  std::vector<std::vector<double>> rows_;
};

}  // namespace cosim::test
