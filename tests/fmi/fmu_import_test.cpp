// FMU import: archives are checked before anything is unpacked (zip-slip entries refused),
// every bad FMU gets a message naming the file (and the variable), unpacked folders live
// exactly as long as their last user, and system files reach FMUs through `fmu = "PATH"`.
// Archives are written here with libzip; runnable FMUs are the test FMUs of tests/fmus.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <zip.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cosim/fmi/fmu_file.hpp"
#include "cosim/fmi/fmu_subsystem.hpp"
#include "cosim/fmi/zip_archive.hpp"
#include "cosim/rt_config/run.hpp"
#include "cosim/rt_config/scenario.hpp"
#include "cosim/rt_config/type_registry.hpp"
#include "cosim/runtime/error.hpp"
#include "fmi_test_files.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
namespace config = cosim::config;
using cosim::test::temp_dir;
using namespace cosim::fmi;
using cosim::duration;
using cosim::time_point;
using cosim::test::description;
using cosim::test::slurp;
using cosim::test::write_zip;

std::string error_of_read(const std::string& path) {
  try {
    (void)read_fmu(path);
  } catch (const cosim::error& e) {
    return e.what();
  }
  return "";
}

TEST(FmuArchive, UnsafeEntryNames) {
  // Absolute paths, drive letters and ".." components would leave the unpack folder.
  for (const char* bad : {"../evil", "a/../../evil", "a/..", "/etc/passwd", "\\evil", "C:/evil",
                          "a\\..\\..\\evil", ""})
    EXPECT_NE(unsafe_entry_reason(bad), "") << bad;
  for (const char* ok : {"modelDescription.xml", "binaries/linux64/m.so", "a..b/c", "..a",
                         "resources/x../y", "documentation/"})
    EXPECT_EQ(unsafe_entry_reason(ok), "") << ok;
}

TEST(FmuArchive, ZipSlipRefusedBeforeAnythingIsWritten) {
  temp_dir dir;
  fs::create_directories(dir / "a/b");
  for (const std::string evil : {"../../escaped.txt", "/tmp/cosim_fmi_escaped_abs.txt"}) {
    const std::string fmu = dir / "a/b/slip.fmu";
    write_zip(fmu, {{"modelDescription.xml", description()},
                    {"binaries/linux64/m.so", "x"},
                    {evil, "gotcha"}});
    const std::string e = error_of_read(fmu);
    EXPECT_NE(e.find(fmu + ": refused: archive entry \"" + evil + "\""), std::string::npos) << e;
    EXPECT_FALSE(fs::exists(dir / "escaped.txt"));
    EXPECT_FALSE(fs::exists("/tmp/cosim_fmi_escaped_abs.txt"));
  }
}

