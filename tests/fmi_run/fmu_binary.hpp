#pragma once
// The binary of a test FMU built in the tree (tests/fmus/), opened with dlopen straight from
// its staging folder, for tests that drive the FMI functions by hand (no importer).
#include <dlfcn.h>

#include <stdexcept>
#include <string>

namespace cosim::test {

/// Folder of the packed test FMUs (NAME.fmu) and their staging folders (NAME/).
inline std::string test_fmu_dir() {
  return COSIM_BINARY_DIR "/tests/fmus";
}

/// Path of a packed test FMU, e.g. fmu_path("bouncing_ball_fmi3").
inline std::string fmu_path(const std::string& name) {
  return test_fmu_dir() + "/" + name + ".fmu";
}

class fmu_binary {
 public:
  /// name: e.g. "bouncing_ball_fmi3"; fmi_version 2 or 3 picks the platform folder.
  fmu_binary(const std::string& name, int fmi_version) {
    const std::string platform = fmi_version == 2 ? "linux64" : "x86_64-linux";
    const std::string so =
        test_fmu_dir() + "/" + name + "/binaries/" + platform + "/" + name + ".so";
    handle_ = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) throw std::runtime_error("dlopen " + so + ": " + dlerror());
  }
  ~fmu_binary() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  fmu_binary(const fmu_binary&) = delete;
  fmu_binary& operator=(const fmu_binary&) = delete;

  /// The exported function `name` as a pointer to the FMI function type F.
  template <typename F>
  F* fn(const char* name) const {
    void* p = dlsym(handle_, name);
    if (p == nullptr) throw std::runtime_error(std::string("missing export ") + name);
    return reinterpret_cast<F*>(p);
  }

 private:
  void* handle_ = nullptr;
};

}  // namespace cosim::test
