// The fake DigitalOcean API server (sim): the published API's shapes and lifecycle, and
// each injected fault, seen through a plain HTTP client.
#include <catch2/catch.hpp>

#include <chrono>
#include <set>
#include <string>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "sim/fake_digitalocean.hpp"

using nlohmann::json;
using runara::sim::FakeDigitalOcean;
using runara::sim::FakeDoConfig;

namespace {

const char* kEd25519 =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA241RohHfhjVP6yrsXo8K+0MqiJb9ZqGLqzp59xwyPI fake@test";
const char* kEd25519Md5 = "df:93:55:51:7b:be:2a:62:cc:15:9f:b9:cb:24:d7:1a";
const char* kRsa =
    "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC4jOegt6YiNdsVdapG05ECUMFalK5RiFMLhVXsIDraAbdONjJEtZtLkfyl"
    "Xj39jzSuQPqWymkt4VI7+6uoONdSIG+Q2YfjsDMXOo10sx4crxWbH5XgVFgnVnq55TkZnKI7QTchbnOjGwYzv6N1pQGWFdk+"
    "kdoEAtSs/clMBnuv7arh5nn1z8AWiPHP3H7XLcGbrIs7OZHvwOMjyEdTzipqOsU6Xcsb4lZN5pgra8DanBtqTgE6Vy5tC7q9"
    "U0EcLEGZIwTa6ZlOimQMqjfZmuUXiDr/RJaIAHPheD//zw3s7/51jfMwcR6AZEAxKaIuM6Anmm6MpbS7iuzLsdvvWArf rsa@test";
const char* kRsaMd5 = "ae:eb:03:6a:5f:bc:aa:47:97:73:69:ce:9c:b4:69:24";

FakeDoConfig fast() {
  FakeDoConfig c;
  c.active_after_s = 0.05;
  c.delete_after_s = 0.05;
  return c;
}

// A client as a real one would talk to the API: bearer token, JSON bodies.
struct Api {
  explicit Api(const FakeDigitalOcean& fake, const std::string& token = "test-token")
      : base(fake.base_url()), cli(base) {
    cli.set_connection_timeout(2, 0);
    cli.set_read_timeout(5, 0);
    if (!token.empty()) cli.set_default_headers({{"Authorization", "Bearer " + token}});
  }
  httplib::Result get(const std::string& path) { return cli.Get(path.c_str()); }
  httplib::Result post(const std::string& path, const json& body) {
    return cli.Post(path.c_str(), body.dump(), "application/json");
  }
  httplib::Result del(const std::string& path) { return cli.Delete(path.c_str()); }
  // Follows an absolute link the API handed out.
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

json droplet_request(const std::string& name, const std::string& size = "s-1vcpu-1gb",
                     const std::string& region = "nyc3", json tags = json::array()) {
  return {{"name", name}, {"region", region}, {"size", size}, {"image", "ubuntu-24-04-x64"}, {"tags", tags}};
}

std::int64_t create(Api& api, const json& request) {
  const auto r = api.post("/v2/droplets", request);
  REQUIRE(r);
  REQUIRE(r->status == 202);
  return body_of(r)["droplet"]["id"].get<std::int64_t>();
}

template <class F>
bool eventually(F condition, double timeout_s = 5.0) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return condition();
}

int status_of(Api& api, const std::string& path) {
  const auto r = api.get(path);
  return r ? r->status : -1;
}

std::string droplet_path(std::int64_t id) { return "/v2/droplets/" + std::to_string(id); }

}  // namespace

