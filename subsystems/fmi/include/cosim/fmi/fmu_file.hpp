#pragma once
// An .fmu (a zip archive, FMI 2.0 Sect. 2.3 / FMI 3.0 Sect. 2.5): read in place to list and
// check its entries and parse its modelDescription.xml, and unpacked once per process for
// running: into a fresh directory (mkdtemp under $TMPDIR or /tmp) with its binary loaded,
// shared by every instance of that FMU and removed when the last one is gone.
//
// Setup only: everything here allocates, does I/O and throws cosim::error naming the FMU.
#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cosim/fmi/model_description.hpp"
#include "cosim/fmi/zip_archive.hpp"

namespace cosim::fmi {

struct fmu_file {
  std::string path;  // absolute, normalised
  model_description md;
  std::vector<std::string> entries;  // archive entry names, each checked to stay inside

  [[nodiscard]] bool has(std::string_view entry) const noexcept;
};

/// Reads `path`: a readable zip whose entries are relative paths without ".." (anything else
/// could write outside the unpack directory), holding a well-formed modelDescription.xml.
/// Throws cosim::error: errc::io when the file is missing or unreadable, errc::model when
/// it is not a usable FMU.
[[nodiscard]] std::shared_ptr<const fmu_file> read_fmu(const std::string& path);

/// Checks that `f` can be run here: a CoSimulation interface and the binary for this
/// platform (binary_path_in_fmu) in the archive. Throws cosim::error(errc::model).
void require_cosimulation(const fmu_file& f);

/// The unpacked FMU with its binary loaded (dlopen, RTLD_NOW | RTLD_LOCAL).
class loaded_fmu {
 public:
  loaded_fmu(const loaded_fmu&) = delete;
  loaded_fmu& operator=(const loaded_fmu&) = delete;
  /// Unloads the binary, then removes the directory.
  ~loaded_fmu();

  [[nodiscard]] const fmu_file& file() const noexcept { return *file_; }
  [[nodiscard]] const std::string& directory() const noexcept { return dir_; }
  /// The resources folder: as a file URI (FMI 2 fmuResourceLocation) and as a path with a
  /// trailing slash (FMI 3 resourcePath).
  [[nodiscard]] std::string resource_uri() const;
  [[nodiscard]] std::string resource_path() const;
  /// The symbol `name` of the binary, or nullptr.
  [[nodiscard]] void* symbol(const char* name) const noexcept;
  /// Counts instances so an FMU with canBeInstantiatedOnlyOncePerProcess gets one only.
  std::atomic<int>& instances() noexcept { return instances_; }

 private:
  friend std::shared_ptr<loaded_fmu> load_fmu(const std::shared_ptr<const fmu_file>& f);
  loaded_fmu() = default;

  std::shared_ptr<const fmu_file> file_;
  std::unique_ptr<temp_folder> folder_;  // unpacked into, held while loaded
  std::string dir_;
  void* handle_ = nullptr;
  std::atomic<int> instances_{0};
};

/// The loaded FMU of f->path: the one already loaded in this process if any is still in
/// use, else freshly unpacked and loaded. Throws cosim::error naming the FMU (errc::io for
/// file-system failures, errc::model for a binary that does not load).
[[nodiscard]] std::shared_ptr<loaded_fmu> load_fmu(const std::shared_ptr<const fmu_file>& f);

}  // namespace cosim::fmi
