// HttpClient against small cpp-httplib servers (and a raw socket) on 127.0.0.1.
#include <catch2/catch.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "loopback_fixtures.hpp"
#include "curl/http_client.hpp"

using runara::HttpClient;
using runara::HttpRequest;
using runara::HttpResponse;
using namespace runara_test;

namespace {

// Sends one request and runs the loop until its answer.
HttpResponse fetch(TestLoop& l, HttpClient& c, HttpRequest req) {
  std::optional<HttpResponse> out;
  c.send(std::move(req), [&](HttpResponse r) { out = std::move(r); });
  REQUIRE(l.run_until([&] { return out.has_value(); }));
  return *out;
}

void shut(TestLoop& l, std::unique_ptr<HttpClient>& c) {
  bool closed = false;
  c->close([&] { closed = true; });
  REQUIRE(l.run_until([&] { return closed; }));
  c.reset();
  CHECK(l.close() == 0);
}

}  // namespace

TEST_CASE("HttpClient does GET, POST and DELETE", "[http_client]") {
  LocalServer s;
  s.srv.Get("/hello", [](const httplib::Request& req, httplib::Response& res) {
    res.set_header("X-Custom-Thing", "Abc");
    res.set_content("hi " + req.get_header_value("X-Test"), "text/plain");
  });
  s.srv.Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
    res.status = 202;
    res.set_content(req.method + ":" + req.get_header_value("Content-Type") + ":" + req.body,
                    "text/plain");
  });
  s.srv.Delete("/thing/7", [](const httplib::Request&, httplib::Response& res) {
    res.status = 204;
  });
  s.start();
  TestLoop l;
  auto c = std::make_unique<HttpClient>(&l.loop);
  CHECK(c->loop() == &l.loop);

  HttpRequest get;
  get.url = s.url("/hello");
  get.headers = {"X-Test: yes"};
  auto r = fetch(l, *c, get);
  CHECK(r.error.empty());
  CHECK_FALSE(r.ambiguous());
  CHECK(r.status == 200);
  CHECK(r.body == "hi yes");
  CHECK(r.headers["x-custom-thing"] == "Abc");
  CHECK(r.headers.count("content-type") == 1);

  HttpRequest post;
  post.method = "POST";
  post.url = s.url("/echo");
  post.headers = {"Content-Type: application/json"};
  post.body = R"({"a":1})";
  r = fetch(l, *c, post);
  CHECK(r.status == 202);
  CHECK(r.body == R"(POST:application/json:{"a":1})");

  HttpRequest del;
  del.method = "DELETE";
  del.url = s.url("/thing/7");
  r = fetch(l, *c, del);
  CHECK(r.error.empty());
  CHECK(r.status == 204);
  CHECK(r.body.empty());

  HttpRequest missing;
  missing.url = s.url("/nope");
  r = fetch(l, *c, missing);
  CHECK(r.error.empty());
  CHECK(r.status == 404);
  CHECK(c->in_flight() == 0);
  shut(l, c);
}

TEST_CASE("HttpClient runs many transfers at once", "[http_client]") {
  LocalServer s(/*keep_alive=*/true);
  s.srv.Get(R"(/n/(\d+))", [&](const httplib::Request& req, httplib::Response& res) {
    s.slow(0.05);
    res.set_content(req.matches[1].str(), "text/plain");
  });
  s.start();
  TestLoop l;
  auto c = std::make_unique<HttpClient>(&l.loop);
  constexpr int kN = 5;  // cpp-httplib listens with a backlog of 5; more would wait on SYN retries
  std::vector<std::string> got(kN);
  int done = 0;
  for (int i = 0; i < kN; ++i) {
    HttpRequest req;
    req.url = s.url("/n/" + std::to_string(i));
    c->send(req, [&, i](HttpResponse r) {
      got[i] = r.body;
      ++done;
    });
  }
  CHECK(c->in_flight() == kN);
  CHECK(done == 0);  // never called from inside send()
  REQUIRE(l.run_until([&] { return done == kN; }));
  for (int i = 0; i < kN; ++i) CHECK(got[i] == std::to_string(i));
  // A second round reuses the kept-alive connections.
  for (int i = 0; i < kN; ++i) {
    HttpRequest req;
    req.url = s.url("/n/" + std::to_string(i + 100));
    c->send(req, [&, i](HttpResponse r) {
      got[i] = r.body;
      ++done;
    });
  }
  REQUIRE(l.run_until([&] { return done == 2 * kN; }));
  for (int i = 0; i < kN; ++i) CHECK(got[i] == std::to_string(i + 100));
  shut(l, c);
}

TEST_CASE("HttpClient timeouts after sending are ambiguous", "[http_client]") {
  LocalServer s;
  s.srv.Post("/slow", [&](const httplib::Request&, httplib::Response& res) {
    s.slow(3);
    res.set_content("late", "text/plain");
  });
  s.start();
  TestLoop l;
  auto c = std::make_unique<HttpClient>(&l.loop);
  HttpRequest req;
  req.method = "POST";
  req.url = s.url("/slow");
  req.body = "x";
  req.timeout_s = 0.1;
  const auto t0 = Clock::now();
  auto r = fetch(l, *c, req);
  const double elapsed = seconds_since(t0);
  CHECK(elapsed >= 0.09);
  CHECK(elapsed < 1.5);
  CHECK_FALSE(r.error.empty());
  CHECK(r.sent);
  CHECK(r.ambiguous());
  s.release = true;
  shut(l, c);
}

