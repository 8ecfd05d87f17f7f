// Which addresses a script's load generator may aim at: classification of IPv4 and IPv6
// addresses (range edges, IPv4 wrapped in IPv6, metadata), the run's own reachable endpoints,
// --allow-host grants (names, literals, ports, brackets, malformed ones), the refusal messages,
// and allows() from several threads at once.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "net/target_policy.hpp"

using runara::AddressClass;
using runara::TargetPolicy;

namespace {

// A socket address for an IPv4 or IPv6 literal and a port (the one that would be connected).
sockaddr_storage address(const std::string& ip, int port = 0) {
  sockaddr_storage s;
  std::memset(&s, 0, sizeof s);
  auto* v4 = reinterpret_cast<sockaddr_in*>(&s);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&s);
  if (inet_pton(AF_INET, ip.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
  } else {
    REQUIRE(inet_pton(AF_INET6, ip.c_str(), &v6->sin6_addr) == 1);
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
  }
  return s;
}

const sockaddr* as_sockaddr(const sockaddr_storage& s) { return reinterpret_cast<const sockaddr*>(&s); }

AddressClass classify(const std::string& ip) {
  const sockaddr_storage s = address(ip);
  return runara::classify_address(as_sockaddr(s));
}

// allows() for a URL whose host is `url_host`, connecting to `ip` on `port`.
bool allows(const TargetPolicy& policy, const std::string& ip, const std::string& url_host, int port,
            std::string* why_out = nullptr) {
  const sockaddr_storage s = address(ip, port);
  std::string why;
  const bool ok = policy.allows(as_sockaddr(s), url_host, why);
  CHECK(ok == why.empty());
  if (why_out) *why_out = why;
  return ok;
}

}  // namespace

TEST_CASE("IPv4 addresses are classified, at the edges of each range", "[target_policy]") {
  using C = AddressClass;
  const std::vector<std::pair<std::string, AddressClass>> cases = {
      {"127.0.0.1", C::kLoopback},          {"127.255.255.255", C::kLoopback},
      {"126.255.255.255", C::kPublic},      {"128.0.0.0", C::kPublic},
      {"10.0.0.0", C::kPrivate},            {"10.255.255.255", C::kPrivate},
      {"9.255.255.255", C::kPublic},        {"11.0.0.0", C::kPublic},
      {"172.15.255.255", C::kPublic},       {"172.16.0.0", C::kPrivate},
      {"172.31.255.255", C::kPrivate},      {"172.32.0.0", C::kPublic},
      {"192.168.0.0", C::kPrivate},         {"192.168.255.255", C::kPrivate},
      {"192.167.255.255", C::kPublic},      {"192.169.0.0", C::kPublic},
      {"100.64.0.0", C::kPrivate},          {"100.127.255.255", C::kPrivate},
      {"100.63.255.255", C::kPublic},       {"100.128.0.0", C::kPublic},
      {"169.254.0.0", C::kLinkLocal},       {"169.254.255.255", C::kLinkLocal},
      {"169.254.169.253", C::kLinkLocal},   {"169.254.169.255", C::kLinkLocal},
      {"169.253.255.255", C::kPublic},      {"169.255.0.0", C::kPublic},
      {"169.254.169.254", C::kMetadata},    {"0.0.0.0", C::kUnspecified},
      {"0.1.2.3", C::kUnspecified},         {"1.0.0.0", C::kPublic},
      {"224.0.0.1", C::kMulticast},         {"239.255.255.255", C::kMulticast},
      {"223.255.255.255", C::kPublic},      {"255.255.255.255", C::kMulticast},
      {"8.8.8.8", C::kPublic},              {"203.0.113.7", C::kPublic},
  };
  for (const auto& [ip, cls] : cases) {
    INFO(ip);
    CHECK(classify(ip) == cls);
  }
}

