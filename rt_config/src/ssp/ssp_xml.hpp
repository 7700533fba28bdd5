#pragma once
// SSP 1.0 XML in one place (private to rt_config's SSP import): the namespaces and the
// element names the standard fixes, namespace-aware matching (pugixml does not resolve
// namespaces), and XML files that name file, line, element and attribute in their messages.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <pugixml.hpp>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "cosim/runtime/error.hpp"

namespace cosim::config::ssp {

namespace fs = std::filesystem;

// The SSP 1.0 namespaces (SSP 1.0 Sect. 1.4); prefixes are whatever a file declares.
inline constexpr std::string_view ns_ssd =
    "http://ssp-standard.org/SSP1/SystemStructureDescription";
inline constexpr std::string_view ns_ssc = "http://ssp-standard.org/SSP1/SystemStructureCommon";
inline constexpr std::string_view ns_ssv =
    "http://ssp-standard.org/SSP1/SystemStructureParameterValues";

inline constexpr const char* fmu_mime = "application/x-fmu-sharedlibrary";
inline constexpr const char* parameter_set_mime = "application/x-ssp-parameter-set";
inline constexpr const char* default_ssd = "SystemStructure.ssd";
inline constexpr const char* run_annotation = "cosim.run";
inline constexpr std::string_view osp_annotation = "com.opensimulationplatform";
inline constexpr std::string_view oms_annotation = "org.openmodelica";

// Far above any real SSD or package; stops a crafted archive from filling disk or memory.
inline constexpr std::uint64_t max_xml_bytes = 256ull << 20;
inline constexpr std::uint64_t max_unpacked_bytes = 16ull << 30;

/// "a, b, c".
[[nodiscard]] std::string join(const std::vector<std::string>& v);
[[nodiscard]] std::string in_quotes(std::string_view s);
[[nodiscard]] std::string lower(std::string s);
/// Shortest text that reads back to the same double.
[[nodiscard]] std::string shortest(double v);
[[nodiscard]] std::string_view trim(std::string_view s);
/// Percent-decoding of a URI path (RFC 3986 Sect. 2.1); nullopt for a bad escape.
[[nodiscard]] std::optional<std::string> percent_decode(std::string_view s);

/// The element's name without its prefix.
[[nodiscard]] std::string_view local_name(const pugi::xml_node& n);
/// The namespace URI of an element: its prefix's xmlns declaration on it or an ancestor.
[[nodiscard]] std::string_view namespace_of(const pugi::xml_node& n);
/// True for the element `local` of namespace `ns`, whatever prefix the file gives it.
[[nodiscard]] bool is(const pugi::xml_node& n, std::string_view ns, std::string_view local);
/// The child elements of `n`.
[[nodiscard]] std::vector<pugi::xml_node> elements(const pugi::xml_node& n);
/// Elements that never change what is simulated (SSP 1.0: geometry, graphics, annotations,
/// meta data and signatures).
[[nodiscard]] bool is_presentation(const pugi::xml_node& n);

class xml_file {
 public:
  /// Reads and parses `path`; `shown` names it in messages.
  xml_file(const std::string& path, std::string shown);
  xml_file(const xml_file&) = delete;
  xml_file& operator=(const xml_file&) = delete;

  [[nodiscard]] const std::string& shown() const noexcept { return shown_; }
  /// The folder relative URIs in this file resolve against.
  [[nodiscard]] fs::path dir() const { return fs::path(path_).parent_path(); }
  /// The root element.
  [[nodiscard]] pugi::xml_node root() const;
  /// The line of a byte offset into the file (1-based; 0 for none).
  [[nodiscard]] std::size_t line_of(std::ptrdiff_t offset) const;
  /// "file:line: <element> attr="value"" (attr may be empty).
  [[nodiscard]] std::string where(const pugi::xml_node& n, const char* attr = "") const;
  /// Throws cosim::error `code` with where(n, attr) and `why`.
  [[noreturn]] void fail(const pugi::xml_node& n, const char* attr, const std::string& why,
                         errc code = errc::config_value) const;
  /// Refuses an element this reader does not understand; `what` says why it matters.
  [[noreturn]] void unsupported(const pugi::xml_node& n, const std::string& what) const;
  /// The attribute's value; throws when it is missing or empty.
  [[nodiscard]] std::string required(const pugi::xml_node& n, const char* attr) const;
  /// xs:double (decimal, exponent); INF and NaN are refused where a value is needed.
  [[nodiscard]] std::optional<double> opt_double(const pugi::xml_node& n, const char* attr) const;
  /// xs:int, as FMI 2.0 Integer / FMI 3.0 Int32 (required).
  [[nodiscard]] std::int64_t to_int(const pugi::xml_node& n, const char* attr) const;
  /// xs:boolean (true, false, 1, 0).
  [[nodiscard]] std::optional<bool> opt_bool(const pugi::xml_node& n, const char* attr) const;

 private:
  std::string path_;
  std::string shown_;
  std::string text_;
  pugi::xml_document doc_;
};

}  // namespace cosim::config::ssp
