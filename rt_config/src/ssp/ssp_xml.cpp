// SSP 1.0 XML helpers (ssp_xml.hpp).
#include "ssp/ssp_xml.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <fstream>
#include <sstream>

#include "cosim/runtime/errno_text.hpp"

namespace cosim::config::ssp {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& e : v) s += (s.empty() ? "" : ", ") + e;
  return s;
}

std::string in_quotes(std::string_view s) {
  // Appended: GCC 12's -Wrestrict misfires on "literal" + std::string&& once inlined here.
  std::string q;
  q.reserve(s.size() + 2);
  q += '"';
  q += s;
  q += '"';
  return q;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Shortest text that reads back to the same double.
std::string shortest(double v) {
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) s.remove_suffix(1);
  return s;
}

std::string_view local_name(const pugi::xml_node& n) {
  const std::string_view q = n.name();
  const auto c = q.find(':');
  return c == std::string_view::npos ? q : q.substr(c + 1);
}

// The namespace URI of an element: its prefix's xmlns declaration on it or an ancestor
// (pugixml does not resolve namespaces).
std::string_view namespace_of(const pugi::xml_node& n) {
  const std::string_view q = n.name();
  const auto c = q.find(':');
  const std::string attr =
      c == std::string_view::npos ? "xmlns" : "xmlns:" + std::string(q.substr(0, c));
  for (pugi::xml_node p = n; p; p = p.parent())
    if (p.type() == pugi::node_element)
      if (const pugi::xml_attribute a = p.attribute(attr.c_str())) return a.value();
  return "";
}

bool is(const pugi::xml_node& n, std::string_view ns, std::string_view local) {
  return n.type() == pugi::node_element && local_name(n) == local && namespace_of(n) == ns;
}

std::vector<pugi::xml_node> elements(const pugi::xml_node& n) {
  std::vector<pugi::xml_node> out;
  for (pugi::xml_node c = n.first_child(); c; c = c.next_sibling())
    if (c.type() == pugi::node_element) out.push_back(c);
  return out;
}

// Elements that never change what is simulated (SSP 1.0: geometry, graphics, annotations,
// meta data and signatures).
bool is_presentation(const pugi::xml_node& n) {
  const std::string_view l = local_name(n);
  const std::string_view ns = namespace_of(n);
  if (ns != ns_ssd && ns != ns_ssc && ns != ns_ssv) return false;
  return l == "Annotations" || l == "ElementGeometry" || l == "SystemGeometry" ||
         l == "GraphicalElements" || l == "ConnectorGeometry" || l == "ConnectionGeometry" ||
         l == "MetaData" || l == "Signature";
}

// Percent-decoding of a URI path (RFC 3986 Sect. 2.1).
std::optional<std::string> percent_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size() || std::isxdigit(static_cast<unsigned char>(s[i + 1])) == 0 ||
        std::isxdigit(static_cast<unsigned char>(s[i + 2])) == 0)
      return std::nullopt;
    out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
    i += 2;
  }
  return out;
}

xml_file::xml_file(const std::string& path, std::string shown)
    : path_(path), shown_(std::move(shown)) {
  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (ec || !fs::exists(st)) throw error(errc::io, shown_ + ": no such file");
  if (!fs::is_regular_file(st)) throw error(errc::io, shown_ + ": not a regular file");
  if (fs::file_size(path, ec) > max_xml_bytes)
    throw error(errc::io, shown_ + ": larger than " + std::to_string(max_xml_bytes >> 20) +
                              " MiB; not an SSP file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error(errc::io, shown_ + ": cannot read: " + errno_text(errno));
  std::ostringstream os;
  os << in.rdbuf();
  text_ = os.str();
  const pugi::xml_parse_result res =
      doc_.load_buffer(text_.data(), text_.size(), pugi::parse_default, pugi::encoding_auto);
  if (!res)
    throw error(errc::config_syntax, shown_ + ":" + std::to_string(line_of(res.offset)) +
                                         ": not well-formed XML: " + res.description());
}

pugi::xml_node xml_file::root() const {
  for (pugi::xml_node c = doc_.first_child(); c; c = c.next_sibling())
    if (c.type() == pugi::node_element) return c;
  return {};
}

std::size_t xml_file::line_of(std::ptrdiff_t offset) const {
  if (offset < 0) return 0;
  const auto end = text_.begin() + std::min<std::ptrdiff_t>(offset, std::ssize(text_));
  return 1 + static_cast<std::size_t>(std::count(text_.begin(), end, '\n'));
}

std::string xml_file::where(const pugi::xml_node& n, const char* attr) const {
  // Appended piece by piece: GCC 12's -Wrestrict misfires on "literal" + std::string&& here.
  std::string s = shown_;
  if (n) {
    s += ':';
    s += std::to_string(line_of(n.offset_debug()));
    s += ": <";
    s += n.name();
    s += '>';
  }
  if (attr[0] != '\0') {
    const pugi::xml_attribute a = n.attribute(attr);
    s += ' ';
    s += attr;
    if (a) {
      s += '=';
      s += in_quotes(a.value());
    } else {
      s += " (missing)";
    }
  }
  return s;
}

void xml_file::fail(const pugi::xml_node& n, const char* attr, const std::string& why,
                    errc code) const {
  throw error(code, where(n, attr) + ": " + why);
}

void xml_file::unsupported(const pugi::xml_node& n, const std::string& what) const {
  fail(n, "", "not supported: " + what, errc::config_key);
}

std::string xml_file::required(const pugi::xml_node& n, const char* attr) const {
  const pugi::xml_attribute a = n.attribute(attr);
  if (!a || a.value()[0] == '\0') fail(n, attr, "required");
  return a.value();
}

std::optional<double> xml_file::opt_double(const pugi::xml_node& n, const char* attr) const {
  const pugi::xml_attribute a = n.attribute(attr);
  if (!a) return std::nullopt;
  std::string_view s = trim(a.value());
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  double v = 0.0;
  const auto res = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || res.ec != std::errc{} || res.ptr != s.data() + s.size() || !std::isfinite(v))
    fail(n, attr, "not a finite number");
  return v;
}

std::int64_t xml_file::to_int(const pugi::xml_node& n, const char* attr) const {
  const std::string raw = required(n, attr);  // s views into it: keep it alive
  std::string_view s = trim(raw);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  std::int64_t v = 0;
  const auto res = std::from_chars(s.data(), s.data() + s.size(), v);
  // xs:int, as FMI 2.0 Integer / FMI 3.0 Int32.
  if (s.empty() || res.ec != std::errc{} || res.ptr != s.data() + s.size() || v < INT32_MIN ||
      v > INT32_MAX)
    fail(n, attr,
         "not an integer from " + std::to_string(INT32_MIN) + " to " + std::to_string(INT32_MAX));
  return v;
}

std::optional<bool> xml_file::opt_bool(const pugi::xml_node& n, const char* attr) const {
  const pugi::xml_attribute a = n.attribute(attr);
  if (!a) return std::nullopt;
  const std::string_view s = trim(a.value());
  if (s == "true" || s == "1") return true;
  if (s == "false" || s == "0") return false;
  fail(n, attr, "not a boolean (true, false, 1, 0)");
}

}  // namespace cosim::config::ssp
