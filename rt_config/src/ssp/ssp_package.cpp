// The unpack cache of SSP packages (ssp_package.hpp), and unpack_ssp (ssp_reader.hpp).
#include "ssp/ssp_package.hpp"

#include <stdlib.h>  // mkdtemp
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "cosim/fmi/fmu_file.hpp"
#include "cosim/fmi/zip_archive.hpp"
#include "cosim/runtime/errno_text.hpp"
#include "cosim/runtime/error.hpp"
#include "ssp/ssp_xml.hpp"
#include "ssp_reader.hpp"

namespace cosim::config {

namespace ssp {

namespace {

// Folders of the cache unused for this long are removed (a reused one is touched), so the
// cache holds what recent runs used, not every package ever run.
constexpr double cache_keep_s = 30.0 * 24 * 3600;
// A ".unpack-*" folder this old belongs to an unpack that died half-way.
constexpr double partial_keep_s = 3600.0;

}  // namespace

// FNV-1a 64 of the file's bytes: names the unpacked folder by content, so that a changed
// package never reuses an old folder.
std::string content_hash(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) throw error(errc::io, path + ": cannot read: " + errno_text(errno));
  std::uint64_t h = 14695981039346656037ull;
  std::vector<unsigned char> buf(1 << 16);
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0)
    for (std::size_t i = 0; i < n; ++i) h = (h ^ buf[i]) * 1099511628211ull;
  const bool bad = std::ferror(f) != 0;
  std::fclose(f);
  if (bad) throw error(errc::io, path + ": cannot read");
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

// ${TMPDIR:-/tmp}/cosim-ssp-UID: created private; refused unless it is a folder of this
// user that nobody else can write (another user could otherwise plant FMUs in it).
std::string cache_root() {
  std::string root = fmi::temp_root() + "/cosim-ssp-" + std::to_string(geteuid());
  if (::mkdir(root.c_str(), 0700) != 0 && errno != EEXIST)
    throw error(errc::io, root + ": cannot create the folder SSP packages are unpacked in: " +
                              errno_text(errno));
  struct stat st {};
  if (::lstat(root.c_str(), &st) != 0) throw error(errc::io, root + ": " + errno_text(errno));
  if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022) != 0)
    throw error(errc::io, root +
                              ": not a private folder of this user (it must be a directory "
                              "owned by uid " +
                              std::to_string(geteuid()) +
                              ", writable by nobody else); remove it or set TMPDIR");
  return root;
}

void prune_cache(const std::string& root) {
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    if (!it->is_directory(e2) || it->is_symlink(e2)) continue;
    const auto age = std::chrono::duration<double>(now - it->last_write_time(e2)).count();
    const bool partial = it->path().filename().string().rfind(".unpack-", 0) == 0;
    if (!e2 && age > (partial ? partial_keep_s : cache_keep_s)) fs::remove_all(it->path(), e2);
  }
}

}  // namespace ssp

namespace fs = std::filesystem;

std::string unpack_ssp(const std::string& path) {
  {
    std::error_code ec;
    const auto st = fs::status(path, ec);
    if (ec || !fs::exists(st)) throw error(errc::io, path + ": no such file");
    if (!fs::is_regular_file(st)) throw error(errc::io, path + ": not a regular file");
  }
  const fmi::zip_archive z(path, "SSP");
  z.check_entry_names("a package's entries");
  bool has_ssd = false;
  for (std::uint64_t i = 0; i < z.size(); ++i) has_ssd = has_ssd || z.name(i) == ssp::default_ssd;
  if (!has_ssd)
    z.fail(std::string("not an SSP: the archive has no ") + ssp::default_ssd + " at its top level");
  const std::string root = ssp::cache_root();
  std::string final_dir = root + "/" + ssp::content_hash(path);
  ssp::prune_cache(root);
  std::error_code ec;
  if (fs::is_directory(final_dir, ec)) {  // unpacked by an earlier run
    fs::last_write_time(final_dir, fs::file_time_type::clock::now(), ec);  // in use: keep
    return final_dir;
  }
  std::string tmp = root + "/.unpack-XXXXXX";
  if (mkdtemp(tmp.data()) == nullptr)
    throw error(errc::io, path + ": cannot create a folder to unpack it in " + root + ": " +
                              errno_text(errno));
  try {
    z.unpack(tmp, ssp::max_unpacked_bytes);
  } catch (const error& e) {
    fs::remove_all(tmp, ec);
    throw error(e.code(), std::string(e.what()).rfind(path, 0) == 0
                              ? e.what()
                              : path + ": unpacking: " + e.what());
  }
  // Complete before it gets its name: a run that sees the folder sees all of it.
  if (::rename(tmp.c_str(), final_dir.c_str()) != 0) {
    const int err = errno;
    fs::remove_all(tmp, ec);
    if (err != EEXIST && err != ENOTEMPTY)
      throw error(errc::io, path + ": cannot move the unpacked package to " + final_dir + ": " +
                                errno_text(err));
    // Another run unpacked the same content first.
  }
  return final_dir;
}

}  // namespace cosim::config
