// droplet.vpc, droplet.firewall and droplet.check end to end against the fake DigitalOcean API:
// bad input refused with the option and entry named (and nothing created), the firewall's body
// as the spec has it, and an account without multi-node GPU droplets refused plainly.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "test_paths.hpp"
#include "child_process.hpp"
#include "eventually.hpp"
#include "sim/fake_digitalocean.hpp"
#include "test_text.hpp"

using runara::test::ChildResult;
using runara::test::contains;
using runara::test::eventually;

namespace {

constexpr const char* kToken = "net-test-token-2d7a";

struct NetCloud {
  runara::sim::FakeDigitalOcean fake;
  std::string dir = runara::test::temp_dir("droplet-net");

  explicit NetCloud(bool multi_node_gpus = true, bool default_vpcs = true) : fake(config(multi_node_gpus, default_vpcs)) {
    fake.start();
  }

  static runara::sim::FakeDoConfig config(bool multi_node_gpus, bool default_vpcs) {
    runara::sim::FakeDoConfig c;
    c.token = kToken;
    c.active_after_s = 0.1;
    c.delete_after_s = 0.1;
    c.firewall_apply_s = 0.1;
    c.enforce_rate_limits = false;
    c.multi_node_gpus = multi_node_gpus;
    c.default_vpcs = default_vpcs;
    return c;
  }

  ChildResult run(const std::vector<std::string>& flags, const std::string& script,
                  const std::vector<std::string>& params = {}) {
    std::vector<std::string> args(flags);  // run_runara puts the program first
    args.insert(args.end(), {"--out", dir + "/out-" + std::to_string(++runs), std::string(RUNARA_SOURCE_DIR) + "/tests/scripts/" + script});
    args.insert(args.end(), params.begin(), params.end());
    return runara::test::run_runara(args, 90,
                                    {{"RUNARA_DO_API_URL", fake.base_url()},
                                     {"DIGITALOCEAN_TOKEN", kToken},
                                     {"DIGITALOCEAN_ACCESS_TOKEN", ""},
                                     {"XDG_CONFIG_HOME", ""},
                                     {"RUNARA_STATE_DIR", dir + "/state"},
                                     {"RUNARA_POLL_S", "0.1"},
                                     {"HOME", dir}});
  }
  int runs = 0;
};

std::string line_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) return line;
  }
  return {};
}

}  // namespace