TEST_CASE("IPv6 addresses are classified, IPv4 inside IPv6 as that IPv4", "[target_policy]") {
  using C = AddressClass;
  const std::vector<std::pair<std::string, AddressClass>> cases = {
      {"::1", C::kLoopback},
      {"::", C::kUnspecified},
      {"::ffff:127.0.0.1", C::kLoopback},
      {"::ffff:10.1.2.3", C::kPrivate},
      {"::ffff:172.31.255.255", C::kPrivate},
      {"::ffff:172.32.0.0", C::kPublic},
      {"::ffff:169.254.169.254", C::kMetadata},
      {"::ffff:0.0.0.0", C::kUnspecified},
      {"::ffff:8.8.8.8", C::kPublic},
      {"::127.0.0.1", C::kLoopback},           // IPv4-compatible (deprecated)
      {"64:ff9b::192.168.1.1", C::kPrivate},   // NAT64
      {"64:ff9b::8.8.8.8", C::kPublic},
      {"fd00:ec2::254", C::kMetadata},
      {"fd00:ec2::255", C::kPrivate},
      {"fc00::", C::kPrivate},
      {"fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", C::kPrivate},
      {"fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", C::kPublic},
      {"fe00::1", C::kPublic},
      {"fe80::", C::kLinkLocal},
      {"fe80::1", C::kLinkLocal},
      {"febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", C::kLinkLocal},
      {"fec0::1", C::kPrivate},                // site-local (deprecated)
      {"ff02::1", C::kMulticast},
      {"2001:4860:4860::8888", C::kPublic},
      {"2a03:b0c0:3:d0::1", C::kPublic},
  };
  for (const auto& [ip, cls] : cases) {
    INFO(ip);
    CHECK(classify(ip) == cls);
  }
}

TEST_CASE("classes have names for messages, addresses have texts", "[target_policy]") {
  CHECK(runara::address_class_name(AddressClass::kLoopback) == "loopback");
  CHECK(runara::address_class_name(AddressClass::kPrivate) == "private network (LAN)");
  CHECK(runara::address_class_name(AddressClass::kLinkLocal) == "link-local");
  CHECK(runara::address_class_name(AddressClass::kMetadata) == "cloud metadata");
  CHECK(runara::address_class_name(AddressClass::kUnspecified) == "unspecified");
  CHECK(runara::address_class_name(AddressClass::kMulticast) == "multicast or broadcast");
  CHECK(runara::address_class_name(AddressClass::kPublic) == "public internet");

  for (const char* ip : {"10.0.0.5", "::1", "::ffff:127.0.0.1", "2001:db8::1", "0.0.0.0"}) {
    const sockaddr_storage s = address(ip);
    CHECK(runara::address_text(as_sockaddr(s)) == ip);
  }
  const sockaddr_storage long_form = address("2001:0db8:0000:0000:0000:0000:0000:0001");
  CHECK(runara::address_text(as_sockaddr(long_form)) == "2001:db8::1");

  sockaddr unix_like{};
  unix_like.sa_family = AF_UNIX;
  CHECK(runara::address_text(&unix_like) == "");
  CHECK(runara::classify_address(&unix_like) == AddressClass::kUnspecified);
  CHECK(runara::classify_address(nullptr) == AddressClass::kUnspecified);
}

TEST_CASE("nothing is reachable by default, not even a public address", "[target_policy]") {
  TargetPolicy policy;
  std::string why;
  CHECK_FALSE(allows(policy, "127.0.0.1", "127.0.0.1", 8080, &why));
  CHECK(why ==
        "http_load: refusing to connect to 127.0.0.1:8080 (loopback): scripts may only reach the run's droplets, "
        "its simulated servers and hosts granted with --allow-host; to allow it, run with --allow-host "
        "127.0.0.1:8080");
  CHECK_FALSE(allows(policy, "93.184.216.34", "example.com", 443, &why));
  CHECK(why ==
        "http_load: refusing to connect to example.com:443 (93.184.216.34, public internet): scripts may only reach "
        "the run's droplets, its simulated servers and hosts granted with --allow-host; to allow it, run with "
        "--allow-host example.com:443");
}

