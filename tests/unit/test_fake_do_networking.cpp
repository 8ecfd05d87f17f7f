// The fake DigitalOcean API's VPCs and firewalls (sim), seen through a plain HTTP client: the
// published spec's shapes (field names read from the spec's own models, copied into
// tests/fixtures/digitalocean-openapi), the refusals the real API gives (a VPC with members, a
// default VPC), validation, pagination, and lost answers / injected failures on the new endpoints.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "test_paths.hpp"
#include "eventually.hpp"
#include "sim/fake_digitalocean.hpp"

using nlohmann::json;
using runara::sim::FakeDigitalOcean;
using runara::sim::FakeDoConfig;
using runara::test::eventually;

namespace {

FakeDoConfig fast() {
  FakeDoConfig c;
  c.active_after_s = 0.05;
  c.delete_after_s = 0.3;
  c.firewall_apply_s = 0.2;
  return c;
}

struct Api {
  explicit Api(const FakeDigitalOcean& fake) : base(fake.base_url()), cli(base) {
    cli.set_connection_timeout(2, 0);
    cli.set_read_timeout(5, 0);
    cli.set_default_headers({{"Authorization", "Bearer test-token"}});
  }
  httplib::Result get(const std::string& p) { return cli.Get(p.c_str()); }
  httplib::Result post(const std::string& p, const json& b) { return cli.Post(p.c_str(), b.dump(), "application/json"); }
  httplib::Result put(const std::string& p, const json& b) { return cli.Put(p.c_str(), b.dump(), "application/json"); }
  httplib::Result patch(const std::string& p, const json& b) {
    return cli.Patch(p.c_str(), b.dump(), "application/json");
  }
  httplib::Result del(const std::string& p) { return cli.Delete(p.c_str()); }
  httplib::Result del(const std::string& p, const json& b) {
    return cli.Delete(p.c_str(), b.dump(), "application/json");
  }
  httplib::Result follow(const std::string& url) {
    REQUIRE(url.rfind(base, 0) == 0);
    return get(url.substr(base.size()));
  }
  std::string base;
  httplib::Client cli;
};

json body_of(const httplib::Result& r) {
  REQUIRE(r);
  return json::parse(r->body);
}

// The error shape of shared/models/error.yml, with the id and a fragment of the message.
void check_error(const httplib::Result& r, int status, const std::string& id, const std::string& fragment) {
  REQUIRE(r);
  CHECK(r->status == status);
  const json b = json::parse(r->body);
  CHECK(b["id"] == id);
  INFO(b.dump());
  CHECK(b["message"].get<std::string>().find(fragment) != std::string::npos);
  CHECK(b["request_id"].is_string());
}

// The property names a spec model declares at `indent` spaces (the keys under its `properties:`).
std::set<std::string> spec_properties(const std::string& model, int indent) {
  const std::string path = std::string(RUNARA_SOURCE_DIR) + "/tests/fixtures/digitalocean-openapi/specification/" + model;
  std::ifstream in(path);
  REQUIRE(in);
  const std::regex key("^" + std::string(static_cast<std::size_t>(indent), ' ') + "([a-z_]+):\\s*$");
  std::set<std::string> out;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, key)) out.insert(m[1]);
  }
  return out;
}

std::set<std::string> keys_of(const json& object) {
  std::set<std::string> out;
  for (const auto& [k, v] : object.items()) out.insert(k);
  return out;
}

json droplet_request(const std::string& name, const std::string& region = "nyc3") {
  return {{"name", name}, {"region", region}, {"size", "s-1vcpu-1gb"}, {"image", "ubuntu-24-04-x64"}};
}

json vpc_request(const std::string& name, const std::string& region = "nyc3", const std::string& range = "") {
  json b = {{"name", name}, {"region", region}};
  if (!range.empty()) b["ip_range"] = range;
  return b;
}

json firewall_request(const std::string& name, json droplet_ids = json::array()) {
  return {{"name", name},
          {"inbound_rules",
           {{{"protocol", "tcp"}, {"ports", "22"}, {"sources", {{"addresses", {"198.51.100.7"}}}}},
            {{"protocol", "tcp"}, {"ports", "8000-9000"}, {"sources", {{"droplet_ids", droplet_ids}}}}}},
          {"outbound_rules",
           {{{"protocol", "tcp"}, {"ports", "0"}, {"destinations", {{"addresses", {"0.0.0.0/0", "::/0"}}}}}}},
          {"droplet_ids", droplet_ids}};
}

