// DoClient against cpp-httplib servers on 127.0.0.1 playing DigitalOcean.
#include <stdlib.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cloud/do_client.hpp"
#include "base/json_limits.hpp"
#include "loopback_fixtures.hpp"
#include "curl/http_client.hpp"

using nlohmann::json;
using runara::DoClient;
using runara::DoClientOptions;
using runara::DoResult;
using runara::HttpClient;
using namespace runara_test;

namespace {

constexpr const char* kToken = "dop_v1_T0PSECRET_feedface0123456789abcdef";

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

void send_error(httplib::Response& res, int status, const std::string& id,
                const std::string& message) {
  send_json(res, status, {{"id", id}, {"message", message}, {"request_id", "req-1"}});
}

json droplet(std::int64_t id, std::vector<std::string> tags) {
  return {{"id", id}, {"name", "d" + std::to_string(id)}, {"status", "active"}, {"tags", tags}};
}

struct DoFixture {
  LocalServer server;  // declared first: stopped last, after the client has hung up
  TestLoop loop;
  std::unique_ptr<HttpClient> http;
  std::unique_ptr<DoClient> client;
  std::vector<std::string> logs;

  DoFixture() { http = std::make_unique<HttpClient>(&loop.loop); }

  static DoClientOptions fast_options() {
    DoClientOptions o;
    o.retry.max_attempts = 4;
    o.retry.base_delay_s = 0.005;
    o.retry.max_delay_s = 0.02;
    o.retry.jitter = 0.2;
    o.retry.max_server_wait_s = 5;
    o.timeout_s = 5;
    o.seed = 42;
    return o;
  }

  // Starts the server (routes must be registered) and makes a client for it.
  void start(DoClientOptions o = fast_options()) {
    server.start();
    connect("http://127.0.0.1:" + std::to_string(server.port) + "/", std::move(o));
  }
  void connect(const std::string& base, DoClientOptions o = fast_options()) {
    o.log = [this](const std::string& line) { logs.push_back(line); };
    client = std::make_unique<DoClient>(*http, base, kToken, std::move(o));
  }

  template <typename Start>
  DoResult call(Start start) {
    std::optional<DoResult> out;
    start([&](DoResult r) { out = std::move(r); });
    // A guard against a hang, not a timing check: under the sanitizers, beside the scenario
    // tests, parsing the bounds test's pages of megabytes takes seconds each.
    REQUIRE(loop.run_until([&] { return out.has_value(); }, 60));
    return *out;
  }

  ~DoFixture() {
    server.release = true;
    client.reset();
    bool closed = false;
    http->close([&] { closed = true; });
    loop.run_until([&] { return closed; });
    http.reset();
    CHECK(loop.close() == 0);
  }
};

}  // namespace

TEST_CASE("DoClient creates, gets and deletes droplets", "[do_client]") {
  DoFixture f;
  json created_with;
  f.server.srv.Post("/v2/droplets", [&](const httplib::Request& req, httplib::Response& res) {
    created_with = json::parse(req.body);
    CHECK(req.get_header_value("Content-Type") == "application/json");
    send_json(res, 202, {{"droplet", {{"id", 3164444}, {"status", "new"}, {"networks", json::object()}}}});
  });
  f.server.srv.Get("/v2/droplets/3164444", [](const httplib::Request&, httplib::Response& res) {
    send_json(res, 200, {{"droplet", droplet(3164444, {"runara:run-1"})}});
  });
  f.server.srv.Delete("/v2/droplets/3164444", [](const httplib::Request&, httplib::Response& res) {
    res.status = 204;
  });
  f.server.srv.Delete("/v2/droplets/999", [](const httplib::Request&, httplib::Response& res) {
    send_error(res, 404, "not_found", "The resource you were accessing could not be found.");
  });
  f.server.srv.Get("/v2/droplets/999", [](const httplib::Request&, httplib::Response& res) {
    send_error(res, 404, "not_found", "The resource you were accessing could not be found.");
  });
  f.server.srv.Get("/v2/account", [](const httplib::Request&, httplib::Response& res) {
    send_json(res, 200, {{"account", {{"droplet_limit", 25}, {"status", "active"}}}});
  });
  f.start();
  CHECK(f.client->api_base() == "http://127.0.0.1:" + std::to_string(f.server.port));

  const json body = {{"name", "runara-1-a"}, {"region", "nyc3"}, {"size", "gpu-h100x1-80gb"},
                     {"tags", {"runara:run-1"}}};
  auto r = f.call([&](auto cb) { f.client->create_droplet(body, cb); });
  CHECK(r.ok);
  CHECK_FALSE(r.ambiguous);
  CHECK(r.status == 202);
  CHECK(r.body["droplet"]["id"] == 3164444);
  CHECK(r.body["droplet"]["status"] == "new");
  CHECK(created_with == body);
  CHECK(r.attempts == 1);

  r = f.call([&](auto cb) { f.client->get_droplet(3164444, cb); });
  CHECK(r.ok);
  CHECK(r.body["droplet"]["name"] == "d3164444");

  r = f.call([&](auto cb) { f.client->delete_droplet(3164444, cb); });
  CHECK(r.ok);
  CHECK(r.status == 204);
  CHECK(r.error.empty());
  CHECK(r.body == json::object());  // always an object, so body.value(...) is safe

  r = f.call([&](auto cb) { f.client->delete_droplet(999, cb); });  // already gone
  CHECK(r.ok);
  CHECK(r.status == 404);

  r = f.call([&](auto cb) { f.client->get_droplet(999, cb); });  // GET 404 is not success
  CHECK_FALSE(r.ok);
  CHECK(r.status == 404);
  CHECK(r.error_id == "not_found");

  r = f.call([&](auto cb) { f.client->get_account(cb); });
  CHECK(r.ok);
  CHECK(r.body["account"]["droplet_limit"] == 25);

  for (const auto& a : f.server.auth) CHECK(a == std::string("Bearer ") + kToken);
  CHECK(f.logs.empty());
  CHECK(f.client->pending() == 0);
}

