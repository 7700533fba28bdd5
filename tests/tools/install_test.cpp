// Install and embed, as a bench engineer would: `cmake --install` into a temporary prefix,
// the prefix moved elsewhere (the package is relocatable), examples/my_models copied out of
// the tree and built against the moved prefix only with find_package(cosim), its plugin's
// first-order lag run by the installed `cosim run` and by the example's embedding program and
// compared with the closed form; a plugin built against another API version is refused; the
// pkg-config file resolves into the prefix.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "process_support.hpp"
#include "temp_dir.hpp"

namespace {

using cosim::test::temp_dir;
using cosim::test_process::slurp;
namespace fs = std::filesystem;

const std::string source_dir = COSIM_SOURCE_DIR;
const std::string binary_dir = COSIM_BINARY_DIR;

struct result {
  int code = -1;
  std::string out;  // stdout and stderr
};

result sh(const temp_dir& dir, const std::string& cmd) {
  const std::string log = dir / ".log";
  const int status = std::system(("(" + cmd + ") >'" + log + "' 2>&1").c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(log)};
}

/// results.csv as columns by name.
std::vector<std::vector<double>> read_rows(const std::string& path,
                                           std::vector<std::string>& header) {
  std::istringstream in(slurp(path));
  std::string line;
  std::getline(in, line);
  header.clear();
  std::istringstream h(line);
  for (std::string f; std::getline(h, f, ',');) header.push_back(f);
  std::vector<std::vector<double>> rows;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<double> row;
    std::istringstream r(line);
    for (std::string f; std::getline(r, f, ',');) row.push_back(std::stod(f));
    rows.push_back(row);
  }
  return rows;
}

/// Largest |y - closed form| of examples/my_models/lag.toml's run: tau = 0.5 s, K = 2,
/// y0 = -1, u = 1.5 held: y = K u + (y0 - K u) exp(-t / tau).
double lag_error(const std::string& results_csv, std::size_t& rows_out) {
  std::vector<std::string> header;
  const auto rows = read_rows(results_csv, header);
  rows_out = rows.size();
  EXPECT_GE(header.size(), 2U);
  if (header.size() < 2 || header[0] != "t" || header[1] != "lag.y") {
    ADD_FAILURE() << "columns t, lag.y expected first";
    return INFINITY;
  }
  double err = 0.0;
  for (const auto& r : rows) {
    if (r.size() != header.size()) return INFINITY;
    err = std::max(err, std::abs(r[1] - (3.0 - 4.0 * std::exp(-r[0] / 0.5))));
  }
  return err;
}