std::uint32_t ipv4(const std::string& text) {
  unsigned a, b, c, d;
  REQUIRE(std::sscanf(text.c_str(), "%u.%u.%u.%u", &a, &b, &c, &d) == 4);
  return (a << 24) | (b << 16) | (c << 8) | d;
}

json private_network(const json& droplet) {
  for (const auto& n : droplet["networks"]["v4"])
    if (n["type"] == "private") return n;
  return json();
}

std::int64_t create_droplet(Api& api, const json& request) {
  const auto r = api.post("/v2/droplets", request);
  REQUIRE(r);
  REQUIRE(r->status == 202);
  return body_of(r)["droplet"]["id"].get<std::int64_t>();
}

std::string create_vpc(Api& api, const json& request) {
  const auto r = api.post("/v2/vpcs", request);
  REQUIRE(r);
  INFO(r->body);
  REQUIRE(r->status == 201);
  return body_of(r)["vpc"]["id"].get<std::string>();
}

json active_droplet(Api& api, std::int64_t id) {
  const std::string path = "/v2/droplets/" + std::to_string(id);
  REQUIRE(eventually([&] { return body_of(api.get(path))["droplet"]["status"] == "active"; }, 5));
  return body_of(api.get(path))["droplet"];
}

}  // namespace

TEST_CASE("fake DO VPCs: every field the spec's vpc model names, and only those; each region's default",
          "[fake_do][fake_do_net]") {
  FakeDigitalOcean fake(fast());
  fake.start();
  Api api(fake);
  const std::set<std::string> spec = spec_properties("resources/vpcs/models/vpc.yml", 4);
  REQUIRE(spec == std::set<std::string>{"id", "urn", "created_at", "name", "description", "region", "ip_range",
                                        "default"});

  const json list = body_of(api.get("/v2/vpcs?per_page=200"));
  REQUIRE(list["meta"]["total"] == 13);
  CHECK(list["links"] == json::object());
  std::set<std::string> regions;
  for (const auto& v : list["vpcs"]) {
    CHECK(keys_of(v) == spec);
    CHECK(v["default"] == true);
    CHECK(v["name"] == "default-" + v["region"].get<std::string>());
    CHECK(v["urn"] == "do:vpc:" + v["id"].get<std::string>());
    CHECK(v["description"] == "");
    CHECK(v["ip_range"].get<std::string>().rfind("10.116.", 0) == 0);
    CHECK(v["created_at"].get<std::string>().size() == 20);
    regions.insert(v["region"].get<std::string>());
  }
  CHECK(regions.size() == 13);

  const std::string id = create_vpc(api, {{"name", "run-abc.vpc"}, {"region", "nyc3"}, {"description", "runara run abc"}});
  const json v = body_of(api.get("/v2/vpcs/" + id))["vpc"];
  CHECK(keys_of(v) == spec);
  CHECK(v["name"] == "run-abc.vpc");
  CHECK(v["description"] == "runara run abc");
  CHECK(v["region"] == "nyc3");
  CHECK(v["default"] == false);  // nyc3 already has its default
  CHECK(v["id"].get<std::string>().size() == 36);
  CHECK(v["ip_range"].get<std::string>().substr(v["ip_range"].get<std::string>().size() - 3) == "/20");

  // Members: the spec's vpc_member model.
  const std::set<std::string> member_spec = spec_properties("resources/vpcs/models/vpc_member.yml", 2);
  CHECK(member_spec == std::set<std::string>{"name", "urn", "created_at"});
  create_droplet(api, [&] {
    json d = droplet_request("member-1");
    d["vpc_uuid"] = id;
    return d;
  }());
  const json members = body_of(api.get("/v2/vpcs/" + id + "/members"));
  REQUIRE(members["members"].size() == 1);
  CHECK(keys_of(members["members"][0]) == member_spec);
  CHECK(members["meta"]["total"] == 1);
}

