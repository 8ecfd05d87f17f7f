// Port forwarding through the ssh engine: an HTTP server on loopback reached through a local
// listener whose connections are tunnelled by a real OpenSSH server (direct-tcpip).
#include "loopback_fixtures.hpp"
#include "ssh_test_session.hpp"
#include "sshd_fixture.hpp"
#include "ssh/port_forward.hpp"
#include "ssh/exec.hpp"

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <optional>
#include <thread>

using runara::ssh::PortForward;
using runara::ssh::SshSession;
using runara::test::connect_session;
using runara::test::SshdFixture;
using runara::test::sshd_options;
using runara_test::LocalServer;
using runara_test::TestLoop;

namespace {

// A body whose every byte depends on its position: any loss or reordering shows.
std::string pattern(std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7 + i / 251) % 26);
  return s;
}

}  // namespace

TEST_CASE("ssh forward: HTTP through the tunnel, many connections at once, bodies intact", "[ssh]") {
  SshdFixture sshd;
  LocalServer server(/*keep_alive=*/true);
  const std::string big = pattern(3u << 20);
  server.srv.Get("/big", [&](const httplib::Request&, httplib::Response& res) { res.set_content(big, "text/plain"); });
  server.srv.Post("/echo", [](const httplib::Request& req, httplib::Response& res) { res.set_content(req.body, "text/plain"); });
  server.start();
  TestLoop t;
  {
    SshSession session(&t.loop, sshd_options(sshd));
    REQUIRE(connect_session(t, session) == "");
    auto forward_owned = runara::test::must(PortForward::open(&t.loop, session, "127.0.0.1", server.port));
    PortForward& forward = *forward_owned;
    REQUIRE(forward.port() > 0);
    std::atomic<int> ok{0}, finished{0};
    std::vector<std::thread> clients;
    const std::string upload = pattern(1u << 20);
    for (int c = 0; c < 8; ++c)
      clients.emplace_back([&] {
        httplib::Client client("127.0.0.1", forward.port());
        client.set_read_timeout(20, 0);
        for (int i = 0; i < 3; ++i) {
          auto got = client.Get("/big");
          if (got && got->status == 200 && got->body == big) ++ok;
          auto echoed = client.Post("/echo", upload, "application/octet-stream");
          if (echoed && echoed->status == 200 && echoed->body == upload) ++ok;
        }
        ++finished;
      });
    REQUIRE(t.run_until([&] { return finished == 8; }, 60));
    for (auto& c : clients) c.join();
    CHECK(ok == 8 * 3 * 2);
    CHECK(forward.tunnels_opened() >= 8);
    CHECK(forward.last_error() == "");
  }
  CHECK(t.close() == 0);
}

TEST_CASE("ssh forward: a closed remote port closes the local connection and says why", "[ssh]") {
  SshdFixture sshd;
  TestLoop t;
  {
    SshSession session(&t.loop, sshd_options(sshd));
    REQUIRE(connect_session(t, session) == "");
    const int closed = runara::test::unused_loopback_port();
    auto forward_owned = runara::test::must(PortForward::open(&t.loop, session, "127.0.0.1", closed));
    PortForward& forward = *forward_owned;
    std::atomic<bool> done{false};
    bool failed = false;
    std::thread client([&] {
      httplib::Client c("127.0.0.1", forward.port());
      c.set_read_timeout(5, 0);
      failed = !c.Get("/");
      done = true;
    });
    REQUIRE(t.run_until([&] { return done.load(); }, 10));
    client.join();
    CHECK(failed);
    CHECK(forward.last_error().find("cannot open a tunnel to 127.0.0.1:" + std::to_string(closed)) == 0);
    CHECK(session.ready());  // one refused tunnel leaves the session usable
  }
  CHECK(t.close() == 0);
}

// libssh2 keeps a channel open's progress in the session: a tunnel destroyed mid-open must not
// leave it for the next opener, which would get the tunnel's direct-tcpip channel.
TEST_CASE("ssh forward: a tunnel dropped while its channel opens leaves nothing half-open", "[ssh]") {
  SshdFixture sshd;
  TestLoop t;
  {
    SshSession session(&t.loop, sshd_options(sshd));
    REQUIRE(connect_session(t, session) == "");
    int failures = 0;
    for (int round = 0; round < 8; ++round) {
      auto forward = runara::test::must(PortForward::open(&t.loop, session, "127.0.0.1", runara::test::unused_loopback_port()));
      const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
      const sockaddr_in a = runara::test::loopback_address(forward->port());
      ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a);
      REQUIRE(t.run_until([&] { return forward->tunnels_opened() == 1; }, 5));
      for (int i = 0; i < round % 3; ++i) uv_run(&t.loop, UV_RUN_NOWAIT);  // the open request goes out
      forward.reset();  // mid-open, in some rounds
      ::close(fd);
      std::optional<runara::ssh::ExecResult> result;
      auto exec = runara::test::must(runara::ssh::SshExec::start(session, runara::ssh::ExecOptions{.command = "echo fine"},
                                                   [&](const runara::ssh::ExecResult& r) { result = r; }));
      REQUIRE(t.run_until([&] { return result.has_value(); }, 20));
      if (result->error != "" || result->stdout_tail != "fine\n") {
        ++failures;
        UNSCOPED_INFO("round " << round << ": " << result->error);
      }
    }
    CHECK(failures == 0);
    CHECK(session.ready());
  }
  CHECK(t.close() == 0);
}
