// The simulated VPC fabric's firewall files (sim/sim_fabric.hpp), made from the fake API's
// Droplets and firewalls: what each member lets in from its VPC peers, and the fake API's hook
// that hands the simulated cloud the account's network after every change. The shims reading
// these files, and the fabric under `runara --sim`: end_to_end/test_sim_vpc.cpp.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>

#include <unistd.h>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "sim/fake_digitalocean.hpp"
#include "sim/sim_fabric.hpp"

using nlohmann::json;
using namespace runara::sim;

namespace {

const std::string kVpc = "5a4981aa-9653-4bd1-bef5-d6bff52042e4";
const std::string kOther = "0d3176ad-41e0-4021-b831-0c5c45c60959";

SimulatedDroplet member(std::int64_t id, const std::string& vpc, const std::string& ip, std::vector<std::string> tags) {
  SimulatedDroplet d;
  d.id = id;
  d.vpc_uuid = vpc;
  d.private_ipv4 = ip;
  d.tags = std::move(tags);
  return d;
}

// The run's firewall as droplet.firewall makes it: ssh from the controller, the named ports from
// the run's tag, applied to the run's tag.
json run_firewall() {
  return json::parse(R"({
    "id": "fb6045f1-cf1d-4ca3-bfac-18832663025b", "name": "runara-x-fw", "tags": ["runara:run-x"], "droplet_ids": [],
    "inbound_rules": [
      {"protocol": "tcp", "ports": "22", "sources": {"addresses": ["203.0.113.7"]}},
      {"protocol": "tcp", "ports": "6379", "sources": {"tags": ["runara:run-x"], "addresses": ["203.0.113.7"]}},
      {"protocol": "tcp", "ports": "29500-29510", "sources": {"addresses": ["10.116.16.0/24"]}},
      {"protocol": "udp", "ports": "0", "sources": {"tags": ["runara:run-x"]}},
      {"protocol": "tcp", "ports": "0", "sources": {"droplet_ids": [3]}}
    ],
    "outbound_rules": []})");
}

}  // namespace

TEST_CASE("sim fabric: no firewall leaves a member open; a firewall opens only its rules' ports to matching peers",
          "[sim_fabric]") {
  SimulatedNetwork n;
  n.droplets = {member(1, kVpc, "10.116.16.2", {"runara:run-x"}), member(2, kVpc, "10.116.16.3", {"runara:run-x"}),
                member(3, kVpc, "10.116.16.4", {}), member(4, kOther, "10.116.32.2", {"runara:run-x"})};
  auto files = fabric_firewall_files(n);
  REQUIRE(files.size() == 2);  // one per VPC
  CHECK(files[kVpc].size() == 3);
  CHECK(files[kOther].size() == 1);
  CHECK(files[kVpc]["10.116.16.2"].find("\nopen\n") != std::string::npos);  // as on the real cloud: all open

  n.firewalls = {run_firewall()};
  files = fabric_firewall_files(n);
  const std::string a = files[kVpc]["10.116.16.2"];
  INFO(a);
  CHECK(a.find("open") == std::string::npos);
  CHECK(a.find("tcp 6379 6379 10.116.16.3\n") != std::string::npos);           // by the run's tag
  CHECK(a.find("tcp 6379 6379 10.116.16.4\n") == std::string::npos);           // untagged peer
  CHECK(a.find("tcp 29500 29510 10.116.16.3\n") != std::string::npos);         // by CIDR
  CHECK(a.find("tcp 29500 29510 10.116.16.4\n") != std::string::npos);
  CHECK(a.find("tcp 1 65535 10.116.16.4\n") != std::string::npos);             // by Droplet id, every port
  CHECK(a.find(" 22 ") == std::string::npos);                                  // ssh: the controller only
  CHECK(a.find("10.116.16.2\n") == std::string::npos);                         // not itself
  CHECK(a.find("10.116.32.2") == std::string::npos);                           // another VPC is never a peer
  // The untagged Droplet has no firewall: open. The other VPC's member is tagged: guarded, no peer.
  CHECK(files[kVpc]["10.116.16.4"].find("\nopen\n") != std::string::npos);
  CHECK(files[kOther]["10.116.32.2"].find("open") == std::string::npos);
  CHECK(files[kOther]["10.116.32.2"].find("tcp ") == std::string::npos);
}

TEST_CASE("sim fabric: write_fabric makes each VPC's folder and replaces its members' files", "[sim_fabric]") {
  const std::string root = std::filesystem::temp_directory_path() / ("runara-fabric-" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root);
  SimulatedNetwork n;
  n.droplets = {member(1, kVpc, "10.116.16.2", {}), member(2, kVpc, "10.116.16.3", {})};
  write_fabric(root, n);
  const std::string dir = fabric_dir(root, kVpc);
  CHECK(std::filesystem::is_directory(dir + "/listen"));
  CHECK(std::filesystem::exists(dir + "/firewall/10.116.16.3"));
  n.droplets.pop_back();  // deleted: its file goes
  write_fabric(root, n);
  CHECK_FALSE(std::filesystem::exists(dir + "/firewall/10.116.16.3"));
  CHECK(std::filesystem::exists(dir + "/firewall/10.116.16.2"));
  CHECK(fabric_dir(root, "../../etc").empty());  // never a path out of the root
  std::filesystem::remove_all(root);
}

TEST_CASE("sim fabric: the fake API hands over the account's network after each change", "[sim_fabric]") {
  std::mutex mu;
  SimulatedNetwork last;
  int calls = 0;
  FakeDoConfig c;
  c.active_after_s = 0.05;
  c.on_network_changed = [&](const SimulatedNetwork& n) {
    std::lock_guard lock(mu);
    last = n;
    ++calls;
  };
  FakeDigitalOcean fake(c);
  fake.start(0);
  httplib::Client cli(fake.base_url());
  cli.set_default_headers({{"Authorization", "Bearer test-token"}});
  auto r = cli.Post("/v2/droplets",
                    R"({"name": "a", "region": "nyc2", "size": "s-1vcpu-1gb", "image": "ubuntu-24-04-x64", "tags": ["run-x"]})",
                    "application/json");
  REQUIRE(r);
  REQUIRE(r->status == 202);
  {
    std::lock_guard lock(mu);
    REQUIRE(last.droplets.size() == 1);
    CHECK(last.droplets[0].private_ipv4.rfind("10.116.", 0) == 0);
    CHECK(!last.droplets[0].vpc_uuid.empty());
    CHECK(last.droplets[0].tags == std::vector<std::string>{"run-x"});
    CHECK(last.firewalls.empty());
  }
  const int before = calls;
  REQUIRE(cli.Get("/v2/droplets")->status == 200);
  CHECK(calls == before);  // a GET changes nothing
  r = cli.Post("/v2/firewalls", json{{"name", "fw"}, {"tags", {"run-x"}},
                                     {"inbound_rules", {{{"protocol", "tcp"}, {"ports", "6379"}, {"sources", {{"tags", {"run-x"}}}}}}}}
                                    .dump(),
               "application/json");
  REQUIRE(r);
  REQUIRE(r->status == 202);
  std::lock_guard lock(mu);
  REQUIRE(last.firewalls.size() == 1);
  CHECK(last.firewalls[0]["inbound_rules"][0]["ports"] == "6379");
  fake.stop();
}