TEST_CASE("fake DO VPCs: create, get, update (PUT and PATCH), paginate, delete", "[fake_do][fake_do_net]") {
  FakeDigitalOcean fake(fast());
  fake.start();
  Api api(fake);
  std::set<std::string> made;
  for (int i = 0; i < 4; ++i) made.insert(create_vpc(api, vpc_request("v" + std::to_string(i), "ams3")));
  const std::string id = *made.begin();

  // Generated ranges never overlap each other or the defaults.
  std::set<std::string> ranges;
  for (const auto& v : fake.vpcs()) ranges.insert(v["ip_range"].get<std::string>());
  CHECK(ranges.size() == 17);

  // Pagination as for Droplets: 17 VPCs, 5 a page, followed through absolute next links.
  std::set<std::string> seen;
  int pages = 0;
  json page = body_of(api.get("/v2/vpcs?per_page=5"));
  CHECK(page["meta"]["total"] == 17);
  while (true) {
    ++pages;
    for (const auto& v : page["vpcs"]) seen.insert(v["id"].get<std::string>());
    if (!page["links"].contains("pages") || !page["links"]["pages"].contains("next")) break;
    page = body_of(api.follow(page["links"]["pages"]["next"].get<std::string>()));
  }
  CHECK(pages == 4);
  CHECK(seen.size() == 17);
  for (const auto& m : made) CHECK(seen.count(m) == 1);

  // PATCH changes what it names; PUT needs a name.
  auto r = api.patch("/v2/vpcs/" + id, {{"description", "patched"}});
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(body_of(r)["vpc"]["description"] == "patched");
  check_error(api.put("/v2/vpcs/" + id, {{"description", "no name"}}), 422, "unprocessable_entity", "Name");
  r = api.put("/v2/vpcs/" + id, {{"name", "renamed"}});
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(body_of(r)["vpc"]["name"] == "renamed");
  CHECK(body_of(r)["vpc"]["description"] == "patched");
  check_error(api.patch("/v2/vpcs/" + id, {{"name", "default-ams3"}}), 422, "unprocessable_entity", "already exists");

  r = api.del("/v2/vpcs/" + id);
  REQUIRE(r);
  CHECK(r->status == 204);
  CHECK(r->body.empty());
  check_error(api.get("/v2/vpcs/" + id), 404, "not_found", "could not be found");
  check_error(api.del("/v2/vpcs/" + id), 404, "not_found", "could not be found");
  check_error(api.get("/v2/vpcs/" + id + "/members"), 404, "not_found", "could not be found");
  CHECK(fake.vpcs().size() == 16);
}

TEST_CASE("fake DO VPCs: validation answers the API's errors and creates nothing", "[fake_do][fake_do_net]") {
  FakeDigitalOcean fake(fast());
  fake.start();
  Api api(fake);
  check_error(api.post("/v2/vpcs", vpc_request("bad_name")), 422, "unprocessable_entity", "alphanumeric");
  check_error(api.post("/v2/vpcs", {{"region", "nyc3"}}), 422, "unprocessable_entity", "Name can't be blank");
  check_error(api.post("/v2/vpcs", {{"name", "x"}}), 422, "unprocessable_entity", "Region");
  check_error(api.post("/v2/vpcs", vpc_request("x", "mars1")), 422, "unprocessable_entity", "invalid region");
  check_error(api.post("/v2/vpcs", vpc_request("x", "nyc3", "8.8.8.0/24")), 422, "unprocessable_entity", "RFC1918");
  check_error(api.post("/v2/vpcs", vpc_request("x", "nyc3", "10.0.0.0/8")), 422, "unprocessable_entity", "/16");
  check_error(api.post("/v2/vpcs", vpc_request("x", "nyc3", "10.0.0.0/29")), 422, "unprocessable_entity", "/28");
  check_error(api.post("/v2/vpcs", vpc_request("x", "nyc3", "10.0.0.5/24")), 422, "unprocessable_entity", "CIDR");
  check_error(api.post("/v2/vpcs", vpc_request("x", "nyc3", "10.0.0/24")), 422, "unprocessable_entity", "CIDR");
  check_error(api.post("/v2/vpcs", vpc_request("x", "nyc3", "10.116.0.0/24")), 422, "unprocessable_entity",
              "This range/size overlaps with another VPC network in your account: default-nyc1 10.116.0.0/20.");
  check_error(api.post("/v2/vpcs", vpc_request("default-nyc3")), 422, "unprocessable_entity", "already exists");
  check_error(api.post("/v2/vpcs", {{"name", "x"}, {"region", "nyc3"}, {"description", std::string(256, 'd')}}), 422,
              "unprocessable_entity", "255");
  const auto bad_json = api.cli.Post("/v2/vpcs", "{nope", "application/json");
  check_error(bad_json, 400, "bad_request", "error parsing request body");
  CHECK(fake.vpcs().size() == 13);

  // The edges that are allowed: /16 and /28 inside RFC 1918, names with dots and dashes.
  create_vpc(api, vpc_request("a.b-c", "nyc3", "172.16.0.0/16"));
  create_vpc(api, vpc_request("small", "nyc3", "192.168.7.16/28"));
  CHECK(fake.vpcs().size() == 15);
}

