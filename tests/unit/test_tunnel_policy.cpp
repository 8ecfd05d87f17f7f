// Tunnels and the target policy (issue 25, "tunnels obey the target policy and secret binding"):
// where s:forward may lead, judged by address and never by spelling (every inet_aton form of
// loopback is the machine itself, anything but the machine, the run's droplets and granted hosts
// is refused with a message naming it), and a tunnel's local end judged as the machines it leads
// to when a load carries a secret (a secret bound elsewhere never goes through it).
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "net/target_policy.hpp"

using runara::TargetPolicy;

namespace {

const std::vector<std::string> kOwn{"203.0.113.7", "10.116.0.3"};  // a droplet: public, private
const char* const kVia = "gpu-1 (root@203.0.113.7:22)";

std::optional<TargetPolicy::TunnelTarget> judge(const TargetPolicy& policy, const std::string& host, int port = 8000,
                                                std::string* why_out = nullptr, const std::vector<std::string>& own = kOwn) {
  std::string why;
  auto target = policy.tunnel_target(host, port, own, kVia, why);
  CHECK(target.has_value() == why.empty());
  if (why_out) *why_out = why;
  return target;
}

sockaddr_storage v4(const std::string& ip, int port) {
  sockaddr_storage s{};
  auto* a = reinterpret_cast<sockaddr_in*>(&s);
  a->sin_family = AF_INET;
  a->sin_port = htons(static_cast<uint16_t>(port));
  REQUIRE(inet_pton(AF_INET, ip.c_str(), &a->sin_addr) == 1);
  return s;
}

sockaddr_storage v6(const std::string& ip, int port) {
  sockaddr_storage s{};
  auto* a = reinterpret_cast<sockaddr_in6*>(&s);
  a->sin6_family = AF_INET6;
  a->sin6_port = htons(static_cast<uint16_t>(port));
  REQUIRE(inet_pton(AF_INET6, ip.c_str(), &a->sin6_addr) == 1);
  return s;
}

bool allows(const TargetPolicy& policy, const sockaddr_storage& s, std::string* why_out = nullptr) {
  std::string why;
  const bool ok = policy.allows(reinterpret_cast<const sockaddr*>(&s), "127.0.0.1", why);
  CHECK(ok == why.empty());
  if (why_out) *why_out = why;
  return ok;
}

}  // namespace

TEST_CASE("a tunnel to any spelling of the machine's loopback leads to the machine itself, sent as its address",
          "[target_policy][tunnel]") {
  const TargetPolicy policy("s:forward");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"127.0.0.1", "127.0.0.1"},      {"127.1", "127.0.0.1"},           {"127.0.1", "127.0.0.1"},
      {"0x7f.1", "127.0.0.1"},         {"0X7F.0.0.1", "127.0.0.1"},      {"0x7f000001", "127.0.0.1"},
      {"2130706433", "127.0.0.1"},     {"0177.0.0.1", "127.0.0.1"},      {"017700000001", "127.0.0.1"},
      {"127.0.0.2", "127.0.0.2"},      {"127.255.255.254", "127.255.255.254"},
      {"localhost", "127.0.0.1"},      {"LocalHost", "127.0.0.1"},       {"localhost.", "127.0.0.1"},
      {"::1", "::1"},                  {"[::1]", "::1"},                 {"0:0:0:0:0:0:0:1", "::1"},
      {"::ffff:127.0.0.1", "127.0.0.1"}, {"[::ffff:7f00:1]", "127.0.0.1"}, {"::FFFF:127.1.2.3", "127.1.2.3"},
      {"0.0.0.0", "127.0.0.1"},        {"0", "127.0.0.1"},               {"::", "::1"},
      {"::ffff:0.0.0.0", "127.0.0.1"},
  };
  for (const auto& [spelling, sent] : cases) {
    INFO("remote_host " << spelling);
    const auto target = judge(policy, spelling);
    REQUIRE(target);
    CHECK(target->connect_host == sent);
    CHECK(target->to.empty());  // the machine itself
    CHECK(target->loopback);
    CHECK_FALSE(target->to_own);
  }
}

TEST_CASE("a tunnel to the machine's own address, however spelled, leads to the machine itself", "[target_policy][tunnel]") {
  const TargetPolicy policy("s:forward");
  for (const std::string spelling : {"203.0.113.7", "0xcb.0.113.7", "3405803783", "::ffff:203.0.113.7"}) {
    INFO("remote_host " << spelling);
    const auto target = judge(policy, spelling);
    REQUIRE(target);
    CHECK(target->connect_host == "203.0.113.7");
    CHECK(target->to.empty());
    CHECK_FALSE(target->loopback);
  }
  const auto vpc = judge(policy, "10.116.0.3");  // its own private address: its own interface
  REQUIRE(vpc);
  CHECK(vpc->to.empty());
  // A granted host logged into by name: that name is the machine itself.
  const auto named = judge(policy, "GPU-Box.lab.example.com", 8000, nullptr, {"gpu-box.lab.example.com"});
  REQUIRE(named);
  CHECK(named->connect_host == "gpu-box.lab.example.com");
  CHECK(named->to.empty());
}

