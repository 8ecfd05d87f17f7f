#include "http/json_scan.hpp"

#include <cstring>
#include <limits>
#include <string>

namespace runara {

namespace {

using u8 = unsigned char;

int hex_digit(u8 c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool hex4(const u8* p, uint32_t& cp) {
  cp = 0;
  for (int i = 0; i < 4; ++i) {
    int d = hex_digit(p[i]);
    if (d < 0) return false;
    cp = cp * 16 + static_cast<uint32_t>(d);
  }
  return true;
}

// Length of the well-formed UTF-8 sequence at p (Unicode table 3-7), 0 if ill-formed.
size_t utf8_seq(const u8* p, const u8* end) {
  u8 c = p[0];
  size_t avail = static_cast<size_t>(end - p);
  auto cont = [](u8 b) { return b >= 0x80 && b <= 0xBF; };
  if (c >= 0xC2 && c <= 0xDF) return (avail >= 2 && cont(p[1])) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (avail < 3) return 0;
    u8 lo = 0x80, hi = 0xBF;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
    return (p[1] >= lo && p[1] <= hi && cont(p[2])) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (avail < 4) return 0;
    u8 lo = 0x80, hi = 0xBF;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
    return (p[1] >= lo && p[1] <= hi && cont(p[2]) && cont(p[3])) ? 4 : 0;
  }
  return 0;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace

void json_decode_into(const JsonStr& s, std::string& out) {
  if (!s.escaped) {
    out.append(reinterpret_cast<const char*>(s.raw), s.raw_len);
    return;
  }
  const u8* p = s.raw;
  const u8* end = s.raw + s.raw_len;
  while (p < end) {
    const u8* bs = static_cast<const u8*>(std::memchr(p, '\\', static_cast<size_t>(end - p)));
    if (!bs) bs = end;
    out.append(reinterpret_cast<const char*>(p), static_cast<size_t>(bs - p));
    p = bs;
    if (p >= end) break;
    u8 e = p[1];
    p += 2;
    switch (e) {
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'u': {
        uint32_t cp = 0;
        hex4(p, cp);
        p += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          uint32_t lo = 0;
          hex4(p + 2, lo);
          p += 6;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        append_utf8(out, cp);
        break;
      }
      default: out.push_back(static_cast<char>(e)); break;  // " \ /
    }
  }
}

std::string json_decode(const JsonStr& s) {
  std::string out;
  json_decode_into(s, out);
  return out;
}

bool json_str_eq(const JsonStr& s, std::string_view lit) {
  if (!s.escaped) {
    return s.raw_len == lit.size() && std::memcmp(s.raw, lit.data(), lit.size()) == 0;
  }
  return json_decode(s) == lit;
}

namespace {

// Bytes that stand for themselves inside a JSON string: printable ASCII
// other than '"' and '\\'.
struct PlainTable {
  bool v[256] = {};
  constexpr PlainTable() {
    for (int c = 0x20; c < 0x80; ++c) v[c] = c != '"' && c != '\\';
  }
};
constexpr PlainTable kPlain;

bool digit(u8 c) { return c >= '0' && c <= '9'; }

}  // namespace

// p_ at '"'. Validates and measures the string.
bool JsonScan::string(JsonStr& s) {
  ++p_;
  const u8* start = p_;
  uint64_t dlen = 0;
  bool escaped = false;
  for (;;) {
    const u8* run = p_;
    while (p_ < end_ && kPlain.v[*p_]) ++p_;
    dlen += static_cast<uint64_t>(p_ - run);
    if (p_ >= end_) return false;
    u8 c = *p_;
    if (c == '"') break;
    if (c == '\\') {
      escaped = true;
      if (end_ - p_ < 2) return false;
      switch (p_[1]) {
        case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
          p_ += 2;
          dlen += 1;
          break;
        case 'u': {
          uint32_t cp = 0;
          if (end_ - p_ < 6 || !hex4(p_ + 2, cp)) return false;
          p_ += 6;
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t lo = 0;
            if (end_ - p_ < 6 || p_[0] != '\\' || p_[1] != 'u' || !hex4(p_ + 2, lo) ||
                lo < 0xDC00 || lo > 0xDFFF)
              return false;
            p_ += 6;
            dlen += 4;
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return false;
          } else {
            dlen += cp < 0x80 ? 1 : cp < 0x800 ? 2 : 3;
          }
          break;
        }
        default:
          return false;
      }
      continue;
    }
    if (c < 0x20) return false;
    size_t n = utf8_seq(p_, end_);
    if (n == 0) return false;
    p_ += n;
    dlen += n;
  }
  s.raw = start;
  s.raw_len = static_cast<size_t>(p_ - start);
  s.decoded_len = dlen;
  s.escaped = escaped;
  s.present = true;
  ++p_;
  return true;
}


// p_ at '-' or a digit. is_int: an integer that fits in int64.
bool JsonScan::number(bool& is_int, std::int64_t& value) {
  bool neg = false;
  if (*p_ == '-') {
    neg = true;
    ++p_;
  }
  if (p_ >= end_) return false;
  const u8* digits = p_;
  if (*p_ == '0') {
    ++p_;
  } else if (*p_ >= '1' && *p_ <= '9') {
    while (p_ < end_ && digit(*p_)) ++p_;
  } else {
    return false;
  }
  const u8* digits_end = p_;
  bool integral = true;
  if (p_ < end_ && *p_ == '.') {
    integral = false;
    ++p_;
    if (p_ >= end_ || !digit(*p_)) return false;
    while (p_ < end_ && digit(*p_)) ++p_;
  }
  if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
    integral = false;
    ++p_;
    if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
    if (p_ >= end_ || !digit(*p_)) return false;
    while (p_ < end_ && digit(*p_)) ++p_;
  }
  is_int = false;
  if (!integral) return true;
  uint64_t mag = 0;
  for (const u8* d = digits; d < digits_end; ++d) {
    uint64_t v = static_cast<uint64_t>(*d - '0');
    if (mag > (std::numeric_limits<uint64_t>::max() - v) / 10) return true;  // too big
    mag = mag * 10 + v;
  }
  constexpr uint64_t kMaxPos = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (!neg) {
    if (mag > kMaxPos) return true;
    value = static_cast<int64_t>(mag);
  } else {
    if (mag > kMaxPos + 1) return true;
    value = mag == kMaxPos + 1 ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(mag);
  }
  is_int = true;
  return true;
}

bool JsonScan::literal(const char* lit, std::size_t n) {
  if (static_cast<size_t>(end_ - p_) < n || std::memcmp(p_, lit, n) != 0) return false;
  p_ += n;
  return true;
}

// Validates any JSON value at p_ (after whitespace) without recursion.
bool JsonScan::skip_value() {
  std::string stack;  // '{' or '[' per open container; no allocation below depth 16
  for (;;) {
    // A value.
    ws();
    if (p_ >= end_) return false;
    u8 c = *p_;
    bool have_value = true;
    if ((c == '{' || c == '[') && !enter(stack.size())) return false;
    if (c == '{') {
      ++p_;
      ws();
      if (p_ < end_ && *p_ == '}') {
        ++p_;
      } else {
        stack.push_back('{');
        if (!member_key()) return false;
        have_value = false;
      }
    } else if (c == '[') {
      ++p_;
      ws();
      if (p_ < end_ && *p_ == ']') {
        ++p_;
      } else {
        stack.push_back('[');
        have_value = false;
      }
    } else if (c == '"') {
      JsonStr s;
      if (!string(s)) return false;
    } else if (c == '-' || digit(c)) {
      bool is_int;
      int64_t v;
      if (!number(is_int, v)) return false;
    } else if (c == 't') {
      if (!literal("true", 4)) return false;
    } else if (c == 'f') {
      if (!literal("false", 5)) return false;
    } else if (c == 'n') {
      if (!literal("null", 4)) return false;
    } else {
      return false;
    }
    if (!have_value) continue;  // go parse the first element / member value
    // After a complete value: close containers or move to the next element.
    for (;;) {
      if (stack.empty()) return true;
      ws();
      if (p_ >= end_) return false;
      char top = stack.back();
      if (*p_ == ',') {
        ++p_;
        if (top == '{' && !member_key()) return false;
        break;  // next value
      }
      if ((top == '{' && *p_ == '}') || (top == '[' && *p_ == ']')) {
        ++p_;
        stack.pop_back();
        continue;
      }
      return false;
    }
  }
}

// Parses `"key" :` inside an object being skipped.
bool JsonScan::member_key() {
  ws();
  JsonStr k;
  if (p_ >= end_ || *p_ != '"' || !string(k)) return false;
  ws();
  if (p_ >= end_ || *p_ != ':') return false;
  ++p_;
  return true;
}

// A string member value: sets s (present) or, for any other value, clears it.
bool JsonScan::string_or_other(JsonStr& s) {
  s = JsonStr{};
  if (*p_ == '"') return string(s);
  return skip_value();
}

bool JsonScan::int_or_other(bool& set, std::int64_t& v) {
  set = false;
  v = 0;
  if (*p_ == '-' || digit(*p_)) {
    bool is_int = false;
    int64_t x = 0;
    if (!number(is_int, x)) return false;
    if (is_int) {
      set = true;
      v = x;
    }
    return true;
  }
  return skip_value();
}

// A container opens at p_, inside depth_ known ones and `skipped` more being skipped: false
// past max_depth_ (openai_stream passes kMaxJsonDepth, the limit its reference applies).
bool JsonScan::enter(std::size_t skipped) {
  if (depth_ + skipped + 1 > max_depth_) {
    too_deep_ = true;
    return false;
  }
  return true;
}

}  // namespace runara