TEST_CASE("fake DO: create answers 202 new, then the Droplet becomes active with IPv4", "[fake_do]") {
  FakeDigitalOcean fake(fast());
  fake.start();
  Api api(fake);

  const auto r = api.post("/v2/droplets", droplet_request("bench-1", "s-2vcpu-4gb", "nyc3", {"runara", "run:abc"}));
  REQUIRE(r);
  CHECK(r->status == 202);
  const json created = body_of(r);
  const json& d = created["droplet"];
  CHECK(d["status"] == "new");
  CHECK(d["name"] == "bench-1");
  CHECK(d["networks"]["v4"].empty());
  CHECK(d["networks"]["v6"].empty());
  CHECK(d["size_slug"] == "s-2vcpu-4gb");
  CHECK(d["size"]["price_hourly"].get<double>() > 0);
  CHECK(d["memory"] == 4096);
  CHECK(d["vcpus"] == 2);
  CHECK(d["region"]["slug"] == "nyc3");
  CHECK(d["image"]["slug"] == "ubuntu-24-04-x64");
  CHECK(d["tags"] == json({"runara", "run:abc"}));
  CHECK(d["created_at"].get<std::string>().size() == 20);
  CHECK(d["locked"] == false);
  CHECK_FALSE(d.contains("gpu_info"));
  const json& link = created["links"]["actions"][0];
  CHECK(link["rel"] == "create");
  CHECK(link["href"] == fake.base_url() + "/v2/actions/" + std::to_string(link["id"].get<std::int64_t>()));
  CHECK(fake.creates() == 1);
  CHECK(fake.live_droplets() == 1);

  const std::string path = droplet_path(d["id"].get<std::int64_t>());
  REQUIRE(eventually([&] { return body_of(api.get(path))["droplet"]["status"] == "active"; }));
  const json active = body_of(api.get(path))["droplet"];
  std::set<std::string> kinds;
  for (const auto& n : active["networks"]["v4"]) {
    kinds.insert(n["type"].get<std::string>());
    CHECK_FALSE(n["ip_address"].get<std::string>().empty());
  }
  CHECK(kinds == std::set<std::string>{"private", "public"});

  const json action = body_of(api.get("/v2/actions/" + std::to_string(link["id"].get<std::int64_t>())))["action"];
  CHECK(action["status"] == "completed");
  CHECK(action["type"] == "create");
  CHECK(action["resource_id"] == d["id"]);
  const json actions = body_of(api.get(path + "/actions"));
  CHECK(actions["meta"]["total"] == 1);
  CHECK(actions["actions"][0]["id"] == link["id"]);
}

TEST_CASE("fake DO: create validates names, sizes, regions, images and tags with 422", "[fake_do]") {
  FakeDigitalOcean fake(fast());
  fake.start();
  Api api(fake);

  auto expect_422 = [&](const json& request, const std::string& fragment) {
    const auto r = api.post("/v2/droplets", request);
    REQUIRE(r);
    CHECK(r->status == 422);
    const json b = body_of(r);
    CHECK(b["id"] == "unprocessable_entity");
    CHECK(b["message"].get<std::string>().find(fragment) != std::string::npos);
    CHECK_FALSE(b["request_id"].get<std::string>().empty());
  };
  expect_422(droplet_request("bad_name"), "hostname characters");
  expect_422(droplet_request("trailing-"), "hostname characters");
  expect_422(droplet_request("ok", "s-99vcpu"), "invalid size");
  expect_422(droplet_request("ok", "s-1vcpu-1gb", "mars1"), "invalid region");
  expect_422(droplet_request("ok", "gpu-h100x1-80gb", "nyc3"), "not available in this region");
  expect_422(droplet_request("ok", "s-1vcpu-1gb", "nyc3", {"bad tag"}), "invalid characters");
  json no_image = droplet_request("ok");
  no_image.erase("image");
  expect_422(no_image, "invalid image");
  json eleven = droplet_request("x");
  eleven.erase("name");
  eleven["names"] = json::array();
  for (int i = 0; i < 11; ++i) eleven["names"].push_back("n" + std::to_string(i));
  expect_422(eleven, "10");
  CHECK(fake.creates() == 0);

  const auto bad_json = api.cli.Post("/v2/droplets", "{not json", "application/json");
  REQUIRE(bad_json);
  CHECK(bad_json->status == 400);
  CHECK(body_of(bad_json)["id"] == "bad_request");

  // A region prefix picks a datacenter; multiple names create several Droplets at once.
  json multi = droplet_request("x", "s-1vcpu-1gb", "nyc");
  multi.erase("name");
  multi["names"] = {"sub-01.example.com", "sub-02.example.com"};
  const auto r = api.post("/v2/droplets", multi);
  REQUIRE(r);
  CHECK(r->status == 202);
  const json b = body_of(r);
  REQUIRE(b["droplets"].size() == 2);
  CHECK(b["droplets"][0]["region"]["slug"].get<std::string>().rfind("nyc", 0) == 0);
  CHECK(b["links"]["actions"].size() == 2);
  CHECK(fake.creates() == 2);
}

