#pragma once
// A key file for the authenticated bench protocol, made once per test program (mode 0600,
// removed at exit), and the --set entries that give it to bench_udp.toml's drivers.
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "cosim/drivers/bench_auth.hpp"

namespace cosim::test {

inline const std::string& bench_key_path() {
  struct key_file {
    std::string path;
    key_file() {
      char tmpl[] = "/tmp/cosim_test_key_XXXXXX";
      const int fd = ::mkstemp(tmpl);
      if (fd >= 0) ::close(fd);
      path = tmpl;
      std::remove(path.c_str());  // write_key_file never overwrites
      cosim::drivers::write_key_file(path);
    }
    ~key_file() { std::remove(path.c_str()); }
    key_file(const key_file&) = delete;
    key_file& operator=(const key_file&) = delete;
  };
  static const key_file k;
  return k.path;
}

/// `sets` plus drivers.<d>.key_file for each driver of bench_udp.toml.
inline std::vector<std::string> with_bench_keys(std::vector<std::string> sets,
                                                std::vector<std::string> drivers = {"joystick",
                                                                                    "valve"}) {
  for (const auto& d : drivers)
    sets.push_back("drivers." + d + ".key_file=\"" + bench_key_path() + "\"");
  return sets;
}

}  // namespace cosim::test
