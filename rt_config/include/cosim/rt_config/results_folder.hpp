#pragma once
// A results folder (--out DIR) used as a transaction:
// - one run at a time: an exclusive flock on DIR/.cosim.lock, held until the process ends
//   (the kernel drops it even on SIGKILL), holding the owner's pid for the error message;
// - nothing of an earlier run is touched until the new run has started (start_run(),
//   called when the executor opens its results);
// - a finished run is marked only by summary.json, written atomically last
//   (write_atomically: temporary file, fsync, rename, fsync of the folder; the temporary
//   never outlives a failure), after the data it describes was synced (sync());
// - no file of the folder is a symbolic link: the constructor refuses one (naming it and its
//   target, which stays untouched), and every file is opened with O_NOFOLLOW.
#include <array>
#include <filesystem>
#include <string>

namespace cosim::config {

/// DIR/name written atomically and durably: DIR/name.tmp (never through a link) written and
/// fsynced, renamed over DIR/name, then DIR fsynced. Refuses a DIR/name that is a symbolic
/// link. Throws cosim::error (io) with the OS reason; on failure neither a partial file nor
/// the temporary is left.
void write_file_atomically(const std::filesystem::path& dir, const std::string& name,
                           const std::string& text);

class results_folder {
 public:
  /// Creates DIR when needed and takes its lock. Throws cosim::error (io) naming the
  /// folder and the pid of the run holding it, or a file of own_files that is a symbolic
  /// link (before anything in DIR is touched).
  explicit results_folder(std::filesystem::path dir);
  ~results_folder();
  results_folder(const results_folder&) = delete;
  results_folder& operator=(const results_folder&) = delete;

  [[nodiscard]] std::filesystem::path file(const std::string& name) const { return dir_ / name; }

  /// The commit point of a new run: removes the earlier run's summary.json and timing.csv,
  /// so that partial new results never sit beside an old "finished" marker.
  void start_run();

  /// write_file_atomically in DIR.
  void write_atomically(const std::string& name, const std::string& text) const;

  /// fsync(2) of DIR/name if it exists (timing.csv, trace.json written by others). Throws
  /// cosim::error (io) when the data cannot be made durable.
  void sync(const std::string& name) const;

  /// Name of the lock file inside a results folder.
  static constexpr const char* lock_name = ".cosim.lock";
  /// The files a run or a report writes in the folder (none may be a symbolic link).
  static constexpr std::array<const char*, 8> own_files = {
      "results.csv", "summary.json", "summary.json.tmp", lock_name,
      "timing.csv",  "trace.json",   "report.html",      "report.html.tmp"};

 private:
  std::filesystem::path dir_;
  int lock_fd_ = -1;
};

}  // namespace cosim::config