TEST_CASE("fake DO: GPU Droplets are left out of the plain list and shown with type=gpus", "[fake_do]") {
  FakeDigitalOcean fake(fast());
  fake.start();
  Api api(fake);
  create(api, droplet_request("cpu-1", "s-1vcpu-1gb", "nyc3", {"runara"}));
  const auto gpu_id = create(api, droplet_request("gpu-1", "gpu-mi300x1-192gb", "atl1", {"runara"}));

  const json plain = body_of(api.get("/v2/droplets"));
  CHECK(plain["meta"]["total"] == 1);
  CHECK(plain["droplets"][0]["name"] == "cpu-1");
  CHECK(body_of(api.get("/v2/droplets?type=droplets"))["meta"]["total"] == 1);

  const json gpus = body_of(api.get("/v2/droplets?type=gpus"));
  REQUIRE(gpus["meta"]["total"] == 1);
  const json& g = gpus["droplets"][0];
  CHECK(g["id"] == gpu_id);
  CHECK(g["gpu_info"]["model"] == "amd_mi300x");
  CHECK(g["gpu_info"]["count"] == 1);
  CHECK(g["size"]["price_hourly"].get<double>() == Approx(1.99));
  CHECK(fake.live_droplets() == 2);
  CHECK(fake.droplets().size() == 2);

  // A tag filter does not widen the default: the GPU Droplet stays out.
  CHECK(body_of(api.get("/v2/droplets?tag_name=runara"))["meta"]["total"] == 1);
  // tag_name can not be combined with type or name.
  for (const char* q : {"/v2/droplets?tag_name=runara&type=gpus", "/v2/droplets?tag_name=runara&name=cpu-1"}) {
    const auto r = api.get(q);
    REQUIRE(r);
    CHECK(r->status == 422);
    CHECK(body_of(r)["id"] == "unprocessable_entity");
  }
  // name filters exactly, case-insensitively.
  CHECK(body_of(api.get("/v2/droplets?name=CPU-1"))["meta"]["total"] == 1);
  CHECK(body_of(api.get("/v2/droplets?name=cpu"))["meta"]["total"] == 0);
  CHECK(body_of(api.get("/v2/droplets?type=gpus&name=gpu-1"))["meta"]["total"] == 1);
}

TEST_CASE("fake DO: tag_name filters the list", "[fake_do]") {
  FakeDigitalOcean fake(fast());
  fake.start();
  Api api(fake);
  create(api, droplet_request("a", "s-1vcpu-1gb", "nyc3", {"t1"}));
  create(api, droplet_request("b", "s-1vcpu-1gb", "nyc3", {"t2"}));
  create(api, droplet_request("c", "s-1vcpu-1gb", "nyc3", {"t1", "t2"}));
  const json t1 = body_of(api.get("/v2/droplets?tag_name=t1"));
  CHECK(t1["meta"]["total"] == 2);
  CHECK(t1["droplets"][0]["name"] == "a");
  CHECK(t1["droplets"][1]["name"] == "c");
  CHECK(body_of(api.get("/v2/droplets?tag_name=t2"))["meta"]["total"] == 2);
  CHECK(body_of(api.get("/v2/droplets?tag_name=none"))["meta"]["total"] == 0);
}

TEST_CASE("fake DO: pagination across 3 pages by following absolute next links", "[fake_do]") {
  FakeDoConfig cfg = fast();
  cfg.per_page_default = 3;
  FakeDigitalOcean fake(cfg);
  fake.start();
  Api api(fake);
  json multi = droplet_request("x", "s-1vcpu-1gb", "nyc3", {"page"});
  multi.erase("name");
  multi["names"] = json::array();
  for (int i = 1; i <= 7; ++i) multi["names"].push_back("p" + std::to_string(i));
  REQUIRE(api.post("/v2/droplets", multi)->status == 202);

  std::set<std::string> names;
  int pages = 0;
  json page = body_of(api.get("/v2/droplets?tag_name=page"));
  CHECK(page["links"]["pages"]["last"].get<std::string>().find("page=3") != std::string::npos);
  CHECK_FALSE(page["links"]["pages"].contains("prev"));
  while (true) {
    ++pages;
    CHECK(page["meta"]["total"] == 7);
    for (const auto& d : page["droplets"]) names.insert(d["name"].get<std::string>());
    if (!page["links"].contains("pages") || !page["links"]["pages"].contains("next")) break;
    const std::string next = page["links"]["pages"]["next"].get<std::string>();
    CHECK(next.find("tag_name=page") != std::string::npos);
    page = body_of(api.follow(next));
    REQUIRE(pages < 10);
  }
  CHECK(pages == 3);
  CHECK(names.size() == 7);
  CHECK(page["droplets"].size() == 1);
  CHECK(page["links"]["pages"]["first"].get<std::string>().rfind(fake.base_url() + "/v2/droplets?page=1", 0) == 0);
  CHECK(page["links"]["pages"]["prev"].get<std::string>().find("page=2") != std::string::npos);

  // per_page overrides the default; a single page carries no page links.
  CHECK(body_of(api.get("/v2/droplets?per_page=5"))["droplets"].size() == 5);
  const json all = body_of(api.get("/v2/droplets?per_page=200"));
  CHECK(all["droplets"].size() == 7);
  CHECK_FALSE(all["links"].contains("pages"));
  CHECK(body_of(api.get("/v2/droplets?page=9"))["droplets"].empty());
}

