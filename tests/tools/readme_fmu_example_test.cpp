// The README's FMU example works after the README's first command: the script builds the
// target that packs the FMUs it names, and the example's shell block, taken from README.md as
// written, runs (in a scratch folder whose build/ and rt_config/ are this tree's).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>

#include "process_support.hpp"
#include "temp_dir.hpp"

namespace {

using cosim::test::temp_dir;
using cosim::test_process::slurp;
namespace fs = std::filesystem;

const std::string source_dir = COSIM_SOURCE_DIR;

/// The ```sh block of README.md that contains `marker`.
std::string sh_block_with(const std::string& readme, const std::string& marker) {
  std::size_t at = 0;
  while ((at = readme.find("```sh\n", at)) != std::string::npos) {
    const std::size_t end = readme.find("```\n", at + 6);
    const std::string block = readme.substr(at + 6, end - at - 6);
    if (block.find(marker) != std::string::npos) return block;
    at = end;
  }
  return "";
}

TEST(ReadmeFmuExample, FirstCommandBuildsTheFmusTheExampleUses) {
  const std::string readme = slurp(source_dir + "/README.md");
  const std::string block = sh_block_with(readme, "ball.toml");
  ASSERT_FALSE(block.empty()) << "README.md has no FMU example block";
  // Every FMU the example names is packed by target cosim_test_fmus (tests/fmus/)...
  std::smatch m;
  std::string rest = block;
  int fmus = 0;
  while (std::regex_search(rest, m, std::regex(R"(build/tests/fmus/(\w+)\.fmu)"))) {
    EXPECT_TRUE(fs::exists(std::string(COSIM_BINARY_DIR) + "/tests/fmus/" + m[1].str() + ".fmu"))
        << m[1];
    ++fmus;
    rest = m.suffix();
  }
  EXPECT_GT(fmus, 0);
  // ...and the first command (tools/scripts/run_main.sh) builds that target.
  const std::string script = slurp(source_dir + "/tools/scripts/run_main.sh");
  ASSERT_TRUE(std::regex_search(script, m, std::regex(R"(cmake --build build --target ([^\n]*))")))
      << "run_main.sh builds no explicit targets";
  EXPECT_NE(m[1].str().find("cosim_test_fmus"), std::string::npos) << m[1];
  EXPECT_NE(m[1].str().find("cosim "), std::string::npos) << m[1];

  // The block as written, from a folder laid out like the repository's root.
  temp_dir tmp;
  fs::create_directory_symlink(COSIM_BINARY_DIR, tmp / "build");
  fs::create_directory_symlink(source_dir + "/rt_config", tmp / "rt_config");
  const std::string file = tmp.file("example.sh", "set -e\n" + block);
  const int status = std::system(
      ("cd '" + tmp.path() + "' && sh '" + file + "' >'" + (tmp / "log") + "' 2>&1").c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << slurp(tmp / "log");
  EXPECT_TRUE(fs::exists(tmp / "results/ball/summary.json"));
  EXPECT_TRUE(fs::exists(tmp / "results/crane_fmu/summary.json"));
}

}  // namespace
