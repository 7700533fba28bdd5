#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "commands.hpp"
#include "cosim/rt_config/model_registry.hpp"
#include "cosim/runtime/error.hpp"
#include "csv_table.hpp"
#include "error_measures.hpp"

namespace cosim::cli {

command add_compare_command(CLI::App& app) {
  struct state {
    std::string a, b;
    std::vector<std::string> columns;
    std::string measure = "diff";
    std::string scenario;
    std::vector<std::string> sets;
    double fr = 1.0, cycles = 1.0;
    bool allow_partial = false;
  };
  auto st = std::make_shared<state>();
  auto* cmp = app.add_subcommand(
      "compare",
      "Compare two results.csv files: max and RMS differences of each column on the time grid\n"
      "of B, with A linearly interpolated to B's times. Both files need a strictly increasing\n"
      "time column t, at least two common samples (B's times inside A's span) and the same\n"
      "time span: at each end, only the outermost row of the file reaching further may lie\n"
      "beyond the other's end (runs of different macro steps overshoot the duration by less\n"
      "than a step). A run that stopped early is refused unless --allow-partial is given.\n"
      "The compared span and sample count are printed before the table.\n"
      "With --measure position|energy|all, B is the reference (e.g. from cosim reference) and\n"
      "the errors of 004 are printed too:\n"
      "  position (004 Eq. 7): dx = (FR/N) sqrt(mean(((x - x_exact)/x_rms)^2)) per column\n"
      "  energy   (004 Eq. 8): dE = (FR/N) sqrt(mean(((E_i - E0)/E0)^2)) over A's rows\n"
      "--scenario (the oscillator scenario of A) supplies FR, N, the masses and springs for\n"
      "the energy and the default columns x1..xn; otherwise --fr/--cycles give FR and N.");
  cmp->add_option("a", st->a, "First CSV (interpolated)")->required()->check(CLI::ExistingFile);
  cmp->add_option("b", st->b, "Second CSV (its time grid is used)")
      ->required()
      ->check(CLI::ExistingFile);
  cmp->add_option("--columns", st->columns,
                  "Columns to compare, comma-separated (default: all common)")
      ->delimiter(',');
  cmp->add_option("--measure", st->measure, "diff (default: max/RMS only), position, energy or all")
      ->check(CLI::IsMember({"diff", "position", "energy", "all"}));
  cmp->add_option("--scenario", st->scenario, "Oscillator scenario of A (for FR, N and energy)")
      ->check(CLI::ExistingFile);
  cmp->add_option("--set", st->sets, "Override a key of --scenario (repeatable)")
      ->type_name("KEY=VALUE");
  cmp->add_flag("--allow-partial", st->allow_partial,
                "Compare only the overlap when the time spans differ (e.g. against a run that\n"
                "stopped early)");
  cmp->add_option("--fr", st->fr, "FR of 004 Eq. (7)-(8) without --scenario (default 1)");
  cmp->add_option("--cycles", st->cycles, "N of 004 Eq. (7)-(8) without --scenario (default 1)");
  return {cmp, [st] {
            const csv_table a = read_csv(st->a);
            const csv_table b = read_csv(st->b);
            std::optional<osc::oscillator_definition> def;
            fr_cycles scale{st->fr, st->cycles};
            if (!st->scenario.empty()) {
              const config::scenario sc = config::load_scenario(st->scenario, st->sets);
              def = config::oscillator_definition_of(sc);
              COSIM_INPUT_CHECK(def.has_value(), errc::config_value,
                                st->scenario + ": --scenario must be an oscillator scenario");
              scale = oscillator_fr_cycles(*def, sc.run.duration);
            }
            COSIM_INPUT_CHECK(def.has_value() || (st->measure != "energy" && st->measure != "all"),
                              errc::config_key,
                              "compare: --measure " + st->measure +
                                  " needs --scenario (the oscillator's masses and springs)");
            COSIM_INPUT_CHECK(scale.fr > 0.0 && scale.cycles > 0.0, errc::config_value,
                              "compare: --fr and --cycles must be > 0");
            std::vector<std::string> cols = st->columns;
            if (cols.empty()) {
              if (def && st->measure != "diff") {
                for (std::size_t i = 0; i < def->size(); ++i) cols.push_back(state_column('x', i));
              } else {
                for (std::size_t i = 1; i < b.columns.size(); ++i)
                  if (a.column(b.columns[i]) >= 0) cols.push_back(b.columns[i]);
              }
            }
            COSIM_INPUT_CHECK(!cols.empty(), errc::io,
                              "compare: " + st->a + " and " + st->b + " share no column besides t");
            const compare_rules rules{st->allow_partial, same_span_rules.min_samples};
            const std::vector<column_difference> diffs = compare(a, b, cols, rules);
            // A non-finite value makes max_abs inf and rms nan, which read as numbers: bad input
            // like a malformed file, not a result.
            std::string non_finite;
            for (const auto& d : diffs)
              if (!d.non_finite.empty())
                non_finite += (non_finite.empty() ? "" : "; ") + d.non_finite;
            COSIM_INPUT_CHECK(non_finite.empty(), errc::io,
                              "compare: a compared value is not finite: " + non_finite);
            const overlap o = overlap_of(a, b);
            std::printf("A: %s  t = %s, %zu rows\n", st->a.c_str(), to_string(o.a).c_str(),
                        a.rows.size());
            std::printf("B: %s  t = %s, %zu rows\n", st->b.c_str(), to_string(o.b).c_str(),
                        b.rows.size());
            std::printf("compared: t = %s, %zu samples (the rows of B inside A's span, of %zu)%s\n",
                        to_string(o.compared).c_str(), o.samples, b.rows.size(),
                        o.same_span ? "" : "; partial: the spans differ (--allow-partial)");
            std::printf("%-14s %14s %14s %12s %8s\n", "column", "max_abs", "rms", "t_at_max",
                        "samples");
            for (const auto& d : diffs)
              std::printf("%-14s %14.6e %14.6e %12.6g %8zu\n", d.column.c_str(), d.max_abs, d.rms,
                          d.t_at_max, d.samples);
            if (st->measure == "position" || st->measure == "all") {
              std::printf("position error, 004 Eq. (7), B as exact, FR = %.6g, N = %.6g:\n",
                          scale.fr, scale.cycles);
              const double t0 = a.rows.empty() ? 0.0 : a.rows.front()[0];
              const double t1 = a.rows.empty() ? 0.0 : a.rows.back()[0];
              for (const auto& c : cols) {
                const int ca = a.column(c), cb = b.column(c);
                COSIM_INPUT_CHECK(ca >= 0 && cb >= 0, errc::io,
                                  "compare: no column '" + c + "' in both files");
                std::vector<double> x, xe;
                for (const auto& row : b.rows)
                  if (row[0] >= t0 - 1e-12 && row[0] <= t1 + 1e-12) {
                    x.push_back(a.interpolate(ca, row[0]));
                    xe.push_back(row[static_cast<std::size_t>(cb)]);
                  }
                std::printf("  %-12s dx = %.6e\n", c.c_str(),
                            position_error_004(x, xe, scale.fr, scale.cycles));
              }
            }
            if (st->measure == "energy" || st->measure == "all") {
              const auto n = static_cast<Eigen::Index>(def->size());
              const Eigen::VectorXd z0 = osc::initial_state(*def);
              const double e0 = osc::mechanical_energy(*def, z0.head(n), z0.tail(n));
              std::printf("energy error, 004 Eq. (8), over A's %zu rows: dE = %.6e (E0 = %.6g J)\n",
                          a.rows.size(),
                          energy_error_004(row_energies(*def, a), e0, scale.fr, scale.cycles), e0);
            }
            return 0;
          }};
}

}  // namespace cosim::cli