TEST_CASE("fake DO VPCs: a Droplet created into a VPC gets a private address in its range and is a member "
          "until it is gone; the delete is refused meanwhile",
          "[fake_do][fake_do_net]") {
  FakeDigitalOcean fake(fast());
  fake.start();
  Api api(fake);
  const std::string vpc = create_vpc(api, vpc_request("run-vpc", "nyc3", "10.20.0.0/24"));
  json request = droplet_request("in-vpc");
  request["vpc_uuid"] = vpc;
  const auto id = create_droplet(api, request);
  request["name"] = "in-vpc-2";
  request.erase("region");  // no region: the VPC's
  const auto id2 = create_droplet(api, request);

  const json d = active_droplet(api, id);
  CHECK(d["vpc_uuid"] == vpc);
  const json net = private_network(d);
  REQUIRE(net.is_object());
  const auto address = ipv4(net["ip_address"].get<std::string>());
  CHECK(address >= ipv4("10.20.0.2"));
  CHECK(address < ipv4("10.20.0.255"));
  CHECK(net["netmask"] == "255.255.255.0");
  const json d2 = active_droplet(api, id2);
  CHECK(d2["region"]["slug"] == "nyc3");
  CHECK(private_network(d2)["ip_address"] != net["ip_address"]);
  CHECK(ipv4(private_network(d2)["ip_address"].get<std::string>()) >> 8 == ipv4("10.20.0.0") >> 8);

  json members = body_of(api.get("/v2/vpcs/" + vpc + "/members"));
  REQUIRE(members["meta"]["total"] == 2);
  CHECK(members["members"][0]["urn"] == "do:droplet:" + std::to_string(id));
  CHECK(members["members"][0]["name"] == "in-vpc");
  CHECK(body_of(api.get("/v2/vpcs/" + vpc + "/members?resource_type=droplet"))["meta"]["total"] == 2);
  CHECK(body_of(api.get("/v2/vpcs/" + vpc + "/members?resource_type=load_balancer"))["meta"]["total"] == 0);
  const json one = body_of(api.get("/v2/vpcs/" + vpc + "/members?per_page=1"));
  CHECK(one["members"].size() == 1);
  CHECK(one["links"]["pages"]["next"].get<std::string>().find("/v2/vpcs/" + vpc + "/members?page=2") !=
        std::string::npos);

  // What the real API answers (not the spec's 403): 409 conflict.
  check_error(api.del("/v2/vpcs/" + vpc), 409, "conflict", "Can not delete VPC with members");
  REQUIRE(api.del("/v2/droplets/" + std::to_string(id))->status == 204);
  REQUIRE(api.del("/v2/droplets/" + std::to_string(id2))->status == 204);
  // The Droplets' deletes are still pending: still members, still refused.
  check_error(api.del("/v2/vpcs/" + vpc), 409, "conflict", "Can not delete VPC with members");
  CHECK(eventually([&] { return body_of(api.get("/v2/vpcs/" + vpc + "/members"))["meta"]["total"] == 0; }, 5));
  const auto r = api.del("/v2/vpcs/" + vpc);
  REQUIRE(r);
  CHECK(r->status == 204);
  CHECK(fake.vpcs().size() == 13);
}

TEST_CASE("fake DO VPCs: a /28 holds 13 Droplets (.2 to .14); the next create is refused whole",
          "[fake_do][fake_do_net]") {
  FakeDigitalOcean fake(fast());
  fake.start();
  Api api(fake);
  const std::string vpc = create_vpc(api, vpc_request("tiny", "nyc3", "10.30.0.16/28"));
  auto many = [&](int first, int count) {
    json b = droplet_request("x");
    b.erase("name");
    b["vpc_uuid"] = vpc;
    b["names"] = json::array();
    for (int i = 0; i < count; ++i) b["names"].push_back("t" + std::to_string(first + i));
    return api.post("/v2/droplets", b);
  };
  REQUIRE(many(0, 10)->status == 202);
  REQUIRE(many(10, 3)->status == 202);
  check_error(many(13, 1), 422, "unprocessable_entity", "no free IP address");
  std::set<std::string> ips;
  for (const auto& d : fake.droplets()) {
    REQUIRE(eventually([&] { return private_network(body_of(api.get("/v2/droplets/" + d["id"].dump()))["droplet"]).is_object(); }, 5));
    ips.insert(private_network(body_of(api.get("/v2/droplets/" + d["id"].dump()))["droplet"])["ip_address"].get<std::string>());
  }
  CHECK(ips.size() == 13);
  CHECK(ips.count("10.30.0.18") == 1);
  CHECK(ips.count("10.30.0.30") == 1);
  CHECK(ips.count("10.30.0.31") == 0);  // broadcast
  CHECK(fake.creates() == 13);
}