TEST_CASE("DoClient surfaces DigitalOcean's error message", "[do_client]") {
  DoFixture f;
  f.server.srv.Post("/v2/droplets", [](const httplib::Request&, httplib::Response& res) {
    send_error(res, 422, "unprocessable_entity", "Name is invalid");
  });
  f.server.srv.Get("/v2/account", [](const httplib::Request&, httplib::Response& res) {
    res.status = 403;
    res.set_content("<html>forbidden</html>", "text/html");
  });
  f.server.srv.Get("/v2/droplets/5", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("not json", "text/plain");
  });
  f.start();
  auto r = f.call([&](auto cb) { f.client->create_droplet({{"name", "bad_name"}}, cb); });
  CHECK_FALSE(r.ok);
  CHECK_FALSE(r.ambiguous);
  CHECK(r.status == 422);
  CHECK(r.error_id == "unprocessable_entity");
  CHECK(r.error == "DigitalOcean API: 422 unprocessable_entity: Name is invalid");

  r = f.call([&](auto cb) { f.client->get_account(cb); });
  CHECK_FALSE(r.ok);
  CHECK(r.error == "DigitalOcean API: 403: <html>forbidden</html>");
  CHECK(r.attempts == 1);  // 4xx other than 429 is not retried

  r = f.call([&](auto cb) { f.client->get_droplet(5, cb); });
  CHECK_FALSE(r.ok);
  CHECK(r.status == 200);
  CHECK(r.error.find("not a JSON object") != std::string::npos);
}

