// The run's firewall body and the checks on what a script names (ports, sources, a VPC's range):
// pure functions, checked against the shapes DigitalOcean's spec gives (firewall_rule.yml).
#include <catch2/catch.hpp>

#include "cloud/firewall_rules.hpp"
#include "cloud/network_resources.hpp"

using runara::check_firewall_lists;
using runara::check_firewall_port;
using runara::check_firewall_source;

TEST_CASE("firewall ports: single ports and ranges within 1-65535", "[firewall_rules]") {
  for (const char* ok : {"1", "22", "6379", "65535", "29500-29510", "8000-8000"}) {
    INFO(ok);
    CHECK(check_firewall_port(ok, 1).ok());
  }
  for (const char* bad : {"", "0", "65536", "-1", "80-", "-80", "29510-29500", "1e3", " 22", "22 ", "all", "1-2-3",
                          "9999999"}) {
    INFO(bad);
    CHECK_FALSE(check_firewall_port(bad, 3).ok());
  }
  CHECK_THAT(check_firewall_port("70000", 2).error(), Catch::Contains("option 'ports', entry 2: '70000'"));
}

TEST_CASE("firewall sources: IPv4/IPv6 addresses and CIDR blocks", "[firewall_rules]") {
  for (const char* ok : {"203.0.113.7", "10.0.0.0/8", "0.0.0.0/0", "2001:db8::1", "2001:db8::/32", "::/0"}) {
    INFO(ok);
    CHECK(check_firewall_source(ok, 1).ok());
  }
  for (const char* bad : {"", "300.1.1.1", "10.0.0.0/33", "10.0.0.0/", "2001:db8::/129", "example.com", "10.0.0.1/a",
                          "1.2.3"}) {
    INFO(bad);
    CHECK_FALSE(check_firewall_source(bad, 1).ok());
  }
}

TEST_CASE("firewall lists: sources required, lengths bounded", "[firewall_rules]") {
  CHECK(check_firewall_lists({"6379"}, {"203.0.113.7"}).ok());
  CHECK_THAT(check_firewall_lists({"6379"}, {}).error(), Catch::Contains("'sources' is required"));
  CHECK_THAT(check_firewall_lists(std::vector<std::string>(33, "80"), {"203.0.113.7"}).error(),
             Catch::Contains("at most 32"));
  CHECK_THAT(check_firewall_lists({}, std::vector<std::string>(17, "203.0.113.7")).error(), Catch::Contains("at most 16"));
}

TEST_CASE("firewall body: ssh from the sources only, the ports from the run and the sources, all outbound",
          "[firewall_rules]") {
  const auto body = runara::firewall_body("runara-r1-fw", "runara:run-r1", {"6379", "29500-29510"}, {"203.0.113.7"});
  CHECK(body["name"] == "runara-r1-fw");
  CHECK(body["tags"] == nlohmann::json::array({"runara:run-r1"}));
  const auto& in = body["inbound_rules"];
  REQUIRE(in.size() == 4);
  CHECK(in[0] == nlohmann::json({{"protocol", "tcp"}, {"ports", "22"}, {"sources", {{"addresses", {"203.0.113.7"}}}}}));
  CHECK(in[1]["protocol"] == "icmp");
  CHECK(in[1]["sources"] == nlohmann::json({{"tags", {"runara:run-r1"}}}));
  CHECK(in[2]["ports"] == "6379");
  CHECK(in[3]["ports"] == "29500-29510");
  CHECK(in[3]["sources"] == nlohmann::json({{"tags", {"runara:run-r1"}}, {"addresses", {"203.0.113.7"}}}));
  const auto& out = body["outbound_rules"];
  REQUIRE(out.size() == 3);
  for (const auto& rule : out) CHECK(rule["destinations"]["addresses"] == nlohmann::json({"0.0.0.0/0", "::/0"}));
}

TEST_CASE("VPC requests: region required, ip_range an IPv4 block from /16 to /28", "[firewall_rules]") {
  using runara::VpcRequest;
  CHECK(runara::check_vpc_request(VpcRequest{"atl1", "", ""}).ok());
  CHECK(runara::check_vpc_request(VpcRequest{"atl1", "10.200.0.0/24", ""}).ok());
  CHECK(runara::check_vpc_request(VpcRequest{"atl1", "", "my-vpc"}).ok());
  CHECK_FALSE(runara::check_vpc_request(VpcRequest{"", "", ""}).ok());
  for (const char* bad : {"10.0.0.0/8", "10.0.0.0/29", "10.0.0.0", "10.0.0.0/2x", "fd00::/48", "10.0.0.300/24", "/24"}) {
    INFO(bad);
    CHECK_FALSE(runara::check_vpc_request(VpcRequest{"atl1", bad, ""}).ok());
  }
  CHECK_FALSE(runara::check_vpc_request(VpcRequest{"atl1", "10.1.0.0/24", "my-vpc"}).ok());
}
