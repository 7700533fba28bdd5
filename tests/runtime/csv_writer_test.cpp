// csv_writer: rows of any width are written whole and read back to the same doubles.
#include "cosim/runtime/csv_writer.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          (name + "_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed())))
      .string();
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out(1);
  for (const char c : line)
    if (c == ',')
      out.emplace_back();
    else
      out.back() += c;
  return out;
}

// 1200 columns of the longest shortest-round-trip numbers (24 characters each): a row of
// about 30 kB, which a fixed 4 kB line buffer refused as "value not representable".
TEST(CsvWriter, WritesAWideRowOfTheLongestNumbersWhole) {
  const std::size_t n = 1200;
  std::vector<std::string> cols;
  std::vector<double> row;
  for (std::size_t i = 0; i < n; ++i) {
    cols.push_back("c" + std::to_string(i));
    // -2.2250738585072014e-308 (smallest normal, negated) is 24 characters long.
    row.push_back(-std::numeric_limits<double>::min() * (i % 2 == 0 ? 1.0 : 1.0000000000000002));
  }
  const std::string path = temp_path("cosim_csv_writer_wide.csv");
  {
    cosim::csv_writer w(path, 1);
    w.begin(cols);
    w.write(row);
    w.write(row);
    w.end();
    ASSERT_FALSE(w.failed()) << w.failure();
  }
  std::ifstream in(path);
  std::string header;
  std::string line;
  ASSERT_TRUE(std::getline(in, header));
  int rows = 0;
  while (std::getline(in, line)) {
    const auto cells = split(line);
    ASSERT_EQ(cells.size(), n);
    for (std::size_t i = 0; i < n; ++i)
      EXPECT_EQ(std::strtod(cells[i].c_str(), nullptr), row[i]) << "column " << i;
    ++rows;
  }
  EXPECT_EQ(rows, 2);
  std::filesystem::remove(path);
}

TEST(CsvWriter, ARowWiderThanTheHeaderFailsInsteadOfOverrunning) {
  const std::string path = temp_path("cosim_csv_writer_narrow.csv");
  cosim::csv_writer w(path, 1);
  const std::vector<std::string> cols{"t"};
  w.begin(cols);
  const std::vector<double> row(50, -std::numeric_limits<double>::min());
  w.write(row);
  w.end();
  EXPECT_TRUE(w.failed());
  std::filesystem::remove(path);
}

}  // namespace
