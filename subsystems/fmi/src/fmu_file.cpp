// Reading and unpacking .fmu archives (libzip) and loading their binary (dlopen).
#include "cosim/fmi/fmu_file.hpp"

#include <dlfcn.h>

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

std::string absolute_normal(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::absolute(fs::path(path), ec);
  if (ec) p = fs::path(path);
  return p.lexically_normal().string();
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
  const zip_archive z(path, "FMU");
  z.check_entry_names("an FMU's entries");
  std::uint64_t description = z.size();
  for (std::uint64_t i = 0; i < z.size(); ++i) {
    std::string name = z.name(i);
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
  folder_.reset();  // removes the unpacked files, after the binary is unloaded
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
  l->folder_ = std::make_unique<temp_folder>("cosim-fmu", f->path);
  l->dir_ = l->folder_->path();
  zip_archive(f->path, "FMU").unpack(l->dir_, max_unpacked_bytes);

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
