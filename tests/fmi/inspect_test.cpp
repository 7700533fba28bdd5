// `cosim inspect X.fmu` prints what the FMU declares (the hand-written description of
// fmi_test_files.hpp, so every expected value is read off that XML) and exits 2 with the
// FMU's path for a bad FMU; `cosim run` of a system with a bad FMU exits 2 and writes nothing.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cosim/fmi/zip_archive.hpp"
#include "fmi_test_files.hpp"
#include "temp_dir.hpp"

namespace {

using cosim::test::temp_dir;
namespace fs = std::filesystem;

struct result {
  int code = -1;
  std::string out, err;
};

/// `env`: NAME=VALUE words set for the program only.
result cosim(const temp_dir& dir, const std::string& args, const std::string& env = "") {
  const std::string cmd = "cd '" + dir.path() + "' && " + env + " '" + std::string(COSIM_EXE) +
                          "' " + args + " >'" + (dir / ".stdout") + "' 2>'" + (dir / ".stderr") +
                          "'";
  const int status = std::system(cmd.c_str());
  result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = cosim::test::slurp(dir / ".stdout");
  r.err = cosim::test::slurp(dir / ".stderr");
  return r;
}

// The whitespace-separated words of the line whose first word is `first`.
std::vector<std::string> row(const std::string& text, const std::string& first) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::istringstream ls(line);
    std::vector<std::string> words;
    for (std::string w; ls >> w;) words.push_back(w);
    if (!words.empty() && words[0] == first) return words;
  }
  return {};
}

TEST(CosimInspect, ShowsVersionCapabilitiesExperimentAndVariables) {
  temp_dir dir;
  cosim::test::write_zip(dir / "m.fmu", {{"modelDescription.xml", cosim::test::description()},
                                         {"binaries/win64/m.dll", "MZ"}});
  const result r = cosim(dir, "inspect m.fmu");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("FMI version:        2.0\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("model name:         m\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("guid:               {g}\n"), std::string::npos) << r.out;
  // Readable without a binary for this platform, and says so.
  EXPECT_NE(r.out.find("binaries/linux64/m.so (MISSING: cannot run here)"), std::string::npos)
      << r.out;
  EXPECT_EQ(row(r.out, "canHandleVariableCommunicationStepSize"),
            (std::vector<std::string>{"canHandleVariableCommunicationStepSize", "no"}));
  EXPECT_NE(r.out.find("default experiment: startTime 1, stopTime 4, stepSize 0.25, tolerance -"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(row(r.out, "u"),
            (std::vector<std::string>{"u", "input", "continuous", "Real", "N", "0"}));
  EXPECT_EQ(row(r.out, "y"),
            (std::vector<std::string>{"y", "output", "continuous", "Real", "m", "-"}));
  EXPECT_EQ(row(r.out, "p"), (std::vector<std::string>{"p", "parameter", "fixed", "Real", "kg", "1",
                                                       "range", "[0,", "10]"}));
  EXPECT_EQ(row(r.out, "n"),
            (std::vector<std::string>{"n", "parameter", "fixed", "Integer", "-", "2"}));
  EXPECT_EQ(row(r.out, "label"),
            (std::vector<std::string>{"label", "parameter", "fixed", "String", "-", "a", "not",
                                      "exchanged", "by", "cosim"}));
}

TEST(CosimInspect, BadFmuExitsTwoNamingIt) {
  temp_dir dir;
  const std::string text = dir.file("text.fmu", "not a zip\n");
  result r = cosim(dir, "inspect text.fmu");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("cosim inspect: " + text + ": not a readable FMU (zip archive)"),
            std::string::npos)
      << r.err;
  r = cosim(dir, "inspect missing.fmu");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(dir / "missing.fmu" + ": no such FMU file"), std::string::npos) << r.err;
  cosim::test::write_zip(dir / "slip.fmu",
                         {{"modelDescription.xml", cosim::test::description()}, {"../../x", "x"}});
  r = cosim(dir, "inspect slip.fmu");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("refused: archive entry \"../../x\""), std::string::npos) << r.err;
}

