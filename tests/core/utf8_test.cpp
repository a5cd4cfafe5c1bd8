// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/detail/utf8.hpp>

#include <gtest/gtest.h>

using namespace tdiag::detail;

TEST(Utf8, DecodesOneToFourByteSequences) {
  const std::string_view text = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"; // a é € 😀
  std::size_t pos = 0;
  EXPECT_EQ(decode_utf8(text, pos), U'a');
  EXPECT_EQ(decode_utf8(text, pos), U'\u00E9');
  EXPECT_EQ(decode_utf8(text, pos), U'\u20AC');
  EXPECT_EQ(decode_utf8(text, pos), U'\U0001F600');
  EXPECT_EQ(pos, text.size());
  EXPECT_TRUE(is_valid_utf8(text));
}

TEST(Utf8, RejectsOverlongSurrogateAndTruncatedSequences) {
  for (const std::string_view bad : {std::string_view("\xC0\xAF"), std::string_view("\xED\xA0\x80"),
                                     std::string_view("\xE2\x82"), std::string_view("\xFF"),
                                     std::string_view("\xF4\x90\x80\x80")}) {
    std::size_t pos = 0;
    EXPECT_EQ(decode_utf8(bad, pos), replacement_character);
    EXPECT_EQ(pos, 1u) << "an invalid sequence consumes exactly one byte";
    EXPECT_FALSE(is_valid_utf8(bad));
  }
}

TEST(Utf8, ReplacesEveryInvalidByte) {
  EXPECT_EQ(to_valid_utf8("ok\xFF\xFEok"), "ok\xEF\xBF\xBD\xEF\xBF\xBDok");
  EXPECT_EQ(to_valid_utf8("caf\xC3\xA9"), "caf\xC3\xA9");
  EXPECT_TRUE(is_valid_utf8("\xEF\xBF\xBD")) << "a literal U+FFFD is valid";
}

TEST(Utf8, EncodesWhatItDecodes) {
  for (const char32_t cp :
       {U'\x7F', U'\u0080', U'\u07FF', U'\u0800', U'\uFFFD', U'\U00010000', U'\U0010FFFF'}) {
    std::string encoded;
    append_utf8(encoded, cp);
    std::size_t pos = 0;
    EXPECT_EQ(decode_utf8(encoded, pos), cp);
    EXPECT_EQ(pos, encoded.size());
  }
}
