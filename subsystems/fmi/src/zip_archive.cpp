// Zip archives: reading, unpacking inside one folder, and the per-process unpack folders.
#include "cosim/fmi/zip_archive.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>  // mkdtemp
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <vector>

#include "cosim/runtime/errno_text.hpp"
#include "cosim/runtime/error.hpp"

namespace cosim::fmi {

namespace fs = std::filesystem;

namespace {

std::string zip_error_text(int code) {
  zip_error_t e;
  zip_error_init_with_code(&e, code);
  std::string s = zip_error_strerror(&e);
  zip_error_fini(&e);
  return s;
}

}  // namespace

std::string unsafe_entry_reason(std::string_view name) {
  if (name.empty()) return "has an empty name";
  if (name.front() == '/' || name.front() == '\\') return "is an absolute path";
  if (name.size() >= 2 && name[1] == ':' && std::isalpha(static_cast<unsigned char>(name[0])))
    return "starts with a drive letter";
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t end = name.find_first_of("/\\", start);
    if (end == std::string_view::npos) end = name.size();
    if (name.substr(start, end - start) == "..") return "has a \"..\" component";
    start = end + 1;
  }
  return "";
}

zip_archive::zip_archive(const std::string& path, const char* kind) : path_(path) {
  int err = 0;
  z_ = zip_open(path.c_str(), ZIP_RDONLY, &err);
  if (z_ == nullptr)
    throw error(errc::model,
                path + ": not a readable " + kind + " (zip archive): " + zip_error_text(err));
}

zip_archive::~zip_archive() {
  zip_discard(z_);
}

std::uint64_t zip_archive::size() const {
  const zip_int64_t n = zip_get_num_entries(z_, 0);
  return n < 0 ? 0 : static_cast<std::uint64_t>(n);
}

std::string zip_archive::name(std::uint64_t i) const {
  const char* n = zip_get_name(z_, i, 0);
  if (n == nullptr) fail("entry " + std::to_string(i) + " has no readable name");
  // Some packers write every entry as "./modelDescription.xml"; unzip reads them as the same
  // files, so the leading "./" are dropped (an entry that is only "./" stays the top folder).
  std::string_view v(n);
  while (v.size() > 2 && v.substr(0, 2) == "./") v.remove_prefix(2);
  return std::string(v);
}

std::uint64_t zip_archive::entry_size(std::uint64_t i) const {
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(z_, i, 0, &st) != 0 || (st.valid & ZIP_STAT_SIZE) == 0)
    fail("cannot read the size of entry \"" + name(i) + "\"");
  return st.size;
}

void zip_archive::read(std::uint64_t i,
                       const std::function<void(const char*, std::size_t)>& sink) const {
  zip_file_t* f = zip_fopen_index(z_, i, 0);
  if (f == nullptr) fail("cannot open entry \"" + name(i) + "\": " + zip_strerror(z_));
  std::vector<char> buf(std::size_t{1} << 16);
  for (;;) {
    const zip_int64_t n = zip_fread(f, buf.data(), buf.size());
    if (n < 0) {
      const std::string why = zip_file_strerror(f);
      zip_fclose(f);
      fail("cannot read entry \"" + name(i) + "\": " + why);
    }
    if (n == 0) break;
    try {
      sink(buf.data(), static_cast<std::size_t>(n));
    } catch (...) {
      zip_fclose(f);
      throw;
    }
  }
  zip_fclose(f);
}

bool zip_archive::is_symlink(std::uint64_t i) const {
  zip_uint8_t opsys = 0;
  zip_uint32_t attributes = 0;
  if (zip_file_get_external_attributes(z_, i, 0, &opsys, &attributes) != 0) return false;
  // Unix packers keep st_mode in the upper 16 bits (APPNOTE 4.4.15).
  return opsys == ZIP_OPSYS_UNIX && ((attributes >> 16) & S_IFMT) == S_IFLNK;
}

void zip_archive::check_entry_names(std::string_view what) const {
  // Entry name (with '\\' read as '/', as unpacking does) -> its first index.
  std::map<std::string, std::uint64_t> seen;
  for (std::uint64_t i = 0; i < size(); ++i) {
    const std::string n = name(i);
    std::string key = n;
    std::replace(key.begin(), key.end(), '\\', '/');
    if (const auto [it, fresh] = seen.emplace(key, i); !fresh)
      // A packer that appended a file twice: unpacked, the second copy would fail to write
      // ("File exists"); which copy the tool meant cannot be told.
      fail("refused: archive entry \"" + n + "\" appears twice (entries " +
           std::to_string(it->second + 1) + " and " + std::to_string(i + 1) + " of " +
           std::to_string(size()) + "); repack it with each file once");
    const std::string why = unsafe_entry_reason(n);
    if (!why.empty())
      fail("refused: archive entry \"" + n + "\" " + why + " (" + std::string(what) +
           " must stay inside the folder it is unpacked into)");
    if (is_symlink(i)) {
      // Unpacked, it would be a file holding the link's target, and the error would come
      // later from whatever reads it (dlopen: "invalid ELF header").
      std::string target;
      if (entry_size(i) <= 4096)
        read(i, [&](const char* d, std::size_t len) { target.append(d, len); });
      fail("refused: archive entry \"" + n + "\" is a symbolic link" +
           (target.empty() ? std::string() : " (to \"" + target + "\")") +
           ", which is not unpacked (" + std::string(what) +
           " must be regular files and folders: pack the file itself)");
    }
  }
}