TEST_CASE("refusals name the address, its class and the exact flag", "[target_policy]") {
  TargetPolicy policy("llm_load");
  std::string why;
  CHECK_FALSE(allows(policy, "169.254.169.254", "169.254.169.254", 80, &why));
  CHECK(why.rfind("llm_load: refusing to connect to 169.254.169.254:80 (cloud metadata): ", 0) == 0);
  CHECK(why.find("run with --allow-host 169.254.169.254:80") != std::string::npos);

  CHECK_FALSE(allows(policy, "::1", "[::1]", 8000, &why));
  CHECK(why.rfind("llm_load: refusing to connect to [::1]:8000 (loopback): ", 0) == 0);
  CHECK(why.find("run with --allow-host [::1]:8000") != std::string::npos);

  // A name that resolves into the LAN: the name as written, the address and the class.
  CHECK_FALSE(allows(policy, "192.168.1.20", "NAS.local", 5000, &why));
  CHECK(why.rfind("llm_load: refusing to connect to nas.local:5000 (192.168.1.20, private network (LAN)): ", 0) == 0);
  CHECK(why.find("run with --allow-host nas.local:5000") != std::string::npos);

  // A mapped address reached through a v4 URL keeps the v4 spelling.
  CHECK_FALSE(allows(policy, "::ffff:10.0.0.7", "10.0.0.7", 22, &why));
  CHECK(why.rfind("llm_load: refusing to connect to 10.0.0.7:22 (private network (LAN)): ", 0) == 0);
  CHECK(why.find("run with --allow-host 10.0.0.7:22") != std::string::npos);

  CHECK_FALSE(allows(policy, "fe80::1", "fe80::1", 80, &why));
  CHECK(why.find("(link-local)") != std::string::npos);
}

TEST_CASE("the run's droplets are reachable on any port, its servers on theirs", "[target_policy]") {
  TargetPolicy policy;
  policy.add_reachable("203.0.113.10", 0);      // a droplet
  policy.add_reachable("127.0.0.1", 18000);     // a simulated server
  policy.add_reachable("[::1]", 19000);         // a tunnel's IPv6 end
  policy.add_reachable("2001:0db8::0001", 0);   // spelled long

  CHECK(allows(policy, "203.0.113.10", "203.0.113.10", 8000, nullptr));
  CHECK(allows(policy, "203.0.113.10", "droplet-1.example", 22, nullptr));  // reached by a name
  CHECK(allows(policy, "127.0.0.1", "127.0.0.1", 18000, nullptr));
  CHECK(allows(policy, "127.0.0.1", "localhost", 18000, nullptr));
  CHECK(allows(policy, "::ffff:127.0.0.1", "127.0.0.1", 18000, nullptr));
  CHECK(allows(policy, "::1", "[::1]", 19000, nullptr));
  CHECK(allows(policy, "2001:db8::1", "2001:db8::1", 443, nullptr));

  CHECK_FALSE(allows(policy, "127.0.0.1", "127.0.0.1", 18001, nullptr));
  CHECK_FALSE(allows(policy, "::1", "[::1]", 18000, nullptr));
  CHECK_FALSE(allows(policy, "203.0.113.11", "203.0.113.11", 8000, nullptr));
}

TEST_CASE("allow-host grants by name, by address, with and without a port", "[target_policy]") {
  TargetPolicy policy;
  REQUIRE(policy.add_grant("localhost:8080"));
  REQUIRE(policy.add_grant("Inference.Example.COM"));
  REQUIRE(policy.add_grant("10.0.0.5"));
  REQUIRE(policy.add_grant("192.168.1.9:9000"));

  // By name: whatever the name resolves to, on the granted port.
  CHECK(allows(policy, "127.0.0.1", "localhost", 8080, nullptr));
  CHECK(allows(policy, "::1", "LOCALHOST.", 8080, nullptr));
  CHECK_FALSE(allows(policy, "127.0.0.1", "localhost", 8081, nullptr));
  CHECK_FALSE(allows(policy, "127.0.0.1", "127.0.0.1", 8080, nullptr));  // the name was granted, not the address
  CHECK(allows(policy, "10.9.9.9", "inference.example.com", 1234, nullptr));
  CHECK_FALSE(allows(policy, "10.9.9.9", "other.example.com", 1234, nullptr));

  // By address: any URL host that lands there, any port unless one was given.
  CHECK(allows(policy, "10.0.0.5", "10.0.0.5", 80, nullptr));
  CHECK(allows(policy, "10.0.0.5", "gpu-box.lan", 8000, nullptr));
  CHECK(allows(policy, "::ffff:10.0.0.5", "gpu-box.lan", 8000, nullptr));
  CHECK_FALSE(allows(policy, "10.0.0.6", "10.0.0.6", 80, nullptr));
  CHECK(allows(policy, "192.168.1.9", "192.168.1.9", 9000, nullptr));
  CHECK_FALSE(allows(policy, "192.168.1.9", "192.168.1.9", 9001, nullptr));
}