// An entry whose declared size takes the archive past the limit is refused before any file
// is written (a zip bomb would otherwise fill the disk up to the limit first).
TEST(FmuArchive, OversizeEntryRefusedBeforeAnythingIsWritten) {
  temp_dir dir;
  const std::string zip = dir / "big.zip";
  const std::size_t big = std::size_t{2} << 20;  // 2 MiB of zeros, a few KiB deflated
  write_zip(zip, {{"a.txt", "first"}, {"b/big.bin", std::string(big, '\0')}});
  fs::create_directories(dir / "out");
  try {
    zip_archive(zip, "FMU").unpack(dir / "out", std::uint64_t{1} << 20);
    ADD_FAILURE() << "unpacked past the limit";
  } catch (const cosim::error& e) {
    EXPECT_NE(std::string(e.what()).find(zip + ": refused: archive entry \"b/big.bin\" declares " +
                                         std::to_string(big) + " bytes uncompressed"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(fs::is_empty(dir / "out"));  // not even the small entry before it
  // Within the limit it unpacks.
  zip_archive(zip, "FMU").unpack(dir / "out", std::uint64_t{4} << 20);
  EXPECT_EQ(fs::file_size(dir / "out/b/big.bin"), big);
}

// An archive holding one file twice (a packer that appended it again): named with both entry
// numbers, before anything is written, by unpacking and by reading the FMU (`cosim inspect`).
// libzip will not write a name twice, so the second name is patched in the archive's bytes
// (local header and central directory; the data's CRC does not cover the name).
TEST(FmuArchive, AnEntryTwiceIsRefusedNamingIt) {
  temp_dir dir;
  const std::string zip = dir / "twice.fmu";
  write_zip(zip, {{"modelDescription.xml", description()},
                  {"documentation/x.txt", "first"},
                  {"documentation/y.txt", "again"}});
  std::string bytes = slurp(zip);
  std::size_t patched = 0;
  for (std::size_t at = bytes.find("documentation/y.txt"); at != std::string::npos;
       at = bytes.find("documentation/y.txt", at + 1), ++patched)
    bytes[at + 14] = 'x';
  ASSERT_EQ(patched, 2u);  // local header and central directory
  std::ofstream(zip, std::ios::binary | std::ios::trunc) << bytes;
  const std::string expected =
      "refused: archive entry \"documentation/x.txt\" appears twice (entries 2 and 3 of 3)";
  fs::create_directories(dir / "out");
  try {
    zip_archive(zip, "FMU").unpack(dir / "out", std::uint64_t{1} << 20);
    ADD_FAILURE() << "unpacked";
  } catch (const cosim::error& e) {
    EXPECT_NE(std::string(e.what()).find(zip + ": " + expected), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::is_empty(dir / "out"));
  try {
    (void)read_fmu(zip);
    ADD_FAILURE() << "read";
  } catch (const cosim::error& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
}

// A symbolic link entry (Unix mode in the external attributes) is named as such; unpacked it
// would be a file holding the link's target, and dlopen would say "invalid ELF header".
TEST(FmuArchive, SymlinkEntryIsRefusedByName) {
  temp_dir dir;
  const std::string fmu = dir / "link.fmu";
  write_zip(fmu, {{"modelDescription.xml", description()},
                  {"binaries/linux64/m.so.1", "x"},
                  {"binaries/linux64/m.so", "m.so.1"}});
  int err = 0;
  zip_t* z = zip_open(fmu.c_str(), 0, &err);
  ASSERT_NE(z, nullptr);
  const zip_int64_t i = zip_name_locate(z, "binaries/linux64/m.so", 0);
  ASSERT_GE(i, 0);
  ASSERT_EQ(zip_file_set_external_attributes(z, static_cast<zip_uint64_t>(i), 0, ZIP_OPSYS_UNIX,
                                             (0120777U) << 16U),
            0);
  ASSERT_EQ(zip_close(z), 0);
  const std::string e = error_of_read(fmu);
  EXPECT_NE(e.find(fmu + ": refused: archive entry \"binaries/linux64/m.so\" is a symbolic "
                         "link (to \"m.so.1\")"),
            std::string::npos)
      << e;
}

TEST(FmuArchive, BadFilesNameTheFmu) {
  temp_dir dir;
  // Missing file: an I/O error.
  try {
    (void)read_fmu(dir / "missing.fmu");
    ADD_FAILURE();
  } catch (const cosim::error& e) {
    EXPECT_EQ(e.code(), cosim::errc::io);
    EXPECT_NE(std::string(e.what()).find(dir / "missing.fmu" + ": no such FMU file"),
              std::string::npos);
  }
  // Not a zip.
  const std::string text = dir.file("text.fmu", "just text\n");
  EXPECT_NE(error_of_read(text).find(text + ": not a readable FMU (zip archive)"),
            std::string::npos);
  // A zip without modelDescription.xml (one in a subfolder does not count).
  const std::string nomd = dir / "nomd.fmu";
  write_zip(nomd, {{"sub/modelDescription.xml", description()}});
  EXPECT_NE(
      error_of_read(nomd).find(nomd + ": not an FMU: the archive has no modelDescription.xml"),
      std::string::npos);
  // Bad XML: names the FMU, the file inside and the line.
  const std::string badxml = dir / "badxml.fmu";
  write_zip(badxml,
            {{"modelDescription.xml", "<?xml version=\"1.0\"?>\n<fmiModelDescription>\n<x>"}});
  const std::string e = error_of_read(badxml);
  EXPECT_NE(e.find(badxml + ": modelDescription.xml:"), std::string::npos) << e;
  EXPECT_NE(e.find("not well-formed XML"), std::string::npos) << e;
}

TEST(FmuArchive, MissingBinaryForThisPlatform) {
  temp_dir dir;
  const std::string fmu = dir / "win.fmu";
  write_zip(fmu, {{"modelDescription.xml", description()}, {"binaries/win64/m.dll", "MZ"}});
  const auto f = read_fmu(fmu);  // readable: cosim inspect shows it
  try {
    require_cosimulation(*f);
    ADD_FAILURE();
  } catch (const cosim::error& e) {
    EXPECT_NE(std::string(e.what()).find(
                  fmu + ": no binary for this platform: binaries/linux64/m.so is missing from "
                        "the archive (binaries: binaries/win64/m.dll)"),
              std::string::npos)
        << e.what();
  }
}

std::string error_of_load(const std::string& path) {
  try {
    auto l = load_fmu(read_fmu(path));
    fmu_subsystem s("s", l, {});
  } catch (const cosim::error& e) {
    return e.what();
  }
  return "";
}

TEST(FmuArchive, BinaryThatIsNotAnFmu) {
  temp_dir dir;
  // Garbage where the shared library should be.
  const std::string junk = dir / "junk.fmu";
  write_zip(junk, {{"modelDescription.xml", description()}, {"binaries/linux64/m.so", "junk"}});
  EXPECT_NE(error_of_load(junk).find(junk + ": cannot load its binary binaries/linux64/m.so"),
            std::string::npos);
  // A real shared library without the FMI functions: every missing one is listed.
  Dl_info info{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&zip_open), &info), 0);
  const std::string lib = dir / "lib.fmu";
  write_zip(lib, {{"modelDescription.xml", description()},
                  {"binaries/linux64/m.so", slurp(info.dli_fname)}});
  const std::string e = error_of_load(lib);
  EXPECT_NE(e.find(lib + ": its binary binaries/linux64/m.so does not export the FMI functions "
                         "fmi2GetTypesPlatform, fmi2GetVersion, fmi2Instantiate"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("fmi2DoStep"), std::string::npos) << e;
}

config::scenario load(const temp_dir& dir, const std::string& toml) {
  return config::load_scenario(dir.file("system.toml", toml), {});
}

std::string error_of_system(const temp_dir& dir, const std::string& toml, bool build = false) {
  try {
    const auto sc = load(dir, toml);
    if (build) (void)config::build(sc);
  } catch (const cosim::error& e) {
    return e.what();
  }
  return "";
}

TEST(FmuSystemFile, ParametersDefaultExperimentAndPrint) {
  temp_dir dir;
  fs::create_directories(dir / "models");
  write_zip(dir / "models/m.fmu",
            {{"modelDescription.xml", description()}, {"binaries/linux64/m.so", "x"}});
  // Relative to the system file, which sits elsewhere than the working directory.
  const config::scenario sc = load(dir, "[subsystems.plant]\nfmu = \"models/m.fmu\"\n");
  ASSERT_EQ(sc.system.subsystems.size(), 1u);
  const std::string abs = fs::path(dir / "models/m.fmu").lexically_normal().string();
  EXPECT_EQ(sc.system.subsystems[0].type, "fmu:" + abs);
  // DefaultExperiment startTime 1, stopTime 4, stepSize 0.25.
  EXPECT_EQ(sc.run.duration, 3.0);
  EXPECT_EQ(sc.run.macro_step, 0.25);
  EXPECT_EQ(sc.subsystems.at("plant").step, 0.25);
  // [run] wins over the default experiment; a step that does not divide H falls back to H.
  const config::scenario sc2 = load(
      dir, "[run]\nduration = 1.0\nmacro_step = 0.1\n[subsystems.plant]\nfmu = \"models/m.fmu\"\n");
  EXPECT_EQ(sc2.run.duration, 1.0);
  EXPECT_EQ(sc2.subsystems.at("plant").step, 0.1);

  const config::subsystem_type* t = config::find_subsystem_type("fmu:" + abs);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t, config::fmu_subsystem_type(abs));  // cached per path
  EXPECT_TRUE(t->unfed_inputs_keep_start);
  ASSERT_EQ(t->parameters.size(), 3u);
  EXPECT_EQ(t->parameters[0].name, "p");
  EXPECT_EQ(t->parameters[0].kind, config::param_kind::real);
  EXPECT_EQ(t->parameters[0].unit, "kg");
  EXPECT_EQ(std::get<double>(t->parameters[0].def), 1.0);
  EXPECT_EQ(t->parameters[0].min, 0.0);
  EXPECT_EQ(t->parameters[0].max, 10.0);
  EXPECT_EQ(t->parameters[1].kind, config::param_kind::integer);
  EXPECT_EQ(std::get<std::int64_t>(t->parameters[1].def), 2);

  const std::string printed = config::system_toml(sc);
  EXPECT_NE(printed.find("[subsystems.plant]\nfmu = \"" + abs + "\"\n"), std::string::npos)
      << printed;
  EXPECT_EQ(printed.find("type = "), std::string::npos) << printed;
}

TEST(FmuSystemFile, BadFmusAndVariablesNameFileKeyAndVariable) {
  temp_dir dir;
  write_zip(dir / "m.fmu",
            {{"modelDescription.xml", description()}, {"binaries/linux64/m.so", "x"}});
  write_zip(dir / "win.fmu",
            {{"modelDescription.xml", description()}, {"binaries/win64/m.dll", "x"}});
  write_zip(dir / "slip.fmu", {{"modelDescription.xml", description()}, {"../x", "x"}});
  const std::string sys = dir / "system.toml";
  const std::string run = "[run]\nduration = 1.0\nmacro_step = 0.25\n";

  std::string e = error_of_system(dir, run + "[subsystems.a]\nfmu = \"nope.fmu\"\n");
  EXPECT_NE(e.find(sys + ":5:7: subsystems.a.fmu = \"nope.fmu\": " + dir / "nope.fmu" +
                   ": no such FMU file"),
            std::string::npos)
      << e;
  e = error_of_system(dir, run + "[subsystems.a]\nfmu = \"win.fmu\"\n");
  EXPECT_NE(e.find("subsystems.a.fmu"), std::string::npos) << e;
  EXPECT_NE(e.find("binaries/linux64/m.so is missing"), std::string::npos) << e;
  e = error_of_system(dir, run + "[subsystems.a]\nfmu = \"slip.fmu\"\n");
  EXPECT_NE(e.find(dir / "slip.fmu" + ": refused: archive entry \"../x\""), std::string::npos) << e;
  e = error_of_system(dir, run + "[subsystems.a]\nfmu = \"m.fmu\"\ntype = \"oscillator.mass\"\n");
  EXPECT_NE(e.find("needs exactly one of type"), std::string::npos) << e;

  // A variable the FMU does not have: the parameters it has are listed.
  e = error_of_system(
      dir, run + "[subsystems.a]\nfmu = \"m.fmu\"\n[subsystems.a.parameters]\nq = 1.0\n");
  EXPECT_NE(e.find("subsystems.a.parameters.q: type \"fmu:" + dir / "m.fmu" +
                   "\" has no parameter \"q\" (parameters: p, n, label"),
            std::string::npos)
      << e;
  // Wrong kind and out of the FMU's min/max.
  e = error_of_system(
      dir, run + "[subsystems.a]\nfmu = \"m.fmu\"\n[subsystems.a.parameters]\np = \"x\"\n");
  EXPECT_NE(e.find("subsystems.a.parameters.p: expected number"), std::string::npos) << e;
  e = error_of_system(
      dir, run + "[subsystems.a]\nfmu = \"m.fmu\"\n[subsystems.a.parameters]\np = 11.0\n");
  EXPECT_NE(
      e.find("subsystems.a.parameters.p: value 11 is out of range: allowed from 0 to 10 [kg]"),
      std::string::npos)
      << e;
  // A String parameter takes a string (String parameters are set: ToolFmu tests).
  e = error_of_system(
      dir, run + "[subsystems.a]\nfmu = \"m.fmu\"\n[subsystems.a.parameters]\nlabel = 1.0\n", true);
  EXPECT_NE(e.find("subsystems.a.parameters.label: expected string"), std::string::npos) << e;
}

#ifdef COSIM_TEST_FMU_DIR
const std::string fmus = COSIM_TEST_FMU_DIR;

std::vector<std::string> unpack_folders(const std::string& root) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(root))
    if (e.path().filename().string().rfind("cosim-fmu-", 0) == 0) out.push_back(e.path());
  return out;
}

/// TMPDIR set for one test and restored on every exit path. The test runs on one thread, so
/// nothing reads the environment while it changes.
class tmpdir_override {
 public:
  explicit tmpdir_override(const std::string& dir) {
    if (const char* old = std::getenv("TMPDIR")) saved_ = old;
    setenv("TMPDIR", dir.c_str(), 1);  // NOLINT(concurrency-mt-unsafe): single-threaded test
  }
  tmpdir_override(const tmpdir_override&) = delete;
  tmpdir_override& operator=(const tmpdir_override&) = delete;
  ~tmpdir_override() {
    if (saved_)
      setenv("TMPDIR", saved_->c_str(), 1);  // NOLINT(concurrency-mt-unsafe): as above
    else
      unsetenv("TMPDIR");  // NOLINT(concurrency-mt-unsafe): as above
  }

 private:
  std::optional<std::string> saved_;
};

TEST(FmuLoad, UnpackFolderUnderTmpdirLivesAsLongAsItsLastUser) {
  temp_dir tmp;
  const tmpdir_override env(tmp.path());
  const auto file = read_fmu(fmus + "/linear_ode_fmi2.fmu");
  auto a = load_fmu(file);
  auto b = load_fmu(file);
  EXPECT_EQ(a.get(), b.get());  // one unpack per FMU while in use
  const auto folders = unpack_folders(tmp.path());
  ASSERT_EQ(folders.size(), 1u);
  EXPECT_EQ(a->directory(), folders[0]);
  EXPECT_TRUE(fs::exists(a->directory() + "/binaries/linux64/linear_ode_fmi2.so"));
  EXPECT_EQ(a->resource_uri(), "file://" + a->directory() + "/resources/");
  a.reset();
  EXPECT_EQ(unpack_folders(tmp.path()).size(), 1u);  // b still uses it
  b.reset();
  EXPECT_TRUE(unpack_folders(tmp.path()).empty());
}

// An archive whose entries all start with "./" (as some zip tools write them) is the same FMU:
// it loads and runs like the original.
TEST(FmuArchive, EntriesWithADotSlashPrefixAreTheSameFiles) {
  temp_dir dir;
  const std::string original = fmus + "/linear_ode_fmi2.fmu";
  cosim::test::entries dotted{{"./", ""}};
  {
    int err = 0;
    zip_t* z = zip_open(original.c_str(), ZIP_RDONLY, &err);
    ASSERT_NE(z, nullptr);
    for (zip_int64_t i = 0; i < zip_get_num_entries(z, 0); ++i) {
      const std::string name = zip_get_name(z, static_cast<zip_uint64_t>(i), 0);
      if (name.back() == '/') continue;
      zip_stat_t st;
      ASSERT_EQ(zip_stat_index(z, static_cast<zip_uint64_t>(i), 0, &st), 0);
      std::string data(st.size, '\0');
      zip_file_t* f = zip_fopen_index(z, static_cast<zip_uint64_t>(i), 0);
      ASSERT_NE(f, nullptr);
      ASSERT_EQ(zip_fread(f, data.data(), data.size()), static_cast<zip_int64_t>(data.size()));
      zip_fclose(f);
      dotted.emplace_back("./" + name, data);
    }
    zip_discard(z);
  }
  const std::string fmu = dir / "dotted.fmu";
  write_zip(fmu, dotted);
  const auto f = read_fmu(fmu);
  EXPECT_TRUE(f->has("modelDescription.xml"));
  auto a = std::make_unique<fmu_subsystem>("a", load_fmu(read_fmu(original)),
                                           std::vector<parameter_value>{});
  auto b = std::make_unique<fmu_subsystem>("b", load_fmu(f), std::vector<parameter_value>{});
  EXPECT_EQ(a->output_count(), b->output_count());
  EXPECT_EQ(a->output_desc(0).name, b->output_desc(0).name);
}

TEST(FmuLoad, PortsUnitsFeedthroughAndUnknownPorts) {
  temp_dir dir;
  // feedthrough_fmi3: y = gain * u, Output y depends on u (ModelStructure).
  auto ft = std::make_unique<fmu_subsystem>(
      "ft", load_fmu(read_fmu(fmus + "/feedthrough_fmi3.fmu")), std::vector<parameter_value>{});
  ASSERT_EQ(ft->input_count(), 1u);
  EXPECT_EQ(ft->input(0).desc().name, "u");
  ASSERT_EQ(ft->output_count(), 1u);
  EXPECT_EQ(ft->output_desc(0).name, "y");
  EXPECT_TRUE(ft->output_desc(0).feedthrough);
  EXPECT_FALSE(ft->realtime_safe());
  // linear_ode_fmi2: output x lists no dependency; der_x is a recordable local, the
  // parameters k and x0 are recordable too.
  auto ode = std::make_unique<fmu_subsystem>(
      "ode", load_fmu(read_fmu(fmus + "/linear_ode_fmi2.fmu")), std::vector<parameter_value>{});
  EXPECT_FALSE(ode->output_desc(0).feedthrough);
  ASSERT_EQ(ode->variables().size(), 4u);
  EXPECT_EQ(ode->variables()[1].name, "der_x");
  EXPECT_EQ(ode->variables()[1].unit, "1/s");
  EXPECT_EQ(ode->variables()[2].name, "k");
  EXPECT_EQ(ode->variables()[3].name, "x0");

  // Connections and records by NAME.VARIABLE: an unknown one lists what exists.
  const std::string run = "[run]\nduration = 0.1\nmacro_step = 0.01\n";
  const std::string sys = run + "[subsystems.ode]\nfmu = \"" + fmus +
                          "/linear_ode_fmi2.fmu\"\n[subsystems.ft]\nfmu = \"" + fmus +
                          "/feedthrough_fmi3.fmu\"\n";
  std::string e =
      error_of_system(dir, sys + "[[connections]]\nfrom = \"ode.nope\"\nto = \"ft.u\"\n", true);
  EXPECT_NE(e.find("\"ode.nope\": subsystem 'ode' has no output 'nope' (outputs: x)"),
            std::string::npos)
      << e;
  e = error_of_system(dir, sys + "[output]\nrecord = [\"ft.nope\"]\n", true);
  EXPECT_NE(e.find("ft.nope"), std::string::npos) << e;
  // An input nothing feeds keeps its start value: the system builds.
  EXPECT_EQ(error_of_system(dir, sys + "[output]\nrecord = [\"ode.x\", \"ft.y\"]\n", true), "");
}

TEST(FmuLoad, NoDoStepPastTheExperimentsStopTime) {
  // linear_ode_fmi2: x' = -k x, x0 = 1, k = 1, exact per step (tests/fmus/linear_ode).
  fmu_subsystem ode("ode", load_fmu(read_fmu(fmus + "/linear_ode_fmi2.fmu")), {});
  ode.start_experiment(0.02);  // FMU stop time 0.02 s
  const time_point t0{};
  const duration h = cosim::to_duration(0.01);
  ode.initialize(t0);
  ASSERT_TRUE(ode.step(t0, h));
  ASSERT_TRUE(ode.step(t0 + h, h));
  ode.update_outputs(t0 + 2 * h);
  EXPECT_NEAR(ode.output(0), std::exp(-0.02), 1e-12);
  // The next step would end at 0.03 s: refused without calling fmi2DoStep, so the state
  // stays at 0.02 s.
  EXPECT_FALSE(ode.step(t0 + 2 * h, h));
  EXPECT_EQ(ode.stop_kind(), fmu_stop::stop_time);
  EXPECT_NE(ode.stop_message().find("no doStep past the experiment's stop time t = 0.02"),
            std::string::npos)
      << ode.stop_message();
  ode.update_outputs(t0 + 2 * h);
  EXPECT_NEAR(ode.output(0), std::exp(-0.02), 1e-12);
}

TEST(FmuLoad, ParameterTheFmuRefusesNamesItAndFreesTheInstance) {
  const auto loaded = load_fmu(read_fmu(fmus + "/linear_ode_fmi2.fmu"));
  const std::size_t x = loaded->file().md.find("x");  // an output: fmi2SetReal must refuse it
  ASSERT_NE(x, model_description::npos);
  try {
    fmu_subsystem s("ode", loaded, {{x, 2.0, std::nullopt}});
    ADD_FAILURE() << "fmi2SetReal of an output was accepted";
  } catch (const cosim::error& e) {
    EXPECT_NE(std::string(e.what()).find(loaded->file().path +
                                         " (subsystem ode): fmi2SetReal of parameter \"x\" = 2 "
                                         "returned fmi2Error; the FMU said: "),
              std::string::npos)
        << e.what();
  }
  // The constructor threw after instantiating: the instance was freed all the same.
  EXPECT_EQ(loaded->instances().load(), 0);
}

TEST(FmuRunSummary, ThreadedRunSaysTheFmusTimingIsNotGuaranteed) {
  temp_dir dir;
  const std::string file =
      dir.file("system.toml",
               "[run]\nmode = \"threaded\"\nduration = 0.05\nmacro_step = 0.01\n"
               "lock_memory = false\n[subsystems.ode]\nfmu = \"" +
                   fmus + "/linear_ode_fmi2.fmu\"\n");
  config::run_request req;
  req.scenario = file;
  req.out_dir = dir / "out";
  req.quiet = true;
  const config::run_report rep = config::run_scenario(req, nullptr);
  ASSERT_EQ(rep.outcome.status, cosim::run_status::completed) << rep.outcome.message;
  const std::string json = slurp(rep.summary_json);
  const auto at = json.find("\"timing_not_guaranteed\": [");
  ASSERT_NE(at, std::string::npos) << json;
  const std::string list = json.substr(at, json.find(']', at) - at);
  EXPECT_NE(list.find("\"ode\""), std::string::npos) << list;
}
// The test FMU feedthrough_fmi3 with `extra` declared beside its own variables (the binary
// never sees them: the importer does not exchange them).
std::string feedthrough_with(const temp_dir& dir, const std::string& name,
                             const std::string& extra) {
  const std::string root = fmus + "/feedthrough_fmi3";
  std::string md = slurp(root + "/modelDescription.xml");
  const std::size_t at = md.find("  </ModelVariables>");
  md.insert(at, extra);
  const std::string path = dir / name;
  write_zip(path, {{"modelDescription.xml", md},
                   {"binaries/x86_64-linux/feedthrough_fmi3.so",
                    slurp(root + "/binaries/x86_64-linux/feedthrough_fmi3.so")}});
  return path;
}

// Arrays (<Dimension>) are not exchanged: the run goes on without them, and a file that
// uses one is told why, not that the variable does not exist.
TEST(FmuSystemFile, ArrayVariablesAreNamedAsArraysWhereUsed) {
  temp_dir dir;
  const std::string fmu = feedthrough_with(
      dir, "arr.fmu",
      "    <Float64 name=\"A\" valueReference=\"10\" causality=\"parameter\" "
      "variability=\"fixed\" start=\"1 0 0 1\"><Dimension start=\"4\"/></Float64>\n"
      "    <Float64 name=\"v\" valueReference=\"11\" causality=\"input\" start=\"0 0\">"
      "<Dimension start=\"2\"/></Float64>\n");
  const std::string head =
      "[run]\nduration = 0.1\nmacro_step = 0.01\n[subsystems.m]\nfmu = \"" + fmu + "\"\n";
  const std::string why = "the FMU declares A as Float64 array (<Dimension>)";
  std::string e = error_of_system(dir, head + "[output]\nrecord = [\"m.A\"]\n", true);
  EXPECT_NE(e.find("has no variable, output or input 'A': " + why), std::string::npos) << e;
  e = error_of_system(dir, head + "parameters = { A = [2.0, 0.0, 0.0, 2.0] }\n", true);
  EXPECT_NE(e.find("subsystems.m.parameters.A: " + fmu +
                   ": parameter \"A\" has type Float64 array (<Dimension>), which cannot be set"),
            std::string::npos)
      << e;
  e = error_of_system(dir, head + "[[sources]]\nto = \"m.v\"\nsignal = \"constant:1\"\n", true);
  EXPECT_NE(e.find("has no input 'v': the FMU declares v as Float64 array"), std::string::npos)
      << e;
  // Unused, they are no obstacle.
  EXPECT_EQ(error_of_system(dir, head + "[output]\nrecord = [\"m.y\"]\n", true), "");
}

// FMI 3 clocks would never tick here: such an FMU is refused before the run, naming them
// (it ran "completed" with its clocked partitions never activated).
TEST(FmuSystemFile, FmuWithClocksIsRefusedNamingThem) {
  temp_dir dir;
  const std::string fmu =
      feedthrough_with(dir, "clocks.fmu",
                       "    <Clock name=\"inClock\" valueReference=\"20\" causality=\"input\" "
                       "intervalVariability=\"triggered\"/>\n");
  const std::string e = error_of_system(
      dir, "[run]\nduration = 0.1\nmacro_step = 0.01\n[subsystems.m]\nfmu = \"" + fmu + "\"\n",
      true);
  EXPECT_NE(e.find(fmu + " (subsystem m): it declares FMI 3 clocks (inClock)"), std::string::npos)
      << e;
}

// A single FMU without DefaultExperiment stepSize: the message says that is why the key is
// needed.
TEST(FmuSystemFile, MissingMacroStepSaysTheFmuGivesNone) {
  temp_dir dir;
  std::string md = slurp(fmus + "/feedthrough_fmi3/modelDescription.xml");
  const std::size_t a = md.find("<DefaultExperiment");
  ASSERT_NE(a, std::string::npos);
  md.erase(a, md.find("/>", a) + 2 - a);
  md.insert(a, "<DefaultExperiment startTime=\"0\" stopTime=\"1\"/>");
  const std::string so = "binaries/x86_64-linux/feedthrough_fmi3.so";
  write_zip(dir / "nostep.fmu",
            {{"modelDescription.xml", md}, {so, slurp(fmus + "/feedthrough_fmi3/" + so)}});
  const std::string e =
      error_of_system(dir, "[subsystems.m]\nfmu = \"" + (dir / "nostep.fmu") + "\"\n");
  EXPECT_NE(e.find("missing key 'run.macro_step' (number): the FMU's DefaultExperiment gives no "
                   "stepSize"),
            std::string::npos)
      << e;
}

#endif

}  // namespace