TEST_CASE("fake DO: DELETE answers 204, GET still answers until delete_after_s, then 404", "[fake_do]") {
  FakeDigitalOcean fake(fast());
  fake.start();
  Api api(fake);
  const auto id = create(api, droplet_request("doomed"));
  REQUIRE(eventually([&] { return body_of(api.get(droplet_path(id)))["droplet"]["status"] == "active"; }));

  const auto del = api.del(droplet_path(id));
  REQUIRE(del);
  CHECK(del->status == 204);
  CHECK(del->body.empty());
  CHECK(fake.live_droplets() == 0);
  CHECK(fake.existing_droplets() <= 1);
  // Deleting again while the destroy is pending is refused.
  const auto again = api.del(droplet_path(id));
  REQUIRE(again);
  CHECK((again->status == 422 || again->status == 404));

  REQUIRE(eventually([&] { return status_of(api, droplet_path(id)) == 404; }));
  CHECK(fake.existing_droplets() == 0);
  const json nf = body_of(api.get(droplet_path(id)));
  CHECK(nf["id"] == "not_found");
  CHECK(nf["message"] == "The resource you were accessing could not be found.");
  CHECK(api.del(droplet_path(id))->status == 404);
  CHECK(api.del("/v2/droplets/999")->status == 404);
  CHECK(fake.requests("DELETE /v2/droplets") == 4);
  CHECK(fake.requests("DELETE /v2/droplets/999") == 1);
}

TEST_CASE("fake DO: the Droplet is still GETtable ('off', locked) while its delete is pending", "[fake_do]") {
  FakeDoConfig cfg = fast();
  cfg.delete_after_s = 0.5;
  FakeDigitalOcean fake(cfg);
  fake.start();
  Api api(fake);
  const auto id = create(api, droplet_request("pending"));
  REQUIRE(api.del(droplet_path(id))->status == 204);
  const auto r = api.get(droplet_path(id));
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(body_of(r)["droplet"]["status"] == "off");
  CHECK(body_of(r)["droplet"]["locked"] == true);
  CHECK(fake.live_droplets() == 0);
  CHECK(fake.existing_droplets() == 1);
  const auto again = api.del(droplet_path(id));
  REQUIRE(again);
  CHECK(again->status == 422);
  CHECK(body_of(again)["message"] == "Droplet already has a pending event.");
}

TEST_CASE("fake DO: DELETE by tag removes tagged non-GPU Droplets only", "[fake_do]") {
  FakeDigitalOcean fake(fast());
  fake.start();
  Api api(fake);
  create(api, droplet_request("c1", "s-1vcpu-1gb", "nyc3", {"sweep"}));
  create(api, droplet_request("c2", "s-1vcpu-1gb", "nyc3", {"sweep"}));
  const auto gpu = create(api, droplet_request("g1", "gpu-h100x1-80gb", "tor1", {"sweep"}));
  create(api, droplet_request("k1", "s-1vcpu-1gb", "nyc3", {"keep"}));

  const auto r = api.del("/v2/droplets?tag_name=sweep");
  REQUIRE(r);
  CHECK(r->status == 204);
  CHECK(fake.live_droplets() == 2);
  REQUIRE(eventually([&] { return fake.existing_droplets() == 2; }));
  CHECK(status_of(api, droplet_path(gpu)) == 200);
  CHECK(body_of(api.get("/v2/droplets?type=gpus"))["meta"]["total"] == 1);
  CHECK(api.del("/v2/droplets?tag_name=never-used")->status == 404);
  CHECK(api.del("/v2/droplets")->status == 422);
}

