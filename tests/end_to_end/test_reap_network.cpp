// `runara ls` and `runara reap` with the private-network kinds: an earlier run that died with its
// guardian left a droplet in its VPC and its firewall; `ls --json` lists the VPC and the firewall
// as kinds of their own, `reap` deletes them after the droplet (droplet, firewall, VPC), and a
// ledger row whose id now names someone else's VPC is reported, never deleted.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "child_process.hpp"
#include "cloud/ledger.hpp"
#include "sim/fake_digitalocean.hpp"
#include "test_text.hpp"

using runara::test::ChildResult;
using runara::test::contains;

namespace {

constexpr const char* kToken = "reap-net-token-8c21";

// A POST straight to the API, as an earlier run (or the account's owner) made it.
nlohmann::json post(const runara::sim::FakeDigitalOcean& fake, const std::string& path, const nlohmann::json& body,
                    const std::string& key) {
  httplib::Client cli(fake.base_url());
  cli.set_default_headers({{"Authorization", std::string("Bearer ") + kToken}});
  auto res = cli.Post(path.c_str(), body.dump(), "application/json");
  REQUIRE(res);
  INFO(res->body);
  REQUIRE(res->status / 100 == 2);
  return nlohmann::json::parse(res->body)[key];
}

runara::LedgerResource row(const std::string& run, const std::string& kind, const std::string& name,
                           const std::string& api, const std::string& id) {
  runara::LedgerResource r;
  r.kind = kind;
  r.name = name;
  r.run_id = run;
  r.api_base = api;
  r.remote_id = id;
  return r;
}

long position(const std::vector<std::string>& log, const std::string& prefix) {
  for (std::size_t i = 0; i < log.size(); ++i) {
    if (log[i].rfind(prefix, 0) == 0) return static_cast<long>(i);
  }
  return -1;
}

}  // namespace

