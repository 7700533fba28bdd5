// `cosim keys`: every scenario key, from the one table in rt_config (documented_keys()).
// `cosim run --help` and README.md's key table are rendered from the same table; a test
// (tests/tools/keys_test.cpp) keeps README.md equal to `cosim keys --markdown`.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "commands.hpp"

namespace cosim::cli {

std::string keys_help() {
  std::string s = "Keys accepted by --set (also `cosim keys`; README.md lists them too):\n";
  for (const auto& k : config::documented_keys()) {
    s += "  " + k.key;
    s.append(k.key.size() < 32 ? 32 - k.key.size() : 1, ' ');
    s += k.doc + "\n";
  }
  return s;
}

std::string keys_markdown() {
  // A '|' inside a cell (|delta E|) would end the cell.
  auto cell = [](const std::string& text) {
    std::string out;
    for (char c : text) {
      if (c == '|') out += '\\';
      out += c;
    }
    return out;
  };
  std::string s = "| key | meaning |\n|---|---|\n";
  for (const auto& k : config::documented_keys())
    s += "| `" + k.key + "` | " + cell(k.doc) + " |\n";
  return s;
}

command add_keys_command(CLI::App& app) {
  auto markdown = std::make_shared<bool>(false);
  auto* keys = app.add_subcommand(
      "keys",
      "List every scenario key (--set KEY=VALUE or in the TOML file) with its meaning and\n"
      "range. <subsystem>, <name> stand for a subsystem or driver name; model-specific keys\n"
      "follow each model.name.");
  keys->add_flag("--markdown", *markdown, "Print a Markdown table (as in README.md)");
  return {keys, [markdown] {
            const std::string text = *markdown ? keys_markdown() : keys_help();
            std::fputs(text.c_str(), stdout);
            return 0;
          }};
}

}  // namespace cosim::cli