TEST_CASE("fake DO: 401 without the bearer token", "[fake_do]") {
  FakeDigitalOcean fake(fast());
  fake.start();
  for (const std::string token : {"", "wrong-token"}) {
    Api api(fake, token);
    const auto r = api.get("/v2/account");
    REQUIRE(r);
    CHECK(r->status == 401);
    const json b = body_of(r);
    CHECK(b["id"] == "Unauthorized");
    CHECK(b["message"] == "Unable to authenticate you");
    CHECK(r->has_header("ratelimit-limit"));
    CHECK(api.post("/v2/droplets", droplet_request("x"))->status == 401);
  }
  CHECK(fake.creates() == 0);
  Api good(fake);
  CHECK(good.get("/v2/account")->status == 200);
}

TEST_CASE("fake DO: fail_next injects 429 (with or without retry-after) and 5xx", "[fake_do]") {
  FakeDigitalOcean fake(fast());
  fake.start();
  Api api(fake);

  fake.fail_next(1, 429, 7);
  auto r = api.get("/v2/account");
  REQUIRE(r);
  CHECK(r->status == 429);
  CHECK(r->get_header_value("retry-after") == "7");
  CHECK(r->get_header_value("ratelimit-remaining") == "0");
  CHECK(body_of(r)["id"] == "too_many_requests");
  CHECK(body_of(r)["message"] == "API Rate limit exceeded.");

  fake.fail_next(1, 429);
  r = api.post("/v2/droplets", droplet_request("x"));
  REQUIRE(r);
  CHECK(r->status == 429);
  CHECK_FALSE(r->has_header("retry-after"));
  CHECK(fake.creates() == 0);

  fake.fail_next(2, 503);
  CHECK(api.get("/v2/account")->status == 503);
  r = api.get("/v2/account");
  CHECK(r->status == 503);
  CHECK(r->get_header_value("Content-Type").find("text/html") != std::string::npos);
  CHECK(api.get("/v2/account")->status == 200);

  fake.fail_next(1, 500);
  r = api.get("/v2/sizes");
  REQUIRE(r);
  CHECK(r->status == 500);
  CHECK(body_of(r)["id"] == "server_error");
  fake.fail_next(1, 502);
  CHECK(api.get("/v2/sizes")->status == 502);
  CHECK(api.get("/v2/sizes")->status == 200);
}

TEST_CASE("fake DO: drop_next_create_response creates the Droplet but never answers", "[fake_do]") {
  FakeDigitalOcean fake(fast());
  fake.start();
  Api api(fake);
  fake.drop_next_create_response();
  const auto r = api.post("/v2/droplets", droplet_request("lost", "s-1vcpu-1gb", "nyc3", {"runara"}));
  CHECK_FALSE(r);
  CHECK(fake.creates() == 1);
  CHECK(fake.live_droplets() == 1);
  // The client can still find it (by tag) and clean it up.
  const json found = body_of(api.get("/v2/droplets?tag_name=runara"));
  REQUIRE(found["meta"]["total"] == 1);
  CHECK(found["droplets"][0]["name"] == "lost");
  // Only the next create is dropped.
  create(api, droplet_request("fine"));
  CHECK(fake.creates() == 2);
  CHECK(fake.requests("POST /v2/droplets") == 2);
}

TEST_CASE("fake DO: vanish_next_create: the Droplet stays new, then is gone", "[fake_do]") {
  FakeDigitalOcean fake(fast());
  fake.start();
  Api api(fake);
  fake.vanish_next_create(0.15);
  const auto r = api.post("/v2/droplets", droplet_request("gpu-x", "gpu-h100x8-640gb", "nyc2"));
  REQUIRE(r);
  REQUIRE(r->status == 202);
  const json created = body_of(r);
  const auto id = created["droplet"]["id"].get<std::int64_t>();
  const auto action = created["links"]["actions"][0]["id"].get<std::int64_t>();
  std::this_thread::sleep_for(std::chrono::milliseconds(80));  // past active_after_s
  const auto still = api.get(droplet_path(id));
  if (still->status == 200) CHECK(body_of(still)["droplet"]["status"] == "new");
  REQUIRE(eventually([&] { return status_of(api, droplet_path(id)) == 404; }));
  CHECK(fake.live_droplets() == 0);
  CHECK(fake.creates() == 1);
  CHECK(body_of(api.get("/v2/actions/" + std::to_string(action)))["action"]["status"] == "errored");
  // The next one behaves.
  const auto ok = create(api, droplet_request("gpu-y", "gpu-h100x8-640gb", "nyc2"));
  REQUIRE(eventually([&] { return body_of(api.get(droplet_path(ok)))["droplet"]["status"] == "active"; }));
}

