#include "csv_table.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string_view>

#include "cosim/runtime/csv_writer.hpp"
#include "cosim/runtime/error.hpp"

namespace cosim::cli {

namespace {

std::string number(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return {buf, r.ptr};
}

/// Times closer than this are the same time (results.csv prints shortest round-trip values,
/// so equal times read back bit-equal; the margin only absorbs other writers' rounding).
double same_time_tolerance(double t) {
  return 1e-9 * std::max(1.0, std::abs(t));
}

/// B's times within this margin of A's span count as inside (as before: absolute 1e-12).
constexpr double inside_margin = 1e-12;

/// The ends at the start (front) or the end (back) of the two files match: equal, or the
/// file reaching further has only its outermost row beyond the other's end.
bool ends_match(const csv_table& a, const csv_table& b, bool at_end) {
  const auto end_time = [&](const csv_table& t, std::size_t from_edge) {
    return at_end ? t.rows[t.rows.size() - 1 - from_edge][0] : t.rows[from_edge][0];
  };
  const double ta = end_time(a, 0), tb = end_time(b, 0);
  if (std::abs(ta - tb) <= same_time_tolerance(std::max(std::abs(ta), std::abs(tb)))) return true;
  const bool a_further = at_end ? ta > tb : ta < tb;
  const csv_table& longer = a_further ? a : b;
  const double other_end = a_further ? tb : ta;
  if (longer.rows.size() < 2) return false;
  const double inner = end_time(longer, 1);
  const double tol = same_time_tolerance(other_end);
  return at_end ? inner < other_end - tol : inner > other_end + tol;
}

/// "b.csv row 3 (t = 0.2): x = nan".
std::string cell(const csv_table& t, std::size_t row, int c) {
  const auto& r = t.rows[row];
  return t.path + " row " + std::to_string(row + 1) + " (t = " + number(r[0]) +
         "): " + t.columns[static_cast<std::size_t>(c)] + " = " +
         number(r[static_cast<std::size_t>(c)]);
}

std::string describe(const csv_table& t, const time_span& s) {
  return t.path + " (t = " + to_string(s) + ", " + std::to_string(t.rows.size()) + " rows)";
}

}  // namespace

std::string to_string(const time_span& s) {
  std::string out(1, '[');  // appending avoids GCC 12's -Wrestrict false positive on "[" + s
  out += number(s.first);
  out += ", ";
  out += number(s.last);
  out += "] s";
  return out;
}

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
  if (!line.empty() && line.back() == '\r') line.pop_back();  // CRLF line ends
  t.columns = csv_header_fields(line);                        // RFC 4180: "a[1,2]" is one column
  // FMI tools (FMPy, OMSimulator, 20-sim) name the time column "time"; cosim names it "t".
  COSIM_INPUT_CHECK(!t.columns.empty() && (t.columns[0] == "t" || t.columns[0] == "time"), errc::io,
                    path + ":1: first column must be the time, named 't' or 'time'");
  t.columns[0] = "t";
  for (std::size_t i = 1; i < t.columns.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      COSIM_INPUT_CHECK(t.columns[i] != t.columns[j], errc::io,
                        path + ":1: column '" + t.columns[i] + "' appears twice (columns " +
                            std::to_string(j + 1) + " and " + std::to_string(i + 1) + ")");
  std::size_t lineno = 1;
  std::size_t prev_lineno = 0;  // line of the previous row
  while (std::getline(in, line)) {
    ++lineno;
    // Every row a run writes ends with a line end; a last line without one may have been cut
    // mid-number by a crash (0.12 of 0.1234 still reads as a number), so it is not used.
    if (in.eof() && !line.empty()) {
      std::fprintf(stderr,
                   "cosim: note: %s:%zu: the last line has no line end (cut off by a crash, or "
                   "still being written?): not used\n",
                   path.c_str(), lineno);
      break;
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<double> row;
    const char* p = line.data();
    const char* end = line.data() + line.size();
    while (p <= end) {
      double v = 0.0;
      auto r = std::from_chars(p, end, v);
      // Boolean variables as FMI tools write them: true is 1, false is 0.
      if (r.ec != std::errc{}) {
        const std::string_view text(p, static_cast<std::size_t>(std::find(p, end, ',') - p));
        if (text == "true" || text == "false") {
          v = text == "true" ? 1.0 : 0.0;
          r = {p + text.size(), std::errc{}};
        }
      }
      if (r.ec != std::errc{}) {
        const std::size_t c = row.size();
        const std::string text(p, std::find(p, end, ','));
        throw error(
            errc::io,
            path + ":" + std::to_string(lineno) + ": column " +
                (c < t.columns.size() ? "'" + t.columns[c] + "'" : std::to_string(c + 1)) +
                " (row " + std::to_string(t.rows.size() + 1) + "): '" + text +
                (r.ec == std::errc::result_out_of_range ? "' is out of the range of a double"
                                                        : "' is not a number"));
      }
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
    // interpolate() and compare() bisect on time: an unordered column would give silent
    // nonsense (a file appended by two runs at once, a reference sorted wrongly).
    const std::string where = path + ":" + std::to_string(lineno) + ": ";
    COSIM_INPUT_CHECK(std::isfinite(row[0]), errc::io,
                      where + "time t = " + number(row[0]) + " is not finite");
    COSIM_INPUT_CHECK(t.rows.empty() || row[0] > t.rows.back()[0], errc::io,
                      where + "time t = " + number(row[0]) + " (row " +
                          std::to_string(t.rows.size() + 1) +
                          ") is not greater than t = " + number(t.rows.back()[0]) + " on line " +
                          std::to_string(prev_lineno) + ": the time column must strictly increase");
    prev_lineno = lineno;
    t.rows.push_back(std::move(row));
  }
  return t;
}

overlap overlap_of(const csv_table& a, const csv_table& b) {
  overlap o;
  if (!a.rows.empty()) o.a = {a.rows.front()[0], a.rows.back()[0]};
  if (!b.rows.empty()) o.b = {b.rows.front()[0], b.rows.back()[0]};
  if (a.rows.empty() || b.rows.empty()) return o;
  for (const auto& row : b.rows) {
    const double t = row[0];
    if (t < o.a.first - inside_margin || t > o.a.last + inside_margin) continue;
    if (o.samples == 0) o.compared.first = t;
    o.compared.last = t;
    ++o.samples;
  }
  o.same_span = ends_match(a, b, false) && ends_match(a, b, true);
  return o;
}

std::vector<column_difference> compare(const csv_table& a, const csv_table& b,
                                       const std::vector<std::string>& columns,
                                       const compare_rules& rules) {
  const overlap o = overlap_of(a, b);
  if (rules.min_samples > 0) {
    for (const csv_table* t : {&a, &b})
      COSIM_INPUT_CHECK(!t->rows.empty(), errc::io,
                        t->path + ": has a header but no data rows: nothing to compare");
    COSIM_INPUT_CHECK(o.samples >= rules.min_samples, errc::io,
                      "compare: " + describe(a, o.a) + " and " + describe(b, o.b) + " share " +
                          std::to_string(o.samples) +
                          " common samples (rows of the second file inside the first's span);"
                          " need at least " +
                          std::to_string(rules.min_samples));
  }
  if (a.rows.empty() || b.rows.empty()) return {};
  COSIM_INPUT_CHECK(
      rules.allow_partial || o.same_span, errc::io,
      "compare: the files cover different time spans: " + describe(a, o.a) + ", " +
          describe(b, o.b) + " (did one run stop early?); only " + to_string(o.compared) + " (" +
          std::to_string(o.samples) +
          " samples) could be compared; pass --allow-partial to compare that overlap");
  std::vector<column_difference> out;
  for (const auto& name : columns) {
    const int ca = a.column(name), cb = b.column(name);
    COSIM_INPUT_CHECK(ca >= 0, errc::io, a.path + ": no column '" + name + "'");
    COSIM_INPUT_CHECK(cb >= 0, errc::io, b.path + ": no column '" + name + "'");
    column_difference d;
    d.column = name;
    double sum2 = 0.0;
    for (std::size_t i = 0; i < b.rows.size(); ++i) {
      const auto& row = b.rows[i];
      const double t = row[0];
      if (t < o.a.first - inside_margin || t > o.a.last + inside_margin) continue;
      const double vb = row[static_cast<std::size_t>(cb)];
      const double va = a.interpolate(ca, t);
      if (d.non_finite.empty() && !std::isfinite(vb)) d.non_finite = cell(b, i, cb);
      const double diff = va - vb;
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
    // A's rows inside the compared span and the one on either side: the rows interpolated.
    const std::size_t n = a.rows.size();
    for (std::size_t j = 0; j < n && d.samples > 0; ++j) {
      if (a.rows[std::min(j + 1, n - 1)][0] < o.compared.first - inside_margin) continue;
      if (a.rows[j > 0 ? j - 1 : 0][0] > o.compared.last + inside_margin) break;
      if (std::isfinite(a.rows[j][static_cast<std::size_t>(ca)])) continue;
      d.non_finite += (d.non_finite.empty() ? "" : "; ") + cell(a, j, ca);
      break;
    }
    out.push_back(d);
  }
  return out;
}

}  // namespace cosim::cli
