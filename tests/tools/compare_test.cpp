// `cosim compare` on files written here by hand, run as the real program: it refuses what it
// cannot compare (no common time, a time column that goes back, a header without rows, runs
// of different length) with exit code 2 and a message naming the files and what was found,
// and always prints the span and number of samples it compared. Expected differences are
// worked out here from the linear functions the files sample.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "temp_dir.hpp"

namespace {

using cosim::test::temp_dir;

const std::string exe = COSIM_EXE;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct result {
  int code = -1;
  std::string out, err;
};

/// Runs `cosim compare ARGS` inside `dir`, capturing stdout and stderr.
result compare(const temp_dir& dir, const std::string& args) {
  const std::string cmd = "cd '" + dir.path() + "' && '" + exe + "' compare " + args + " >'" +
                          (dir / ".stdout") + "' 2>'" + (dir / ".stderr") + "'";
  const int status = std::system(cmd.c_str());
  result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(dir / ".stdout");
  r.err = slurp(dir / ".stderr");
  return r;
}

/// A results-like CSV with columns t,x and x = slope * t + offset at the given times.
std::string linear_csv(const std::vector<double>& times, double slope, double offset) {
  std::ostringstream s;
  s.precision(17);
  s << "t,x\n";
  for (double t : times) s << t << "," << slope * t + offset << "\n";
  return s.str();
}

/// Times first, first + step, ... for `count` rows (computed as first + k * step).
std::vector<double> grid(double first, double step, int count) {
  std::vector<double> t;
  t.reserve(static_cast<std::size_t>(count));
  for (int k = 0; k < count; ++k) t.push_back(first + k * step);
  return t;
}

struct table_row {
  double max_abs = std::nan(""), rms = std::nan("");
  std::size_t samples = 0;
};

/// The row of `column` in compare's table (after its header line).
table_row row_of(const std::string& out, const std::string& column) {
  std::istringstream in(out);
  bool in_table = false;
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string name;
    f >> name;
    if (name == "column") {
      in_table = true;
      continue;
    }
    if (!in_table || name != column) continue;
    table_row r;
    double t_at_max = 0.0;
    f >> r.max_abs >> r.rms >> t_at_max >> r.samples;
    return r;
  }
  ADD_FAILURE() << "no row '" << column << "' in:\n" << out;
  return {};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(Compare, FilesSharingNoTimeAreRefused) {
  temp_dir dir;
  (void)dir.file("a.csv", linear_csv(grid(0.0, 0.5, 3), 1.0, 0.0));  // t = 0 .. 1
  (void)dir.file("b.csv", linear_csv(grid(2.0, 0.5, 3), 1.0, 0.0));  // t = 2 .. 3
  const result r = compare(dir, "a.csv b.csv");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, "a.csv (t = [0, 1] s, 3 rows)")) << r.err;
  EXPECT_TRUE(contains(r.err, "b.csv (t = [2, 3] s, 3 rows)")) << r.err;
  EXPECT_TRUE(contains(r.err, "share 0 common samples")) << r.err;
  EXPECT_TRUE(contains(r.err, "at least 2")) << r.err;
  EXPECT_FALSE(contains(r.out, "max_abs")) << "no table of zeros:\n" << r.out;
  // --allow-partial does not make an empty overlap comparable.
  EXPECT_EQ(compare(dir, "a.csv b.csv --allow-partial").code, 2);
}

TEST(Compare, OneCommonSampleIsNotEnough) {
  temp_dir dir;
  (void)dir.file("a.csv", linear_csv(grid(0.0, 0.5, 3), 1.0, 0.0));  // t = 0 .. 1
  (void)dir.file("b.csv", linear_csv(grid(1.0, 0.5, 3), 1.0, 0.0));  // t = 1 .. 2
  const result r = compare(dir, "a.csv b.csv --allow-partial");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, "share 1 common samples")) << r.err;
}

