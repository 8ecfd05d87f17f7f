// Loopback test helpers shared by the HTTP / DigitalOcean client tests: a cpp-httplib server in
// a thread, a raw listener that hangs up on every request, and a libuv loop the test drives until
// a condition holds. (A port with nothing listening: unused_loopback_port, loopback_socket.hpp.)
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <httplib.h>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "loopback_socket.hpp"

namespace runara_test {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// A cpp-httplib server on an ephemeral loopback port, served from its own thread.
struct LocalServer {
  httplib::Server srv;
  std::thread thread;
  int port = 0;
  std::atomic<bool> release{false};  // lets slow handlers return early
  std::mutex mu;
  std::vector<std::string> seen;  // "METHOD target" of every request received, in order
  std::vector<std::string> auth;  // their Authorization headers

  // Answers on a kept-alive connection take cpp-httplib ~45 ms (even for the curl tool), so by
  // default every connection carries one request, which keeps the tests fast.
  explicit LocalServer(bool keep_alive = false) {
    srv.new_task_queue = [] { return new httplib::ThreadPool(8); };
    srv.set_keep_alive_timeout(1);
    srv.set_tcp_nodelay(true);
    if (!keep_alive) srv.set_keep_alive_max_count(1);
    // Recorded before routing, so before the client can see any answer.
    srv.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response&) {
      std::lock_guard<std::mutex> lock(mu);
      seen.push_back(req.method + " " + req.target);
      auth.push_back(req.get_header_value("Authorization"));
      return httplib::Server::HandlerResponse::Unhandled;
    });
  }
  std::vector<std::string> requests() {
    std::lock_guard<std::mutex> lock(mu);
    return seen;
  }
  void start() {
    port = srv.bind_to_any_port("127.0.0.1");
    REQUIRE(port > 0);
    thread = std::thread([this] { srv.listen_after_bind(); });
    while (!srv.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // Sleeps up to `s` seconds, returning early once the test releases slow handlers.
  void slow(double s) {
    const auto t0 = Clock::now();
    while (!release && seconds_since(t0) < s)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port) + path;
  }
  ~LocalServer() {
    release = true;
    srv.stop();
    if (thread.joinable()) thread.join();
  }
};

// A TCP listener that accepts connections, reads the request head, and closes without answering.
struct DroppingServer {
  int fd = -1;
  int port = 0;
  std::thread thread;
  std::atomic<int> accepted{0};
  std::atomic<bool> stop{false};

  DroppingServer() {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd, 16) == 0);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
    thread = std::thread([this] {
      while (!stop) {
        timeval tv{0, 20000};
        fd_set set;
        FD_ZERO(&set);
        FD_SET(fd, &set);
        if (::select(fd + 1, &set, nullptr, nullptr, &tv) <= 0) continue;
        const int c = ::accept(fd, nullptr, nullptr);
        if (c < 0) continue;
        ++accepted;
        std::string head;
        char buf[4096];
        timeval rt{1, 0};
        ::setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &rt, sizeof rt);
        while (head.find("\r\n\r\n") == std::string::npos) {
          const ssize_t n = ::recv(c, buf, sizeof buf, 0);
          if (n <= 0) break;
          head.append(buf, static_cast<size_t>(n));
        }
        ::close(c);
      }
    });
  }
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port) + path;
  }
  ~DroppingServer() {
    stop = true;
    thread.join();
    ::close(fd);
  }
};

// A libuv loop that the test drives until a condition holds (with a safety deadline).
struct TestLoop {
  uv_loop_t loop{};
  TestLoop() { uv_loop_init(&loop); }
  bool run_until(const std::function<bool()>& done, double max_s = 10) {
    uv_timer_t guard;  // wakes the loop so the deadline is checked
    uv_timer_init(&loop, &guard);
    uv_timer_start(&guard, [](uv_timer_t*) {}, 20, 20);
    const auto t0 = Clock::now();
    while (!done() && seconds_since(t0) < max_s) uv_run(&loop, UV_RUN_ONCE);
    uv_close(reinterpret_cast<uv_handle_t*>(&guard), nullptr);
    uv_run(&loop, UV_RUN_NOWAIT);
    return done();
  }
  // Every handle must be gone: uv_loop_close fails with UV_EBUSY otherwise.
  int close() {
    uv_run(&loop, UV_RUN_DEFAULT);
    return uv_loop_close(&loop);
  }
};

}  // namespace runara_test