TEST_CASE("DoClient never retries a create", "[do_client]") {
  DoFixture f;
  std::atomic<int> posts{0};
  std::atomic<int> mode{0};
  f.server.srv.Post("/v2/droplets", [&](const httplib::Request&, httplib::Response& res) {
    ++posts;
    switch (mode.load()) {
      case 0: send_error(res, 503, "service_unavailable", "try later"); break;
      case 1: f.server.slow(3); send_json(res, 202, {{"droplet", {{"id", 1}}}}); break;
      case 2: send_error(res, 429, "too_many_requests", "slow down"); break;
      default: send_json(res, 202, {{"droplet", {{"status", "new"}}}}); break;
    }
  });
  auto o = DoFixture::fast_options();
  o.timeout_s = 0.1;
  f.start(o);

  SECTION("5xx is ambiguous") {
    auto r = f.call([&](auto cb) { f.client->create_droplet({{"name", "a"}}, cb); });
    CHECK_FALSE(r.ok);
    CHECK(r.ambiguous);
    CHECK(r.status == 503);
    CHECK(r.error.find("503 service_unavailable: try later") != std::string::npos);
    CHECK(posts == 1);
  }
  SECTION("a timeout after sending is ambiguous") {
    mode = 1;
    auto r = f.call([&](auto cb) { f.client->create_droplet({{"name", "a"}}, cb); });
    CHECK_FALSE(r.ok);
    CHECK(r.ambiguous);
    CHECK(r.status == 0);
    CHECK(posts == 1);
  }
  SECTION("429 is a definite refusal, still not retried") {
    mode = 2;
    auto r = f.call([&](auto cb) { f.client->create_droplet({{"name", "a"}}, cb); });
    CHECK_FALSE(r.ok);
    CHECK_FALSE(r.ambiguous);
    CHECK(r.status == 429);
    CHECK(posts == 1);
  }
  SECTION("2xx without a droplet id is ambiguous") {
    mode = 3;
    auto r = f.call([&](auto cb) { f.client->create_droplet({{"name", "a"}}, cb); });
    CHECK_FALSE(r.ok);
    CHECK(r.ambiguous);
    CHECK(posts == 1);
  }
  SECTION("a connection dropped after sending is ambiguous") {
    DroppingServer drop;
    f.connect(drop.url(""));
    auto r = f.call([&](auto cb) { f.client->create_droplet({{"name", "a"}}, cb); });
    CHECK_FALSE(r.ok);
    CHECK(r.ambiguous);
    CHECK(drop.accepted == 1);
  }
  SECTION("a refused connection is a definite failure") {
    f.connect("http://127.0.0.1:" + std::to_string(runara::test::unused_loopback_port()));
    auto r = f.call([&](auto cb) { f.client->create_droplet({{"name", "a"}}, cb); });
    CHECK_FALSE(r.ok);
    CHECK_FALSE(r.ambiguous);
  }
  CHECK(f.logs.empty());  // nothing was retried
}

TEST_CASE("DoClient honours retry-after on 429", "[do_client]") {
  DoFixture f;
  std::atomic<int> hits{0};
  f.server.srv.Get("/v2/droplets/123", [&](const httplib::Request&, httplib::Response& res) {
    if (hits++ == 0) {
      res.set_header("retry-after", "1");
      res.set_header("ratelimit-limit", "250");
      res.set_header("ratelimit-remaining", "3");
      return send_error(res, 429, "too_many_requests", "API rate limit exceeded");
    }
    send_json(res, 200, {{"droplet", droplet(123, {})}});
  });
  f.start();
  const auto t0 = Clock::now();
  auto r = f.call([&](auto cb) { f.client->get_droplet(123, cb); });
  const double elapsed = seconds_since(t0);
  CHECK(r.ok);
  CHECK(r.attempts == 2);
  CHECK(elapsed >= 0.95);
  CHECK(elapsed < 2.5);
  REQUIRE(f.logs.size() == 1);
  CHECK(f.logs[0] == "retrying GET /v2/droplets/123 in 1.0 s (429)");
}

TEST_CASE("DoClient waits for ratelimit-reset, capped", "[do_client]") {
  DoFixture f;
  std::atomic<int> hits{0};
  f.server.srv.Delete("/v2/droplets/77", [&](const httplib::Request&, httplib::Response& res) {
    if (hits++ == 0) {
      res.set_header("ratelimit-remaining", "0");
      res.set_header("ratelimit-reset", std::to_string(time(nullptr) + 600));
      return send_error(res, 429, "too_many_requests", "API rate limit exceeded");
    }
    res.status = 204;
  });
  auto o = DoFixture::fast_options();
  o.retry.max_server_wait_s = 0.2;  // the reset is 10 minutes away: the cap decides
  f.start(o);
  const auto t0 = Clock::now();
  auto r = f.call([&](auto cb) { f.client->delete_droplet(77, cb); });
  const double elapsed = seconds_since(t0);
  CHECK(r.ok);
  CHECK(elapsed >= 0.19);
  CHECK(elapsed < 2);
  REQUIRE(f.logs.size() == 1);
  CHECK(f.logs[0] == "retrying DELETE /v2/droplets/77 in 0.2 s (429)");
}