TEST_CASE("a tunnel may lead on to the run's droplets and to hosts granted with --allow-host", "[target_policy][tunnel]") {
  TargetPolicy policy("s:forward");
  policy.add_reachable("198.51.100.20", 0);     // another droplet of the run
  policy.add_reachable("127.44.1.2", 0);        // a simulated droplet: its address is a loopback one
  policy.add_reachable("127.0.0.1", 18000);     // a simulated server, on this computer
  REQUIRE(policy.add_grant("10.0.0.5:8000"));
  REQUIRE(policy.add_grant("api.lab.example.com"));

  const auto droplet = judge(policy, "198.51.100.20", 9999);
  REQUIRE(droplet);
  CHECK(droplet->to == "198.51.100.20");
  CHECK(droplet->to_own);
  const auto simulated = judge(policy, "127.44.1.2");
  REQUIRE(simulated);
  CHECK(simulated->to == "127.44.1.2");  // another machine, not this one's loopback
  CHECK(simulated->to_own);
  CHECK_FALSE(simulated->loopback);
  const auto server = judge(policy, "127.0.0.1", 18000);  // from the machine, 127.0.0.1 is itself
  REQUIRE(server);
  CHECK(server->to.empty());

  const auto lan = judge(policy, "0xa.0.0.5", 8000);
  REQUIRE(lan);
  CHECK(lan->connect_host == "10.0.0.5");
  CHECK(lan->to == "10.0.0.5");
  CHECK_FALSE(lan->to_own);
  std::string why;
  CHECK_FALSE(judge(policy, "10.0.0.5", 8001, &why));  // granted on 8000 only
  CHECK(why.find("--allow-host 10.0.0.5:8001") != std::string::npos);
  const auto name = judge(policy, "API.lab.example.com.", 443);
  REQUIRE(name);
  CHECK(name->connect_host == "api.lab.example.com");
  CHECK(name->to == "api.lab.example.com");
}

TEST_CASE("a tunnel anywhere else is refused, naming the host, its class and the grant that would allow it",
          "[target_policy][tunnel]") {
  const TargetPolicy policy("s:forward");
  std::string why;
  CHECK_FALSE(judge(policy, "10.0.0.5", 8000, &why));
  CHECK(why ==
        "s:forward: refusing to tunnel to 10.0.0.5:8000 (private network (LAN)) through gpu-1 (root@203.0.113.7:22): a "
        "tunnel may lead only to the machine itself (its loopback: 127.0.0.1, ::1, localhost; or its own address), the "
        "run's droplets and hosts granted with --allow-host; to allow it, run with --allow-host 10.0.0.5:8000");
  CHECK_FALSE(judge(policy, "0xa9fea9fe", 80, &why));
  CHECK(why.find("refusing to tunnel to 0xa9fea9fe:80 (169.254.169.254, cloud metadata)") != std::string::npos);
  CHECK(why.find("--allow-host 169.254.169.254:80") != std::string::npos);
  CHECK_FALSE(judge(policy, "example.com", 80, &why));
  CHECK(why.find("refusing to tunnel to example.com:80 (a name the machine would look up)") != std::string::npos);
  CHECK_FALSE(judge(policy, "fe80::1", 80, &why));
  CHECK(why.find("refusing to tunnel to [fe80::1]:80 (link-local)") != std::string::npos);

  const std::vector<std::string> refused = {
      "10.0.0.5", "192.168.1.1", "172.16.0.1", "100.64.0.1", "169.254.169.254", "8.8.8.8", "1.1.1.1", "0.1.2.3",
      "224.0.0.1", "255.255.255.255", "::ffff:10.0.0.5", "fd00::1", "2001:db8::1", "::127.0.0.1", "64:ff9b::7f00:1",
      "example.com", "127.0.0.1.nip.io", "localhost.localdomain", "ip6-localhost", "foo.localhost", "metadata",
      "10.116.0.4",  // another address of the droplet's VPC: not granted, not the run's
  };
  for (const auto& host : refused) {
    INFO("remote_host " << host);
    CHECK_FALSE(judge(policy, host, 8000, &why));
    CHECK(why.find("s:forward: refusing to tunnel to ") == 0);
  }
  for (const std::string host : {"fe80::1%eth0", "a_b", "-oProxyCommand=nc", "host/path", "[::1"}) {
    INFO("remote_host " << host);
    CHECK_FALSE(judge(policy, host, 8000, &why));
    CHECK(why.find("'remote_host' must be an IP address or a host name") != std::string::npos);
  }
}

TEST_CASE("a tunnel's local end is reachable, on 127.0.0.1 and its port only", "[target_policy][tunnel]") {
  TargetPolicy policy;
  policy.add_tunnel({41000, "198.51.100.7", 22, false, "", 8000, false});
  CHECK(allows(policy, v4("127.0.0.1", 41000)));
  CHECK(allows(policy, v6("::ffff:127.0.0.1", 41000)));
  CHECK_FALSE(allows(policy, v4("127.0.0.1", 41001)));
  CHECK_FALSE(allows(policy, v4("127.0.0.2", 41000)));  // the listener is on 127.0.0.1 only
  CHECK_FALSE(allows(policy, v6("::1", 41000)));
}