TEST_CASE("fake DO: latency holds back every response, after the request took effect", "[fake_do]") {
  FakeDoConfig cfg = fast();
  cfg.latency_s = 0.15;
  FakeDigitalOcean fake(cfg);
  fake.start();
  Api api(fake);
  auto t0 = std::chrono::steady_clock::now();
  REQUIRE(api.get("/v2/account")->status == 200);
  CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(150));

  fake.set_latency(1.0);
  Api impatient(fake);
  impatient.cli.set_read_timeout(0, 150000);
  CHECK_FALSE(impatient.post("/v2/droplets", droplet_request("slow")));
  CHECK(fake.creates() == 1);  // the client timed out, the Droplet exists anyway

  fake.set_latency(0);
  t0 = std::chrono::steady_clock::now();
  REQUIRE(api.get("/v2/account")->status == 200);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(900));
}

TEST_CASE("fake DO: set_unreachable refuses connections until reachable again", "[fake_do]") {
  FakeDigitalOcean fake(fast());
  const int port = fake.start();
  CHECK(port > 0);
  CHECK(fake.base_url() == "http://127.0.0.1:" + std::to_string(port));
  {
    Api api(fake);
    REQUIRE(api.get("/v2/account")->status == 200);
    fake.set_unreachable(true);
    CHECK_FALSE(api.get("/v2/account"));  // the kept-alive connection is gone too
  }
  {
    Api api(fake);
    CHECK_FALSE(api.get("/v2/account"));
    CHECK_FALSE(api.post("/v2/droplets", droplet_request("x")));
  }
  CHECK(fake.creates() == 0);
  fake.set_unreachable(false);
  CHECK(fake.port() == port);
  Api api(fake);
  CHECK(api.get("/v2/account")->status == 200);
}

TEST_CASE("fake DO: rate-limit headers on every response, and the limits themselves", "[fake_do]") {
  SECTION("headers") {
    FakeDigitalOcean fake(fast());
    fake.start();
    Api api(fake);
    const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch()).count();
    int previous = 5000;
    for (const char* path : {"/v2/account", "/v2/sizes", "/v2/droplets/123"}) {
      const auto r = api.get(path);
      REQUIRE(r);
      CHECK(r->get_header_value("ratelimit-limit") == "5000");
      const int remaining = std::stoi(r->get_header_value("ratelimit-remaining"));
      CHECK(remaining == previous - 1);
      previous = remaining;
      const long long reset = std::stoll(r->get_header_value("ratelimit-reset"));
      CHECK(reset >= now + 3590);
      CHECK(reset <= now + 3610);
      CHECK_FALSE(r->get_header_value("x-request-id").empty());
    }
    CHECK(api.del("/v2/droplets/123")->has_header("ratelimit-remaining"));
  }
  SECTION("burst limit answers 429 with retry-after") {
    FakeDoConfig cfg = fast();
    cfg.rate_limit_per_minute = 3;
    FakeDigitalOcean fake(cfg);
    fake.start();
    Api api(fake);
    for (int i = 0; i < 3; ++i) REQUIRE(api.get("/v2/account")->status == 200);
    const auto r = api.get("/v2/account");
    REQUIRE(r);
    CHECK(r->status == 429);
    CHECK(body_of(r)["id"] == "too_many_requests");
    const int retry = std::stoi(r->get_header_value("retry-after"));
    CHECK(retry >= 1);
    CHECK(retry <= 60);
    CHECK(r->get_header_value("ratelimit-remaining") == "0");
  }
  SECTION("GET /v2/account/keys: 10 per minute") {
    FakeDigitalOcean fake(fast());
    fake.start();
    Api api(fake);
    for (int i = 0; i < 10; ++i) REQUIRE(api.get("/v2/account/keys")->status == 200);
    CHECK(api.get("/v2/account/keys")->status == 429);
    CHECK(api.get("/v2/account")->status == 200);
  }
}