TEST_CASE("DoClient retries a 5xx burst with backoff", "[do_client]") {
  DoFixture f;
  std::atomic<int> hits{0};
  f.server.srv.Get("/v2/droplets/5", [&](const httplib::Request&, httplib::Response& res) {
    if (hits++ < 3) return send_error(res, hits == 1 ? 500 : 503, "server_error", "oops");
    send_json(res, 200, {{"droplet", droplet(5, {})}});
  });
  std::atomic<int> del_hits{0};
  f.server.srv.Delete("/v2/droplets/6", [&](const httplib::Request&, httplib::Response& res) {
    if (del_hits++ == 0) return send_error(res, 502, "bad_gateway", "upstream");
    send_error(res, 404, "not_found", "gone");  // the first DELETE did land
  });
  f.server.srv.Get("/v2/droplets/7", [](const httplib::Request&, httplib::Response& res) {
    send_error(res, 500, "server_error", "always");
  });
  f.start();

  auto r = f.call([&](auto cb) { f.client->get_droplet(5, cb); });
  CHECK(r.ok);
  CHECK(r.attempts == 4);
  CHECK(hits == 4);
  REQUIRE(f.logs.size() == 3);
  CHECK(f.logs[0].rfind("retrying GET /v2/droplets/5 in 0.0", 0) == 0);  // e.g. "0.01 s"
  CHECK(f.logs[0].find("s (500)") != std::string::npos);
  CHECK(f.logs[1].find("s (503)") != std::string::npos);

  r = f.call([&](auto cb) { f.client->delete_droplet(6, cb); });
  CHECK(r.ok);
  CHECK(r.status == 404);
  CHECK(r.attempts == 2);

  r = f.call([&](auto cb) { f.client->get_droplet(7, cb); });
  CHECK_FALSE(r.ok);
  CHECK(r.status == 500);
  CHECK(r.attempts == 4);  // max_attempts
  CHECK(r.error.find("DigitalOcean API: 500 server_error: always") == 0);
}

TEST_CASE("DoClient retries GET on connection errors", "[do_client]") {
  DoFixture f;
  DroppingServer drop;
  f.connect(drop.url(""));
  auto r = f.call([&](auto cb) { f.client->get_account(cb); });
  CHECK_FALSE(r.ok);
  CHECK(r.attempts == 4);
  CHECK(drop.accepted == 4);
  CHECK(f.logs.size() == 3);
  CHECK(r.body.value("droplets", json::array()) == json::array());
  CHECK(r.error.find("DigitalOcean API: GET /v2/account: ") == 0);
}

TEST_CASE("DoClient lists droplets by tag across pages, GPU droplets included", "[do_client]") {
  DoFixture f;
  const std::string tag = "runara:run-abc";
  std::atomic<bool> combined{false};
  f.server.srv.Get("/v2/droplets", [&](const httplib::Request& req, httplib::Response& res) {
    if (req.has_param("tag_name") && req.has_param("type")) combined = true;
    const std::string page = req.has_param("page") ? req.get_param_value("page") : "1";
    if (req.has_param("tag_name")) {
      CHECK(req.get_param_value("tag_name") == tag);
      if (page == "1") {
        // DigitalOcean's links are absolute and name the real API host: they must be rebased.
        return send_json(res, 200,
                         {{"droplets", {droplet(1, {tag}), droplet(2, {tag, "x"})}},
                          {"links", {{"pages", {{"next", "https://api.digitalocean.com/v2/droplets?page=2&per_page=2&tag_name=runara%3Arun-abc"},
                                                {"last", "https://api.digitalocean.com/v2/droplets?page=2&per_page=2&tag_name=runara%3Arun-abc"}}}}},
                          {"meta", {{"total", 3}}}});
      }
      return send_json(res, 200,
                       {{"droplets", {droplet(3, {tag})}},
                        {"links", {{"pages", {{"first", "https://api.digitalocean.com/v2/droplets?page=1&per_page=2&tag_name=runara%3Arun-abc"}}}}},
                        {"meta", {{"total", 3}}}});
    }
    if (req.get_param_value("type") == "gpus") {
      if (page == "1") {
        return send_json(res, 200,
                         {{"droplets", {droplet(10, {tag}), droplet(11, {"other"})}},
                          {"links", {{"pages", {{"next", "https://api.digitalocean.com/v2/droplets?page=2&per_page=2&type=gpus"}}}}},
                          {"meta", {{"total", 4}}}});
      }
      return send_json(res, 200,
                       {{"droplets", {droplet(12, {"runara:run-abcd", tag}), droplet(13, {})}},
                        {"links", json::object()},
                        {"meta", {{"total", 4}}}});
    }
    send_json(res, 200, {{"droplets", {droplet(50, {}), droplet(51, {tag})}},
                         {"links", json::object()}, {"meta", {{"total", 2}}}});
  });
  f.start();

  auto r = f.call([&](auto cb) { f.client->list_droplets(tag, cb); });
  REQUIRE(r.ok);
  std::vector<std::int64_t> ids;
  for (const auto& d : r.body["droplets"]) ids.push_back(d["id"].get<std::int64_t>());
  CHECK(ids == std::vector<std::int64_t>{1, 2, 3, 10, 12});
  CHECK(r.body["meta"]["total"] == 5);
  CHECK(r.attempts == 4);
  CHECK_FALSE(combined);
  const auto seen = f.server.requests();
  REQUIRE(seen.size() == 4);
  CHECK(seen[0] == "GET /v2/droplets?tag_name=runara%3Arun-abc&per_page=200");
  CHECK(seen[1] == "GET /v2/droplets?page=2&per_page=2&tag_name=runara%3Arun-abc");
  CHECK(seen[2] == "GET /v2/droplets?type=gpus&per_page=200");
  CHECK(seen[3] == "GET /v2/droplets?page=2&per_page=2&type=gpus");

  r = f.call([&](auto cb) { f.client->list_droplets("", cb); });  // no tag: everything
  REQUIRE(r.ok);
  CHECK(r.body["droplets"].size() == 2 + 4);
}

