#include "sim/fake_do_addresses.hpp"

#include <arpa/inet.h>

#include "sim/fake_do_support.hpp"

namespace runara::sim::fakedo {

std::optional<std::uint32_t> parse_ipv4(std::string_view text) {
  std::uint32_t out = 0;
  int parts = 0;
  std::size_t i = 0;
  while (parts < 4) {
    std::size_t j = i;
    while (j < text.size() && text[j] >= '0' && text[j] <= '9') ++j;
    const std::size_t len = j - i;
    if (len == 0 || len > 3 || (len > 1 && text[i] == '0')) return std::nullopt;
    const auto v = parse_int(text.substr(i, len));
    if (!v || *v > 255) return std::nullopt;
    out = (out << 8) | static_cast<std::uint32_t>(*v);
    ++parts;
    if (parts < 4) {
      if (j >= text.size() || text[j] != '.') return std::nullopt;
      ++j;
    }
    i = j;
  }
  if (i != text.size()) return std::nullopt;
  return out;
}

std::string ipv4_text(std::uint32_t a) {
  return std::to_string(a >> 24) + "." + std::to_string((a >> 16) & 255) + "." + std::to_string((a >> 8) & 255) +
         "." + std::to_string(a & 255);
}

std::string Ipv4Range::text() const { return ipv4_text(network) + "/" + std::to_string(prefix); }

std::string Ipv4Range::netmask() const {
  const std::uint32_t mask = prefix == 0 ? 0 : ~0u << (32 - prefix);
  return ipv4_text(mask);
}

std::optional<ParsedRange> parse_ipv4_cidr(std::string_view text) {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const auto address = parse_ipv4(text.substr(0, slash));
  const std::string_view bits = text.substr(slash + 1);
  if (!address || bits.empty() || bits.size() > 2) return std::nullopt;
  const auto prefix = parse_int(bits);
  if (!prefix || *prefix < 0 || *prefix > 32) return std::nullopt;
  ParsedRange out;
  out.range.prefix = static_cast<int>(*prefix);
  const std::uint32_t mask = out.range.prefix == 0 ? 0 : ~0u << (32 - out.range.prefix);
  out.range.network = *address & mask;
  out.aligned = out.range.network == *address;
  return out;
}

bool is_private_range(const Ipv4Range& r) {
  static const Ipv4Range blocks[] = {{0x0a000000u, 8}, {0xac100000u, 12}, {0xc0a80000u, 16}};
  for (const auto& b : blocks)
    if (r.prefix >= b.prefix && b.contains(r.network) && b.contains(r.last())) return true;
  return false;
}

bool valid_rule_address(std::string_view text) {
  const std::string s(text);
  const auto slash = s.find('/');
  const std::string host = s.substr(0, slash);
  in_addr v4{};
  in6_addr v6{};
  int max_bits = 0;
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1 && parse_ipv4(host))
    max_bits = 32;
  else if (inet_pton(AF_INET6, host.c_str(), &v6) == 1)
    max_bits = 128;
  else
    return false;
  if (slash == std::string::npos) return true;
  const std::string bits = s.substr(slash + 1);
  if (bits.empty() || bits.size() > 3) return false;
  const auto n = parse_int(bits);
  return n && *n >= 0 && *n <= max_bits;
}

}  // namespace runara::sim::fakedo
