#include "net/target_policy.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <optional>
#include <utility>

namespace runara {

namespace {

constexpr uint32_t v4(uint32_t a, uint32_t b, uint32_t c, uint32_t d) { return a << 24 | b << 16 | c << 8 | d; }

struct V4Range {
  uint32_t net;
  int bits;
  AddressClass cls;
};

// The first match wins, so the metadata address comes before the link-local block holding it.
constexpr V4Range kV4Ranges[] = {
    {v4(169, 254, 169, 254), 32, AddressClass::kMetadata},  // AWS, GCP, Azure, DigitalOcean, ...
    // "This network": Linux connects 0.0.0.0 to the local host itself.
    {v4(0, 0, 0, 0), 8, AddressClass::kUnspecified},
    {v4(127, 0, 0, 0), 8, AddressClass::kLoopback},
    {v4(10, 0, 0, 0), 8, AddressClass::kPrivate},
    {v4(172, 16, 0, 0), 12, AddressClass::kPrivate},
    {v4(192, 168, 0, 0), 16, AddressClass::kPrivate},
    // Carrier-grade NAT: the provider's side of a LAN, and where some clouds keep their services.
    {v4(100, 64, 0, 0), 10, AddressClass::kPrivate},
    {v4(169, 254, 0, 0), 16, AddressClass::kLinkLocal},
    {v4(224, 0, 0, 0), 4, AddressClass::kMulticast},
    {v4(255, 255, 255, 255), 32, AddressClass::kMulticast},  // limited broadcast
};

// Prefixes of IPv6 addresses that only carry an IPv4 one in their last four bytes.
constexpr uint8_t kMappedPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};  // ::ffff:0:0/96
constexpr uint8_t kCompatiblePrefix[12] = {};                                    // ::/96 (deprecated)
constexpr uint8_t kNat64Prefix[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};  // 64:ff9b::/96
// AWS's metadata service on IPv6 (Nitro instances).
constexpr uint8_t kEc2Metadata[16] = {0xfd, 0, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54};

AddressClass classify_v4(uint32_t a) {
  for (const V4Range& r : kV4Ranges) {
    if ((a & (~0u << (32 - r.bits))) == r.net) return r.cls;
  }
  return AddressClass::kPublic;
}

uint32_t v4_at(const uint8_t* b) { return v4(b[0], b[1], b[2], b[3]); }

// The IPv4 address an IPv6 one is only a wrapper for: whoever answers it is that IPv4 host (or a
// NAT64 gateway's view of it), so it must be judged as that host.
std::optional<uint32_t> wrapped_v4(const in6_addr& a) {
  const uint8_t* b = a.s6_addr;
  const uint32_t inner = v4_at(b + 12);
  const bool compatible = std::memcmp(b, kCompatiblePrefix, 12) == 0 && inner > 1;  // not :: or ::1
  if (compatible || std::memcmp(b, kMappedPrefix, 12) == 0 || std::memcmp(b, kNat64Prefix, 12) == 0) return inner;
  return std::nullopt;
}

AddressClass classify_v6(const in6_addr& a) {
  const uint8_t* b = a.s6_addr;
  if (auto inner = wrapped_v4(a)) return classify_v4(*inner);
  if (IN6_IS_ADDR_UNSPECIFIED(&a)) return AddressClass::kUnspecified;
  if (IN6_IS_ADDR_LOOPBACK(&a)) return AddressClass::kLoopback;
  if (std::memcmp(b, kEc2Metadata, 16) == 0) return AddressClass::kMetadata;
  if ((b[0] & 0xfe) == 0xfc) return AddressClass::kPrivate;  // fc00::/7 unique local
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return AddressClass::kLinkLocal;  // fe80::/10
  // fec0::/10 site-local: deprecated, but old LANs still route it.
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return AddressClass::kPrivate;
  if (b[0] == 0xff) return AddressClass::kMulticast;
  return AddressClass::kPublic;
}

// The IPv4 text of an IPv4-mapped IPv6 address, so that grants of "127.0.0.1" also cover the
// same host reached through a dual-stack socket; "" otherwise.
std::string unmapped_text(const sockaddr* addr) {
  if (!addr || addr->sa_family != AF_INET6) return {};
  const in6_addr& a = reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr;
  if (!IN6_IS_ADDR_V4MAPPED(&a)) return {};
  char buf[INET_ADDRSTRLEN] = "";
  inet_ntop(AF_INET, a.s6_addr + 12, buf, sizeof buf);
  return buf;
}

// Canonical text of an IP literal ("::0001" is "::1"); "" when `text` is not one.
std::string canonical_ip(const std::string& text) {
  unsigned char raw[sizeof(in6_addr)];
  char buf[INET6_ADDRSTRLEN] = "";
  if (inet_pton(AF_INET, text.c_str(), raw) == 1) return inet_ntop(AF_INET, raw, buf, sizeof buf);
  if (inet_pton(AF_INET6, text.c_str(), raw) == 1) return inet_ntop(AF_INET6, raw, buf, sizeof buf);
  return {};
}

std::string_view strip_brackets(std::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') return host.substr(1, host.size() - 2);
  return host;
}

// How hosts are compared: literals by their canonical text, names without case and without
// the root's trailing dot ("Example.COM." is "example.com").
std::string normalize_host(std::string_view host) {
  std::string h(strip_brackets(host));
  if (std::string ip = canonical_ip(h); !ip.empty()) return ip;
  std::transform(h.begin(), h.end(), h.begin(), [](unsigned char c) { return std::tolower(c); });
  if (!h.empty() && h.back() == '.') h.pop_back();
  return h;
}

bool parse_port(std::string_view text, int& port) {
  if (text.empty() || text.size() > 5) return false;
  port = 0;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    port = port * 10 + (c - '0');
  }
  return port >= 1 && port <= 65535;
}

