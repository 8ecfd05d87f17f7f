#include "base/text.hpp"

#include <utility>

#include "base/hidden_characters.hpp"

namespace runara {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool is_unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~';
}

}  // namespace

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::string url_encode(std::string_view s) {
  static const char* const hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (is_unreserved(c)) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string printable(std::string_view text, std::size_t max) {
  std::string out(text.substr(0, max));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return out;
}

namespace {

// cat -v's caret notation of a C0 control byte or DEL: ^@ ^A ... ^[ ... ^_, ^?.
void caret(std::string& out, unsigned char c) {
  out += '^';
  out += c == 0x7f ? '?' : static_cast<char>(c + 0x40);
}

// The length of the valid UTF-8 character starting at text[i] (2, 3 or 4), or 0 when none does
// (overlong forms, surrogates and code points past U+10FFFF are not valid).
std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b = at(i);
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // the second byte's range
  if (b >= 0xc2 && b <= 0xdf) n = 2;
  else if (b >= 0xe0 && b <= 0xef) n = 3, lo = b == 0xe0 ? 0xa0 : 0x80, hi = b == 0xed ? 0x9f : 0xbf;
  else if (b >= 0xf0 && b <= 0xf4) n = 4, lo = b == 0xf0 ? 0x90 : 0x80, hi = b == 0xf4 ? 0x8f : 0xbf;
  if (n == 0 || i + n > text.size() || at(i + 1) < lo || at(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k) {
    if (at(i + k) < 0x80 || at(i + k) > 0xbf) return 0;
  }
  return n;
}

// The code point of the valid UTF-8 character `ch` (2 to 4 bytes, as utf8_length() measured it).
char32_t code_point(std::string_view ch) {
  char32_t cp = static_cast<unsigned char>(ch[0]) & (0x7f >> ch.size());
  for (std::size_t k = 1; k < ch.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(ch[k]) & 0x3f);
  return cp;
}

// A valid UTF-8 character as visible() writes it: a C1 control as cat -v's M-^[, a hidden one
// (hidden_characters.hpp: a bidi control, a zero-width character) as <U+202E>, any other as is.
// Whole characters only, so no escape ever splits one.
void show_character(std::string& out, std::string_view ch) {
  const char32_t cp = code_point(ch);
  if (cp <= 0x9f) {  // U+0080..U+009F (valid UTF-8 of 2+ bytes is never below): a C1 control
    out += "M-";
    caret(out, static_cast<unsigned char>(cp - 0x80));
  } else if (is_hidden_character(cp)) {
    out += code_point_label(cp);
  } else {
    out.append(ch);
  }
}

// Whether visible() would change the byte `c` (ASCII) or needs a closer look (not ASCII).
bool needs_care(unsigned char c, LineFeeds line_feeds) {
  if (c == '\t') return false;
  if (c == '\n') return line_feeds == LineFeeds::show;
  return c < 0x20 || c >= 0x7f;
}

}  // namespace

std::string visible(std::string_view text, LineFeeds line_feeds) {
  std::size_t i = 0;
  while (i < text.size() && !needs_care(static_cast<unsigned char>(text[i]), line_feeds)) ++i;
  std::string out(text.substr(0, i));
  if (i == text.size()) return out;
  out.reserve(text.size() + 16);
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (!needs_care(c, line_feeds)) {
      out += static_cast<char>(c);
      ++i;
    } else if (c < 0x80) {
      caret(out, c);
      ++i;
    } else if (const std::size_t n = utf8_length(text, i); n > 0) {
      show_character(out, text.substr(i, n));
      i += n;
    } else {
      if (c < 0xa0) {  // a stray byte a Latin-1 terminal would obey as a C1 control
        out += "M-";
        caret(out, static_cast<unsigned char>(c - 0x80));
      } else {
        out += static_cast<char>(c);
      }
      ++i;
    }
  }
  return out;
}

bool make_visible(std::string& text, LineFeeds line_feeds) {
  for (char c : text) {
    if (needs_care(static_cast<unsigned char>(c), line_feeds)) {
      std::string shown = visible(text, line_feeds);
      if (shown.size() == text.size()) return false;  // only UTF-8 that is shown as it is
      text = std::move(shown);
      return true;
    }
  }
  return false;
}

std::string indent_continuations(std::string_view text, std::size_t indent) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    out += c;
    if (c == '\n') out.append(indent, ' ');
  }
  return out;
}

}  // namespace runara
