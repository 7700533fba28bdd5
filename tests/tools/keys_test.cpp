// Key documentation has one source (config::documented_keys()): `cosim keys`, the footer of
// `cosim run --help` and README.md's table are renderings of it, and every key a shipped
// scenario uses is in it.
#include <gtest/gtest.h>
#include <toml++/toml.h>

#include <cstdio>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "commands.hpp"
#include "process_support.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using cosim::test_process::slurp;

std::string run_out(const std::vector<std::string>& args, const cosim::test::temp_dir& tmp) {
  std::vector<std::string> full{COSIM_EXE};
  full.insert(full.end(), args.begin(), args.end());
  const pid_t pid = cosim::test_process::spawn(full, tmp / "out.txt", tmp / "err.txt");
  EXPECT_EQ(cosim::test_process::wait_exit(pid, std::chrono::seconds(30)), 0);
  return slurp(tmp / "out.txt");
}

TEST(Keys, ReadmeTableIsTheGeneratedOne) {
  const std::string readme = slurp(std::string(COSIM_SOURCE_DIR) + "/README.md");
  const std::string begin = "<!-- keys:begin (cosim keys --markdown) -->\n";
  const auto a = readme.find(begin);
  const auto b = readme.find("<!-- keys:end -->");
  ASSERT_NE(a, std::string::npos);
  ASSERT_NE(b, std::string::npos);
  EXPECT_EQ(readme.substr(a + begin.size(), b - a - begin.size()), cosim::cli::keys_markdown())
      << "README.md's key table is stale: replace it with `build/tools/cosim keys --markdown`";
}

TEST(Keys, CommandAndRunHelpPrintTheSameTable) {
  cosim::test::temp_dir tmp;
  const std::string keys = run_out({"keys"}, tmp);
  EXPECT_EQ(keys, cosim::cli::keys_help());
  const std::string help = run_out({"run", "--help"}, tmp);
  for (const auto& k : cosim::config::documented_keys())
    EXPECT_NE(help.find(k.key), std::string::npos) << k.key << " missing from cosim run --help";
  EXPECT_EQ(run_out({"keys", "--markdown"}, tmp), cosim::cli::keys_markdown());
}

// "threads.<subsystem>.cpu" matches "threads.multibody.cpu"; model-specific rows list the
// model's keys.
bool documented(const std::string& key) {
  for (const auto& k : cosim::config::documented_keys()) {
    const std::string pattern =
        std::regex_replace(std::regex_replace(k.key, std::regex(R"([.])"), R"(\.)"),
                           std::regex("<[a-z]+>"), "[A-Za-z0-9_]+");
    if (std::regex_match(key, std::regex(pattern))) return true;
  }
  return false;
}

void flatten(const toml::table& t, const std::string& prefix, std::vector<std::string>& out) {
  for (const auto& [k, v] : t) {
    const std::string key = prefix + std::string(k.str());
    if (const auto* sub = v.as_table())
      flatten(*sub, key + ".", out);
    else
      out.push_back(key);
  }
}

TEST(Keys, EveryKeyOfEveryShippedScenarioIsDocumented) {
  int files = 0;
  for (const auto& e :
       fs::directory_iterator(std::string(COSIM_SOURCE_DIR) + "/rt_config/scenarios")) {
    if (e.path().extension() != ".toml") continue;
    ++files;
    std::vector<std::string> keys;
    flatten(toml::parse_file(e.path().string()), "", keys);
    for (const auto& k : keys) {
      if (k.rfind("tune.", 0) == 0) continue;  // [tune]: cosim tune's own section (its --help)
      EXPECT_TRUE(documented(k)) << e.path().filename() << ": " << k;
    }
  }
  EXPECT_GT(files, 10);
  // The matcher itself can fail.
  EXPECT_FALSE(documented("threads.multibody.cpux"));
  EXPECT_FALSE(documented("run.no_such_key"));
}

}  // namespace
