#pragma once
// Helpers for the in-process CLI tests (sweep_test.cpp, fr_sweep_test.cpp): run a cosim
// subcommand through its CLI11 registration with stdout/stderr captured, temporary
// directories, and a text CSV reader for sweep.csv (which has string columns).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"

#include "temp_dir.hpp"

namespace cosim::test_cli {

using cosim::test::temp_dir;

struct cli_result {
  int code = -1;
  std::string out, err;
};

/// `cosim ARGS...` in this process: the program's own entry (main_entry), its exit codes.
inline cli_result cosim_cli(const std::vector<std::string>& args) {
  std::vector<std::string> storage{"cosim"};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  argv.reserve(storage.size());
  for (auto& s : storage) argv.push_back(s.data());
  cli_result r;
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  try {
    r.code = cli::main_entry(static_cast<int>(argv.size()), argv.data());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cosim: error: %s\n", e.what());
    r.code = 2;
  }
  r.out = testing::internal::GetCapturedStdout();
  r.err = testing::internal::GetCapturedStderr();
  return r;
}

/// A CSV read as text (sweep.csv has status strings).
struct table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  [[nodiscard]] int column(const std::string& name) const {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return static_cast<int>(i);
    return -1;
  }
  [[nodiscard]] std::string text(std::size_t row, const std::string& name) const {
    const int c = column(name);
    EXPECT_GE(c, 0) << "no column " << name;
    return c >= 0 ? rows.at(row).at(static_cast<std::size_t>(c)) : std::string{};
  }
  [[nodiscard]] double num(std::size_t row, const std::string& name) const {
    return std::strtod(text(row, name).c_str(), nullptr);
  }
};

inline table read_table(const std::string& path) {
  table t;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::string line;
  bool first = true;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    if (first) {
      t.header = cells;
      first = false;
    } else {
      t.rows.push_back(cells);
    }
  }
  return t;
}

}  // namespace cosim::test_cli