TEST_CASE("DoClient list fails as a whole when a page fails", "[do_client]") {
  DoFixture f;
  f.server.srv.Get("/v2/sizes", [&](const httplib::Request& req, httplib::Response& res) {
    if (!req.has_param("page")) {
      return send_json(res, 200, {{"sizes", {{{"slug", "s-1vcpu-1gb"}}, {{"slug", "gpu-h100x1-80gb"}}}},
                                  {"links", {{"pages", {{"next", "https://api.digitalocean.com/v2/sizes?page=2&per_page=200"}}}}}});
    }
    if (req.get_param_value("page") == "2") {
      return send_json(res, 200, {{"sizes", {{{"slug", "c-2"}}}},
                                  {"links", {{"pages", {{"next", "https://api.digitalocean.com/v2/sizes?page=3&per_page=200"}}}}}});
    }
    send_error(res, 500, "server_error", "page three is cursed");
  });
  f.server.srv.Get("/v2/droplets", [](const httplib::Request&, httplib::Response& res) {
    // A next link leaving the API is refused rather than followed with the token.
    send_json(res, 200, {{"droplets", json::array()},
                         {"links", {{"pages", {{"next", "https://evil.example/steal?page=2"}}}}}});
  });
  f.start();
  auto r = f.call([&](auto cb) { f.client->list_sizes(cb); });
  CHECK_FALSE(r.ok);
  CHECK(r.status == 500);
  CHECK(r.error.find("page three is cursed") != std::string::npos);
  CHECK(r.attempts == 2 + 4);

  r = f.call([&](auto cb) { f.client->list_droplets("t", cb); });
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("pagination") != std::string::npos);
}

TEST_CASE("DoClient lists all sizes", "[do_client]") {
  DoFixture f;
  f.server.srv.Get("/v2/sizes", [&](const httplib::Request& req, httplib::Response& res) {
    if (!req.has_param("page")) {
      return send_json(res, 200, {{"sizes", {{{"slug", "a"}}, {{"slug", "b"}}}},
                                  {"links", {{"pages", {{"next", "/v2/sizes?page=2"}}}}}});
    }
    send_json(res, 200, {{"sizes", {{{"slug", "c"}}}}, {"links", json::object()}});
  });
  f.start();
  auto r = f.call([&](auto cb) { f.client->list_sizes(cb); });
  REQUIRE(r.ok);
  REQUIRE(r.body["sizes"].size() == 3);
  CHECK(r.body["sizes"][2]["slug"] == "c");
}

