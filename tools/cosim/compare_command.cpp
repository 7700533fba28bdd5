#include <cstdio>
#include <memory>

#include "commands.hpp"
#include "csv_table.hpp"

namespace cosim::cli {

command add_compare_command(CLI::App& app) {
  struct state {
    std::string a, b;
    std::vector<std::string> columns;
  };
  auto st = std::make_shared<state>();
  auto* cmp = app.add_subcommand(
      "compare",
      "Compare two results.csv files: max and RMS differences of each column on the time grid\n"
      "of B, with A linearly interpolated to B's times (B times outside A's range are skipped).");
  cmp->add_option("a", st->a, "First CSV (interpolated)")->required()->check(CLI::ExistingFile);
  cmp->add_option("b", st->b, "Second CSV (its time grid is used)")->required()->check(CLI::ExistingFile);
  cmp->add_option("--columns", st->columns, "Columns to compare, comma-separated (default: all common)")
      ->delimiter(',');
  return {cmp, [st] {
            const csv_table a = read_csv(st->a);
            const csv_table b = read_csv(st->b);
            std::vector<std::string> cols = st->columns;
            if (cols.empty()) {
              for (std::size_t i = 1; i < b.columns.size(); ++i)
                if (a.column(b.columns[i]) >= 0) cols.push_back(b.columns[i]);
            }
            std::printf("%-14s %14s %14s %12s %8s\n", "column", "max_abs", "rms", "t_at_max", "samples");
            for (const auto& d : compare(a, b, cols))
              std::printf("%-14s %14.6e %14.6e %12.6g %8zu\n", d.column.c_str(), d.max_abs, d.rms,
                          d.t_at_max, d.samples);
            return 0;
          }};
}

}  // namespace cosim::cli