// "HOST", "HOST:PORT", "[V6]" or "[V6]:PORT". An unbracketed host with several colons is an
// IPv6 address without a port: "::1:8000" is itself a valid address, so it cannot mean a port.
bool split_grant(std::string_view text, std::string& host, int& port) {
  port = 0;
  std::string_view port_text;
  bool has_port = false;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos) return false;
    host = text.substr(1, close - 1);
    const std::string_view rest = text.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return false;
    has_port = !rest.empty();
    if (has_port) port_text = rest.substr(1);
    unsigned char raw[sizeof(in6_addr)];
    if (inet_pton(AF_INET6, host.c_str(), raw) != 1) return false;
  } else if (std::count(text.begin(), text.end(), ':') == 1) {
    const auto colon = text.find(':');
    host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
    has_port = true;
  } else {
    host = text;
  }
  if (has_port && !parse_port(port_text, port)) return false;
  return !host.empty();
}

// "127.0.0.1:8080", "[::1]:8080", "example.com:443".
std::string host_port(const std::string& host, int port) {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace

std::string_view address_class_name(AddressClass cls) {
  switch (cls) {
    case AddressClass::kLoopback: return "loopback";
    case AddressClass::kPrivate: return "private network (LAN)";
    case AddressClass::kLinkLocal: return "link-local";
    case AddressClass::kMetadata: return "cloud metadata";
    case AddressClass::kUnspecified: return "unspecified";
    case AddressClass::kMulticast: return "multicast or broadcast";
    case AddressClass::kPublic: return "public internet";
  }
  return "unknown";
}

AddressClass classify_address(const sockaddr* addr) {
  if (addr && addr->sa_family == AF_INET)
    return classify_v4(ntohl(reinterpret_cast<const sockaddr_in*>(addr)->sin_addr.s_addr));
  if (addr && addr->sa_family == AF_INET6) return classify_v6(reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr);
  return AddressClass::kUnspecified;
}

std::string address_text(const sockaddr* addr) {
  char buf[INET6_ADDRSTRLEN] = "";
  if (addr && addr->sa_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(addr)->sin_addr, buf, sizeof buf);
  else if (addr && addr->sa_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr, buf, sizeof buf);
  return buf;
}

TargetPolicy::TargetPolicy(std::string who) : who_(std::move(who)) {}

void TargetPolicy::add_reachable(std::string ip, int port) {
  reachable_.push_back({normalize_host(ip), std::max(0, port)});
}

void TargetPolicy::add_tunnel(Tunnel tunnel) {
  tunnel.via = normalize_host(tunnel.via);
  if (!tunnel.to.empty()) tunnel.to = normalize_host(tunnel.to);
  tunnels_.push_back(std::move(tunnel));
}

// The tunnel listening at `addr` (its listeners are on 127.0.0.1 only), or null.
const TargetPolicy::Tunnel* TargetPolicy::tunnel_at(const sockaddr* addr) const {
  if (tunnels_.empty()) return nullptr;
  const int port = address_port(addr);
  if (address_text(addr) != "127.0.0.1" && unmapped_text(addr) != "127.0.0.1") return nullptr;
  for (const Tunnel& t : tunnels_) {
    if (t.local_port == port) return &t;
  }
  return nullptr;
}

std::optional<TargetPolicy::TunnelTarget> TargetPolicy::tunnel_target(std::string_view remote_host, int port,
                                                                      const std::vector<std::string>& own,
                                                                      std::string_view via, std::string& why) const {
  const std::string written(remote_host);
  const std::string bare(strip_brackets(remote_host));
  sockaddr_storage ss{};
  auto* sin = reinterpret_cast<sockaddr_in*>(&ss);
  auto* sin6 = reinterpret_cast<sockaddr_in6*>(&ss);
  bool numeric = false;
  if (bare.find(':') != std::string::npos && inet_pton(AF_INET6, bare.c_str(), &sin6->sin6_addr) == 1) {
    sin6->sin6_family = AF_INET6;
    numeric = true;
    if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {  // ::ffff:a.b.c.d is that IPv4 host, and is sent as it
      in_addr inner{};
      std::memcpy(&inner, sin6->sin6_addr.s6_addr + 12, sizeof inner);
      ss = {};
      sin->sin_family = AF_INET;
      sin->sin_addr = inner;
    }
  } else if (bare.find_first_not_of("0123456789abcdefABCDEFxX.") == std::string::npos &&
             inet_aton(bare.c_str(), &sin->sin_addr) != 0) {
    // inet_aton reads every spelling a resolver on the machine would ("127.1", "0x7f.1",
    // "0177.0.0.1", "2130706433"): the address it means is what is judged, and what is sent.
    sin->sin_family = AF_INET;
    numeric = true;
  }
  const sockaddr* addr = reinterpret_cast<const sockaddr*>(&ss);
  std::vector<std::string> own_hosts;
  for (const std::string& o : own) {
    if (!o.empty()) own_hosts.push_back(normalize_host(o));
  }
  const auto is_own = [&own_hosts](const std::string& host) {
    return std::find(own_hosts.begin(), own_hosts.end(), host) != own_hosts.end();
  };
  std::string shown, grant;
  if (numeric) {
    const std::string text = address_text(addr);
    const AddressClass c = classify_address(addr);
    // Only a true loopback: an IPv4-compatible or NAT64 wrapping of 127.0.0.1 is another host.
    const bool loopback = ss.ss_family == AF_INET ? c == AddressClass::kLoopback : IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr);
    if (is_own(text)) return TunnelTarget{text, "", false, false};
    // Before loopback: a simulated droplet's address is a loopback one, and another machine's.
    if (std::any_of(reachable_.begin(), reachable_.end(), [&](const Endpoint& e) { return e.port == 0 && e.host == text; }))
      return TunnelTarget{text, text, false, true};
    if (loopback) return TunnelTarget{text, "", true, false};
    if (text == "0.0.0.0" || text == "::") return TunnelTarget{text == "::" ? "::1" : "127.0.0.1", "", true, false};
    if (any_matches(grants_, text, port)) return TunnelTarget{text, text, false, false};
    grant = host_port(text, port);
    shown = text == bare ? grant + " (" : host_port(bare, port) + " (" + text + ", ";
    shown += std::string(address_class_name(c)) + ")";
  } else {
    const std::string name = normalize_host(bare);
    bool valid = !name.empty() && name.size() <= 253;
    for (char c : name) valid = valid && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.');
    if (!valid) {
      why = who_ + ": 'remote_host' must be an IP address or a host name as the machine sees it, got '" + written + "'";
      return std::nullopt;
    }
    // What a name means is the machine's resolver's to say; only "localhost" is taken as its
    // loopback, and sent as 127.0.0.1 (whatever its hosts file says).
    if (name == "localhost") return TunnelTarget{"127.0.0.1", "", true, false};
    if (is_own(name)) return TunnelTarget{name, "", false, false};
    if (any_matches(grants_, name, port)) return TunnelTarget{name, name, false, false};
    grant = host_port(name, port);
    shown = grant + " (a name the machine would look up)";
  }
  why = who_ + ": refusing to tunnel to " + shown + " through " + std::string(via) +
        ": a tunnel may lead only to the machine itself (its loopback: 127.0.0.1, ::1, localhost; or its own "
        "address), the run's droplets and hosts granted with --allow-host; to allow it, run with --allow-host " + grant;
  return std::nullopt;
}

