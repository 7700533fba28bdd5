// csv_writer: rows of any width are written whole and read back to the same doubles; a
// crash (abort, a fault) or an exit() while the file is open keeps every completed row.
#include "cosim/runtime/csv_writer.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <thread>
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

// A child process writes 10 rows (fewer than flush_every, so all of them are still in the
// writer's buffer) and then ends badly; returns its wait status and the file's lines.
int write_then(const std::string& path, void (*end_badly)(), std::vector<std::string>& lines) {
  const pid_t pid = fork();
  if (pid == 0) {
    cosim::csv_writer w(path, 1000);
    const std::vector<std::string> cols = {"t", "x"};
    w.begin(cols);
    for (int i = 0; i < 10; ++i) {
      const std::vector<double> row = {0.1 * i, -1.5 * i};
      w.write(row);
    }
    end_badly();
    _exit(42);  // not reached
  }
  int status = 0;
  waitpid(pid, &status, 0);
  std::ifstream in(path);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return status;
}

TEST(CsvWriter, AnAbortDuringTheRunKeepsEveryCompletedRow) {
  const std::string path = temp_path("cosim_csv_writer_abort.csv");
  std::vector<std::string> lines;
  const int status = write_then(
      path, [] { std::abort(); }, lines);
  ASSERT_TRUE(WIFSIGNALED(status)) << "status " << status;  // still ends by the signal
  EXPECT_EQ(WTERMSIG(status), SIGABRT);
  ASSERT_EQ(lines.size(), 11u);  // before: only what a flush every 1000 rows had written
  EXPECT_EQ(lines[0], "t,x");
  EXPECT_EQ(lines[10], "0.9,-13.5");
  std::filesystem::remove(path);
}

TEST(CsvWriter, AnExitDuringTheRunKeepsEveryCompletedRowAndExitsOne) {
  const std::string path = temp_path("cosim_csv_writer_exit.csv");
  std::vector<std::string> lines;
  // In the forked child, on purpose: exit() is what an FMU might call.
  const auto end_by_exit = [] {
    std::exit(0);  // NOLINT(concurrency-mt-unsafe)
  };
  const int status = write_then(path, end_by_exit, lines);
  ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 1);  // stopped early, not "completed"
  ASSERT_EQ(lines.size(), 11u);
  EXPECT_EQ(lines[10], "0.9,-13.5");
  std::filesystem::remove(path);
}

// A slow run (realtime at 10 rows a second) does not wait for 1000 rows or a full buffer:
// a row written a second after the last write reaches the file at once, with those before.
TEST(CsvWriter, RowsReachTheFileAtLeastOnceASecond) {
  const std::string path = temp_path("cosim_csv_writer_period.csv");
  {
    cosim::csv_writer w(path);
    const std::vector<std::string> cols{"t", "x"};
    w.begin(cols);
    const std::vector<double> r1{0.0, 1.5}, r2{0.1, 2.5};
    w.write(r1);
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    w.write(r2);
    std::ifstream in(path);  // before end(): what a reader (tail -f) sees now
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(all, "t,x\n0,1.5\n0.1,2.5\n");
    w.end();
  }
  std::filesystem::remove(path);
}

// RFC 4180 header fields: an FMU variable "a[1,2]" or an alias with a quote is one column,
// quoted, and reads back as written; a column twice is refused before the file is touched.
TEST(CsvWriter, HeaderFieldsWithCommasAndQuotesAreQuotedAndReadBack) {
  const std::string path = temp_path("cosim_csv_writer_quoted.csv");
  const std::vector<std::string> cols = {"t", "m.a[1,2]", "say \"hi\"", "plain", " t"};
  {
    cosim::csv_writer w(path, 1);
    w.begin(cols);
    const std::vector<double> row = {0.0, 1.0, 2.0, 3.0, 4.0};
    w.write(row);
    w.end();
  }
  std::ifstream in(path);
  std::string header;
  std::getline(in, header);
  // " t" stays apart from t: readers drop the spaces of an unquoted field.
  EXPECT_EQ(header, "t,\"m.a[1,2]\",\"say \"\"hi\"\"\",plain,\" t\"");
  EXPECT_EQ(cosim::csv_header_fields(header), cols);
  EXPECT_EQ(cosim::csv_header_fields("t, x ,\"y\"\r"), (std::vector<std::string>{"t", "x", "y"}));
  std::filesystem::remove(path);
}

TEST(CsvWriter, AColumnTwiceIsRefusedBeforeTheFileIsTouched) {
  const std::string path = temp_path("cosim_csv_writer_twice.csv");
  std::ofstream(path) << "earlier results\n";
  cosim::csv_writer w(path, 1);
  const std::vector<std::string> cols = {"t", "x", "dP", "x"};
  try {
    w.begin(cols);
    ADD_FAILURE() << "accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("\"x\" appears twice"), std::string::npos) << e.what();
  }
  std::ifstream in(path);
  std::string first;
  std::getline(in, first);
  EXPECT_EQ(first, "earlier results");
  std::filesystem::remove(path);
}

}  // namespace
