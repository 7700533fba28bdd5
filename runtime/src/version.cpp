#include "cosim/runtime/version.hpp"

#include "cosim_build_info.hpp"  // generated (cmake/cosim_build_info.cmake)

namespace cosim {

const build_info& build() noexcept {
  static constexpr build_info info{COSIM_BUILD_VERSION, COSIM_BUILD_COMMIT, COSIM_BUILD_TYPE,
                                   COSIM_BUILD_COMPILER};
  return info;
}

std::string version_line(std::string_view program) {
  const build_info& b = build();
  std::string s(program);
  s += ' ';
  s += b.version;
  s += " (commit ";
  s += b.commit;
  s += ", ";
  s += b.build_type;
  s += ", ";
  s += b.compiler;
  s += ')';
  return s;
}

}  // namespace cosim
