// The fake DigitalOcean API's HTTP server (sim/loopback_http_server.*) against raw sockets:
// what a real client sends (keep-alive, pipelining, curl's Expect: 100-continue, HEAD) and what a
// hostile one does (huge headers, a huge body, garbage, a silent connection). The fake API on top
// of it is tested through cpp-httplib's client in test_fake_digitalocean.cpp.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "loopback_socket.hpp"
#include "sim/loopback_http_server.hpp"
#include "test_text.hpp"

using runara::sim::HttpRequest;
using runara::sim::HttpResponse;
using runara::sim::LoopbackHttpServer;
using runara::test::count_of;

namespace {

int connect_to(int port) {
  const int fd = runara::test::connect_loopback(port);
  timeval send_timeout{2, 0};  // a server that stopped reading must not block the test
  if (fd >= 0) setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof send_timeout);
  return fd;
}

void send_text(int fd, const std::string& s) {
  std::size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return;  // the server closed: what it answered is still readable
    off += static_cast<std::size_t>(n);
  }
}

// Everything the server sends until it closes or `until` appears, for at most `seconds`.
std::string read_text(int fd, double seconds, const std::string& until = "") {
  std::string out;
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  char buf[4096];
  while (std::chrono::steady_clock::now() < end) {
    if (!until.empty() && out.find(until) != std::string::npos) break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

bool closed_by_peer(int fd, double seconds) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(seconds * 1000)) <= 0) return false;
  char c;
  return ::recv(fd, &c, 1, MSG_PEEK) <= 0;
}

// What a fresh connection gets back (within 5 s) for `parts`, sent one after another.
std::string answer_to(int port, const std::vector<std::string>& parts) {
  const int fd = connect_to(port);
  for (const std::string& part : parts) send_text(fd, part);
  std::string got = read_text(fd, 5);
  ::close(fd);
  return got;
}

struct Echo {
  std::atomic<int> calls{0};
  LoopbackHttpServer server{[this](const HttpRequest& r) {
    ++calls;
    std::string params;
    for (const auto& [k, v] : r.params) params += "[" + k + "=" + v + "]";
    return HttpResponse{200, {{"Content-Type", "text/plain"}},
                        r.method + " " + r.path + " " + params + " auth=" + r.header("authorization") +
                            " body=" + r.body};
  }};
  int port = server.start(0);
};

}  // namespace

TEST_CASE("fake DO's HTTP server: requests decoded, keep-alive and pipelining in order", "[fake_do][http_server]") {
  Echo echo;
  const int fd = connect_to(echo.port);
  REQUIRE(fd >= 0);
  // Two requests in one write, then a third on the same connection.
  send_text(fd,
            "GET /v2/droplets%2Fx?tag_name=a%20b&name=c+d&flag HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\n\r\n"
            "POST /v2/keys HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello");
  std::string got = read_text(fd, 5, "body=hello");
  CHECK(got.find("GET /v2/droplets/x [flag=][name=c d][tag_name=a b] auth=Bearer t body=") != std::string::npos);
  CHECK(got.find("POST /v2/keys  auth= body=hello") != std::string::npos);
  CHECK(got.find("GET") < got.find("POST"));
  CHECK(count_of(got, "Connection: keep-alive") == 2);
  send_text(fd, "DELETE /v2/droplets/7 HTTP/1.1\r\nHost: x\r\n\r\n");
  got = read_text(fd, 5, "body=");
  CHECK(got.find("DELETE /v2/droplets/7") != std::string::npos);
  ::close(fd);
}