TEST_CASE("allow-host grants take IPv6 literals with and without brackets", "[target_policy]") {
  TargetPolicy policy;
  REQUIRE(policy.add_grant("[::1]:8000"));
  REQUIRE(policy.add_grant("fd12:3456::7"));  // unbracketed: an address, no port
  REQUIRE(policy.add_grant("[fe80::0001]"));
  REQUIRE(policy.add_grant("::ffff:169.254.169.254"));

  CHECK(allows(policy, "::1", "[::1]", 8000, nullptr));
  CHECK(allows(policy, "::1", "localhost", 8000, nullptr));
  CHECK_FALSE(allows(policy, "::1", "[::1]", 8001, nullptr));
  CHECK_FALSE(allows(policy, "127.0.0.1", "127.0.0.1", 8000, nullptr));  // ::1 is not 127.0.0.1
  CHECK(allows(policy, "fd12:3456::7", "[fd12:3456:0:0::7]", 443, nullptr));
  CHECK(allows(policy, "fe80::1", "[fe80::1]", 80, nullptr));
  CHECK(allows(policy, "::ffff:169.254.169.254", "[::ffff:169.254.169.254]", 80, nullptr));
  CHECK_FALSE(allows(policy, "169.254.169.254", "169.254.169.254", 80, nullptr));

  // "::1:8000" is itself an IPv6 address, so it cannot mean [::1]:8000.
  TargetPolicy unbracketed;
  REQUIRE(unbracketed.add_grant("::1:8000"));
  CHECK_FALSE(allows(unbracketed, "::1", "[::1]", 8000, nullptr));
  CHECK(allows(unbracketed, "::1:8000", "[::1:8000]", 80, nullptr));
}

TEST_CASE("malformed grants grant nothing", "[target_policy]") {
  TargetPolicy policy;
  for (const char* bad : {"", ":8080", "host:", "host:0", "host:65536", "host:80x", "host:-1", "[::1", "[::1]x",
                          "[::1]:", "[example.com]:80", "[]:80", "[10.0.0.1]:80"}) {
    INFO(bad);
    CHECK_FALSE(policy.add_grant(bad));
  }
  CHECK_FALSE(allows(policy, "10.0.0.1", "host", 8080, nullptr));
  CHECK(policy.add_grant("host:65535"));
  CHECK(policy.add_grant("host:1"));
}

TEST_CASE("allows() answers the same from many threads at once", "[target_policy]") {
  TargetPolicy policy;
  policy.add_reachable("203.0.113.10", 0);
  policy.add_grant("localhost:8080");
  const sockaddr_storage droplets[3] = {address("203.0.113.10", 80), address("203.0.113.10", 81),
                                        address("203.0.113.10", 82)};
  const sockaddr_storage loop = address("127.0.0.1", 8080);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        std::string why;
        if (!policy.allows(as_sockaddr(droplets[i % 3]), "203.0.113.10", why)) ++wrong;
        if (!policy.allows(as_sockaddr(loop), "localhost", why)) ++wrong;
        if (policy.allows(as_sockaddr(loop), "127.0.0.1", why) || why.empty()) ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(wrong == 0);
}

TEST_CASE("the port judged is the one about to be connected, not the one the URL implied", "[target_policy]") {
  // The reported bypass: --allow-host localhost:443 and a URL whose port libcurl chose (80).
  TargetPolicy policy;
  REQUIRE(policy.add_grant("localhost:443"));
  const sockaddr_storage port80 = address("127.0.0.1", 80), port443 = address("127.0.0.1", 443);
  std::string why;
  CHECK_FALSE(policy.allows(as_sockaddr(port80), "localhost", why));
  CHECK(why.find("refusing to connect to localhost:80 (127.0.0.1, loopback)") != std::string::npos);
  why.clear();
  CHECK(policy.allows(as_sockaddr(port443), "localhost", why));
  CHECK(runara::address_port(as_sockaddr(port443)) == 443);
  const sockaddr_storage v6 = address("::1", 8443);
  CHECK(runara::address_port(as_sockaddr(v6)) == 8443);
  CHECK(runara::address_port(nullptr) == 0);
}