bool TargetPolicy::add_grant(std::string host_or_host_port) {
  std::string host;
  int port = 0;
  if (!split_grant(host_or_host_port, host, port)) return false;
  grants_.push_back({normalize_host(host), port});
  return true;
}

void TargetPolicy::bind_secret(std::string name, const std::vector<std::string>& destinations, bool plain_http) {
  SecretRule rule{std::move(name), {}, plain_http};
  for (const std::string& d : destinations) {
    std::string host;
    int port = 0;
    if (split_grant(d, host, port)) rule.destinations.push_back({normalize_host(host), port});
  }
  secrets_.push_back(std::move(rule));
}

bool TargetPolicy::any_matches(const std::vector<Endpoint>& endpoints, const std::string& host, int port) {
  if (host.empty()) return false;
  return std::any_of(endpoints.begin(), endpoints.end(),
                     [&](const Endpoint& e) { return e.host == host && (e.port == 0 || e.port == port); });
}

// By the address connected to (also as plain IPv4 when mapped), or by the URL's host name.
bool TargetPolicy::matches(const std::vector<Endpoint>& endpoints, const sockaddr* addr, const std::string& host,
                           int port) const {
  for (const std::string& address : {address_text(addr), unmapped_text(addr)}) {
    if (any_matches(endpoints, address, port)) return true;
  }
  return any_matches(endpoints, host, port);
}