TEST(Compare, TimeThatDoesNotIncreaseIsRefusedWithLineAndValues) {
  temp_dir dir;
  (void)dir.file("a.csv", linear_csv(grid(0.0, 0.1, 5), 1.0, 0.0));
  // Line 5 (row 4) goes back from 0.2 to 0.15.
  (void)dir.file("b.csv", "t,x\n0,0\n0.1,0.1\n0.2,0.2\n0.15,0.15\n0.4,0.4\n");
  const result r = compare(dir, "a.csv b.csv");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_TRUE(
      contains(r.err, "b.csv:5: time t = 0.15 (row 4) is not greater than t = 0.2 on line 4"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "strictly increase")) << r.err;
  // A repeated time is no increase either, in either file.
  (void)dir.file("c.csv", "t,x\n0,0\n0.1,0.1\n0.1,0.1\n0.2,0.2\n");
  const result rep = compare(dir, "c.csv a.csv");
  EXPECT_EQ(rep.code, 2);
  EXPECT_TRUE(contains(rep.err, "c.csv:4: time t = 0.1 (row 3) is not greater than t = 0.1"))
      << rep.err;
  // A time that is not a finite number.
  (void)dir.file("d.csv", "t,x\n0,0\nnan,1\n");
  const result nan = compare(dir, "a.csv d.csv");
  EXPECT_EQ(nan.code, 2);
  EXPECT_TRUE(contains(nan.err, "d.csv:3: time t = nan is not finite")) << nan.err;
}

// A NaN or inf in a compared column made max_abs inf and rms nan with exit code 0: the
// comparison is refused like a malformed file (exit 2), naming file, row, time and column.
TEST(Compare, NonFiniteValueInAComparedColumnIsRefusedNamingFileRowTimeAndColumn) {
  temp_dir dir;
  (void)dir.file("a.csv", "t,x,y\n0,0,1\n0.1,0.1,1\n0.2,0.2,1\n0.3,0.3,1\n");
  (void)dir.file("b.csv", "t,x,y\n0,0,1\n0.1,nan,1\n0.2,0.2,1\n0.3,0.3,1\n");
  (void)dir.file("c.csv", "t,x,y\n0,0,1\n0.1,0.1,1\n0.2,0.2,-inf\n0.3,0.3,1\n");
  struct bad {
    std::string args, message;
  };
  for (const bad& b : {bad{"a.csv b.csv", "b.csv row 2 (t = 0.1): x = nan"},
                       bad{"b.csv a.csv", "b.csv row 2 (t = 0.1): x = nan"},
                       bad{"c.csv a.csv --columns y", "c.csv row 3 (t = 0.2): y = -inf"},
                       bad{"c.csv b.csv",
                           "b.csv row 2 (t = 0.1): x = nan; c.csv row 3 (t = "
                           "0.2): y = -inf"}}) {
    const result r = compare(dir, b.args);
    EXPECT_EQ(r.code, 2) << b.args << "\n" << r.out << r.err;
    EXPECT_TRUE(contains(r.err, "not finite: " + b.message)) << b.args << ": " << r.err;
    EXPECT_FALSE(contains(r.out, "max_abs")) << b.args << ": no table:\n" << r.out;
  }
  // A's value between two of B's times is interpolated: it counts even on no row of B.
  (void)dir.file("fine.csv", "t,x\n0,0\n0.05,0.05\n0.1,0.1\n0.15,nan\n0.2,0.2\n0.3,0.3\n");
  const result f = compare(dir, "fine.csv a.csv --columns x");
  EXPECT_EQ(f.code, 2) << f.out;
  EXPECT_TRUE(contains(f.err, "fine.csv row 4 (t = 0.15): x = nan")) << f.err;
  // A column not compared may hold anything: x of b.csv is not compared here.
  const result y = compare(dir, "a.csv b.csv --columns y");
  ASSERT_EQ(y.code, 0) << y.err;
  EXPECT_EQ(row_of(y.out, "y").max_abs, 0.0);
}