TEST_CASE("fake DO VPCs: without vpc_uuid a Droplet joins its region's default VPC, which cannot be deleted",
          "[fake_do][fake_do_net]") {
  FakeDigitalOcean fake(fast());
  fake.start();
  Api api(fake);
  const json d = active_droplet(api, create_droplet(api, droplet_request("plain", "sfo3")));
  const std::string vpc = d["vpc_uuid"].get<std::string>();
  const json v = body_of(api.get("/v2/vpcs/" + vpc))["vpc"];
  CHECK(v["default"] == true);
  CHECK(v["region"] == "sfo3");
  const std::string range = v["ip_range"].get<std::string>();
  const std::string ip = private_network(d)["ip_address"].get<std::string>();
  CHECK(ip.rfind("10.116.", 0) == 0);
  CHECK(ipv4(ip) >> 12 == ipv4(range.substr(0, range.find('/'))) >> 12);  // inside the /20
  CHECK(private_network(d)["netmask"] == "255.255.240.0");
  CHECK(body_of(api.get("/v2/vpcs/" + vpc + "/members"))["meta"]["total"] == 1);
  check_error(api.del("/v2/vpcs/" + vpc), 403, "forbidden", "Can not delete default VPCs");

  // An unknown VPC, and one in another region than the Droplet's.
  json unknown = droplet_request("x");
  unknown["vpc_uuid"] = "5a4981aa-9653-4bd1-bef5-d6bff52042e4";
  check_error(api.post("/v2/droplets", unknown), 404, "not_found", "could not be found");
  json elsewhere = droplet_request("x", "ams3");
  elsewhere["vpc_uuid"] = vpc;
  check_error(api.post("/v2/droplets", elsewhere), 422, "unprocessable_entity", "sfo3");
  CHECK(fake.creates() == 1);
}

TEST_CASE("fake DO VPCs: in an account without defaults the first VPC of a region becomes its default",
          "[fake_do][fake_do_net]") {
  FakeDoConfig cfg = fast();
  cfg.default_vpcs = false;
  FakeDigitalOcean fake(cfg);
  fake.start();
  Api api(fake);
  CHECK(body_of(api.get("/v2/vpcs"))["meta"]["total"] == 0);
  const std::string first = create_vpc(api, vpc_request("first", "nyc3"));
  CHECK(body_of(api.get("/v2/vpcs/" + first))["vpc"]["default"] == true);
  check_error(api.del("/v2/vpcs/" + first), 403, "forbidden", "Can not delete default VPCs");
  const std::string second = create_vpc(api, vpc_request("second", "nyc3"));
  CHECK(body_of(api.get("/v2/vpcs/" + second))["vpc"]["default"] == false);

  // Making another VPC the default is how the first becomes deletable; unsetting is refused.
  auto r = api.patch("/v2/vpcs/" + second, {{"default", true}});
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(body_of(api.get("/v2/vpcs/" + first))["vpc"]["default"] == false);
  check_error(api.patch("/v2/vpcs/" + second, {{"default", false}}), 403, "forbidden", "Can not unset default VPCs");
  CHECK(api.del("/v2/vpcs/" + first)->status == 204);

  // A Droplet in a region without a VPC makes the region's default.
  const json d = body_of(api.post("/v2/droplets", droplet_request("d", "fra1")))["droplet"];
  const json v = body_of(api.get("/v2/vpcs/" + d["vpc_uuid"].get<std::string>()))["vpc"];
  CHECK(v["name"] == "default-fra1");
  CHECK(v["default"] == true);
}

