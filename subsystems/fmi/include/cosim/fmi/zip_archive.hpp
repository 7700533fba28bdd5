#pragma once
// Zip archives (libzip) as FMUs and SSP packages use them: reading entries, unpacking them
// into a folder without ever writing outside it, and the private per-process folders they
// are unpacked into.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

struct zip;

namespace cosim::fmi {

/// Reasons an entry name may not be unpacked ("" if it may): absolute, a drive letter, a
/// ".." component, empty.
[[nodiscard]] std::string unsafe_entry_reason(std::string_view name);

/// An open archive, closed on every exit path. Every error is cosim::error "PATH: why"
/// (errc::model for the archive's content, errc::io for the file system).
class zip_archive {
 public:
  /// `kind` ("FMU", "SSP") names what the file should be in the message of one that is not
  /// a readable zip archive.
  zip_archive(const std::string& path, const char* kind);
  zip_archive(const zip_archive&) = delete;
  zip_archive& operator=(const zip_archive&) = delete;
  ~zip_archive();

  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[nodiscard]] std::uint64_t size() const;
  [[nodiscard]] std::string name(std::uint64_t i) const;
  [[nodiscard]] std::uint64_t entry_size(std::uint64_t i) const;
  /// Streams entry i to `sink(data, n)` in chunks.
  void read(std::uint64_t i, const std::function<void(const char*, std::size_t)>& sink) const;
  /// True if entry i is a symbolic link (Unix mode in its external attributes).
  [[nodiscard]] bool is_symlink(std::uint64_t i) const;
  /// Refuses the archive unless every entry name is safe and no entry is a symbolic link;
  /// `what` says what the entries are ("an FMU's entries", ...).
  void check_entry_names(std::string_view what) const;
  /// Writes every entry under `dir` (an existing folder), at most max_bytes in all, never
  /// through an existing file or link. Refused before anything is written when the
  /// entries' declared sizes exceed max_bytes.
  void unpack(const std::string& dir, std::uint64_t max_bytes) const;
  [[noreturn]] void fail(const std::string& why) const;

 private:
  std::string path_;
  struct zip* z_ = nullptr;
};

/// ${TMPDIR:-/tmp}.
[[nodiscard]] std::string temp_root();

/// A new private folder temp_root()/PREFIX-XXXXXX, held by this process (flock on the
/// folder) and removed by the destructor. A process that dies without its destructors (a
/// crash in an FMU, kill -9) leaves its folder unheld: creating a folder first removes the
/// unheld ones of the same prefix that are older than a minute (younger ones may be a
/// starting process's, between its mkdtemp and its flock).
class temp_folder {
 public:
  /// Throws cosim::error(errc::io) naming `owner` (the archive) when it cannot be created.
  temp_folder(const std::string& prefix, const std::string& owner);
  temp_folder(const temp_folder&) = delete;
  temp_folder& operator=(const temp_folder&) = delete;
  ~temp_folder();
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

/// Removes the unheld folders temp_root()/PREFIX-* of this user older than `min_age_s`;
/// returns how many. Run by temp_folder's constructor.
std::size_t remove_abandoned_folders(const std::string& prefix, double min_age_s);

}  // namespace cosim::fmi