TEST(Compare, NumberOutOfRangeOrMalformedNamesLineColumnAndRow) {
  temp_dir dir;
  (void)dir.file("a.csv", linear_csv(grid(0.0, 0.1, 4), 1.0, 0.0));
  (void)dir.file("big.csv", "t,x\n0,0\n0.1,1e400\n");
  const result big = compare(dir, "a.csv big.csv");
  EXPECT_EQ(big.code, 2);
  EXPECT_TRUE(contains(big.err, "big.csv:3: column 'x' (row 2): '1e400' is out of the range"))
      << big.err;
  (void)dir.file("abc.csv", "t,x\n0,0\n0.1,0.1\n0.2,abc\n");
  const result abc = compare(dir, "abc.csv a.csv");
  EXPECT_EQ(abc.code, 2);
  EXPECT_TRUE(contains(abc.err, "abc.csv:4: column 'x' (row 3): 'abc' is not a number")) << abc.err;
}

TEST(Compare, HeaderWithoutRowsIsRefused) {
  temp_dir dir;
  (void)dir.file("a.csv", linear_csv(grid(0.0, 0.1, 5), 1.0, 0.0));
  (void)dir.file("h.csv", "t,x\n");
  for (const std::string args : {"a.csv h.csv", "h.csv a.csv", "h.csv a.csv --allow-partial"}) {
    const result r = compare(dir, args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out << r.err;
    EXPECT_TRUE(contains(r.err, "h.csv: has a header but no data rows")) << args << ": " << r.err;
    EXPECT_FALSE(contains(r.out, "max_abs")) << r.out;
  }
}

TEST(Compare, RunThatStoppedEarlyIsRefusedUnlessPartialIsAllowed) {
  temp_dir dir;
  // A stopped at t = 0.5 of 1 s; x_A = 2t, x_B = t: the difference at B's times is t.
  (void)dir.file("a.csv", linear_csv(grid(0.0, 0.1, 6), 2.0, 0.0));   // t = 0 .. 0.5
  (void)dir.file("b.csv", linear_csv(grid(0.0, 0.1, 11), 1.0, 0.0));  // t = 0 .. 1
  const result r = compare(dir, "a.csv b.csv");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, "different time spans")) << r.err;
  EXPECT_TRUE(contains(r.err, "a.csv (t = [0, 0.5] s, 6 rows)")) << r.err;
  EXPECT_TRUE(contains(r.err, "b.csv (t = [0, 1] s, 11 rows)")) << r.err;
  EXPECT_TRUE(contains(r.err, "--allow-partial")) << r.err;
  // Either order.
  EXPECT_EQ(compare(dir, "b.csv a.csv").code, 2);

  const result p = compare(dir, "a.csv b.csv --allow-partial");
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_TRUE(contains(p.out, "compared: t = [0, 0.5] s, 6 samples")) << p.out;
  EXPECT_TRUE(contains(p.out, "partial")) << p.out;
  // |x_A - x_B| = t at t = 0, 0.1, .., 0.5: max 0.5, rms sqrt((0.01+0.04+0.09+0.16+0.25)/6).
  const table_row x = row_of(p.out, "x");
  EXPECT_NEAR(x.max_abs, 0.5, 1e-6 * 0.5);  // the table prints 7 significant digits
  EXPECT_NEAR(x.rms, std::sqrt(0.55 / 6.0), 1e-6 * 0.3);
  EXPECT_EQ(x.samples, 6u);

  // Stopped one row of the finer grid early is still a shorter run.
  (void)dir.file("c.csv", linear_csv(grid(0.0, 0.1, 10), 1.0, 0.0));  // t = 0 .. 0.9
  EXPECT_EQ(compare(dir, "c.csv b.csv").code, 2);
}

