// The Debian package: cpack builds it from this build folder; it holds the programs, the man
// pages (help2man), the CMake and pkg-config package files and the systemd unit template;
// it declares its library dependencies; unpacked, its cosim answers --version; and
// systemd-analyze accepts its unit.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>

#include "process_support.hpp"
#include "temp_dir.hpp"

namespace {

using cosim::test::temp_dir;
using cosim::test_process::slurp;
namespace fs = std::filesystem;

const std::string binary_dir = COSIM_BINARY_DIR;

struct result {
  int code = -1;
  std::string out;
};

result sh(const temp_dir& dir, const std::string& cmd) {
  const std::string log = dir / ".log";
  const int status = std::system(("(" + cmd + ") >'" + log + "' 2>&1").c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(log)};
}

TEST(DebianPackage, BuildsWithProgramsUnitManPagesAndPackageFiles) {
  temp_dir tmp;
  result r = sh(tmp, "cd '" + binary_dir + "' && cpack -G DEB -B '" + tmp.path() + "'");
  ASSERT_EQ(r.code, 0) << r.out;
  std::string deb;
  for (const auto& e : fs::directory_iterator(tmp.path()))
    if (e.path().extension() == ".deb") deb = e.path().string();
  ASSERT_FALSE(deb.empty()) << r.out;

  r = sh(tmp, "dpkg-deb --contents '" + deb + "'");
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* f :
       {"./usr/bin/cosim\n", "./usr/bin/cosim-device\n",
        "./usr/lib/systemd/system/cosim@.service\n", "./usr/lib/cmake/cosim/cosimConfig.cmake\n",
        "./usr/lib/cmake/cosim/cosimTargets.cmake\n", "./usr/lib/pkgconfig/cosim.pc\n",
        "./usr/share/man/man1/cosim.1.gz\n", "./usr/share/man/man1/cosim-device.1.gz\n",
        "./usr/include/cosim/rt_config/plugin.hpp\n"})
    EXPECT_NE(r.out.find(f), std::string::npos) << f << " missing in\n" << r.out;

  // dpkg-shlibdeps found what the programs link, so apt resolves them.
  r = sh(tmp, "dpkg-deb -f '" + deb + "' Depends");
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* dep : {"adduser", "libstdc++6", "libspdlog", "libzip4", "libpugixml1v5"})
    EXPECT_NE(r.out.find(dep), std::string::npos) << dep << " not in Depends: " << r.out;

#ifndef COSIM_SANITIZED
  // lintian: clean but for the tags justified here.
  //  - bogus-mail-host: the project publishes no maintainer address (CPACK_PACKAGE_CONTACT);
  //  - no-copyright-file, no-changelog: the repository states no licence and keeps no
  //    changelog; a package for distribution must add both;
  //  - pkg-config-unavailable-for-cross-compilation: the .pc is in lib/pkgconfig, the libdir of
  //    a build configured for /usr/local; configure with -DCMAKE_INSTALL_PREFIX=/usr for the
  //    multiarch lib/x86_64-linux-gnu.
  // Only for the Release build's package: a sanitizer build's programs are instrumented test
  // binaries, not what a release ships, and lintian judges them as such.
  r = sh(tmp, "lintian --tag-display-limit 0 '" + deb + "'");
  {
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("E: ", 0) != 0 && line.rfind("W: ", 0) != 0) continue;
      const bool justified =
          line.find(" bogus-mail-host ") != std::string::npos ||
          line.find(" no-copyright-file") != std::string::npos ||
          line.find(" no-changelog ") != std::string::npos ||
          line.find(" pkg-config-unavailable-for-cross-compilation ") != std::string::npos;
      EXPECT_TRUE(justified) << "lintian: " << line;
    }
  }
#endif

  const std::string root = tmp / "root";
  r = sh(tmp, "dpkg -x '" + deb + "' '" + root + "'");
  ASSERT_EQ(r.code, 0) << r.out;
  r = sh(tmp, "'" + root + "/usr/bin/cosim' --version");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.rfind("cosim ", 0), 0U) << r.out;
  r = sh(tmp, "zcat '" + root + "/usr/share/man/man1/cosim.1.gz'");
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string man = r.out;
  EXPECT_NE(man.find(".TH COSIM"), std::string::npos) << man.substr(0, 200);

  // The unit as packaged, verified against the unpacked program (the host has no /usr/bin/cosim).
  const std::string unit = slurp(root + "/usr/lib/systemd/system/cosim@.service");
  for (const char* line : {"User=cosim\n", "StateDirectory=cosim/%i\n",
                           "AmbientCapabilities=CAP_SYS_NICE CAP_IPC_LOCK\n", "LimitRTPRIO=99\n",
                           "LimitMEMLOCK=infinity\n", "KillSignal=SIGINT\n", "TimeoutStopSec=30\n",
                           "/etc/cosim/%i.toml"})
    EXPECT_NE(unit.find(line), std::string::npos) << line << " not in\n" << unit;
  r = sh(tmp, "sed 's|/usr/bin/cosim|" + root + "/usr/bin/cosim|' '" + root +
                  "/usr/lib/systemd/system/cosim@.service' > '" + (tmp / "cosim@bench.service") +
                  "' && systemd-analyze verify --man=no '" + (tmp / "cosim@bench.service") + "'");
  EXPECT_EQ(r.code, 0) << r.out;
}

}  // namespace