TEST_CASE("DoClient never puts the token in errors or logs", "[do_client]") {
  DoFixture f;
  const std::string echo = std::string("you sent Bearer ") + kToken;
  auto echo_error = [&](const httplib::Request& req, httplib::Response& res) {
    send_error(res, 401, "unauthorized", "bad credentials: " + req.get_header_value("Authorization"));
  };
  auto echo_5xx = [&](const httplib::Request& req, httplib::Response& res) {
    res.status = 502;
    res.set_content("proxy error, header was " + req.get_header_value("Authorization"), "text/plain");
  };
  f.server.srv.Post("/v2/droplets", echo_5xx);
  f.server.srv.Get(R"(/v2/droplets/(\d+))", echo_5xx);
  f.server.srv.Delete(R"(/v2/droplets/(\d+))", echo_error);
  f.server.srv.Get("/v2/droplets", echo_error);
  f.server.srv.Get("/v2/sizes", [&](const httplib::Request& req, httplib::Response& res) {
    res.status = 429;
    res.set_header("retry-after", "0");
    res.set_content(json{{"id", req.get_header_value("Authorization")}, {"message", kToken}}.dump(),
                    "application/json");
  });
  f.server.srv.Get("/v2/account", [&](const httplib::Request&, httplib::Response& res) {
    f.server.slow(3);  // times out
    res.status = 200;
  });
  auto o = DoFixture::fast_options();
  o.timeout_s = 0.1;
  o.retry.max_attempts = 2;
  f.start(o);

  std::vector<std::string> errors;
  auto collect = [&](const DoResult& r) {
    CHECK_FALSE(r.ok);
    errors.push_back(r.error);
  };
  collect(f.call([&](auto cb) { f.client->create_droplet({{"name", kToken}}, cb); }));
  collect(f.call([&](auto cb) { f.client->get_droplet(1, cb); }));
  collect(f.call([&](auto cb) { f.client->delete_droplet(1, cb); }));
  collect(f.call([&](auto cb) { f.client->list_droplets("t", cb); }));
  collect(f.call([&](auto cb) { f.client->list_sizes(cb); }));
  collect(f.call([&](auto cb) { f.client->get_account(cb); }));
  {
    DroppingServer drop;
    f.connect(drop.url(""), o);
    collect(f.call([&](auto cb) { f.client->create_droplet({{"name", "a"}}, cb); }));
    collect(f.call([&](auto cb) { f.client->get_droplet(1, cb); }));
  }
  f.connect("http://127.0.0.1:" + std::to_string(runara::test::unused_loopback_port()), o);
  collect(f.call([&](auto cb) { f.client->delete_droplet(1, cb); }));
  f.connect("http://[bad url", o);
  collect(f.call([&](auto cb) { f.client->list_droplets("t", cb); }));

  REQUIRE(errors.size() == 10);
  int redacted = 0;
  for (const auto& e : errors) {
    INFO(e);
    CHECK_FALSE(e.empty());
    CHECK(e.find(kToken) == std::string::npos);
    CHECK(e.find("T0PSECRET") == std::string::npos);
    if (e.find("[REDACTED]") != std::string::npos) ++redacted;
  }
  CHECK(redacted >= 4);  // the echoing servers did try
  REQUIRE_FALSE(f.logs.empty());
  for (const auto& line : f.logs) {
    INFO(line);
    CHECK(line.find("T0PSECRET") == std::string::npos);
  }
  CHECK(f.client->redact(echo) == "you sent Bearer [REDACTED]");
}

TEST_CASE("DoClient cancel and destruction stop everything", "[do_client]") {
  DoFixture f;
  f.server.srv.Get("/v2/droplets/1", [&](const httplib::Request&, httplib::Response& res) {
    f.server.slow(3);
    res.status = 200;
  });
  f.server.srv.Get("/v2/droplets/2", [&](const httplib::Request&, httplib::Response& res) {
    send_error(res, 503, "unavailable", "later");
  });
  auto o = DoFixture::fast_options();
  o.retry.base_delay_s = 0.1;  // long enough to destroy the client while a retry waits
  o.retry.max_delay_s = 0.1;
  f.start(o);
  int called = 0;
  const auto op = f.client->get_droplet(1, [&](DoResult) { ++called; });
  f.client->get_droplet(2, [&](DoResult) { ++called; });
  CHECK(f.client->pending() == 2);
  f.loop.run_until([&] { return !f.logs.empty(); }, 2);  // droplet 2 is waiting to retry
  REQUIRE(f.logs.size() == 1);
  f.client->cancel(op);
  CHECK(f.client->pending() == 1);
  f.client.reset();  // with a retry timer pending
  f.loop.run_until([] { return false; }, 0.15);
  CHECK(called == 0);
  CHECK(f.http->in_flight() == 0);
}