TEST_CASE("droplet.vpc, droplet.firewall, droplet.check: bad input is refused with what is wrong",
          "[droplet][droplet_network]") {
  NetCloud cloud;
  // The account VPCs the cases name by existing = NAME are granted; default-atl1 is not.
  const ChildResult r = cloud.run({"--budget", "40", "--max-droplets", "4", "--allow-vpc", "no-such-vpc", "--allow-vpc",
                                   "default-nyc3"},
                                  "droplet_network_bad_input.lua");
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "BAD INPUT DONE 0"));
  auto check_case = [&](const std::string& label, const std::vector<std::string>& parts) {
    const std::string line = line_starting(r.out, "CASE " + label + ": ");
    INFO("case " << label << ": " << line);
    CHECK_FALSE(line.empty());
    CHECK_FALSE(contains(line, "accepted"));
    for (const auto& part : parts) CHECK(contains(line, part));
  };
  check_case("vpc unknown option", {"droplet.vpc", "unknown option 'colour'"});
  check_case("vpc no region", {"droplet.vpc", "'region' is required"});
  check_case("vpc bad ip_range", {"droplet.vpc", "'10.0.0.0/8'", "from /16 to /28"});
  check_case("vpc ip_range not cidr", {"droplet.vpc", "'10.0.0.300/24'"});
  check_case("vpc existing and ip_range", {"droplet.vpc", "exclude each other"});
  check_case("vpc existing unknown", {"droplet.vpc", "no VPC named 'no-such-vpc'", "default-nyc3"});
  check_case("vpc existing other region", {"droplet.vpc", "'default-nyc3' is in region 'nyc3', not 'atl1'"});
  check_case("vpc existing not granted",
             {"droplet.vpc: option 'existing': the account's VPC 'default-atl1' is not the run's to join", "--allow-vpc default-atl1"});
  check_case("create vpc not the run's", {"droplet.create: option 'vpc': 5a4e1c2b-", "is not a VPC of this run", "--allow-vpc"});
  check_case("vpc not a table", {"droplet.vpc", "must be a table"});
  check_case("firewall unknown option", {"droplet.firewall", "unknown option 'udp'"});
  check_case("firewall bad port", {"droplet.firewall", "option 'ports', entry 2", "70000"});
  check_case("firewall bad range", {"droplet.firewall", "'29510-29500'", "LOW <= HIGH"});
  check_case("firewall port not whole", {"droplet.firewall", "entry 1", "80.5"});
  check_case("firewall port a table", {"droplet.firewall", "entry 1", "got table"});
  check_case("firewall bad source", {"droplet.firewall", "option 'sources', entry 1", "'300.1.1.1'"});
  check_case("firewall bad prefix", {"droplet.firewall", "'10.0.0.0/33'"});
  check_case("firewall no sources", {"droplet.firewall", "'sources' is required"});
  check_case("firewall too many ports", {"droplet.firewall", "'ports' has 40 entries; at most 32"});
  check_case("firewall too many sources", {"droplet.firewall", "'sources' has 20 entries; at most 16"});
  check_case("firewall huge source", {"droplet.firewall", "entry 1 is 100000 characters long; at most 64"});
  check_case("check no size", {"droplet.check", "'size' is required"});
  check_case("check bad count", {"droplet.check", "'count' must be a whole number from 1 to 1000"});
  check_case("check unknown option", {"droplet.check", "unknown option 'n'"});
  check_case("check unknown size", {"unknown size 's-99vcpu-1tb'"});
  check_case("check over budget", {"2 x gpu-mi300x8-1536gb do not fit", "machine 2 of 2", "$31.84",
                                   "the worst case cost would exceed the budget", "--budget"});
  check_case("check too many", {"machine 5 of 5", "above the limit of 4", "--max-droplets"});
  check_case("check size not in region", {"size 'gpu-h100x8-640gb' is not offered in region 'atl1' (it is in: nyc2, tor1)"});
  check_case("check region not a string", {"droplet.check", "option 'region'"});
  CHECK(contains(r.out, "CHECK FITS true"));
  CHECK(contains(r.out, "CHECK FITS IN REGION true"));
  // Options checked before anything waits are raised at the line that called (try's pcall, line 5).
  for (const char* label : {"vpc unknown option", "vpc bad ip_range", "firewall bad port", "firewall too many ports",
                            "check bad count", "create vpc not a uuid", "vpc existing not granted"}) {
    INFO("case " << label);
    CHECK(contains(line_starting(r.out, std::string("CASE ") + label + ": "), "droplet_network_bad_input.lua:5: "));
  }
  check_case("create vpc not a uuid", {"droplet.create", "option 'vpc'", "'my-vpc'"});
  check_case("create vpc a number", {"droplet.create", "option 'vpc'", "got number"});
  check_case("second vpc other region", {"already has its VPC", "'atl1'"});
  CHECK(contains(r.out, "SAME VPC true"));
  check_case("create vpc other region", {"droplet.create", "region 'atl1', not 'nyc3'"});
  // Nothing but the one VPC was created, and it is gone with the run.
  CHECK(cloud.fake.requests("POST /v2/droplets") == 0);
  CHECK(cloud.fake.requests("POST /v2/firewalls") == 0);
  CHECK(cloud.fake.requests("POST /v2/vpcs") == 1);
  CHECK(eventually([&] {
    for (const auto& v : cloud.fake.vpcs()) {
      if (v.value("name", "").rfind("runara-", 0) == 0) return false;
    }
    return true;
  }, 20));
}

TEST_CASE("droplet.firewall: the body follows the spec and a second call replaces the rules",
          "[droplet][droplet_network]") {
  NetCloud cloud;
  const ChildResult r = cloud.run({}, "fleet_network.lua", {"n=1", "ending=normal"});
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "owned=true"));
  // Checked while it existed through the request log: POST /v2/tags before the firewall's POST.
  const auto log = cloud.fake.request_log();
  long tag_post = -1, fw_post = -1;
  for (std::size_t i = 0; i < log.size(); ++i) {
    if (tag_post < 0 && log[i].rfind("POST /v2/tags", 0) == 0) tag_post = static_cast<long>(i);
    if (fw_post < 0 && log[i].rfind("POST /v2/firewalls", 0) == 0) fw_post = static_cast<long>(i);
  }
  CHECK(tag_post >= 0);
  CHECK(fw_post > tag_post);
  CHECK(cloud.fake.firewalls().empty());
}

TEST_CASE("droplet.create: an account without multi-node GPU droplets is told so, and nothing is left",
          "[droplet][droplet_network]") {
  NetCloud cloud(false);
  const ChildResult r = cloud.run({"--budget", "100"}, "droplet_create.lua",
                                  {"size=gpu-mi300x8-1536gb", "image=gpu-amd-base", "region=atl1"});
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "422"));
  CHECK(contains(r.err, "multi-node GPU droplets must be enabled on the account"));
  CHECK(contains(r.err, "ask DigitalOcean support"));
  CHECK(cloud.fake.creates() == 0);
  CHECK(eventually([&] { return cloud.fake.keys().empty(); }, 20));
  CHECK(r.err.find(kToken) == std::string::npos);
}

TEST_CASE("droplet.vpc: no VPC of the run's own in a region without its default VPC (it could never be deleted)",
          "[droplet][droplet_network]") {
  NetCloud cloud(true, false);  // an account that has no VPC in any region yet
  const ChildResult r = cloud.run({}, "fleet_network.lua", {"n=1"});
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.err, "region 'nyc3' has no VPC of the account yet"));
  CHECK(contains(r.err, "existing = NAME"));
  CHECK(cloud.fake.requests("POST /v2/vpcs") == 0);
  CHECK(cloud.fake.vpcs().empty());
}