bool TargetPolicy::allows(const sockaddr* addr, std::string_view url_host, std::string& why) const {
  const std::string host = normalize_host(url_host);
  const int port = address_port(addr);
  // A tunnel's listener is judged as the machines it leads to, never as the run's own endpoint:
  // a secret bound elsewhere must not reach a machine through it.
  if (const Tunnel* tunnel = tunnel_at(addr)) {
    for (const SecretRule& rule : secrets_) {
      if (!secret_through_tunnel(rule, *tunnel, why)) return false;
    }
    return true;
  }
  bool reachable = false;
  for (const std::string& address : {address_text(addr), unmapped_text(addr)}) {
    reachable = reachable || any_matches(reachable_, address, port);
  }
  if (!reachable && !matches(grants_, addr, host, port)) {
    why = refusal(addr, host, port);
    return false;
  }
  for (const SecretRule& rule : secrets_) {
    if (!reachable && !secret_may_go(rule, addr, host, port, why)) return false;
  }
  return true;
}

bool TargetPolicy::secret_through_tunnel(const SecretRule& rule, const Tunnel& t, std::string& why) const {
  const std::string tunnel = "through the tunnel at 127.0.0.1:" + std::to_string(t.local_port);
  const std::string rest = ": a secret goes only to the run's droplets, tunnels into them and simulated servers, and to "
                           "destinations bound to it with --secret NAME@HOST[:PORT]; to allow it, run with --secret " +
                           rule.name + "@";
  const bool via_ok = t.via_own || any_matches(rule.destinations, t.via, t.via_port) ||
                      (t.to.empty() && any_matches(rule.destinations, t.via, t.to_port));
  const std::string via = t.via.find(':') != std::string::npos ? "[" + t.via + "]" : t.via;
  if (!via_ok) {
    why = who_ + ": refusing to send secret " + rule.name + " " + tunnel + ": it leads into " + via + rest + via;
    return false;
  }
  if (t.to.empty() || t.to_own) return true;
  const std::string to = host_port(t.to, t.to_port);
  if (rule.plain_http) {
    why = who_ + ": refusing to send secret " + rule.name + " " + tunnel + " over plain http://: it leads on from " + via +
          " to " + to + ", unencrypted; secrets travel unencrypted only to loopback and the run's own machines";
    return false;
  }
  if (any_matches(rule.destinations, t.to, t.to_port)) return true;
  why = who_ + ": refusing to send secret " + rule.name + " " + tunnel + ": it leads on from " + via + " to " + to + rest + to;
  return false;
}

