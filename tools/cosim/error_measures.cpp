#include "error_measures.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <numbers>

#include "cosim/runtime/error.hpp"
#include "cosim/runtime/time.hpp"

namespace cosim::cli {

std::string state_column(char kind, std::size_t i) {
  std::string s(1, kind);  // appending avoids GCC 12's -Wrestrict false positive on "x" + s
  s += std::to_string(i + 1);
  return s;
}

double position_error_004(std::span<const double> x, std::span<const double> x_exact, double fr,
                          double cycles) {
  COSIM_INPUT_CHECK(x.size() == x_exact.size() && !x.empty(), errc::runtime,
                    "position error: need equally many (> 0) simulated and exact samples");
  double sq = 0.0;
  for (double v : x_exact) sq += v * v;
  const double n = static_cast<double>(x.size());
  const double x_rms = std::sqrt(sq / n);
  COSIM_INPUT_CHECK(x_rms > 0.0, errc::runtime, "position error: exact solution is zero");
  double sum = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double e = (x[i] - x_exact[i]) / x_rms;
    sum += e * e;
  }
  return fr / cycles * std::sqrt(sum / n);  // 004 Eq. (7)
}

double energy_error_004(std::span<const double> energy, double e0, double fr, double cycles) {
  COSIM_INPUT_CHECK(!energy.empty() && e0 != 0.0, errc::runtime,
                    "energy error: need samples and a non-zero initial energy");
  double sum = 0.0;
  for (double e : energy) {
    const double r = (e - e0) / e0;
    sum += r * r;
  }
  return fr / cycles * std::sqrt(sum / static_cast<double>(energy.size()));  // 004 Eq. (8)
}

fr_cycles oscillator_fr_cycles(const osc::oscillator_definition& d, double duration) {
  const std::vector<double> w = osc::natural_frequencies(d);
  fr_cycles s;
  if (w.empty() || !(w.front() > 0.0)) return s;
  s.fr = w.back() / w.front();
  s.cycles = duration * w.back() / (2.0 * std::numbers::pi);
  return s;
}

std::vector<double> output_times(const config::scenario& sc) {
  const duration H = to_duration(sc.run.macro_step);
  const auto steps =
      static_cast<std::int64_t>(std::ceil(sc.run.duration / sc.run.macro_step - 1e-9));
  const std::int64_t every =
      sc.run.output_interval > 0.0 ? to_duration(sc.run.output_interval).count() / H.count() : 1;
  std::vector<double> t{0.0};
  for (std::int64_t m = 1; m <= steps; ++m)
    if (m % every == 0 || m == steps) t.push_back(to_seconds(time_point{m * H}));
  return t;
}

csv_table oscillator_reference_table(const osc::oscillator_definition& d,
                                     const std::vector<double>& times) {
  const osc::reference_solution ref(d);
  const auto z = ref.states_at(times);
  const std::size_t n = d.size();
  csv_table t;
  t.columns.push_back("t");
  for (std::size_t i = 0; i < n; ++i) t.columns.push_back(state_column('x', i));
  for (std::size_t i = 0; i < n; ++i) t.columns.push_back(state_column('v', i));
  t.columns.insert(t.columns.end(), {"dP", "dE", "sum_abs_dE"});
  for (std::size_t r = 0; r < times.size(); ++r) {
    std::vector<double> row{times[r]};
    for (Eigen::Index j = 0; j < z[r].size(); ++j) row.push_back(z[r][j]);
    row.insert(row.end(), {0.0, 0.0, 0.0});
    t.rows.push_back(std::move(row));
  }
  return t;
}

namespace {

std::vector<int> state_columns(const csv_table& t, std::size_t n) {
  std::vector<int> c;
  for (const char p : {'x', 'v'})
    for (std::size_t i = 0; i < n; ++i) {
      const std::string name = state_column(p, i);
      const int k = t.column(name);
      COSIM_INPUT_CHECK(k >= 0, errc::io, t.path + ": no column '" + name + "'");
      c.push_back(k);
    }
  return c;
}

}  // namespace

std::vector<double> row_energies(const osc::oscillator_definition& d, const csv_table& results) {
  const std::size_t n = d.size();
  const auto ni = static_cast<Eigen::Index>(n);
  const std::vector<int> cols = state_columns(results, n);
  std::vector<double> E;
  Eigen::VectorXd x(ni), v(ni);
  for (const auto& row : results.rows) {
    for (std::size_t i = 0; i < n; ++i) {
      x[static_cast<Eigen::Index>(i)] = row[static_cast<std::size_t>(cols[i])];
      v[static_cast<Eigen::Index>(i)] = row[static_cast<std::size_t>(cols[n + i])];
    }
    E.push_back(osc::mechanical_energy(d, x, v));
  }
  return E;
}

oscillator_errors oscillator_errors_004(const osc::oscillator_definition& d, double duration,
                                        const csv_table& results, const csv_table& reference,
                                        const std::vector<std::int64_t>& own_grid_ns) {
  oscillator_errors out;
  out.scale = oscillator_fr_cycles(d, duration);
  const std::size_t n = d.size();
  const std::vector<int> rc = state_columns(results, n);
  const std::vector<int> fc = state_columns(reference, n);
  const auto on_grid = [&](const std::vector<double>& row, std::size_t i) {
    if (i >= own_grid_ns.size() || own_grid_ns[i] <= 0) return true;
    return to_duration(row[0]).count() % own_grid_ns[i] == 0;
  };
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<double> x, xe;
    for (const auto& row : results.rows) {
      if (!on_grid(row, i)) continue;
      x.push_back(row[static_cast<std::size_t>(rc[i])]);
      xe.push_back(reference.interpolate(fc[i], row[0]));
    }
    out.columns.push_back(state_column('x', i));
    out.position.push_back(position_error_004(x, xe, out.scale.fr, out.scale.cycles));
  }
  const auto ni = static_cast<Eigen::Index>(n);
  const Eigen::VectorXd z0 = osc::initial_state(d);
  const double e0 = osc::mechanical_energy(d, z0.head(ni), z0.tail(ni));
  csv_table aligned;
  aligned.columns = results.columns;
  for (const auto& row : results.rows) {
    bool all = true;
    for (std::size_t i = 0; i < n; ++i) all = all && on_grid(row, i);
    if (all) aligned.rows.push_back(row);
  }
  out.energy = energy_error_004(row_energies(d, aligned), e0, out.scale.fr, out.scale.cycles);
  return out;
}

void write_csv(const std::string& path, const csv_table& t) {
  std::ofstream out(path, std::ios::trunc);
  COSIM_INPUT_CHECK(out.good(), errc::io, "cannot write " + path);
  for (std::size_t i = 0; i < t.columns.size(); ++i) out << (i ? "," : "") << t.columns[i];
  out << '\n';
  char buf[32];
  for (const auto& row : t.rows) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      const auto r = std::to_chars(buf, buf + sizeof buf, row[i]);
      if (i != 0) out << ',';
      out.write(buf, r.ptr - buf);
    }
    out << '\n';
  }
  out.flush();
  COSIM_INPUT_CHECK(out.good(), errc::io, "error writing " + path);
}

}  // namespace cosim::cli
