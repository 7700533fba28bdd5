#pragma once
// A results folder (--out DIR) used as a transaction:
// - one run at a time: an exclusive flock on DIR/.cosim.lock, held until the process ends
//   (the kernel drops it even on SIGKILL), holding the owner's pid for the error message;
// - nothing of an earlier run is touched until the new run has started (start_run(),
//   called when the executor opens its results);
// - a finished run is marked only by summary.json, written atomically last
//   (write_atomically: temporary file, fsync, rename; the temporary never outlives a
//   failure).
#include <filesystem>
#include <string>

namespace cosim::config {

class results_folder {
 public:
  /// Creates DIR when needed and takes its lock. Throws cosim::error (io) naming the
  /// folder and the pid of the run holding it.
  explicit results_folder(std::filesystem::path dir);
  ~results_folder();
  results_folder(const results_folder&) = delete;
  results_folder& operator=(const results_folder&) = delete;

  [[nodiscard]] std::filesystem::path file(const std::string& name) const { return dir_ / name; }

  /// The commit point of a new run: removes the earlier run's summary.json and timing.csv,
  /// so that partial new results never sit beside an old "finished" marker.
  void start_run();

  /// Writes DIR/name atomically. Throws cosim::error (io) with the OS reason; on failure
  /// neither a partial file nor the temporary is left.
  void write_atomically(const std::string& name, const std::string& text) const;

  /// Name of the lock file inside a results folder.
  static constexpr const char* lock_name = ".cosim.lock";

 private:
  std::filesystem::path dir_;
  int lock_fd_ = -1;
};

}  // namespace cosim::config
