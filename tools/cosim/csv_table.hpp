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

/// Throws cosim::error naming the file and line on malformed input, including a time column
/// (column 0) that is not finite or does not strictly increase. A header without rows is
/// read as a table without rows.
csv_table read_csv(const std::string& path);

struct column_difference {
  std::string column;
  double max_abs = 0.0;
  double rms = 0.0;
  double t_at_max = 0.0;
  std::size_t samples = 0;
  /// The first value that is not finite in each file's compared rows (B's inside A's span,
  /// A's interpolated to them), as "b.csv row 3 (t = 0.2): x = nan", "; "-separated; empty if
  /// none. max_abs and rms then mean nothing.
  std::string non_finite;
};

struct time_span {
  double first = 0.0;
  double last = 0.0;
};

/// How the time ranges of A and B relate. The compared samples are B's rows whose time lies
/// inside A's span (A is interpolated to them, never extrapolated).
struct overlap {
  time_span a, b;           // each file's first and last time (zero for a file without rows)
  time_span compared;       // first and last compared time (zero when none)
  std::size_t samples = 0;  // number of compared samples
  /// The files cover the same span: at each end, the file reaching further has at most its
  /// outermost row beyond the other's end (the other ends inside its last interval). Runs of
  /// different macro steps overshoot the duration by less than a step and still match; a run
  /// that stopped early, even by one row of the longer file's grid, does not.
  bool same_span = false;
};
overlap overlap_of(const csv_table& a, const csv_table& b);

/// What compare() accepts. Callers state it; there is no default.
struct compare_rules {
  bool allow_partial = false;   // spans may differ: compare the overlap only
  std::size_t min_samples = 2;  // fewer compared samples is an error (0: never an error)
};
/// `cosim compare`: both files need rows, at least two common samples and the same span.
inline constexpr compare_rules same_span_rules{false, 2};
/// Whatever overlaps, possibly nothing (samples = 0 in the result; no columns when a file has
/// no rows). For callers that judge the overlap themselves (sweep: a run that stopped early
/// is compared up to its stop).
inline constexpr compare_rules overlap_only_rules{true, 0};

/// Differences of A against B on B's time grid (A interpolated), only where B's time lies
/// inside A's time range. Throws cosim::error (errc::io) naming the files, their spans and
/// the number of common samples when the rules are not met.
std::vector<column_difference> compare(const csv_table& a, const csv_table& b,
                                       const std::vector<std::string>& columns,
                                       const compare_rules& rules);

/// "[0, 10] s" with shortest round-trip numbers, for messages.
std::string to_string(const time_span& s);

}  // namespace cosim::cli
