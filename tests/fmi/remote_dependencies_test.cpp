// A subsystem in a worker process (host = "process") keeps its outputs' dependencies per
// input as the real one gives them: an FMU declared without direct feedthrough
// (no_feedthrough = true) breaks a Gauss-Seidel loop there as it does locally, and the
// results equal the local run's.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "temp_dir.hpp"

namespace {

using cosim::test::temp_dir;

const std::string fmus = COSIM_TEST_FMU_DIR;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Exit code of `cosim run FILE --out OUT` in dir.
int run(const temp_dir& dir, const std::string& file, const std::string& out) {
  const std::string cmd = "cd '" + dir.path() + "' && '" + std::string(COSIM_EXE) + "' run " +
                          file + " --out " + out + " --quiet >/dev/null 2>'" + (dir / ".stderr") +
                          "'";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string pair(const std::string& host) {
  const std::string f = fmus + "/tool_lag_fmi2.fmu";
  return "[run]\nduration = 0.2\nmacro_step = 0.001\nscheme = \"gauss-seidel\"\norder = "
         "[\"a\", \"b\"]\n\n[subsystems.a]\nfmu = \"" +
         f + "\"\nno_feedthrough = true\n" + host +
         "parameters = { k = 2.0, x0 = 1.0 }\n\n[subsystems.b]\nfmu = \"" + f +
         "\"\nparameters = { k = 0.5, x0 = -1.0 }\n\n"
         "[[connections]]\nfrom = \"a.y\"\nto = \"b.u\"\n\n"
         "[[connections]]\nfrom = \"b.y\"\nto = \"a.u\"\n\n[output]\nrecord = [\"a.y\", \"b.y\"]\n";
}

TEST(RemoteDependencies, NoFeedthroughBreaksTheLoopInAWorkerProcessToo) {
  const temp_dir dir;
  std::ofstream(dir / "local.toml") << pair("");
  std::ofstream(dir / "remote.toml") << pair("host = \"process\"\n");
  ASSERT_EQ(run(dir, "local.toml", "local"), 0) << slurp(dir / ".stderr");
  ASSERT_EQ(run(dir, "remote.toml", "remote"), 0) << slurp(dir / ".stderr");
  const std::string a = slurp(dir / "local/results.csv"), b = slurp(dir / "remote/results.csv");
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a, b);
}

}  // namespace