TEST_CASE("fake DO: sizes catalogue carries GPU sizes with gpu_info and prices", "[fake_do]") {
  FakeDigitalOcean fake(fast());
  fake.start();
  Api api(fake);
  const json sizes = body_of(api.get("/v2/sizes?per_page=200"));
  auto find = [&](const std::string& slug) {
    for (const auto& s : sizes["sizes"])
      if (s["slug"] == slug) return s;
    FAIL("no size " << slug);
    return json();
  };
  const json mi300 = find("gpu-mi300x1-192gb");
  CHECK(mi300["price_hourly"].get<double>() == Approx(1.99));
  CHECK(mi300["gpu_info"]["count"] == 1);
  CHECK(mi300["gpu_info"]["vram"] == json({{"amount", 192}, {"unit", "gib"}}));
  CHECK(mi300["available"] == true);
  CHECK_FALSE(mi300["regions"].empty());
  CHECK(find("gpu-h100x1-80gb")["price_hourly"].get<double>() == Approx(3.39));
  CHECK(find("gpu-h100x8-640gb")["gpu_info"]["count"] == 8);
  CHECK(find("gpu-mi300x8-1536gb")["gpu_info"]["model"] == "amd_mi300x");
  const json basic = find("s-1vcpu-1gb");
  CHECK_FALSE(basic.contains("gpu_info"));
  find("s-2vcpu-4gb");
  CHECK(sizes["meta"]["total"] == sizes["sizes"].size());
  // Paginated like every collection.
  const json one = body_of(api.get("/v2/sizes?per_page=1"));
  CHECK(one["sizes"].size() == 1);
  CHECK(one["links"]["pages"]["next"] == fake.base_url() + "/v2/sizes?page=2&per_page=1");
}

TEST_CASE("fake DO: account, SSH keys and tags", "[fake_do]") {
  FakeDigitalOcean fake(fast());
  fake.start();
  Api api(fake);

  const json account = body_of(api.get("/v2/account"))["account"];
  CHECK(account["droplet_limit"] == 25);
  CHECK(account["status"] == "active");
  CHECK(account["email_verified"] == true);

  auto r = api.post("/v2/account/keys", {{"name", "runara"}, {"public_key", kEd25519}});
  REQUIRE(r);
  CHECK(r->status == 201);
  const json key = body_of(r)["ssh_key"];
  CHECK(key["fingerprint"] == kEd25519Md5);
  r = api.post("/v2/account/keys", {{"name", "rsa"}, {"public_key", kRsa}});
  REQUIRE(r->status == 201);
  CHECK(body_of(r)["ssh_key"]["fingerprint"] == kRsaMd5);
  CHECK(api.post("/v2/account/keys", {{"name", "again"}, {"public_key", kEd25519}})->status == 422);
  CHECK(api.post("/v2/account/keys", {{"name", "bad"}, {"public_key", "ssh-foo AAAA"}})->status == 422);
  CHECK(body_of(api.get("/v2/account/keys"))["meta"]["total"] == 2);
  CHECK(body_of(api.get(std::string("/v2/account/keys/") + kEd25519Md5))["ssh_key"]["id"] == key["id"]);

  json request = droplet_request("keyed");
  request["ssh_keys"] = {key["id"], kRsaMd5};
  CHECK(api.post("/v2/droplets", request)->status == 202);
  request["ssh_keys"] = {12345};
  r = api.post("/v2/droplets", request);
  CHECK(r->status == 422);
  CHECK(body_of(r)["message"] == "12345 are invalid key identifiers for Droplet creation.");

  const std::string key_path = "/v2/account/keys/" + key["id"].dump();
  CHECK(api.del(key_path)->status == 204);
  CHECK(api.get(key_path)->status == 404);

  r = api.post("/v2/tags", {{"name", "runara-run"}});
  REQUIRE(r);
  CHECK(r->status == 201);
  CHECK(body_of(r)["tag"]["name"] == "runara-run");
  create(api, droplet_request("tagged", "s-1vcpu-1gb", "nyc3", {"runara-run"}));
  const json tag = body_of(api.get("/v2/tags/runara-run"))["tag"];
  CHECK(tag["resources"]["droplets"]["count"] == 1);
  CHECK(tag["resources"]["count"] == 1);
  r = api.post("/v2/tags", {{"name", "no spaces"}});
  CHECK(r->status == 400);
  CHECK(body_of(r).contains("root_causes"));
  CHECK(body_of(api.get("/v2/tags"))["meta"]["total"] == 1);
  CHECK(api.del("/v2/tags/runara-run")->status == 204);
  CHECK(body_of(api.get("/v2/droplets"))["droplets"][1]["tags"].empty());
}

