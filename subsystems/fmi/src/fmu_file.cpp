// Reading and unpacking .fmu archives (libzip) and loading their binary (dlopen).
#include "cosim/fmi/fmu_file.hpp"

#include <dlfcn.h>
#include <stdlib.h>  // mkdtemp
#include <zip.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

#include "cosim/runtime/errno_text.hpp"
#include "cosim/runtime/error.hpp"

namespace cosim::fmi {

namespace fs = std::filesystem;

namespace {

// Far above any real modelDescription.xml or FMU; stops a crafted archive from filling the
// disk or memory.
constexpr std::uint64_t max_description_bytes = 256ull << 20;
constexpr std::uint64_t max_unpacked_bytes = 8ull << 30;

std::string zip_error_text(int code) {
  zip_error_t e;
  zip_error_init_with_code(&e, code);
  std::string s = zip_error_strerror(&e);
  zip_error_fini(&e);
  return s;
}

/// An open archive, closed on every exit path.
class archive {
 public:
  explicit archive(const std::string& path) : path_(path) {
    int err = 0;
    z_ = zip_open(path.c_str(), ZIP_RDONLY, &err);
    if (z_ == nullptr)
      throw error(errc::model, path + ": not a readable FMU (zip archive): " + zip_error_text(err));
  }
  archive(const archive&) = delete;
  archive& operator=(const archive&) = delete;
  ~archive() { zip_discard(z_); }

  [[nodiscard]] std::uint64_t size() const {
    const zip_int64_t n = zip_get_num_entries(z_, 0);
    return n < 0 ? 0 : static_cast<std::uint64_t>(n);
  }
  [[nodiscard]] std::string name(std::uint64_t i) const {
    const char* n = zip_get_name(z_, i, 0);
    if (n == nullptr) fail("entry " + std::to_string(i) + " has no readable name");
    return n;
  }
  [[nodiscard]] std::uint64_t entry_size(std::uint64_t i) const {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(z_, i, 0, &st) != 0 || (st.valid & ZIP_STAT_SIZE) == 0)
      fail("cannot read the size of entry \"" + name(i) + "\"");
    return st.size;
  }
  /// Streams entry i to `sink(data, n)` in chunks.
  template <class Sink>
  void read(std::uint64_t i, Sink&& sink) const {
    zip_file_t* f = zip_fopen_index(z_, i, 0);
    if (f == nullptr) fail("cannot open entry \"" + name(i) + "\": " + zip_strerror(z_));
    char buf[1 << 16];
    for (;;) {
      const zip_int64_t n = zip_fread(f, buf, sizeof buf);
      if (n < 0) {
        const std::string why = zip_file_strerror(f);
        zip_fclose(f);
        fail("cannot read entry \"" + name(i) + "\": " + why);
      }
      if (n == 0) break;
      sink(buf, static_cast<std::size_t>(n));
    }
    zip_fclose(f);
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw error(errc::model, path_ + ": " + why);
  }

