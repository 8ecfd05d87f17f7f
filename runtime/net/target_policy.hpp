// Which network addresses a script's load generator may aim at.
//
// A shared script must not be able to point load at the machine it runs on, the LAN around it or
// the cloud metadata service (which hands out credentials), however its URLs are spelled or
// whatever their names resolve to. So the decision is made per connection, on the address about
// to be connected, not on the URL: a script may reach the run's own droplets, the servers and
// tunnels the run started, and what the user granted with --allow-host, nothing else.
//
// Classification covers IPv4 and IPv6, including IPv4 addresses wrapped in IPv6 (mapped
// ::ffff:a.b.c.d, compatible ::a.b.c.d, NAT64 64:ff9b::a.b.c.d), which are judged by the IPv4
// address inside.
//
// A load that carries secrets (runara.secret handles in headers or api_key) is held to more: each
// secret goes only to the run's own endpoints and to the destinations bound to it with
// --secret NAME@HOST[:PORT], and over plain http only to loopback or the run's own machines.
// A granted host that echoes requests would otherwise hand the secret back to the script.
//
// The port judged is the one in the socket address about to be connected, never one the URL was
// assumed to have: callers pass exactly what they will connect() to.
//
// Set up once, then allows() may be called from any number of threads: it only reads.
#pragma once

#include <sys/socket.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace runara {

enum class AddressClass { kLoopback, kPrivate, kLinkLocal, kMetadata, kUnspecified, kMulticast, kPublic };

// For messages: "loopback", "private network (LAN)", "link-local", "cloud metadata",
// "unspecified", "multicast or broadcast", "public".
std::string_view address_class_name(AddressClass cls);

// An address that is neither IPv4 nor IPv6 (or null) is kUnspecified: never a place to send load.
AddressClass classify_address(const sockaddr* addr);

// "10.0.0.5", "::1", "::ffff:127.0.0.1" (no port, no brackets, no zone); "" for other families.
std::string address_text(const sockaddr* addr);

class TargetPolicy {
 public:
  // `who` names the primitive in refusal messages ("http_load: refusing to connect ...").
  explicit TargetPolicy(std::string who = "http_load");

  // Addresses the run itself created or started: its droplets' IPs (port 0: any port), its
  // simulated servers and tunnels (ip + port). `ip` is an IPv4 or IPv6 literal, brackets allowed.
  void add_reachable(std::string ip, int port);

  // A tunnel the run opened (s:forward): its listener, 127.0.0.1:local_port, leads through the
  // SSH host `via` to `to` ("": `via` itself). A connection to it is allowed (the tunnel's
  // destination was judged when it was opened: tunnel_target), but a secret goes through only
  // where it may go to `via` (the run's own machine, or a destination bound to the secret with
  // via's host: any port, its SSH port, or the tunnel's port when it leads to `via` itself) and,
  // when the tunnel leads on past `via`, to `to` (the run's own machine, or bound; never over
  // plain http, which would cross the network from `via` unencrypted).
  struct Tunnel {
    int local_port = 0;
    std::string via;  // an address or a name, brackets allowed
    int via_port = 22;
    bool via_own = false;
    std::string to;
    int to_port = 0;
    bool to_own = false;
  };
  void add_tunnel(Tunnel tunnel);

  // Where a tunnel through a machine may lead, judged before it is opened, by address and never
  // by spelling: `remote_host` as the script gave it (an IPv4 address in any inet_aton form —
  // "127.1", "0x7f.1", "2130706433" —, an IPv6 one, brackets allowed, or a name) and the port the
  // machine will connect to. Allowed:
  //   - the machine itself: its loopback (127.0.0.0/8, ::1, IPv4 loopback wrapped in IPv6,
  //     "localhost"), the unspecified 0.0.0.0 and :: (which Linux connects to the host itself),
  //     or one of `own` (the session's host as connected, and the machine's other addresses);
  //   - one of the run's droplets (reachable on any port: add_reachable with port 0);
  //   - a host granted with --allow-host (by its address, or by the name as granted; with its
  //     port when the grant has one).
  // Anything else — the machine's LAN, cloud metadata, the internet, names not granted (the
  // machine would resolve them) — returns nullopt with `why` naming the host, what is allowed and
  // the grant that would allow it; `via` names the machine in that message.
  struct TunnelTarget {
    std::string connect_host;  // what the machine is asked to connect to: canonical address or name
    std::string to;            // "": the machine itself; else canonical (address, lower-case name)
    bool loopback = false;     // the machine's own loopback
    bool to_own = false;       // one of the run's droplets
  };
  std::optional<TunnelTarget> tunnel_target(std::string_view remote_host, int port, const std::vector<std::string>& own,
                                            std::string_view via, std::string& why) const;

  // An --allow-host grant as given: "HOST" or "HOST:PORT", HOST a name, an IPv4 literal or an
  // IPv6 literal, bracketed when it has a port ("[::1]:8000"; unbracketed "::1" is an address
  // without a port). Names compare without case and trailing dot. Returns false, granting
  // nothing, when it is malformed (empty host, a port that is not 1-65535).
  bool add_grant(std::string host_or_host_port);

  // The load carries secret `name`, which may go to the run's own endpoints and to
  // `destinations` (grants in add_grant's syntax; malformed ones bind nothing). `plain_http`:
  // the load sends it unencrypted, so only loopback and the run's own endpoints may get it.
  void bind_secret(std::string name, const std::vector<std::string>& destinations, bool plain_http);

  // Decides for one connection about to be opened to `addr` (IPv4 or IPv6, with the port it
  // will be connected on) for a URL whose host part was `url_host` (a name or literal, brackets
  // allowed). Allowed when addr:port is reachable, or a grant matches url_host or the address
  // text (and the port, when the grant has one), and every bound secret may go there. Otherwise
  // returns false and sets `why` to a message naming the address, its class and the flag that
  // would allow it.
  bool allows(const sockaddr* addr, std::string_view url_host, std::string& why) const;

 private:
  struct Endpoint {
    std::string host;  // canonical address text, or a lower-case name without trailing dot
    int port = 0;      // 0: any port
  };
  struct SecretRule {
    std::string name;
    std::vector<Endpoint> destinations;
    bool plain_http = false;
  };

  static bool any_matches(const std::vector<Endpoint>& endpoints, const std::string& host, int port);
  bool matches(const std::vector<Endpoint>& endpoints, const sockaddr* addr, const std::string& host, int port) const;
  bool secret_may_go(const SecretRule& rule, const sockaddr* addr, const std::string& host, int port,
                     std::string& why) const;
  bool secret_through_tunnel(const SecretRule& rule, const Tunnel& tunnel, std::string& why) const;
  const Tunnel* tunnel_at(const sockaddr* addr) const;
  std::string refusal(const sockaddr* addr, const std::string& host, int port) const;

  std::string who_;
  std::vector<Endpoint> reachable_;
  std::vector<Endpoint> grants_;
  std::vector<Tunnel> tunnels_;
  std::vector<SecretRule> secrets_;
};

// The port of an IPv4 or IPv6 socket address (host order); 0 for other families.
int address_port(const sockaddr* addr);

// An HTTP client's allow_connect (why is set on a refusal) for a side request of a load (its
// /tokenize check, its /metrics scrape), judged as the load's connections are: by `policy` for
// `host` as the URL names it; no policy, any address.
std::function<bool(const sockaddr*, std::string&)> connect_judge(std::shared_ptr<const TargetPolicy> policy,
                                                                 std::string host);

}  // namespace runara