TEST_CASE("HttpClient flags a connection dropped mid-response as ambiguous", "[http_client]") {
  LocalServer s;
  s.srv.Get("/partial", [](const httplib::Request&, httplib::Response& res) {
    res.set_content_provider(1000, "text/plain",
                             [](size_t, size_t, httplib::DataSink& sink) {
                               sink.write(std::string(100, 'a').data(), 100);
                               return false;  // abort: the connection is closed mid-body
                             });
  });
  s.start();
  DroppingServer drop;
  TestLoop l;
  auto c = std::make_unique<HttpClient>(&l.loop);

  HttpRequest req;
  req.url = s.url("/partial");
  auto r = fetch(l, *c, req);
  CHECK_FALSE(r.error.empty());
  CHECK(r.ambiguous());

  HttpRequest post;  // the server reads the request and hangs up without a word
  post.method = "POST";
  post.url = drop.url("/v2/droplets");
  post.body = "{}";
  r = fetch(l, *c, post);
  CHECK_FALSE(r.error.empty());
  CHECK(r.status == 0);
  CHECK(r.ambiguous());
  CHECK(drop.accepted == 1);  // and libcurl did not re-send it
  shut(l, c);
}

TEST_CASE("HttpClient: refused connections and bad URLs are not ambiguous", "[http_client]") {
  TestLoop l;
  auto c = std::make_unique<HttpClient>(&l.loop);
  HttpRequest req;
  req.method = "POST";
  req.url = "http://127.0.0.1:" + std::to_string(runara::test::unused_loopback_port()) + "/v2/droplets";
  req.body = "{}";
  auto r = fetch(l, *c, req);
  CHECK_FALSE(r.error.empty());
  CHECK(r.curl_code != 0);
  CHECK_FALSE(r.sent);
  CHECK_FALSE(r.ambiguous());

  HttpRequest file;
  file.url = "file:///etc/hostname";
  r = fetch(l, *c, file);
  CHECK_FALSE(r.error.empty());
  CHECK(r.body.empty());
  CHECK_FALSE(r.ambiguous());
  shut(l, c);
}

TEST_CASE("HttpClient does not follow redirects and caps bodies", "[http_client]") {
  LocalServer s;
  s.srv.Get("/moved", [](const httplib::Request&, httplib::Response& res) {
    res.set_redirect("/target");
  });
  s.srv.Get("/target", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("target", "text/plain");
  });
  s.srv.Get("/big", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(5000, 'b'), "text/plain");
  });
  s.start();
  TestLoop l;
  auto c = std::make_unique<HttpClient>(&l.loop);
  HttpRequest req;
  req.url = s.url("/moved");
  auto r = fetch(l, *c, req);
  CHECK(r.status == 302);
  CHECK(r.headers["location"] == "/target");

  req.max_redirects = 2;
  r = fetch(l, *c, req);
  CHECK(r.status == 200);
  CHECK(r.body == "target");

  HttpRequest big;
  big.url = s.url("/big");
  big.max_body_bytes = 100;
  r = fetch(l, *c, big);
  CHECK_FALSE(r.error.empty());
  CHECK(r.body.size() <= 100);
  shut(l, c);
}

TEST_CASE("HttpClient cancel, close and destruction release everything", "[http_client]") {
  LocalServer s;
  s.srv.Get("/slow", [&](const httplib::Request&, httplib::Response& res) {
    s.slow(3);
    res.set_content("late", "text/plain");
  });
  s.srv.Get("/fast", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("fast", "text/plain");
  });
  s.start();

  SECTION("cancel: the callback never runs") {
    TestLoop l;
    auto c = std::make_unique<HttpClient>(&l.loop);
    bool called = false;
    HttpRequest req;
    req.url = s.url("/slow");
    const auto id = c->send(req, [&](HttpResponse) { called = true; });
    CHECK(id != 0);
    l.run_until([] { return false; }, 0.05);
    c->cancel(id);
    c->cancel(id);       // twice is harmless
    c->cancel(123456);   // unknown too
    CHECK(c->in_flight() == 0);
    req.url = s.url("/fast");
    auto r = fetch(l, *c, req);  // the client still works
    CHECK(r.body == "fast");
    CHECK_FALSE(called);
    shut(l, c);
  }
  SECTION("close with transfers in flight") {
    TestLoop l;
    auto c = std::make_unique<HttpClient>(&l.loop);
    int called = 0;
    HttpRequest req;
    req.url = s.url("/slow");
    c->send(req, [&](HttpResponse) { ++called; });
    c->send(req, [&](HttpResponse) { ++called; });
    l.run_until([] { return false; }, 0.05);
    bool closed = false;
    c->close([&] { closed = true; });
    CHECK(c->send(req, [&](HttpResponse) { ++called; }) == 0);
    REQUIRE(l.run_until([&] { return closed; }));
    CHECK(called == 0);
    c.reset();
    CHECK(l.close() == 0);
  }
  SECTION("destruction without close, from inside a callback") {
    TestLoop l;
    auto c = std::make_unique<HttpClient>(&l.loop);
    int called = 0;
    HttpRequest fast;
    fast.url = s.url("/fast");
    HttpRequest slow;
    slow.url = s.url("/slow");
    c->send(slow, [&](HttpResponse) { ++called; });
    c->send(fast, [&](HttpResponse) {
      ++called;
      c.reset();  // destroys the client while it is dispatching
    });
    REQUIRE(l.run_until([&] { return c == nullptr; }));
    CHECK(called == 1);
    CHECK(l.close() == 0);
  }
  SECTION("a new request from inside a callback") {
    TestLoop l;
    auto c = std::make_unique<HttpClient>(&l.loop);
    std::string second;
    HttpRequest fast;
    fast.url = s.url("/fast");
    c->send(fast, [&](HttpResponse) {
      c->send(fast, [&](HttpResponse r) { second = r.body; });
    });
    REQUIRE(l.run_until([&] { return !second.empty(); }));
    CHECK(second == "fast");
    shut(l, c);
  }
  s.release = true;
}