TEST_CASE("fake DO: droplet_limit and reject_delete_while_new", "[fake_do]") {
  SECTION("creates beyond the account's droplet limit answer 422") {
    FakeDoConfig cfg = fast();
    cfg.droplet_limit = 2;
    FakeDigitalOcean fake(cfg);
    fake.start();
    Api api(fake);
    const auto a = create(api, droplet_request("a"));
    create(api, droplet_request("b"));
    const auto r = api.post("/v2/droplets", droplet_request("c"));
    REQUIRE(r);
    CHECK(r->status == 422);
    CHECK(body_of(r)["message"] == "creating this/these droplet(s) will exceed your droplet limit");
    REQUIRE(api.del(droplet_path(a))->status == 204);
    create(api, droplet_request("c"));
  }
  SECTION("DELETE of a Droplet still new can be refused") {
    FakeDoConfig cfg = fast();
    cfg.active_after_s = 0.5;
    cfg.reject_delete_while_new = true;
    FakeDigitalOcean fake(cfg);
    fake.start();
    Api api(fake);
    const auto id = create(api, droplet_request("young", "s-1vcpu-1gb", "nyc3", {"young"}));
    auto r = api.del(droplet_path(id));
    REQUIRE(r);
    CHECK(r->status == 422);
    CHECK(body_of(r)["message"] == "Droplet already has a pending event.");
    CHECK(api.del("/v2/droplets?tag_name=young")->status == 204);
    CHECK(fake.live_droplets() == 1);
    REQUIRE(eventually([&] { return api.del(droplet_path(id))->status == 204; }));
    CHECK(fake.live_droplets() == 0);
  }
}

TEST_CASE("fake DO: unknown routes answer 404 JSON; stop and restart", "[fake_do]") {
  FakeDigitalOcean fake(fast());
  fake.start();
  {
    Api api(fake);
    const auto r = api.get("/v2/volumes");
    REQUIRE(r);
    CHECK(r->status == 404);
    CHECK(body_of(r)["id"] == "not_found");
    CHECK(api.get("/v2/droplets/not-a-number")->status == 404);
  }
  CHECK_THROWS(fake.start());
  fake.stop();
  fake.stop();
  {
    Api api(fake);
    CHECK_FALSE(api.get("/v2/account"));
  }
}

// A hostile client: a body nested 100,000 levels deep (an ssh_keys entry used to be dump()ed
// recursively: SIGSEGV). The fake answers 400 with a clear message and stays up.
TEST_CASE("fake DO: a deeply nested request body gets 400 and the server stays up", "[fake_do]") {
  FakeDigitalOcean fake(fast());
  fake.start();
  Api api(fake);
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string body = "{\"name\": \"a\", \"region\": \"nyc3\", \"size\": \"s-1vcpu-1gb\", "
                           "\"image\": \"ubuntu-24-04-x64\", \"ssh_keys\": [" + deep + "]}";
  auto r = api.cli.Post("/v2/droplets", body, "application/json");
  REQUIRE(r);
  CHECK(r->status == 400);
  CHECK(body_of(r)["message"].get<std::string>().find("nested deeper than 64 levels") != std::string::npos);
  CHECK(status_of(api, "/v2/account") == 200);
}

TEST_CASE("fake DO: GET /v2/account has the spec's required fields and the configured uuid", "[fake_do]") {
  FakeDoConfig c = fast();
  c.account_uuid = "0123456789abcdef0123456789abcdef01234567";
  FakeDigitalOcean fake(c);
  fake.start();
  Api api(fake);
  const auto r = api.get("/v2/account");
  REQUIRE(r);
  CHECK(r->status == 200);
  const json account = body_of(r)["account"];
  // account.yml: required droplet_limit, floating_ip_limit, email, uuid, email_verified, status, status_message.
  for (const char* field :
       {"droplet_limit", "floating_ip_limit", "email", "uuid", "email_verified", "status", "status_message"}) {
    CHECK(account.contains(field));
  }
  CHECK(account["uuid"] == "0123456789abcdef0123456789abcdef01234567");
  CHECK(FakeDoConfig{}.account_uuid == "b6fr89dbf6d9156cace5f3c78dc9851d957381ef");  // the spec's example
}