// Windows line ends read as the same file; a column named twice is refused (which one would
// be compared?); a last line without a line end (a results file cut by a crash) is not used,
// with a note, since its last number may be cut short.
TEST(Compare, CrlfDuplicateColumnsAndACutLastLine) {
  temp_dir dir;
  const std::string lf = linear_csv(grid(0.0, 0.25, 5), 3.0, 0.0);
  std::string crlf;
  for (char c : lf) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  (void)dir.file("lf.csv", lf);
  (void)dir.file("crlf.csv", crlf);
  const result r = compare(dir, "lf.csv crlf.csv");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(row_of(r.out, "x").max_abs, 0.0);
  EXPECT_EQ(row_of(r.out, "x").samples, 5u);

  (void)dir.file("dup.csv", "t,x,x\n0,1,2\n1,2,3\n");
  const result d = compare(dir, "lf.csv dup.csv");
  EXPECT_EQ(d.code, 2);
  EXPECT_TRUE(contains(d.err, "dup.csv:1: column 'x' appears twice (columns 2 and 3)")) << d.err;

  // x = 3t; the last row cut after "2.2" of "2.25". Used, it would differ by 0.05.
  (void)dir.file("cut.csv", "t,x\n0,0\n0.25,0.75\n0.5,1.5\n0.75,2.2");
  (void)dir.file("full.csv", "t,x\n0,0\n0.25,0.75\n0.5,1.5\n0.75,2.25\n");
  const result c = compare(dir, "full.csv cut.csv --allow-partial");
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_TRUE(contains(c.err, "cut.csv:5: the last line has no line end")) << c.err;
  EXPECT_EQ(row_of(c.out, "x").samples, 3u);
  EXPECT_EQ(row_of(c.out, "x").max_abs, 0.0);
}

TEST(Compare, SameSpanPrintsComparedSpanAndCount) {
  temp_dir dir;
  // A overshoots the duration 1 by less than its step (0, 0.3, .., 1.2), as a run whose macro
  // step does not divide the duration does; B ends at 1. x_A = 3t, x_B = 3t + 1.
  (void)dir.file("a.csv", linear_csv(grid(0.0, 0.3, 5), 3.0, 0.0));
  (void)dir.file("b.csv", linear_csv(grid(0.0, 0.25, 5), 3.0, 1.0));
  const result r = compare(dir, "a.csv b.csv");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "A: a.csv  t = [0, 1.2] s, 5 rows")) << r.out;
  EXPECT_TRUE(contains(r.out, "B: b.csv  t = [0, 1] s, 5 rows")) << r.out;
  EXPECT_TRUE(contains(r.out, "compared: t = [0, 1] s, 5 samples")) << r.out;
  EXPECT_FALSE(contains(r.out, "partial")) << r.out;
  const table_row x = row_of(r.out, "x");
  EXPECT_NEAR(x.max_abs, 1.0, 1e-6);  // the table prints 7 significant digits
  EXPECT_NEAR(x.rms, 1.0, 1e-6);
  EXPECT_EQ(x.samples, 5u);

  // Identical files: zero difference over every row.
  const result same = compare(dir, "b.csv b.csv");
  ASSERT_EQ(same.code, 0) << same.err;
  EXPECT_TRUE(contains(same.out, "compared: t = [0, 1] s, 5 samples")) << same.out;
  EXPECT_EQ(row_of(same.out, "x").max_abs, 0.0);
}

// A file from an FMI tool: the time column named "time" and a Boolean column written as
// true / false. It compares with cosim's own (t, 1 / 0) on equal terms.
TEST(Compare, TimeColumnNamedTimeAndBooleanWordsAreAccepted) {
  temp_dir dir;
  (void)dir.file("tool.csv", "time,x,on\n0,0,false\n0.5,1.5,true\n1,3,true\n");
  (void)dir.file("cosim.csv", "t,x,on\n0,0,0\n0.5,1.5,0\n1,3,1\n");
  const result r = compare(dir, "tool.csv cosim.csv");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "compared: t = [0, 1] s, 3 samples")) << r.out;
  EXPECT_EQ(row_of(r.out, "x").max_abs, 0.0);
  EXPECT_EQ(row_of(r.out, "on").max_abs, 1.0);  // true against 0 at t = 0.5
  // Any other word is still not a number, named with its column.
  (void)dir.file("bad.csv", "time,x,on\n0,0,yes\n1,3,true\n");
  const result bad = compare(dir, "bad.csv cosim.csv");
  EXPECT_EQ(bad.code, 2);
  EXPECT_TRUE(contains(bad.err, "column 'on' (row 1): 'yes' is not a number")) << bad.err;
}

}  // namespace