TEST_CASE("a secret goes only to the run's own endpoints and where it is bound", "[target_policy]") {
  TargetPolicy policy;
  policy.add_reachable("203.0.113.10", 0);   // a droplet
  policy.add_reachable("127.0.0.1", 18000);  // a simulated server
  REQUIRE(policy.add_grant("127.0.0.1:9000"));     // an echoing server the user granted
  REQUIRE(policy.add_grant("api.example.com:443"));
  REQUIRE(policy.add_grant("198.51.100.7"));
  policy.bind_secret("HF_TOKEN", {"api.example.com:443"}, false);

  std::string why;
  CHECK(allows(policy, "203.0.113.10", "203.0.113.10", 8000, &why));
  CHECK(allows(policy, "127.0.0.1", "127.0.0.1", 18000, &why));
  CHECK(allows(policy, "93.184.216.34", "api.example.com", 443, &why));
  CHECK_FALSE(allows(policy, "127.0.0.1", "127.0.0.1", 9000, &why));
  CHECK(why ==
        "http_load: refusing to send secret HF_TOKEN to 127.0.0.1:9000 (127.0.0.1, loopback): a secret goes only to "
        "the run's droplets, tunnels and simulated servers, and to destinations bound to it with --secret "
        "NAME@HOST[:PORT]; to allow it, run with --secret HF_TOKEN@127.0.0.1:9000");
  CHECK_FALSE(allows(policy, "198.51.100.7", "198.51.100.7", 443, &why));
  // Still an allow-host matter first: binding a secret to a host does not grant reaching it.
  TargetPolicy bound_only;
  bound_only.bind_secret("HF_TOKEN", {"198.51.100.8"}, false);
  CHECK_FALSE(allows(bound_only, "198.51.100.8", "198.51.100.8", 443, &why));
  CHECK(why.find("--allow-host 198.51.100.8:443") != std::string::npos);
}

TEST_CASE("over plain http a secret goes only to loopback and the run's own machines", "[target_policy]") {
  TargetPolicy policy;
  policy.add_reachable("203.0.113.10", 0);
  REQUIRE(policy.add_grant("198.51.100.7"));
  REQUIRE(policy.add_grant("127.0.0.1:9000"));
  policy.bind_secret("K", {"198.51.100.7", "127.0.0.1:9000"}, true);
  std::string why;
  CHECK(allows(policy, "203.0.113.10", "203.0.113.10", 8000, &why));  // the run's droplet
  CHECK(allows(policy, "127.0.0.1", "127.0.0.1", 9000, &why));        // bound, loopback
  CHECK_FALSE(allows(policy, "198.51.100.7", "198.51.100.7", 80, &why));  // bound, but across a network
  CHECK(why ==
        "http_load: refusing to send secret K to 198.51.100.7:80 over plain http://: secrets travel unencrypted only to "
        "loopback and the run's own machines; use an https:// URL");
  TargetPolicy tls;
  REQUIRE(tls.add_grant("198.51.100.7"));
  tls.bind_secret("K", {"198.51.100.7"}, false);
  CHECK(allows(tls, "198.51.100.7", "198.51.100.7", 443, &why));
}

TEST_CASE("every secret a load carries must be allowed to go there", "[target_policy]") {
  TargetPolicy policy;
  REQUIRE(policy.add_grant("api.example.com"));
  policy.bind_secret("A", {"api.example.com"}, false);
  policy.bind_secret("B", {"other.example.com"}, false);
  std::string why;
  CHECK_FALSE(allows(policy, "93.184.216.34", "api.example.com", 443, &why));
  CHECK(why.find("refusing to send secret B to api.example.com:443") != std::string::npos);
  TargetPolicy malformed;  // a malformed destination binds nothing
  REQUIRE(malformed.add_grant("api.example.com"));
  malformed.bind_secret("A", {"api.example.com:0"}, false);
  CHECK_FALSE(allows(malformed, "93.184.216.34", "api.example.com", 443, &why));
}
