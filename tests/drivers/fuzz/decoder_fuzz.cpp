// libFuzzer target for the bench protocol decoder; built by tools/fuzz_decoder.sh.
// Beyond "no crash / no sanitizer report" it checks the properties the runtime relies on.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "cosim/drivers/bench_protocol.hpp"
#include "cosim/drivers/sequence_tracker.hpp"

namespace {

using namespace cosim::drivers;

void check(bool condition) {
  if (!condition) {
    __builtin_trap();
  }
}

void check_decoder(std::span<const std::byte> in) {
  bench_message m{};
  const decode_status s = decode(in, m);
  check(to_string(s) != nullptr);
  if (s != decode_status::ok) {
    return;
  }
  check(m.channel_count <= max_channels);
  check(in.size() == encoded_size(m.channel_count));

  // Re-encoding gives the input back, modulo the ignored flags/reserved fields.
  std::array<std::byte, max_datagram_size> out{};
  const std::size_t n = encode(m, out);
  check(n == in.size());
  for (std::size_t i = 0; i < header_size; ++i) {
    const bool ignored = i == 6 || i == 7 || i == 22 || i == 23;
    check(ignored || out[i] == in[i]);
  }
  for (std::size_t i = header_size; i < n - crc_size; ++i) {
    check(out[i] == in[i]);
  }
  bench_message again{};
  check(decode(std::span<const std::byte>(out).first(n), again) == decode_status::ok);
}

// Treats the input as a stream of sequence numbers and checks the counter bookkeeping.
void check_tracker(std::span<const std::byte> in) {
  sequence_tracker t;
  std::uint64_t observed = 0;
  for (std::size_t i = 0; i + 4 <= in.size(); i += 4) {
    std::uint32_t seq = 0;
    for (std::size_t b = 0; b < 4; ++b) {
      seq |= std::to_integer<std::uint32_t>(in[i + b]) << (8 * b);
    }
    const auto before = t.newest();
    const sequence_class c = t.observe(seq);
    ++observed;
    check(t.newest() == (c == sequence_class::fresh ? std::optional<std::uint32_t>{seq} : before));
  }
  check(t.received_fresh() + t.duplicates() + t.out_of_order() == observed);
}

}  // namespace

// NOLINTNEXTLINE(readability-identifier-naming): name fixed by libFuzzer
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Decode from an exact-size view so ASan flags any read past the datagram.
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  check_decoder(in);
  check_tracker(in);
  return 0;
}