TEST(Install, ExampleBuildsAgainstTheMovedPrefixAndItsPluginRuns) {
  temp_dir tmp;
  const std::string stage = tmp / "stage", prefix = tmp / "prefix";
  result r = sh(tmp, "cmake --install '" + binary_dir + "' --prefix '" + stage + "'");
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* f :
       {"bin/cosim", "bin/cosim-device", "include/cosim/rt_config/plugin.hpp",
        "include/cosim/runtime/subsystem.hpp", "lib/libcosim_rt_config.a", "lib/libcosim_runtime.a",
        "lib/cmake/cosim/cosimConfig.cmake", "lib/cmake/cosim/cosimConfigVersion.cmake",
        "lib/cmake/cosim/cosimTargets.cmake", "lib/pkgconfig/cosim.pc"})
    EXPECT_TRUE(fs::exists(stage + "/" + f)) << f;
  // Nothing installed points back into the source or build tree, nor at the stage folder.
  r = sh(tmp, "grep -rlF -e '" + source_dir + "/' -e '" + binary_dir + "' -e '" + stage + "' '" +
                  stage + "/lib/cmake' '" + stage + "/lib/pkgconfig' || true");
  EXPECT_EQ(r.out, "") << "installed files naming the build: " << r.out;
  fs::rename(stage, prefix);

  // The example, copied out of the tree, against the moved prefix only.
  const std::string src = tmp / "my_models", build = tmp / "build-ex";
  fs::copy(source_dir + "/examples/my_models", src, fs::copy_options::recursive);
  r = sh(tmp, "cmake -S '" + src + "' -B '" + build + "' -G Ninja -DCMAKE_BUILD_TYPE=Release " +
                  "-DCMAKE_PREFIX_PATH='" + prefix + "' && cmake --build '" + build + "'");
  ASSERT_EQ(r.code, 0) << r.out;
  r = sh(tmp, "grep -c '" + source_dir + "/' '" + build + "/build.ninja' || true");
  EXPECT_EQ(r.out, "0\n") << "the example's build uses the source tree";

  // The installed cosim loads the plugin the system file names and runs the lag.
  r = sh(tmp, "cd '" + build + "' && '" + prefix + "/bin/cosim' run lag.toml --out out --quiet");
  ASSERT_EQ(r.code, 0) << r.out;
  std::size_t rows = 0;
  EXPECT_LT(lag_error(build + "/out/results.csv", rows), 1e-12);
  EXPECT_EQ(rows, 201U);  // t = 0 .. 2 s every 10 ms
  // The summary keeps the plugin, so it runs again from there.
  EXPECT_NE(slurp(build + "/out/summary.json").find(build + "/libmy_models.so"), std::string::npos);
  // `cosim types --plugin` documents the plugin's type.
  r = sh(tmp, "'" + prefix + "/bin/cosim' types my.first_order_lag --plugin '" + build +
                  "/libmy_models.so'");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("tau"), std::string::npos) << r.out;

  // Forward Euler through the same plugin: an O(h) error of about |y0 - K u| h / (2 tau) / e.
  r = sh(tmp, "cd '" + build + "' && '" + prefix +
                  "/bin/cosim' run lag.toml --set subsystems.lag.integrator=euler --out euler "
                  "--quiet");
  ASSERT_EQ(r.code, 0) << r.out;
  const double euler = lag_error(build + "/euler/results.csv", rows);
  EXPECT_GT(euler, 0.01);
  EXPECT_LT(euler, 0.02);

  // The embedding program registers the type itself and runs the same file.
  r = sh(tmp, "cd '" + build + "' && ./my_models_run lag.toml embedded");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(slurp(build + "/embedded/results.csv"), slurp(build + "/out/results.csv"));

  // A plugin built against another plugin API version is refused, naming it and both versions.
  const std::string bad = tmp.file("bad_plugin.cpp", R"(#include <cosim/rt_config/plugin.hpp>
extern "C" __attribute__((visibility("default"))) const cosim::config::plugin_abi* cosim_plugin_abi() {
  static const cosim::config::plugin_abi abi{COSIM_PLUGIN_API_VERSION + 1, sizeof(cosim::subsystem),
                                             sizeof(cosim::config::subsystem_type)};
  return &abi;
}
extern "C" __attribute__((visibility("default"))) void cosim_plugin_register(
    cosim::config::plugin_registrar*) {}
)");
  r = sh(tmp, "c++ -std=c++20 -shared -fPIC -I'" + prefix + "/include' '" + bad + "' -o '" +
                  (tmp / "libbad.so") + "'");
  ASSERT_EQ(r.code, 0) << r.out;
  r = sh(tmp, "cd '" + build + "' && '" + prefix + "/bin/cosim' run lag.toml --set 'plugins=[\"" +
                  (tmp / "libbad.so") + "\"]' --out refused");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("libbad.so\": built against plugin API version 2, but this cosim"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("has plugin API version 1"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(build + "/refused/summary.json"));

  // pkg-config finds the moved prefix from the .pc file's own place.
  r = sh(tmp, "PKG_CONFIG_PATH='" + prefix + "/lib/pkgconfig' pkg-config --cflags --libs cosim");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("-I" + prefix + "/lib/pkgconfig/../../include"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("-lcosim_rt_config"), std::string::npos) << r.out;
}

}  // namespace
