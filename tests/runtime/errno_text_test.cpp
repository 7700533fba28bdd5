#include "cosim/runtime/errno_text.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>

namespace {

// Expected texts are glibc's documented messages (The GNU C Library manual, "Error Codes"),
// and the format of its message for a number it does not know.
TEST(ErrnoText, KnownErrorsGiveGlibcMessages) {
  EXPECT_EQ(cosim::errno_text(ENOENT), "No such file or directory");
  EXPECT_EQ(cosim::errno_text(EADDRINUSE), "Address already in use");
  EXPECT_EQ(cosim::errno_text(EACCES), "Permission denied");
}

TEST(ErrnoText, UnknownErrorNamesTheNumber) {
  EXPECT_EQ(cosim::errno_text(12345), "Unknown error 12345");
  EXPECT_EQ(cosim::errno_text(-7), "Unknown error -7");
}

}  // namespace