TEST_CASE("fake DO firewalls: the spec's fields, create/get/list/replace/delete, status waiting then succeeded",
          "[fake_do][fake_do_net]") {
  FakeDigitalOcean fake(fast());
  fake.start();
  Api api(fake);
  std::set<std::string> spec = spec_properties("resources/firewalls/models/firewall.yml", 6);
  spec.insert("inbound_rules");  // from firewall_rule.yml#/firewall_rules, which firewall.yml includes
  spec.insert("outbound_rules");
  CHECK(spec_properties("resources/firewalls/models/firewall_rule.yml", 4).count("inbound_rules") == 1);
  REQUIRE(spec == std::set<std::string>{"id", "status", "created_at", "pending_changes", "name", "droplet_ids", "tags",
                                        "inbound_rules", "outbound_rules"});

  const auto a = create_droplet(api, droplet_request("fw-a"));
  const auto b = create_droplet(api, droplet_request("fw-b"));
  REQUIRE(api.post("/v2/tags", {{"name", "run:abc"}})->status == 201);
  json request = firewall_request("run-abc", {a, b});
  request["tags"] = {"run:abc"};
  request["inbound_rules"].push_back({{"protocol", "icmp"}, {"sources", {{"tags", {"run:abc"}}}}});
  auto r = api.post("/v2/firewalls", request);
  REQUIRE(r);
  REQUIRE(r->status == 202);
  const json created = body_of(r)["firewall"];
  CHECK(keys_of(created) == spec);
  CHECK(created["status"] == "waiting");
  CHECK(created["droplet_ids"] == json({a, b}));
  CHECK(created["tags"] == json({"run:abc"}));
  REQUIRE(created["pending_changes"].size() == 2);
  CHECK(created["pending_changes"][0] == json({{"droplet_id", a}, {"removing", false}, {"status", "waiting"}}));
  CHECK(created["inbound_rules"][0] ==
        json({{"protocol", "tcp"}, {"ports", "22"}, {"sources", {{"addresses", {"198.51.100.7"}}}}}));
  CHECK(created["inbound_rules"][1]["sources"]["droplet_ids"] == json({a, b}));
  CHECK(created["inbound_rules"][2] == json({{"protocol", "icmp"}, {"ports", "0"}, {"sources", {{"tags", {"run:abc"}}}}}));
  CHECK(created["outbound_rules"][0]["destinations"]["addresses"] == json({"0.0.0.0/0", "::/0"}));
  const std::string id = created["id"].get<std::string>();
  const std::string path = "/v2/firewalls/" + id;

  REQUIRE(eventually([&] { return body_of(api.get(path))["firewall"]["status"] == "succeeded"; }, 5));
  CHECK(body_of(api.get(path))["firewall"]["pending_changes"] == json::array());
  const json list = body_of(api.get("/v2/firewalls"));
  CHECK(list["meta"]["total"] == 1);
  CHECK(list["firewalls"][0]["id"] == id);
  CHECK(keys_of(list["firewalls"][0]) == spec);

  // PUT replaces the whole firewall: what is left out is reset (tags), a Droplet taken off shows as removing.
  json replacement = firewall_request("run-abc-2", {a});
  r = api.put(path, replacement);
  REQUIRE(r);
  CHECK(r->status == 200);
  const json put = body_of(r)["firewall"];
  CHECK(put["name"] == "run-abc-2");
  CHECK(put["tags"] == json::array());
  CHECK(put["droplet_ids"] == json({a}));
  CHECK(put["status"] == "waiting");
  CHECK(put["pending_changes"].size() == 2);
  CHECK(put["pending_changes"][1] == json({{"droplet_id", b}, {"removing", true}, {"status", "waiting"}}));
  check_error(api.put(path, {{"inbound_rules", replacement["inbound_rules"]}}), 422, "unprocessable_entity", "Name");

  r = api.del(path);
  REQUIRE(r);
  CHECK(r->status == 204);
  check_error(api.get(path), 404, "not_found", "could not be found");
  check_error(api.del(path), 404, "not_found", "could not be found");
  CHECK(fake.firewalls().empty());
}

