// Replays the fuzz seed corpus through the decoder. A file whose name starts with a status
// name and '-' (e.g. "bad_crc-zero.bin") must decode to exactly that status; other files
// (e.g. crash reproducers added later) only have to decode without crashing.

#include "cosim/drivers/bench_protocol.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using cosim::drivers::bench_message;
using cosim::drivers::crc32c;
using cosim::drivers::decode;
using cosim::drivers::decode_status;
using cosim::drivers::encode;
using cosim::drivers::max_datagram_size;

const fs::path corpus_dir = fs::path(COSIM_SOURCE_DIR) / "tests/drivers/corpus/decoder";

std::vector<std::byte> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(raw.size());
  std::transform(raw.begin(), raw.end(), out.begin(),
                 [](char c) { return static_cast<std::byte>(c); });
  return out;
}

std::optional<decode_status> expected_status(const std::string& filename) {
  const auto dash = filename.find('-');
  if (dash == std::string::npos) {
    return std::nullopt;
  }
  const std::string prefix = filename.substr(0, dash);
  for (int s = 0; s <= static_cast<int>(decode_status::bad_crc); ++s) {
    if (prefix == to_string(static_cast<decode_status>(s))) {
      return static_cast<decode_status>(s);
    }
  }
  return std::nullopt;
}

// The encoder always writes zero flags and reserved fields, which a v1 decoder ignores, so
// re-encoding reproduces the input exactly once those fields are zeroed and the CRC redone.
std::vector<std::byte> canonical(std::vector<std::byte> d) {
  for (const std::size_t i : {6u, 7u, 22u, 23u}) {
    d[i] = std::byte{0};
  }
  const std::size_t at = d.size() - 4;
  const std::uint32_t crc = crc32c(std::span<const std::byte>(d).first(at));
  for (std::size_t i = 0; i < 4; ++i) {
    d[at + i] = static_cast<std::byte>((crc >> (8 * i)) & 0xFFu);
  }
  return d;
}

bool is_canonical(const std::vector<std::byte>& d) {
  return d[6] == std::byte{0} && d[7] == std::byte{0} && d[22] == std::byte{0} &&
         d[23] == std::byte{0};
}

TEST(CorpusReplay, EveryFileDecodesAsNamedAndReencodesExactly) {
  ASSERT_TRUE(fs::is_directory(corpus_dir)) << corpus_dir;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(corpus_dir)) {
    if (entry.is_regular_file()) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 30u) << "seed corpus missing?";

  std::vector<int> seen(static_cast<int>(decode_status::bad_crc) + 1, 0);
  std::size_t canonical_ok = 0;
  for (const auto& path : files) {
    const std::string name = path.filename().string();
    SCOPED_TRACE(name);
    const auto data = read_file(path);
    bench_message m{};
    const decode_status s = decode(data, m);
    ++seen[static_cast<int>(s)];
    if (const auto want = expected_status(name)) {
      EXPECT_EQ(s, *want) << "got " << to_string(s);
    }
    if (s != decode_status::ok) {
      continue;
    }
    std::array<std::byte, max_datagram_size> buf{};
    const std::size_t n = encode(m, buf);
    const std::vector<std::byte> again(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_EQ(again, canonical(data));
    if (is_canonical(data)) {
      EXPECT_EQ(again, data);
      ++canonical_ok;
    }
  }
  // The seed corpus is meant to cover every status; keep it that way.
  for (int s = 0; s < static_cast<int>(seen.size()); ++s) {
    EXPECT_GT(seen[s], 0) << "no seed for " << to_string(static_cast<decode_status>(s));
  }
  EXPECT_GE(canonical_ok, 10u);
}

}  // namespace