TEST_CASE("runara ls --json lists VPCs and firewalls; reap deletes them after the droplets", "[reap][reap_network]") {
  runara::sim::FakeDoConfig config;
  config.token = kToken;
  config.active_after_s = 0.1;
  config.delete_after_s = 0.3;
  config.enforce_rate_limits = false;
  runara::sim::FakeDigitalOcean fake(config);
  fake.start();
  const std::string api = fake.base_url();
  const std::string run = "deadbeef", tag = "runara:run-deadbeef";

  const auto vpc = post(fake, "/v2/vpcs", {{"name", "runara-deadbeef-vpc"}, {"region", "nyc3"}}, "vpc");
  const auto droplet = post(fake, "/v2/droplets",
                            {{"name", "runara-deadbeef-1"}, {"size", "s-1vcpu-1gb"}, {"image", "ubuntu-22-04-x64"},
                             {"region", "nyc3"}, {"vpc_uuid", vpc["id"]}, {"tags", {"runara", tag}}},
                            "droplet");
  const auto fw = post(fake, "/v2/firewalls",
                       {{"name", "runara-deadbeef-fw"},
                        {"inbound_rules", {{{"protocol", "tcp"}, {"ports", "22"}, {"sources", {{"addresses", {"203.0.113.7"}}}}}}},
                        {"tags", {tag}}},
                       "firewall");
  const auto users = post(fake, "/v2/vpcs", {{"name", "users-own-vpc"}, {"region", "nyc3"}}, "vpc");

  const std::string state_dir = runara::test::temp_dir("reap-net") + "/state";
  {
    runara::Ledger ledger(state_dir);
    for (const std::string& r : {run, std::string("cafebabe")}) {
      runara::RunRecord record;
      record.run_id = r;
      record.pid = 999999999;  // no such process: the run is not alive
      ledger.begin_run(record);
    }
    ledger.record_intent({run, "runara-deadbeef-1", tag, api, "", 0.00893, "s-1vcpu-1gb", "nyc3"});
    ledger.record_id("runara-deadbeef-1", droplet["id"].get<std::int64_t>());
    for (const auto& r : {row(run, "vpc", "runara-deadbeef-vpc", api, vpc["id"]),
                          row(run, "firewall", "runara-deadbeef-fw", api, fw["id"]),
                          // A row whose id names the user's own VPC (a copied ledger, a reused id).
                          row("cafebabe", "vpc", "runara-cafebabe-vpc", api, users["id"])}) {
      ledger.record_resource_intent(r);
      ledger.record_resource_id(r.kind, r.name, *r.remote_id);
    }
  }
  auto runara_cli = [&](const std::vector<std::string>& args) {
    return runara::test::run_runara(args, 60,
                                    {{"RUNARA_DO_API_URL", api},
                                     {"DIGITALOCEAN_TOKEN", kToken},
                                     {"DIGITALOCEAN_ACCESS_TOKEN", ""},
                                     {"XDG_CONFIG_HOME", "/nonexistent"},
                                     {"RUNARA_STATE_DIR", state_dir},
                                     {"RUNARA_POLL_S", "0.1"}});
  };

  const ChildResult ls = runara_cli({"ls", "--json"});
  INFO("ls: " << ls.out << ls.err);
  CHECK(ls.exit_code == 0);
  const auto listed = nlohmann::json::parse(ls.out);
  std::map<std::string, nlohmann::json> by_kind;
  for (const auto& r : listed["resources"]) {
    if (r["run_id"] == run) by_kind[r["kind"].get<std::string>()] = r;
  }
  REQUIRE(by_kind.count("vpc"));
  REQUIRE(by_kind.count("firewall"));
  REQUIRE(by_kind.count("droplet"));
  CHECK(by_kind["vpc"]["id"] == vpc["id"]);
  CHECK(by_kind["vpc"]["name"] == "runara-deadbeef-vpc");
  CHECK(by_kind["vpc"]["checked"] == true);
  CHECK(by_kind["firewall"]["id"] == fw["id"]);
  CHECK(by_kind["firewall"]["runara_tagged"] == true);
  bool foreign_shown = false;
  for (const auto& r : listed["resources"]) {
    if (r["run_id"] == "cafebabe") foreign_shown = r["runara_tagged"] == false && r["kind"] == "vpc";
  }
  CHECK(foreign_shown);

  const ChildResult table = runara_cli({"ls"});
  CHECK(contains(table.out, "runara-deadbeef-vpc"));
  CHECK(contains(table.out, "runara-deadbeef-fw"));

  const ChildResult reap = runara_cli({"reap", "--yes"});
  INFO("reap: " << reap.out << reap.err);
  CHECK(contains(reap.out, "NOT TOUCHED vpc " + users["id"].get<std::string>()));
  CHECK(reap.exit_code == 1);  // something was left alone on purpose
  CHECK(fake.existing_droplets() == 0);
  CHECK(fake.firewalls().empty());
  int runs_vpcs = 0, users_vpcs = 0;
  for (const auto& v : fake.vpcs()) {
    runs_vpcs += v["name"] == "runara-deadbeef-vpc";
    users_vpcs += v["name"] == "users-own-vpc";
  }
  CHECK(runs_vpcs == 0);
  CHECK(users_vpcs == 1);  // never deleted
  const auto log = fake.request_log();
  const long droplet_delete = position(log, "DELETE /v2/droplets/"), fw_delete = position(log, "DELETE /v2/firewalls/");
  const long vpc_delete = position(log, "DELETE /v2/vpcs/");
  CHECK(droplet_delete >= 0);
  CHECK(fw_delete > droplet_delete);
  CHECK(vpc_delete > fw_delete);
  CHECK(position(log, "DELETE /v2/vpcs/" + users["id"].get<std::string>()) == -1);

  // The ledger agrees: nothing of the run is pending any more.
  runara::Ledger ledger(state_dir);
  CHECK(ledger.pending_resources(run).empty());
  CHECK(ledger.pending(run).empty());
}