TEST_CASE("fake DO firewalls: Droplets, tags and rules added and removed", "[fake_do][fake_do_net]") {
  FakeDigitalOcean fake(fast());
  fake.start();
  Api api(fake);
  const auto a = create_droplet(api, droplet_request("a"));
  const auto b = create_droplet(api, droplet_request("b"));
  const json created = body_of(api.post("/v2/firewalls", firewall_request("fw")))["firewall"];
  const std::string path = "/v2/firewalls/" + created["id"].get<std::string>();
  auto firewall = [&] { return body_of(api.get(path))["firewall"]; };

  auto r = api.post(path + "/droplets", {{"droplet_ids", {a, b}}});
  REQUIRE(r);
  CHECK(r->status == 204);
  CHECK(firewall()["droplet_ids"] == json({a, b}));
  CHECK(firewall()["status"] == "waiting");
  REQUIRE(eventually([&] { return firewall()["status"] == "succeeded"; }, 5));
  CHECK(api.del(path + "/droplets", {{"droplet_ids", {a}}})->status == 204);
  CHECK(firewall()["droplet_ids"] == json({b}));
  CHECK(firewall()["pending_changes"][1]["removing"] == true);
  check_error(api.post(path + "/droplets", {{"droplet_ids", {123}}}), 422, "unprocessable_entity", "123");
  check_error(api.post(path + "/droplets", {{"ids", {a}}}), 400, "bad_request", "error parsing request body");

  check_error(api.post(path + "/tags", {{"tags", {"nope"}}}), 422, "unprocessable_entity", "nope");
  REQUIRE(api.post("/v2/tags", {{"name", "Frontend"}})->status == 201);
  CHECK(api.post(path + "/tags", {{"tags", {"frontend"}}})->status == 204);
  CHECK(firewall()["tags"] == json({"Frontend"}));  // the tag's own capitalisation
  CHECK(api.del(path + "/tags", {{"tags", {"Frontend"}}})->status == 204);
  CHECK(firewall()["tags"] == json::array());

  const json rule = {{"protocol", "udp"}, {"ports", "53"}, {"sources", {{"addresses", {"10.20.0.0/24"}}}}};
  CHECK(api.post(path + "/rules", {{"inbound_rules", {rule}}})->status == 204);
  CHECK(firewall()["inbound_rules"].size() == 3);
  CHECK(firewall()["inbound_rules"][2] == rule);
  CHECK(api.del(path + "/rules", {{"inbound_rules", {rule}}})->status == 204);
  CHECK(firewall()["inbound_rules"].size() == 2);
  check_error(api.post(path + "/rules", json::object()), 422, "unprocessable_entity", "at least one");
  check_error(api.post("/v2/firewalls/5a4981aa-9653-4bd1-bef5-d6bff52042e4/droplets", {{"droplet_ids", {a}}}), 404,
              "not_found", "could not be found");
}

TEST_CASE("fake DO firewalls: validation of names, rules, ports, addresses and references", "[fake_do][fake_do_net]") {
  FakeDigitalOcean fake(fast());
  fake.start();
  Api api(fake);
  const auto a = create_droplet(api, droplet_request("a"));
  auto with_rule = [](json rule) {
    return json{{"name", "fw"}, {"inbound_rules", {rule}}};
  };
  auto tcp = [](const std::string& ports, json sources) {
    return json{{"protocol", "tcp"}, {"ports", ports}, {"sources", sources}};
  };
  const json anywhere = {{"addresses", {"0.0.0.0/0"}}};

  check_error(api.post("/v2/firewalls", firewall_request("-bad")), 422, "unprocessable_entity", "alphanumeric");
  check_error(api.post("/v2/firewalls", firewall_request("x")), 422, "unprocessable_entity", "alphanumeric");
  check_error(api.post("/v2/firewalls", {{"name", "fw"}}), 422, "unprocessable_entity", "at least one");
  check_error(api.post("/v2/firewalls", with_rule({{"protocol", "sctp"}, {"ports", "1"}, {"sources", anywhere}})), 422,
              "unprocessable_entity", "protocol");
  for (const char* ports : {"all", "", "0-70000", "100-90", "65536", "01"})
    check_error(api.post("/v2/firewalls", with_rule(tcp(ports, anywhere))), 422, "unprocessable_entity",
                "you must specify a valid range for ports");
  check_error(api.post("/v2/firewalls", with_rule(tcp("22", json::array({anywhere})))), 422, "unprocessable_entity",
              "You specified an invalid type for one of the sources.");
  check_error(api.post("/v2/firewalls", {{"name", "fw"},
                                         {"outbound_rules", {{{"protocol", "tcp"}, {"ports", "1"}, {"destinations", "x"}}}}}),
              422, "unprocessable_entity", "one of the destinations.");
  for (const char* address : {"1.2.3", "1.2.3.4/33", "300.1.1.1", "::g", "example.com"})
    check_error(api.post("/v2/firewalls", with_rule(tcp("22", {{"addresses", {address}}}))), 422,
                "unprocessable_entity", "invalid address");
  check_error(api.post("/v2/firewalls", with_rule(tcp("22", {{"droplet_ids", {a + 1000}}}))), 422,
              "unprocessable_entity", std::to_string(a + 1000));
  check_error(api.post("/v2/firewalls", firewall_request("fw", {a, 7})), 422, "unprocessable_entity", "7");
  check_error(api.post("/v2/firewalls", with_rule(tcp("22", {{"tags", {"no-such-tag"}}}))), 422,
              "unprocessable_entity", "no-such-tag");
  check_error(api.post("/v2/firewalls", firewall_request("fw", {"a"})), 400, "bad_request", "error parsing request body");
  CHECK(fake.firewalls().empty());

  // Accepted: IPv6 and CIDRs, single ports, ranges, "0".
  auto r = api.post("/v2/firewalls", with_rule(tcp("1-65535", {{"addresses", {"2001:db8::/32", "::1", "10.0.0.0/8"}}})));
  REQUIRE(r);
  CHECK(r->status == 202);
  check_error(api.post("/v2/firewalls", with_rule(tcp("22", anywhere))), 409, "conflict", "duplicate name");
  CHECK(fake.firewalls().size() == 1);
}

