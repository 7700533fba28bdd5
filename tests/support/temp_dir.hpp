#pragma once
// A fresh directory under /tmp for one test, removed with everything in it afterwards.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace cosim::test {

class temp_dir {
 public:
  temp_dir() {
    char tmpl[] = "/tmp/cosim_test_XXXXXX";
    const char* d = mkdtemp(tmpl);
    EXPECT_NE(d, nullptr);
    path_ = d != nullptr ? d : "/tmp";
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  /// Writes `text` to the file `name` in this directory; returns its path.
  [[nodiscard]] std::string file(const std::string& name, const std::string& text) const {
    std::string p = *this / name;
    std::ofstream(p) << text;
    return p;
  }

 private:
  std::string path_;
};

}  // namespace cosim::test