TEST_CASE("a secret goes through a tunnel only where it may go to the machine the tunnel leads into",
          "[target_policy][tunnel]") {
  // A tunnel into a host granted with --allow-host, to its own loopback port 8000.
  const TargetPolicy::Tunnel into_granted{41000, "198.51.100.7", 22, false, "", 8000, false};
  const auto local = v4("127.0.0.1", 41000);
  std::string why;

  SECTION("bound to another host: refused, naming the tunnel, the machine and the binding that would allow it") {
    TargetPolicy policy;
    REQUIRE(policy.add_grant("198.51.100.7:22"));
    policy.add_tunnel(into_granted);
    policy.bind_secret("K", {"203.0.113.50"}, true);
    CHECK_FALSE(allows(policy, local, &why));
    CHECK(why ==
          "http_load: refusing to send secret K through the tunnel at 127.0.0.1:41000: it leads into 198.51.100.7: a "
          "secret goes only to the run's droplets, tunnels into them and simulated servers, and to destinations bound to "
          "it with --secret NAME@HOST[:PORT]; to allow it, run with --secret K@198.51.100.7");
  }
  SECTION("bound to loopback, or to the tunnel's own address: still not the machine it leads into") {
    for (const std::string bound : {"127.0.0.1", "127.0.0.1:41000", "localhost"}) {
      INFO("--secret K@" << bound);
      TargetPolicy policy;
      REQUIRE(policy.add_grant("127.0.0.1"));  // even with loopback granted
      policy.add_tunnel(into_granted);
      policy.bind_secret("K", {bound}, true);
      CHECK_FALSE(allows(policy, local, &why));
      CHECK(why.find("it leads into 198.51.100.7") != std::string::npos);
    }
  }
  SECTION("bound to the machine: its host, its SSH port, or the port the tunnel reaches there") {
    for (const std::string bound : {"198.51.100.7", "198.51.100.7:22", "198.51.100.7:8000"}) {
      INFO("--secret K@" << bound);
      TargetPolicy policy;
      policy.add_tunnel(into_granted);
      policy.bind_secret("K", {bound}, true);  // plain http: the tunnel is ssh up to the machine
      CHECK(allows(policy, local, &why));
    }
    TargetPolicy other_port;
    other_port.add_tunnel(into_granted);
    other_port.bind_secret("K", {"198.51.100.7:9000"}, false);
    CHECK_FALSE(allows(other_port, local, &why));
  }
  SECTION("every secret the load carries is judged") {
    TargetPolicy policy;
    policy.add_tunnel(into_granted);
    policy.bind_secret("A", {"198.51.100.7"}, false);
    policy.bind_secret("B", {"203.0.113.50"}, false);
    CHECK_FALSE(allows(policy, local, &why));
    CHECK(why.find("refusing to send secret B through the tunnel") != std::string::npos);
  }
}

TEST_CASE("a tunnel into the run's own droplet carries its secrets; one leading on past it needs the next host too",
          "[target_policy][tunnel]") {
  const auto local = v4("127.0.0.1", 42000);
  std::string why;
  TargetPolicy own;
  own.add_tunnel({42000, "203.0.113.7", 22, true, "", 8000, false});
  own.bind_secret("K", {}, true);
  CHECK(allows(own, local, &why));

  TargetPolicy to_droplet;  // through one droplet to another: both the run's
  to_droplet.add_tunnel({42000, "203.0.113.7", 22, true, "198.51.100.20", 8000, true});
  to_droplet.bind_secret("K", {}, true);
  CHECK(allows(to_droplet, local, &why));

  TargetPolicy to_lan;  // through a droplet on to a granted host of its network
  to_lan.add_tunnel({42000, "203.0.113.7", 22, true, "10.0.0.5", 8000, false});
  to_lan.bind_secret("K", {"203.0.113.7"}, false);
  CHECK_FALSE(allows(to_lan, local, &why));
  CHECK(why.find("it leads on from 203.0.113.7 to 10.0.0.5:8000") != std::string::npos);
  CHECK(why.find("--secret K@10.0.0.5:8000") != std::string::npos);
  TargetPolicy bound;
  bound.add_tunnel({42000, "203.0.113.7", 22, true, "10.0.0.5", 8000, false});
  bound.bind_secret("K", {"10.0.0.5:8000"}, false);
  CHECK(allows(bound, local, &why));
  TargetPolicy plain;  // bound, but it would cross the machine's network unencrypted
  plain.add_tunnel({42000, "203.0.113.7", 22, true, "10.0.0.5", 8000, false});
  plain.bind_secret("K", {"10.0.0.5:8000"}, true);
  CHECK_FALSE(allows(plain, local, &why));
  CHECK(why.find("over plain http://") != std::string::npos);
}