TEST_CASE("fake DO VPCs and firewalls: a lost answer leaves the resource made; injected failures make nothing",
          "[fake_do][fake_do_net]") {
  FakeDigitalOcean fake(fast());
  fake.start();
  Api api(fake);

  // Lost answer on create: no response, yet the VPC exists and a retry with the same name is refused.
  fake.drop_next_response("POST /v2/vpcs");
  CHECK_FALSE(api.post("/v2/vpcs", vpc_request("run-lost")));
  const json vpcs = body_of(api.get("/v2/vpcs?per_page=200"));
  std::string lost_id;
  for (const auto& v : vpcs["vpcs"])
    if (v["name"] == "run-lost") lost_id = v["id"].get<std::string>();
  REQUIRE_FALSE(lost_id.empty());
  check_error(api.post("/v2/vpcs", vpc_request("run-lost")), 422, "unprocessable_entity", "already exists");

  // The same for a firewall.
  fake.drop_next_response("POST /v2/firewalls");
  CHECK_FALSE(api.post("/v2/firewalls", firewall_request("fw-lost")));
  REQUIRE(fake.firewalls().size() == 1);
  CHECK(body_of(api.get("/v2/firewalls"))["firewalls"][0]["name"] == "fw-lost");
  check_error(api.post("/v2/firewalls", firewall_request("fw-lost")), 409, "conflict", "duplicate name");

  // A lost answer on delete: the VPC is gone, and asking again says so.
  fake.drop_next_response("DELETE /v2/vpcs/*");
  CHECK_FALSE(api.del("/v2/vpcs/" + lost_id));
  check_error(api.get("/v2/vpcs/" + lost_id), 404, "not_found", "could not be found");
  check_error(api.del("/v2/vpcs/" + lost_id), 404, "not_found", "could not be found");

  // Only a successful request loses its answer: a refused one is answered, the drop waits.
  fake.drop_next_response("DELETE /v2/firewalls/*");
  check_error(api.del("/v2/firewalls/5a4981aa-9653-4bd1-bef5-d6bff52042e4"), 404, "not_found", "could not be found");
  const std::string fw = fake.firewalls()[0]["id"].get<std::string>();
  CHECK_FALSE(api.del("/v2/firewalls/" + fw));
  CHECK(fake.firewalls().empty());

  // Injected failures on one endpoint: the request has no effect; other requests pass meanwhile.
  fake.fail_next_matching("POST /v2/firewalls", 1, 500);
  CHECK(api.get("/v2/vpcs")->status == 200);
  check_error(api.post("/v2/firewalls", firewall_request("fw-500")), 500, "server_error", "Unexpected");
  CHECK(fake.firewalls().empty());
  CHECK(api.post("/v2/firewalls", firewall_request("fw-500"))->status == 202);
  fake.fail_next_matching("POST /v2/vpcs", 1, 429);
  const auto limited = api.post("/v2/vpcs", vpc_request("limited"));
  check_error(limited, 429, "too_many_requests", "API Rate limit exceeded.");
  CHECK(limited->get_header_value("ratelimit-remaining") == "0");
  fake.fail_next(1, 503);
  const auto gateway = api.get("/v2/vpcs");
  REQUIRE(gateway);
  CHECK(gateway->status == 503);
  CHECK(gateway->get_header_value("Content-Type") == "text/html");
  CHECK(fake.vpcs().size() == 13);
  CHECK(fake.requests("POST /v2/vpcs") == 3);
}
