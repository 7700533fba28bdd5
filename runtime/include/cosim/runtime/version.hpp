#pragma once
// What this build is: the project version (CMake's project()), the git commit it was built
// from (read at build time; "unknown" outside a git checkout, "-dirty" when the tree differed
// from it), the build type and the compiler. `cosim --version` and summary.json's "software"
// print them, so that results can be traced to the binary that produced them.
#include <string>
#include <string_view>

namespace cosim {

struct build_info {
  const char* version;     // "0.1.0"
  const char* commit;      // "9cae7281a2b3", "9cae7281a2b3-dirty" or "unknown"
  const char* build_type;  // "Release", "RelWithDebInfo", ...
  const char* compiler;    // "GNU 12.2.0"
};

[[nodiscard]] const build_info& build() noexcept;

/// One line for --version: "PROGRAM VERSION (commit C, BUILD_TYPE, COMPILER)".
[[nodiscard]] std::string version_line(std::string_view program);

}  // namespace cosim
