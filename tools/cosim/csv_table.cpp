#include "csv_table.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>

#include "cosim/runtime/error.hpp"

namespace cosim::cli {

int csv_table::column(const std::string& name) const {
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (columns[i] == name) return static_cast<int>(i);
  return -1;
}

double csv_table::interpolate(int c, double t) const {
  if (rows.empty()) return std::nan("");
  if (t <= rows.front()[0]) return rows.front()[static_cast<std::size_t>(c)];
  if (t >= rows.back()[0]) return rows.back()[static_cast<std::size_t>(c)];
  const auto it =
      std::lower_bound(rows.begin(), rows.end(), t,
                       [](const std::vector<double>& r, double tt) { return r[0] < tt; });
  const auto& r1 = *it;
  const auto& r0 = *(it - 1);
  const double w = (t - r0[0]) / (r1[0] - r0[0]);
  const auto ci = static_cast<std::size_t>(c);
  return w == 1.0 ? r1[ci] : r0[ci] + w * (r1[ci] - r0[ci]);  // exact at sample times
}

csv_table read_csv(const std::string& path) {
  std::ifstream in(path);
  COSIM_INPUT_CHECK(in.good(), errc::io, "cannot open " + path);
  csv_table t;
  t.path = path;
  std::string line;
  COSIM_INPUT_CHECK(static_cast<bool>(std::getline(in, line)), errc::io, path + ": empty file");
  {
    std::size_t start = 0;
    while (true) {
      const auto comma = line.find(',', start);
      t.columns.push_back(line.substr(start, comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  COSIM_INPUT_CHECK(!t.columns.empty() && t.columns[0] == "t", errc::io,
                    path + ":1: first column must be 't'");
  std::size_t lineno = 1;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty()) continue;
    std::vector<double> row;
    const char* p = line.data();
    const char* end = line.data() + line.size();
    while (p <= end) {
      double v = 0.0;
      const auto r = std::from_chars(p, end, v);
      COSIM_INPUT_CHECK(r.ec == std::errc{}, errc::io,
                        path + ":" + std::to_string(lineno) + ": not a number");
      row.push_back(v);
      p = r.ptr;
      if (p == end) break;
      COSIM_INPUT_CHECK(*p == ',', errc::io,
                        path + ":" + std::to_string(lineno) + ": expected ','");
      ++p;
    }
    COSIM_INPUT_CHECK(row.size() == t.columns.size(), errc::io,
                      path + ":" + std::to_string(lineno) + ": expected " +
                          std::to_string(t.columns.size()) + " values, got " +
                          std::to_string(row.size()));
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::vector<column_difference> compare(const csv_table& a, const csv_table& b,
                                       const std::vector<std::string>& columns) {
  std::vector<column_difference> out;
  if (a.rows.empty() || b.rows.empty()) return out;
  const double t0 = a.rows.front()[0], t1 = a.rows.back()[0];
  for (const auto& name : columns) {
    const int ca = a.column(name), cb = b.column(name);
    COSIM_INPUT_CHECK(ca >= 0, errc::io, a.path + ": no column '" + name + "'");
    COSIM_INPUT_CHECK(cb >= 0, errc::io, b.path + ": no column '" + name + "'");
    column_difference d;
    d.column = name;
    double sum2 = 0.0;
    for (const auto& row : b.rows) {
      const double t = row[0];
      if (t < t0 - 1e-12 || t > t1 + 1e-12) continue;
      const double diff = a.interpolate(ca, t) - row[static_cast<std::size_t>(cb)];
      const double ad =
          std::isfinite(diff) ? std::abs(diff) : std::numeric_limits<double>::infinity();
      if (ad > d.max_abs || d.samples == 0) {
        d.max_abs = ad;
        d.t_at_max = t;
      }
      sum2 += diff * diff;
      ++d.samples;
    }
    d.rms = d.samples > 0 ? std::sqrt(sum2 / static_cast<double>(d.samples)) : 0.0;
    out.push_back(d);
  }
  return out;
}

}  // namespace cosim::cli