void zip_archive::unpack(const std::string& dir, std::uint64_t max_bytes) const {
  // Checked again here (the archive may have changed since it was first read), and the
  // declared sizes summed before anything is written; the streaming count below still
  // catches an entry that inflates past what it declares.
  check_entry_names("an archive's entries");
  std::uint64_t declared = 0;
  for (std::uint64_t i = 0; i < size(); ++i) {
    const std::string n = name(i);
    if (n.back() == '/' || n.back() == '\\') continue;
    const std::uint64_t bytes = entry_size(i);
    declared += bytes;
    if (bytes > max_bytes || declared > max_bytes)
      fail("refused: archive entry \"" + n + "\" declares " + std::to_string(bytes) +
           " bytes uncompressed, which takes the archive past the limit of " +
           std::to_string(max_bytes) + " bytes unpacked; nothing was written");
  }
  std::uint64_t total = 0;
  for (std::uint64_t i = 0; i < size(); ++i) {
    const std::string n = name(i);
    const fs::path target = fs::path(dir) / n;
    const bool is_dir = n.back() == '/' || n.back() == '\\';
    const fs::path folder = is_dir ? target : target.parent_path();
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec)
      throw error(errc::io, path_ + ": cannot create " + folder.string() + ": " + ec.message());
    if (is_dir) continue;
    std::FILE* out = std::fopen(target.c_str(), "wbx");  // x: never through an existing link
    if (out == nullptr)
      throw error(errc::io, path_ + ": cannot write " + target.string() + ": " + errno_text(errno));
    bool ok = true;
    try {
      read(i, [&](const char* d, std::size_t len) {
        total += len;
        if (total > max_bytes)
          fail("entry \"" + n + "\" unpacks to more than it declares, past the limit of " +
               std::to_string(max_bytes) + " bytes unpacked");
        ok = ok && std::fwrite(d, 1, len, out) == len;
      });
    } catch (...) {
      std::fclose(out);
      throw;
    }
    ok = std::fclose(out) == 0 && ok;
    if (!ok)
      throw error(errc::io, path_ + ": cannot write " + target.string() + ": " + errno_text(errno));
  }
}

void zip_archive::fail(const std::string& why) const {
  throw error(errc::model, path_ + ": " + why);
}

std::string temp_root() {
  const char* t = std::getenv("TMPDIR");  // NOLINT(concurrency-mt-unsafe): setup, no setenv
  return t != nullptr && t[0] != '\0' ? std::string(t) : std::string("/tmp");
}

std::size_t remove_abandoned_folders(const std::string& prefix, double min_age_s) {
  const std::string root = temp_root();
  DIR* d = ::opendir(root.c_str());
  if (d == nullptr) return 0;
  std::vector<std::string> names;
  const std::string start = prefix + "-";
  // NOLINTNEXTLINE(concurrency-mt-unsafe): this stream is read by this thread only
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n.rfind(start, 0) == 0) names.push_back(n);
  }
  ::closedir(d);
  const auto now = std::chrono::system_clock::now();
  std::size_t removed = 0;
  for (const auto& n : names) {
    const std::string p = root + "/" + n;
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) continue;
    const auto mtime = std::chrono::system_clock::from_time_t(st.st_mtim.tv_sec);
    if (std::chrono::duration<double>(now - mtime).count() < min_age_s) continue;
    const int fd = ::open(p.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    // Held by a live process (its flock): in use. Unheld: its process is gone.
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      std::error_code ec;
      fs::remove_all(p, ec);
      if (!ec) ++removed;
    }
    ::close(fd);
  }
  return removed;
}

temp_folder::temp_folder(const std::string& prefix, const std::string& owner) {
  remove_abandoned_folders(prefix, 60.0);
  std::string tmpl = temp_root() + "/" + prefix + "-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr)
    throw error(errc::io, owner + ": cannot create a folder to unpack it in " + temp_root() + ": " +
                              errno_text(errno));
  path_ = tmpl;
  fd_ = ::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd_ < 0 || ::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (fd_ >= 0) ::close(fd_);
    std::error_code ec;
    fs::remove_all(path_, ec);
    throw error(errc::io, owner + ": cannot hold the folder " + path_ + ": " + errno_text(err));
  }
}

temp_folder::~temp_folder() {
  std::error_code ec;
  fs::remove_all(path_, ec);  // best effort: nothing to report to at this point
  ::close(fd_);
}

}  // namespace cosim::fmi
