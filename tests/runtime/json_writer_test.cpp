// JSON strings are UTF-8 (RFC 8259 Sect. 8.1): well-formed sequences pass unchanged, every
// byte that is not part of one becomes \ufffd, so summary.json parses for any path.
#include "cosim/runtime/json_writer.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

std::string quoted(const std::string& s) {
  cosim::json_writer j;
  j.value(s);
  return j.str();
}

TEST(JsonWriter, WellFormedUtf8PassesUnchanged) {
  // U+00E9, U+20AC, U+1F600: 2, 3 and 4 bytes (Unicode Table 3-7).
  const std::string text = "r\xc3\xa9sum\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";
  EXPECT_EQ(quoted(text), "\"" + text + "\"");
  EXPECT_EQ(quoted("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
}

TEST(JsonWriter, EachMalformedByteBecomesAReplacementCharacter) {
  // Latin-1 e-acute; a lone continuation byte; a truncated 3-byte sequence at the end.
  EXPECT_EQ(quoted("r\xe9sultats"), "\"r\\ufffdsultats\"");
  EXPECT_EQ(quoted("\x80"), "\"\\ufffd\"");
  EXPECT_EQ(quoted("x\xe2\x82"), "\"x\\ufffd\\ufffd\"");
  // Overlong "/" (C0 AF), a UTF-16 surrogate (ED A0 80), above U+10FFFF (F4 90 80 80).
  EXPECT_EQ(quoted("\xc0\xaf"), "\"\\ufffd\\ufffd\"");
  EXPECT_EQ(quoted("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");
  EXPECT_EQ(quoted("\xf4\x90\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
  // The largest code points of each length stay.
  EXPECT_EQ(quoted("\xdf\xbf\xef\xbf\xbf\xf4\x8f\xbf\xbf"),
            "\"\xdf\xbf\xef\xbf\xbf\xf4\x8f\xbf\xbf\"");
}

}  // namespace
