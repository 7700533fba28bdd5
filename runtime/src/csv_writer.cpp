#include "cosim/runtime/csv_writer.hpp"

#include <cerrno>
#include <charconv>
#include <cstring>

#include "cosim/runtime/errno_text.hpp"
#include "cosim/runtime/error.hpp"

namespace cosim {

namespace {
constexpr std::size_t max_number_chars = 24;
}  // namespace

csv_writer::csv_writer(const std::string& path, std::int64_t flush_every)
    : path_(path), flush_every_(flush_every) {}

csv_writer::~csv_writer() {
  if (file_ != nullptr) std::fclose(file_);
}

void csv_writer::fail() noexcept {
  if (!failed_) errno_ = errno;
  failed_ = true;
}

std::string csv_writer::failure() const {
  if (!failed_) return {};
  return "error writing " + path_ + ": " +
         (errno_ != 0 ? errno_text(errno_) : "value not representable");
}

void csv_writer::begin(std::span<const std::string> columns) {
  file_ = std::fopen(path_.c_str(), "w");
  COSIM_INPUT_CHECK(file_ != nullptr, errc::io,
                    "cannot open " + path_ + " for writing: " + errno_text(errno));
  std::setvbuf(file_, nullptr, _IOFBF, 1 << 16);
  // The longest shortest-round-trip double is 24 characters ("-2.2250738585072014e-308"),
  // plus its separator; a row of any width therefore fits.
  line_.assign(columns.size() * (max_number_chars + 1) + 2, '\0');
  std::string header;
  for (const auto& c : columns) header += (header.empty() ? "" : ",") + c;
  header += '\n';
  errno = 0;
  if (std::fputs(header.c_str(), file_) < 0) fail();
}

void csv_writer::write(std::span<const double> row) noexcept {
  if (line_.size() < row.size() * (max_number_chars + 1) + 2) {  // wider than the header
    errno = 0;
    fail();
    return;
  }
  char* p = line_.data();
  char* const end = line_.data() + line_.size() - 2;
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (i != 0) *p++ = ',';
    const auto r = std::to_chars(p, end, row[i]);
    if (r.ec != std::errc{}) {
      errno = 0;
      fail();
      return;
    }
    p = r.ptr;
  }
  *p++ = '\n';
  const auto n = static_cast<std::size_t>(p - line_.data());
  if (std::fwrite(line_.data(), 1, n, file_) != n) fail();
  if (++rows_ % flush_every_ == 0 && std::fflush(file_) != 0) fail();
}

void csv_writer::end() {
  if (file_ == nullptr) return;
  if (std::fflush(file_) != 0) fail();
}

}  // namespace cosim
