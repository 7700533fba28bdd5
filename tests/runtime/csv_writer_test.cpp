// csv_writer: rows of any width are written whole and read back to the same doubles; a
// crash (abort, a fault) or an exit() while the file is open keeps every completed row.
#include "cosim/runtime/csv_writer.hpp"
#include "cosim/runtime/json_writer.hpp"
#include "cosim/runtime/time.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdio>
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

namespace {

// The exact decimal of n ns in seconds, computed independently of seconds_to_chars: printf of
// the whole seconds and the nine fractional digits, trailing zeros (and a bare point) cut.
std::string exact_decimal(long long n) {
  const bool neg = n < 0;
  const unsigned long long u =
      neg ? 0ULL - static_cast<unsigned long long>(n) : static_cast<unsigned long long>(n);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s%llu.%09llu", neg ? "-" : "", u / 1000000000ULL,
                u % 1000000000ULL);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

/// How results.csv and summary.json print to_seconds(d).
std::string printed(cosim::duration d) {
  return cosim::format_time(cosim::to_seconds(d));
}

}  // namespace

// Every time printed (results.csv, summary.json) is the exact decimal of its tick: 9 ms is
// "0.009", not "0.009000000000000001" (ticks times 1e-9, printed shortest), so results join on
// time strings.
TEST(TimeText, EveryTickBelowAMillionSecondsPrintsAsItsExactDecimal) {
  for (long long n :
       {0LL, 1LL, -1LL, 9'000'000LL, 10'000'000'000LL, 2'000'000'000LL, 3'000'000'000LL,
        123'456'789LL, 1'000'000'001LL, -500'000'000LL, 999'999'999'999'999LL})
    EXPECT_EQ(printed(cosim::duration{n}), exact_decimal(n)) << n;
  // Step sizes of the shipped scenarios and of tool FMUs, 200 000 steps each.
  for (long long step :
       {1LL, 50'000LL, 100'000LL, 200'000LL, 1'000'000LL, 9'000'000LL, 10'000'000LL, 62'500'000LL})
    for (long long k = 0; k < 200'000; ++k)
      ASSERT_EQ(printed(cosim::duration{k * step}), exact_decimal(k * step)) << k * step;
  for (long long n = 0; n < 2'000'000'000LL; n += 999'983LL)  // a prime stride: every digit
    ASSERT_EQ(printed(cosim::duration{n}), exact_decimal(n)) << n;
  // The extremes of the tick type, written directly.
  for (long long n :
       {std::numeric_limits<long long>::max(), std::numeric_limits<long long>::min()}) {
    char buf[32];
    char* const end = cosim::seconds_to_chars(buf, buf + sizeof buf, cosim::duration{n});
    ASSERT_NE(end, nullptr);
    EXPECT_EQ(std::string(buf, end), exact_decimal(n));
  }
  char small[4];
  EXPECT_EQ(cosim::seconds_to_chars(small, small + sizeof small, cosim::duration{12'250'000'000}),
            nullptr);  // "12.25" does not fit in 4 characters; "1.5" does
  EXPECT_NE(cosim::seconds_to_chars(small, small + sizeof small, cosim::duration{1'500'000'000}),
            nullptr);
  // A double that is no tick's to_seconds keeps its shortest round-trip form.
  EXPECT_FALSE(cosim::tick_of_seconds(1.0 / 3.0).has_value());
  EXPECT_EQ(cosim::format_time(1.0 / 3.0), "0.3333333333333333");
  EXPECT_EQ(cosim::format_time(2e6), "2000000");
}

TEST(CsvWriter, TimesAreWrittenAsTheExactDecimalsOfTheirTicks) {
  const std::string path = temp_path("cosim_csv_writer_time.csv");
  const std::vector<std::string> cols{"t", "x"};
  {
    cosim::csv_writer w(path, 1);
    w.begin(cols);
    for (long long k = 0; k <= 1000; ++k) {
      const double t = cosim::to_seconds(cosim::duration{k * 9'000'000LL});
      const std::vector<double> row{t, t};
      w.write(row);
    }
    w.end();
    ASSERT_FALSE(w.failed()) << w.failure();
  }
  std::ifstream in(path);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  for (long long k = 0; k <= 1000; ++k) {
    ASSERT_TRUE(std::getline(in, line));
    const auto f = split(line);
    ASSERT_EQ(f.size(), 2u);
    EXPECT_EQ(f[0], exact_decimal(k * 9'000'000LL)) << line;
    EXPECT_EQ(f[1], f[0]);
  }
  std::filesystem::remove(path);
}