TEST_CASE("load_do_token reads the environment, then doctl's config", "[do_client]") {
  struct Saved {
    std::string name;
    std::optional<std::string> value;
  };
  std::vector<Saved> saved;
  for (const char* n : {"DIGITALOCEAN_TOKEN", "DIGITALOCEAN_ACCESS_TOKEN", "HOME", "XDG_CONFIG_HOME"}) {
    const char* v = getenv(n);
    saved.push_back({n, v ? std::optional<std::string>(v) : std::nullopt});
  }
  char dir_template[] = "/tmp/runara-token-XXXXXX";
  const std::string home = mkdtemp(dir_template);
  setenv("HOME", home.c_str(), 1);
  unsetenv("XDG_CONFIG_HOME");
  unsetenv("DIGITALOCEAN_TOKEN");
  unsetenv("DIGITALOCEAN_ACCESS_TOKEN");
  std::string source;

  CHECK_FALSE(runara::load_do_token(&source).has_value());

  mkdir((home + "/.config").c_str(), 0700);
  mkdir((home + "/.config/doctl").c_str(), 0700);
  const std::string cfg = home + "/.config/doctl/config.yaml";
  {
    std::ofstream out(cfg);
    out << "auth-contexts:\n  access-token: nested-ignored\n  work: dop_v1_other\n"
           "access-token: \"dop_v1_fromfile\"\ncontext: default\n";
  }
  CHECK(runara::load_do_token(&source) == std::optional<std::string>("dop_v1_fromfile"));
  CHECK(source == cfg);

  setenv("DIGITALOCEAN_ACCESS_TOKEN", "dop_v1_access", 1);
  CHECK(runara::load_do_token(&source) == std::optional<std::string>("dop_v1_access"));
  CHECK(source == "DIGITALOCEAN_ACCESS_TOKEN");

  setenv("DIGITALOCEAN_TOKEN", " dop_v1_token\n", 1);
  CHECK(runara::load_do_token(&source) == std::optional<std::string>("dop_v1_token"));
  CHECK(source == "DIGITALOCEAN_TOKEN");

  setenv("DIGITALOCEAN_TOKEN", "", 1);  // empty counts as unset
  CHECK(runara::load_do_token() == std::optional<std::string>("dop_v1_access"));

  std::remove(cfg.c_str());
  rmdir((home + "/.config/doctl").c_str());
  rmdir((home + "/.config").c_str());
  rmdir(home.c_str());
  for (const auto& s : saved) {
    if (s.value) setenv(s.name.c_str(), s.value->c_str(), 1);
    else unsetenv(s.name.c_str());
  }
}

// A hostile or broken API answering with JSON nested 100,000 levels deep: refused as an error
// that says so, never walked (a recursive copy or dump of it would overflow the C stack).
TEST_CASE("DoClient refuses deeply nested answers", "[do_client]") {
  DoFixture f;
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  f.server.srv.Get("/v2/droplets/5", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content("{\"droplet\": {\"id\": 5, \"networks\": " + deep + "}}", "application/json");
  });
  std::atomic<int> status = 422;
  f.server.srv.Post("/v2/droplets", [&](const httplib::Request&, httplib::Response& res) {
    res.status = status;
    res.set_content("{\"id\": \"x\", \"message\": " + deep + "}", "application/json");
  });
  f.start();
  auto r = f.call([&](auto cb) { f.client->get_droplet(5, cb); });
  CHECK_FALSE(r.ok);
  CHECK(r.status == 200);
  CHECK(r.error == "DigitalOcean API: GET /v2/droplets/5: the answer is nested deeper than 64 levels (at byte 96)");
  CHECK(r.body.empty());

  r = f.call([&](auto cb) { f.client->create_droplet({{"name", "a"}}, cb); });
  CHECK_FALSE(r.ok);
  CHECK(r.status == 422);
  CHECK(r.error.find("DigitalOcean API: POST /v2/droplets: the answer is nested deeper than 64 levels") == 0);
  CHECK_FALSE(r.ambiguous);  // a 4xx created nothing

  // A 2xx to a create refused for its body may still have created the droplet.
  status = 202;
  r = f.call([&](auto cb) { f.client->create_droplet({{"name", "a"}}, cb); });
  CHECK_FALSE(r.ok);
  CHECK(r.ambiguous);
  CHECK(r.error.find("(ambiguous: the droplet may exist)") != std::string::npos);
}

