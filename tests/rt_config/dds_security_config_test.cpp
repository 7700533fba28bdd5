// [dds.security] (docs/distributed.md, "Security"): six files or none, relative to the system
// file, checked when the file is read; errors name the key and the path. The files' contents
// are Cyclone's to check (tests/tools/remote_security_test.cpp); here they may be empty.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cosim/rt_config/scenario.hpp"
#include "cosim/runtime/error.hpp"
#include "temp_dir.hpp"

namespace {

using cosim::test::temp_dir;
namespace config = cosim::config;
namespace fs = std::filesystem;

const std::string crane = COSIM_SOURCE_DIR "/rt_config/systems/crane_m1_fs.toml";

const std::vector<std::string> keys = {"identity_ca",    "identity_certificate", "private_key",
                                       "permissions_ca", "governance",           "permissions"};

/// A system file (the crane's) in `dir` and a pki/ folder beside it with an empty file per key.
std::string system_with_pki(const temp_dir& dir) {
  const std::string file = dir / "system.toml";
  fs::copy_file(crane, file);
  fs::create_directory(dir / "pki");
  for (const auto& k : keys) std::ofstream(dir / ("pki/" + k + ".pem")) << "";
  ::chmod((dir / "pki/private_key.pem").c_str(), 0600);
  return file;
}

std::vector<std::string> relative_sets() {
  std::vector<std::string> s;
  for (const auto& k : keys) s.push_back("dds.security." + k + "=pki/" + k + ".pem");
  return s;
}

std::string error_of(const std::string& file, const std::vector<std::string>& sets) {
  try {
    (void)config::load_scenario(file, sets);
  } catch (const cosim::error& e) {
    return e.what();
  }
  return "no error";
}

TEST(DdsSecurityConfig, PathsAreRelativeToTheSystemFile) {
  temp_dir dir;
  const std::string file = system_with_pki(dir);
  const config::scenario sc = config::load_scenario(file, relative_sets());
  const auto canonical = [&](const std::string& k) {
    return fs::absolute(fs::path(dir.path()) / ("pki/" + k + ".pem")).lexically_normal().string();
  };
  EXPECT_EQ(sc.dds.security.identity_ca, canonical("identity_ca"));
  EXPECT_EQ(sc.dds.security.private_key, canonical("private_key"));
  EXPECT_EQ(sc.dds.security.permissions, canonical("permissions"));
  // Without the keys: no security.
  EXPECT_TRUE(config::load_scenario(file, {}).dds.security.identity_ca.empty());
}

TEST(DdsSecurityConfig, AllSixOrNone) {
  temp_dir dir;
  const std::string file = system_with_pki(dir);
  const std::string msg = error_of(file, {"dds.security.identity_ca=pki/identity_ca.pem"});
  EXPECT_NE(msg.find("dds.security"), std::string::npos) << msg;
  EXPECT_NE(msg.find("needs identity_certificate too"), std::string::npos) << msg;
}

TEST(DdsSecurityConfig, MissingFileNamesKeyAndPath) {
  temp_dir dir;
  const std::string file = system_with_pki(dir);
  std::vector<std::string> sets = relative_sets();
  sets[4] = "dds.security.governance=pki/nowhere.p7s";
  const std::string msg = error_of(file, sets);
  EXPECT_NE(msg.find("dds.security.governance"), std::string::npos) << msg;
  EXPECT_NE(msg.find(dir / "pki/nowhere.p7s"), std::string::npos) << msg;
  EXPECT_NE(msg.find("No such file"), std::string::npos) << msg;
}

TEST(DdsSecurityConfig, PrivateKeyReadableByOthersIsRefused) {
  temp_dir dir;
  const std::string file = system_with_pki(dir);
  ::chmod((dir / "pki/private_key.pem").c_str(), 0644);
  const std::string msg = error_of(file, relative_sets());
  EXPECT_NE(msg.find("dds.security.private_key"), std::string::npos) << msg;
  EXPECT_NE(msg.find("mode 0644"), std::string::npos) << msg;
}

}  // namespace