TEST(CosimRunFmu, BadFmuExitsTwoAndWritesNothing) {
  temp_dir dir;
  cosim::test::write_zip(dir / "junk.fmu", {{"modelDescription.xml", cosim::test::description()},
                                            {"binaries/linux64/m.so", "not a library"}});
  (void)dir.file("system.toml",
                 "[run]\nduration = 1.0\nmacro_step = 0.25\n[subsystems.a]\nfmu = \"junk.fmu\"\n");
  const result r = cosim(dir, "run system.toml --out res");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(dir / "junk.fmu" + ": cannot load its binary binaries/linux64/m.so"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir / "res"));
}

#ifdef COSIM_TEST_FMU_DIR
// An FMU that crashes the process in initialisation (tests/fmus/crash): exit 2 with a
// message naming the FMU, the call and the signal, not a silent death by signal; no
// results folder; the unpack folder it leaves is unheld, so the next run's sweep removes it.
void expect_crash_reported(int crash_in, const std::string& signal) {
  SCOPED_TRACE("crash_in = " + std::to_string(crash_in));
  temp_dir dir;
  fs::create_directory(dir / "tmp");
  const std::string fmu = std::string(COSIM_TEST_FMU_DIR) + "/crash_fmi2.fmu";
  (void)dir.file("system.toml",
                 "[run]\nduration = 1.0\nmacro_step = 0.1\n[subsystems.c]\nfmu = \"" + fmu +
                     "\"\nparameters = { crash_in = " + std::to_string(crash_in) + " }\n");
  const result r = cosim(dir, "run system.toml --out res", "TMPDIR=" + (dir / "tmp"));
  if (crash_in == 0) {
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(fs::exists(dir / "res/summary.json"));
    return;
  }
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("FMU " + fmu + " crashed in initialisation"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(signal), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "res"));
  std::size_t left = 0;
  for (const auto& e : fs::directory_iterator(dir / "tmp"))
    left += e.path().filename().string().rfind("cosim-fmu-", 0) == 0 ? 1 : 0;
  EXPECT_EQ(left, 1u);
  // NOLINTNEXTLINE(concurrency-mt-unsafe): the test sets it before any thread reads it
  ASSERT_EQ(setenv("TMPDIR", (dir / "tmp").c_str(), 1), 0);
  EXPECT_EQ(cosim::fmi::remove_abandoned_folders("cosim-fmu", 0.0), 1u);
  // NOLINTNEXTLINE(concurrency-mt-unsafe): the test sets it before any thread reads it
  unsetenv("TMPDIR");
}

TEST(CosimRunFmu, CrashInInitialisationExitsTwoNamingTheFmu) {
  expect_crash_reported(0, "");
  expect_crash_reported(1, "SIGSEGV");
  expect_crash_reported(2, "SIGABRT");
}

// An FMU that crashes in fmi2Terminate (crash_in 6) or fmi2FreeInstance (7) after a run that
// went to its end: the FMU is torn down before summary.json is written, so the crash is
// reported (exit 2 naming the FMU and the call) and no summary claims the run finished; the
// rows are all there (t = 0 .. 1 s by 0.1 s).
TEST(CosimRunFmu, CrashInTerminationExitsTwoWithTheRowsAndNoSummary) {
  for (const int crash_in : {6, 7}) {
    SCOPED_TRACE("crash_in = " + std::to_string(crash_in));
    temp_dir dir;
    const std::string fmu = std::string(COSIM_TEST_FMU_DIR) + "/crash_fmi2.fmu";
    (void)dir.file("system.toml",
                   "[run]\nduration = 1.0\nmacro_step = 0.1\n[subsystems.c]\nfmu = \"" + fmu +
                       "\"\nparameters = { crash_in = " + std::to_string(crash_in) +
                       " }\n[output]\nrecord = [\"c.y\"]\n");
    const result r = cosim(dir, "run system.toml --out res");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("FMU " + fmu +
                         " crashed in termination (fmi2Terminate, fmi2FreeInstance) (SIGSEGV"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("no summary.json"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir / "res/summary.json"));
    std::ifstream csv(dir / "res/results.csv");
    std::string line;
    int rows = -1;  // the header
    while (std::getline(csv, line)) ++rows;
    EXPECT_EQ(rows, 11);
  }
}
#endif

}  // namespace
