#pragma once
// Reads a results.csv written by cosim (or any header + numeric rows CSV).
#include <string>
#include <vector>

namespace cosim::cli {

struct csv_table {
  std::string path;
  std::vector<std::string> columns;
  std::vector<std::vector<double>> rows;

  [[nodiscard]] int column(const std::string& name) const;  // -1 if absent
  /// Linear interpolation of column c at time t (column 0 is time); clamps at the ends.
  [[nodiscard]] double interpolate(int c, double t) const;
};

/// Throws cosim::error naming the file and line on malformed input.
csv_table read_csv(const std::string& path);

struct column_difference {
  std::string column;
  double max_abs = 0.0;
  double rms = 0.0;
  double t_at_max = 0.0;
  std::size_t samples = 0;
};

/// Differences of A against B on B's time grid (A interpolated), only where B's time lies
/// inside A's time range.
std::vector<column_difference> compare(const csv_table& a, const csv_table& b,
                                       const std::vector<std::string>& columns);

}  // namespace cosim::cli