TEST_CASE("fake DO's HTTP server: HEAD has no body, 204 has no length, Expect: 100-continue is answered",
          "[fake_do][http_server]") {
  LoopbackHttpServer server([](const HttpRequest& r) {
    if (r.path == "/gone") return HttpResponse{204, {}, ""};
    return HttpResponse{200, {}, "0123456789" + r.body};
  });
  const int port = server.start(0);
  const int fd = connect_to(port);
  send_text(fd, "HEAD /x HTTP/1.1\r\nHost: x\r\n\r\nDELETE /gone HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::string got = read_text(fd, 5, "204 No Content\r\nConnection: keep-alive\r\n\r\n");
  CHECK(got.find("HTTP/1.1 200 OK\r\nContent-Length: 10\r\nConnection: keep-alive\r\n\r\nHTTP/1.1 204") == 0);
  CHECK(got.find("0123") == std::string::npos);
  // curl sends the headers, waits for "100 Continue", then the body.
  send_text(fd, "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n");
  CHECK(read_text(fd, 5, "\r\n\r\n") == "HTTP/1.1 100 Continue\r\n\r\n");
  send_text(fd, "abc");
  CHECK(read_text(fd, 5, "abc").find("0123456789abc") != std::string::npos);
  ::close(fd);
}

TEST_CASE("fake DO's HTTP server: a hostile client gets 431, 413 or 400 and the connection closes",
          "[fake_do][http_server][sandbox]") {
  Echo echo;
  SECTION("headers over 64 KiB") {
    const int fd = connect_to(echo.port);
    send_text(fd, "GET / HTTP/1.1\r\nX-Big: " + std::string(70000, 'a') + "\r\n\r\n");
    CHECK(read_text(fd, 5).rfind("HTTP/1.1 431 ", 0) == 0);
    CHECK(closed_by_peer(fd, 5));
    ::close(fd);
  }
  SECTION("a declared body over 8 MiB is refused before it is sent") {
    const std::string got =
        answer_to(echo.port, {"POST / HTTP/1.1\r\nContent-Length: 9000000\r\nExpect: 100-continue\r\n\r\n"});
    CHECK(got.rfind("HTTP/1.1 413 ", 0) == 0);
  }
  SECTION("a chunked body growing past 8 MiB") {
    const std::string chunk = "100000\r\n" + std::string(0x100000, 'x') + "\r\n";
    std::vector<std::string> parts{"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"};
    parts.insert(parts.end(), 9, chunk);
    CHECK(answer_to(echo.port, parts).find("HTTP/1.1 413 ") != std::string::npos);
  }
  SECTION("not HTTP") {
    CHECK(answer_to(echo.port, {"\x16\x03\x01 hello, this is TLS\r\n\r\n"}).rfind("HTTP/1.1 400 ", 0) == 0);
  }
  CHECK(echo.calls == 0);  // nothing reached the handler
  // And the server still answers.
  const int fd = connect_to(echo.port);
  send_text(fd, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n");
  CHECK(read_text(fd, 5, "body=").find("GET /ok") != std::string::npos);
  ::close(fd);
}

TEST_CASE("fake DO's HTTP server: a silent connection is closed, stop() ends open ones and frees the port",
          "[fake_do][http_server]") {
  Echo echo;
  const int idle = connect_to(echo.port);
  CHECK(closed_by_peer(idle, 4));  // idle 2 s between requests
  ::close(idle);
  const int open = connect_to(echo.port);
  send_text(open, "GET /half HTTP/1.1\r\n");  // a request begun and never finished
  const auto t0 = std::chrono::steady_clock::now();
  echo.server.stop();
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(1));
  CHECK(closed_by_peer(open, 1));
  ::close(open);
  CHECK(connect_to(echo.port) == -1);  // refused
  // The same port serves again (SO_REUSEADDR), as the fake's set_unreachable(false) needs.
  CHECK(echo.server.start(echo.port) == echo.port);
  const int fd = connect_to(echo.port);
  send_text(fd, "GET /again HTTP/1.1\r\nHost: x\r\n\r\n");
  CHECK(read_text(fd, 5, "body=").find("GET /again") != std::string::npos);
  ::close(fd);
}

TEST_CASE("fake DO's HTTP server: a dropped answer closes the connection with nothing sent", "[fake_do][http_server]") {
  LoopbackHttpServer server([](const HttpRequest&) {
    HttpResponse r;
    r.drop = true;
    return r;
  });
  const int fd = connect_to(server.start(0));
  send_text(fd, "POST /v2/droplets HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}");
  CHECK(read_text(fd, 5).empty());
  CHECK(closed_by_peer(fd, 1));
  ::close(fd);
}