// Called for targets that are not the run's own. Plain http is judged first: a destination bound
// with --secret does not make sending the secret unencrypted across a network acceptable.
bool TargetPolicy::secret_may_go(const SecretRule& rule, const sockaddr* addr, const std::string& host, int port,
                                 std::string& why) const {
  const std::string target = host_port(host.empty() ? address_text(addr) : host, port);
  if (rule.plain_http && classify_address(addr) != AddressClass::kLoopback) {
    why = who_ + ": refusing to send secret " + rule.name + " to " + target + " over plain http://: secrets travel "
          "unencrypted only to loopback and the run's own machines; use an https:// URL";
    return false;
  }
  if (matches(rule.destinations, addr, host, port)) return true;
  why = who_ + ": refusing to send secret " + rule.name + " to " + target + " (" + address_text(addr) + ", " +
        std::string(address_class_name(classify_address(addr))) + "): a secret goes only to the run's droplets, "
        "tunnels and simulated servers, and to destinations bound to it with --secret NAME@HOST[:PORT]; to allow it, "
        "run with --secret " + rule.name + "@" + target;
  return false;
}

// Names the host as the URL did, so the suggested grant is one the user recognises and that
// matches; the address and its class say why it was refused.
std::string TargetPolicy::refusal(const sockaddr* addr, const std::string& host, int port) const {
  const std::string address = address_text(addr);
  const std::string cls(address_class_name(classify_address(addr)));
  const bool literal = host.empty() || host == address || host == unmapped_text(addr);
  const std::string grant = host_port(host.empty() ? address : host, port);
  const std::string target = literal ? grant + " (" + cls + ")" : grant + " (" + address + ", " + cls + ")";
  return who_ + ": refusing to connect to " + target +
         ": scripts may only reach the run's droplets, its simulated servers and hosts granted with "
         "--allow-host; to allow it, run with --allow-host " + grant;
}

int address_port(const sockaddr* addr) {
  if (addr && addr->sa_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(addr)->sin_port);
  if (addr && addr->sa_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(addr)->sin6_port);
  return 0;
}

std::function<bool(const sockaddr*, std::string&)> connect_judge(std::shared_ptr<const TargetPolicy> policy,
                                                                 std::string host) {
  return [policy = std::move(policy), host = std::move(host)](const sockaddr* addr, std::string& why) {
    return !policy || policy->allows(addr, host, why);
  };
}

}  // namespace runara
