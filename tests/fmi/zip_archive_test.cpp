// The unpack folders of cosim::fmi (zip_archive.hpp): a folder this process holds is never
// removed by the sweep, one nobody holds (its process died) is, unless it is younger than
// the age given; folders of other prefixes are left alone.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "cosim/fmi/zip_archive.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;

class UnpackFolders : public ::testing::Test {
 protected:
  // NOLINTNEXTLINE(concurrency-mt-unsafe): the test sets it before any thread reads it
  void SetUp() override { ASSERT_EQ(setenv("TMPDIR", dir_.path().c_str(), 1), 0); }
  // NOLINTNEXTLINE(concurrency-mt-unsafe): the test sets it before any thread reads it
  void TearDown() override { unsetenv("TMPDIR"); }
  cosim::test::temp_dir dir_;
};

TEST_F(UnpackFolders, SweepRemovesOnlyUnheldFoldersOfItsPrefix) {
  const cosim::fmi::temp_folder held("cosim-test", "x.fmu");
  EXPECT_EQ(fs::path(held.path()).parent_path(), fs::path(dir_.path()));
  fs::create_directories(dir_ / "cosim-test-dead/binaries");  // as a crashed run leaves it
  fs::create_directories(dir_ / "other-dead");
  EXPECT_EQ(cosim::fmi::remove_abandoned_folders("cosim-test", 3600.0), 0u);  // too young
  EXPECT_EQ(cosim::fmi::remove_abandoned_folders("cosim-test", 0.0), 1u);
  EXPECT_TRUE(fs::is_directory(held.path()));
  EXPECT_FALSE(fs::exists(dir_ / "cosim-test-dead"));
  EXPECT_TRUE(fs::exists(dir_ / "other-dead"));
}

TEST_F(UnpackFolders, FolderIsRemovedWithItsOwner) {
  std::string p;
  {
    const cosim::fmi::temp_folder f("cosim-test", "x.fmu");
    p = f.path();
    ASSERT_TRUE(fs::is_directory(p));
  }
  EXPECT_FALSE(fs::exists(p));
}

}  // namespace
