// IPv4/IPv6 address and CIDR text for the fake DigitalOcean API's VPCs and firewall rules:
// parsing, the RFC 1918 test a VPC's ip_range must pass, overlap between ranges, netmasks and
// host addresses inside a range. No state, no HTTP; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace runara::sim::fakedo {

// "10.116.0.3" -> host-order value; nullopt unless four decimal octets 0..255 without leading zeros.
std::optional<std::uint32_t> parse_ipv4(std::string_view text);
std::string ipv4_text(std::uint32_t address);

struct Ipv4Range {
  std::uint32_t network = 0;  // host order, aligned to the prefix
  int prefix = 32;

  std::uint32_t size() const { return prefix == 0 ? 0xffffffffu : (1u << (32 - prefix)); }
  std::uint32_t last() const { return network + (size() - 1); }
  bool contains(std::uint32_t a) const { return a >= network && a <= last(); }
  bool overlaps(const Ipv4Range& o) const { return network <= o.last() && o.network <= last(); }
  std::string text() const;     // "10.116.0.0/20"
  std::string netmask() const;  // "255.255.240.0"
};

// "10.10.10.0/24" -> range. `aligned` false when host bits are set ("10.10.10.5/24"): the range is
// still returned, normalised, so the caller can word its own refusal.
struct ParsedRange {
  Ipv4Range range;
  bool aligned = true;
};
std::optional<ParsedRange> parse_ipv4_cidr(std::string_view text);

// Inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16 (RFC 1918).
bool is_private_range(const Ipv4Range& range);

// What a firewall rule's `addresses` accepts: an IPv4 or IPv6 address, or either as a CIDR.
bool valid_rule_address(std::string_view text);

}  // namespace runara::sim::fakedo
