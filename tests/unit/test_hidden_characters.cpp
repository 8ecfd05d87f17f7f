// Bidi controls and zero-width characters made visible (issue 36), the rule itself:
// base/hidden_characters.hpp's set, written as <U+202E> by visible() (base/text.hpp), whole UTF-8
// characters only. The real `runara` on scripts, machines' names and reports, and the agreement
// with the reports' Lua copy of the set: tests/end_to_end/test_hidden_characters_output.cpp.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "base/hidden_characters.hpp"
#include "base/text.hpp"

using runara::LineFeeds;
using runara::visible;

namespace {

// `cp` in UTF-8 (1 to 4 bytes).
std::string utf8(char32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xc0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xe0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    s += static_cast<char>(0xf0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  }
  return s;
}

// The set as the issue names it: the Bidi_Control characters, then the invisible formatting ones.
const std::vector<char32_t> kSet = {
    0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068,
    0x2069, 0x00AD, 0x200B, 0x200C, 0x200D, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xFEFF,
};

}  // namespace

TEST_CASE("visible: each bidi control and zero-width character as <U+XXXX>, in both line feed modes", "[text]") {
  for (const char32_t cp : kSet) {
    const std::string label = runara::code_point_label(cp);
    INFO("U+" << std::hex << static_cast<unsigned>(cp));
    CHECK(runara::is_hidden_character(cp));
    CHECK(visible("a" + utf8(cp) + "b") == "a" + label + "b");
    CHECK(visible(utf8(cp) + utf8(cp), LineFeeds::show) == label + label);
  }
  CHECK(runara::code_point_label(0x202E) == "<U+202E>");
  CHECK(runara::code_point_label(0x00AD) == "<U+00AD>");
  // The Trojan Source name: "evil" + RLO + "gpj.lua" reads as "evilaul.jpg" on a terminal.
  CHECK(visible("evil\xe2\x80\xaegpj.lua", LineFeeds::show) == "evil<U+202E>gpj.lua");
  std::string text = "r\xe2\x80\x8bun";
  CHECK(runara::make_visible(text));
  CHECK(text == "r<U+200B>un");
}

TEST_CASE("visible: the characters next to the set, and ordinary non-ASCII text, stay as they are", "[text]") {
  // Neighbours: the not sign and registered sign around the soft hyphen, Arabic punctuation around
  // ALM, the hair space and hyphen around the zero-width ones, the line and paragraph separators
  // and the narrow no-break space around the embeddings, the medium mathematical space before the
  // word joiner, U+2065 (unassigned) between the invisible operators and the isolates, the
  // deprecated U+206A after them, the Arabic ligature before U+FEFF and the fullwidth one after.
  for (const char32_t cp : {0x00AC, 0x00AE, 0x061B, 0x061D, 0x200A, 0x2010, 0x2028, 0x2029, 0x202F, 0x205F, 0x2065,
                            0x206A, 0xFEFC, 0xFF01}) {
    INFO("U+" << std::hex << static_cast<unsigned>(cp));
    CHECK_FALSE(runara::is_hidden_character(cp));
    CHECK(visible("a" + utf8(cp) + "b") == "a" + utf8(cp) + "b");
  }
  const std::string ordinary = "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80 \xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d";
  CHECK(visible(ordinary, LineFeeds::show) == ordinary);  // café 日本 😀 and Hebrew letters
  std::string same = ordinary;
  CHECK_FALSE(runara::make_visible(same));
  // An emoji sequence's joiner is shown too: the set is the same wherever it stands.
  CHECK(visible("\xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9") == "\xf0\x9f\x91\xa8<U+200D>\xf0\x9f\x91\xa9");
}

TEST_CASE("visible: exactly the set is labelled among all of Unicode's code points", "[text]") {
  std::size_t labelled = 0;
  for (char32_t cp = 0xa0; cp <= 0x10FFFF; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;  // surrogates: not characters, no UTF-8 of their own
    const std::string shown = visible(utf8(cp));
    if (shown == utf8(cp)) continue;
    CHECK(shown == runara::code_point_label(cp));
    ++labelled;
  }
  CHECK(labelled == kSet.size());
}

TEST_CASE("visible: bytes that are not UTF-8 around or inside the set's characters are never split or labelled",
          "[text]") {
  CHECK(visible("x\xe2\x80") == "x\xe2M-^@");                           // a cut U+202E: no label, no crash
  CHECK(visible("x\xe2\xe2\x80\xae") == "x\xe2<U+202E>");               // a stray lead byte before a whole one
  CHECK(visible("x\xe2\x80\xae\x80") == "x<U+202E>M-^@");               // a stray continuation byte after it
  CHECK(visible("\xf0\x82\x80\xae") == "\xf0M-^BM-^@\xae");             // an overlong U+202E is not U+202E
  CHECK(visible("\xed\xa0\x80") == "\xed\xa0M-^@");                     // a surrogate's bytes: not a character
  CHECK(visible("\xc2\xad\xc2") == "<U+00AD>\xc2");                     // the last byte of a text cut short
}