 private:
  std::string path_;
  zip_t* z_ = nullptr;
};

std::string absolute_normal(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::absolute(fs::path(path), ec);
  if (ec) p = fs::path(path);
  return p.lexically_normal().string();
}

std::string temp_root() {
  const char* t = std::getenv("TMPDIR");
  return t != nullptr && t[0] != '\0' ? std::string(t) : std::string("/tmp");
}

// Percent-encodes what may not stand in a file URI path (RFC 3986 unreserved and '/').
std::string file_uri(const std::string& path) {
  static const char* hex = "0123456789ABCDEF";
  std::string out = "file://";
  for (unsigned char c : path) {
    if (std::isalnum(c) != 0 || c == '/' || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

}  // namespace

bool fmu_file::has(std::string_view entry) const noexcept {
  return std::find(entries.begin(), entries.end(), entry) != entries.end();
}

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

std::shared_ptr<const fmu_file> read_fmu(const std::string& path_in) {
  auto f = std::make_shared<fmu_file>();
  f->path = absolute_normal(path_in);
  const std::string& path = f->path;
  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (ec || !fs::exists(st)) throw error(errc::io, path + ": no such FMU file");
  if (!fs::is_regular_file(st))
    throw error(errc::io, path + ": not a regular file (an .fmu is a zip archive)");
  {
    std::ifstream probe(path, std::ios::binary);
    if (!probe) throw error(errc::io, path + ": cannot read: " + errno_text(errno));
  }
  const archive z(path);
  std::uint64_t description = z.size();
  for (std::uint64_t i = 0; i < z.size(); ++i) {
    std::string name = z.name(i);
    const std::string why = unsafe_entry_reason(name);
    if (!why.empty())
      z.fail("refused: archive entry \"" + name + "\" " + why +
             " (an FMU's entries must stay inside the folder it is unpacked into)");
    if (name == "modelDescription.xml") description = i;
    f->entries.push_back(std::move(name));
  }
  if (description == z.size())
    z.fail("not an FMU: the archive has no modelDescription.xml at its top level");
  if (z.entry_size(description) > max_description_bytes)
    z.fail("modelDescription.xml is larger than " + std::to_string(max_description_bytes >> 20) +
           " MiB");
  std::string xml;
  z.read(description, [&](const char* d, std::size_t n) {
    if (xml.size() + n > max_description_bytes) z.fail("modelDescription.xml is too large");
    xml.append(d, n);
  });
  f->md = parse_model_description(xml, path);
  return f;
}

void require_cosimulation(const fmu_file& f) {
  if (!f.md.cosim)
    throw error(errc::model, f.path +
                                 ": not a co-simulation FMU (modelDescription.xml has no "
                                 "<CoSimulation> element; only co-simulation FMUs run here)");
  if (f.md.cosim->needs_execution_tool)
    throw error(errc::model, f.path +
                                 ": needsExecutionTool=\"true\": the FMU needs its "
                                 "authoring tool at run time, which cannot run here");
  const std::string bin = binary_path_in_fmu(f.md);
  if (!f.has(bin)) {
    std::string others;
    for (const auto& e : f.entries)
      if (e.rfind("binaries/", 0) == 0 && e.back() != '/')
        others += (others.empty() ? "" : ", ") + e;
    throw error(errc::model, f.path + ": no binary for this platform: " + bin +
                                 " is missing from the archive (binaries: " +
                                 (others.empty() ? "none" : others) + ")");
  }
}

loaded_fmu::~loaded_fmu() {
  if (handle_ != nullptr) dlclose(handle_);
  if (!dir_.empty()) {
    std::error_code ec;
    fs::remove_all(dir_, ec);  // best effort: nothing to report to at this point
  }
}

std::string loaded_fmu::resource_uri() const {
  return file_uri(dir_ + "/resources/");
}

std::string loaded_fmu::resource_path() const {
  return dir_ + "/resources/";
}

void* loaded_fmu::symbol(const char* name) const noexcept {
  return handle_ != nullptr ? dlsym(handle_, name) : nullptr;
}

std::shared_ptr<loaded_fmu> load_fmu(const std::shared_ptr<const fmu_file>& f) {
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<loaded_fmu>> cache;
  const std::lock_guard lock(mutex);
  if (auto it = cache.find(f->path); it != cache.end())
    if (auto p = it->second.lock()) return p;
  require_cosimulation(*f);

  std::shared_ptr<loaded_fmu> l(new loaded_fmu());
  l->file_ = f;
  std::string tmpl = temp_root() + "/cosim-fmu-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr)
    throw error(errc::io, f->path + ": cannot create a folder to unpack it in " + temp_root() +
                              ": " + errno_text(errno));
  l->dir_ = tmpl;  // from here on the destructor removes it

  const archive z(f->path);
  std::uint64_t total = 0;
  for (std::uint64_t i = 0; i < z.size(); ++i) {
    const std::string name = z.name(i);
    // Checked when read; checked again as the archive could have changed since.
    if (!unsafe_entry_reason(name).empty())
      z.fail("refused: archive entry \"" + name + "\" " + unsafe_entry_reason(name));
    const fs::path target = fs::path(l->dir_) / name;
    std::error_code ec;
    if (name.back() == '/' || name.back() == '\\') {
      fs::create_directories(target, ec);
      if (ec)
        throw error(errc::io, f->path + ": cannot create " + target.string() + ": " + ec.message());
      continue;
    }
    fs::create_directories(target.parent_path(), ec);
    if (ec)
      throw error(errc::io, f->path + ": cannot create " + target.parent_path().string() + ": " +
                                ec.message());
    std::FILE* out = std::fopen(target.c_str(), "wbx");  // x: never through an existing link
    if (out == nullptr)
      throw error(errc::io,
                  f->path + ": cannot write " + target.string() + ": " + errno_text(errno));
    bool ok = true;
    try {
      z.read(i, [&](const char* d, std::size_t n) {
        total += n;
        if (total > max_unpacked_bytes)
          z.fail("unpacks to more than " + std::to_string(max_unpacked_bytes >> 30) + " GiB");
        ok = ok && std::fwrite(d, 1, n, out) == n;
      });
    } catch (...) {
      std::fclose(out);
      throw;
    }
    ok = std::fclose(out) == 0 && ok;
    if (!ok)
      throw error(errc::io,
                  f->path + ": cannot write " + target.string() + ": " + errno_text(errno));
  }

  const std::string bin = l->dir_ + "/" + binary_path_in_fmu(f->md);
  dlerror();
  l->handle_ = dlopen(bin.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (l->handle_ == nullptr) {
    const char* why = dlerror();
    throw error(errc::model, f->path + ": cannot load its binary " + binary_path_in_fmu(f->md) +
                                 ": " + (why != nullptr ? why : "unknown dlopen error"));
  }
  cache[f->path] = l;
  return l;
}

}  // namespace cosim::fmi