// Issue 25: an answer is held to kDoMaxBodyBytes as it arrives, its document to kDoMaxTreeBytes
// (estimated before it is built), a listing's kept pages to kDoMaxListTreeBytes: a hostile or
// broken API gets a clear error naming the bound, never a document of hundreds of MiB.
TEST_CASE("DoClient bounds what an answer can make it hold: body, parsed document, listing", "[do_client][hostile_buffers]") {
  DoFixture f;
  // 5 MiB of zeros: past the body's bound.
  f.server.srv.Get("/v2/droplets/1", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("{\"droplet\": {\"id\": 1, \"junk\": [" + std::string(5u << 20, '0') + "]}}", "application/json");
  });
  // 3 MiB of small numbers: within the body's bound, about 48 MiB once parsed.
  f.server.srv.Get("/v2/droplets/2", [](const httplib::Request&, httplib::Response& res) {
    std::string junk;
    for (int i = 0; i < (3 << 20) / 2; ++i) junk += "0,";
    res.set_content("{\"droplet\": {\"id\": 2, \"junk\": [" + junk + "0]}}", "application/json");
  });
  // Sizes: endless pages of 10,000 sizes, each page about 8 MiB once parsed (not sent as JSON:
  // cpp-httplib would gzip it, slowly).
  std::string sizes;
  for (int i = 0; i < 10000; ++i) sizes += std::string(i ? "," : "") + "{\"slug\": \"s-" + std::to_string(i) + "-with-a-long-name\", \"regions\": [\"nyc1\", \"ams3\"]}";
  const std::size_t page_tree = runara::json_tree_bytes("{\"sizes\": [" + sizes + "]}");
  REQUIRE(page_tree > (std::size_t{4} << 20));
  REQUIRE(page_tree < runara::kDoMaxTreeBytes);
  std::atomic<int> pages{0};
  f.server.srv.Get("/v2/sizes", [&](const httplib::Request&, httplib::Response& res) {
    const int n = ++pages;
    res.set_content("{\"sizes\": [" + sizes + "], \"links\": {\"pages\": {\"next\": \"/v2/sizes?page=" + std::to_string(n + 1) + "\"}}}",
                    "application/octet-stream");
  });
  // GPU droplets of other runs, 20 pages of them: a listing that keeps none of them keeps no
  // document either.
  json others = json::array();
  for (int i = 0; i < 5000; ++i) others.push_back(droplet(i, {"runara:someone-else", "a-rather-long-tag-of-another-run"}));
  const std::string others_text = others.dump();
  REQUIRE(runara::json_tree_bytes(others_text) > (std::size_t{2} << 20));  // 20 pages: past the listing's bound if kept
  std::atomic<int> gpu_pages{0};
  f.server.srv.Get("/v2/droplets", [&](const httplib::Request& req, httplib::Response& res) {
    if (req.has_param("tag_name")) return send_json(res, 200, {{"droplets", json::array()}, {"links", json::object()}});
    const int n = ++gpu_pages;
    const std::string links = n < 20 ? "{\"pages\": {\"next\": \"/v2/droplets?type=gpus&page=" + std::to_string(n + 1) + "\"}}" : "{}";
    res.set_content("{\"droplets\": " + others_text + ", \"links\": " + links + "}", "application/octet-stream");
  });
  f.start();

  auto r = f.call([&](auto cb) { f.client->get_droplet(1, cb); });
  CHECK_FALSE(r.ok);
  CHECK(r.error == "DigitalOcean API: GET /v2/droplets/1: the answer is larger than 4194304 bytes (the limit on one answer)");
  CHECK(r.attempts == 1);  // not retried: the same answer would come again

  r = f.call([&](auto cb) { f.client->get_droplet(2, cb); });
  CHECK_FALSE(r.ok);
  CHECK_THAT(r.error, Catch::Matches("DigitalOcean API: GET /v2/droplets/2: the answer would take about [0-9]+ MiB once "
                                     "parsed, more than the 16 MiB allowed"));
  CHECK(r.body.empty());

  r = f.call([&](auto cb) { f.client->list_sizes(cb); });
  CHECK_FALSE(r.ok);
  CHECK_THAT(r.error, Catch::Matches("DigitalOcean API: /v2/sizes\\?page=[0-9]+: the \"sizes\" list would take more than 32 MiB "
                                     "once parsed \\(the limit on one listing\\)"));
  CHECK(pages <= static_cast<int>(runara::kDoMaxListTreeBytes / page_tree) + 1);  // stopped at the bound: the API's pages never end

  r = f.call([&](auto cb) { f.client->list_droplets("runara:mine", cb); });
  REQUIRE(r.ok);
  CHECK(r.body["droplets"].empty());
  CHECK(gpu_pages == 20);
}
