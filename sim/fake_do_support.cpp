#include "sim/fake_do_support.hpp"
#include "base/text.hpp"

#include <array>
#include <cstring>
#include <ctime>
#include <vector>

namespace runara::sim::fakedo {

namespace {

bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// RFC 1321 MD5, enough for key fingerprints.
std::array<std::uint8_t, 16> md5(const std::vector<std::uint8_t>& input) {
  static const std::uint32_t k[64] = {
      0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613,
      0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193,
      0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d,
      0x02441453, 0xd8a1e681, 0xe7d3fbc8, 0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed,
      0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122,
      0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
      0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665, 0xf4292244,
      0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
      0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb,
      0xeb86d391};
  static const int r[64] = {7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
                            5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20,
                            4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
                            6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21};
  std::vector<std::uint8_t> msg = input;
  const std::uint64_t bit_len = static_cast<std::uint64_t>(input.size()) * 8;
  msg.push_back(0x80);
  while (msg.size() % 64 != 56) msg.push_back(0);
  for (int i = 0; i < 8; ++i) msg.push_back(static_cast<std::uint8_t>(bit_len >> (8 * i)));

  std::uint32_t h0 = 0x67452301, h1 = 0xefcdab89, h2 = 0x98badcfe, h3 = 0x10325476;
  for (std::size_t off = 0; off < msg.size(); off += 64) {
    std::uint32_t w[16];
    for (int i = 0; i < 16; ++i) {
      w[i] = static_cast<std::uint32_t>(msg[off + 4 * i]) |
             (static_cast<std::uint32_t>(msg[off + 4 * i + 1]) << 8) |
             (static_cast<std::uint32_t>(msg[off + 4 * i + 2]) << 16) |
             (static_cast<std::uint32_t>(msg[off + 4 * i + 3]) << 24);
    }
    std::uint32_t a = h0, b = h1, c = h2, d = h3;
    for (int i = 0; i < 64; ++i) {
      std::uint32_t f;
      int g;
      if (i < 16) {
        f = (b & c) | (~b & d);
        g = i;
      } else if (i < 32) {
        f = (d & b) | (~d & c);
        g = (5 * i + 1) % 16;
      } else if (i < 48) {
        f = b ^ c ^ d;
        g = (3 * i + 5) % 16;
      } else {
        f = c ^ (b | ~d);
        g = (7 * i) % 16;
      }
      const std::uint32_t tmp = d;
      d = c;
      c = b;
      const std::uint32_t x = a + f + k[i] + w[g];
      b = b + ((x << r[i]) | (x >> (32 - r[i])));
      a = tmp;
    }
    h0 += a;
    h1 += b;
    h2 += c;
    h3 += d;
  }
  std::array<std::uint8_t, 16> out{};
  const std::uint32_t hs[4] = {h0, h1, h2, h3};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) out[4 * i + j] = static_cast<std::uint8_t>(hs[i] >> (8 * j));
  return out;
}

std::optional<std::vector<std::uint8_t>> base64_decode(std::string_view text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  if (text.empty() || text.size() % 4 != 0) return std::nullopt;
  std::vector<std::uint8_t> out;
  std::uint32_t acc = 0;
  int bits = 0;
  std::size_t pad = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '=') {
      if (i + 2 < text.size()) return std::nullopt;
      ++pad;
      continue;
    }
    if (pad != 0) return std::nullopt;
    const int v = value(c);
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<std::uint8_t>((acc >> bits) & 0xff));
    }
  }
  return out;
}

}  // namespace

bool valid_droplet_name(std::string_view name) {
  // ^[a-zA-Z0-9]?[a-z0-9A-Z.\-]*[a-z0-9A-Z]$ reduces to: non-empty, only [A-Za-z0-9.-], ends with
  // an alphanumeric (the optional first class is a subset of the middle one).
  if (name.empty() || name.size() > 255) return false;
  for (char c : name)
    if (!is_alnum(c) && c != '.' && c != '-') return false;
  return is_alnum(name.back());
}

bool valid_tag_name(std::string_view name) {
  if (name.empty() || name.size() > 255) return false;
  for (char c : name)
    if (!is_alnum(c) && c != '_' && c != '-' && c != ':') return false;
  return true;
}

std::string iso8601(std::chrono::system_clock::time_point t) {
  const std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::int64_t unix_seconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

std::string uuid4(std::mt19937_64& rng) {
  const std::uint64_t hi = (rng() & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;
  const std::uint64_t lo = (rng() & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx",
                static_cast<unsigned>(hi >> 32), static_cast<unsigned>((hi >> 16) & 0xffff),
                static_cast<unsigned>(hi & 0xffff), static_cast<unsigned>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xffffffffffffULL));
  return buf;
}

std::optional<std::int64_t> parse_int(std::string_view text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  std::size_t i = 0;
  bool negative = false;
  if (text[0] == '-') {
    negative = true;
    i = 1;
    if (text.size() == 1) return std::nullopt;
  }
  std::int64_t v = 0;
  for (; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    v = v * 10 + (text[i] - '0');
  }
  return negative ? -v : v;
}

KeyCheck ssh_key_fingerprint(std::string_view public_key) {
  static const char* kTypes[] = {"ssh-rsa",           "ssh-dss",           "ecdsa-sha2-nistp256",
                                 "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521", "ssh-ed25519"};
  KeyCheck result;
  // Split on whitespace: type, base64 blob, optional comment.
  std::string_view rest = public_key;
  auto next_word = [&rest]() -> std::string_view {
    std::size_t b = 0;
    while (b < rest.size() && (rest[b] == ' ' || rest[b] == '\t' || rest[b] == '\n' || rest[b] == '\r')) ++b;
    std::size_t e = b;
    while (e < rest.size() && rest[e] != ' ' && rest[e] != '\t' && rest[e] != '\n' && rest[e] != '\r') ++e;
    std::string_view word = rest.substr(b, e - b);
    rest = rest.substr(e);
    return word;
  };
  const std::string_view type = next_word();
  const std::string_view blob = next_word();
  if (type.empty() || blob.empty()) {
    result.error = "Key invalid, key should be of the format `type key [comment]`";
    return result;
  }
  bool known = false;
  for (const char* t : kTypes) known = known || type == t;
  if (!known) {
    result.error =
        "Key invalid type, we support 'ssh-rsa', 'ssh-dss', 'ecdsa-sha2-nistp256', "
        "'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521', or 'ssh-ed25519'";
    return result;
  }
  const auto bytes = base64_decode(blob);
  // The blob starts with the length-prefixed key type; it must agree with the text type.
  bool consistent = bytes && bytes->size() >= 4 + type.size();
  if (consistent) {
    const std::uint32_t n = (static_cast<std::uint32_t>((*bytes)[0]) << 24) |
                            (static_cast<std::uint32_t>((*bytes)[1]) << 16) |
                            (static_cast<std::uint32_t>((*bytes)[2]) << 8) |
                            static_cast<std::uint32_t>((*bytes)[3]);
    consistent = n == type.size() &&
                 std::memcmp(bytes->data() + 4, type.data(), type.size()) == 0;
  }
  if (!consistent) {
    result.error = "Key invalid, key should be of the format `type key [comment]`";
    return result;
  }
  const auto digest = md5(*bytes);
  static const char* hex = "0123456789abcdef";
  for (std::size_t i = 0; i < digest.size(); ++i) {
    if (i) result.fingerprint += ':';
    result.fingerprint += hex[digest[i] >> 4];
    result.fingerprint += hex[digest[i] & 15];
  }
  return result;
}

}  // namespace runara::sim::fakedo
