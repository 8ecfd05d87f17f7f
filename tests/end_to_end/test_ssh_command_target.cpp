// An SSH session as a CommandTarget (what gpu_metrics runs its fixed commands on), against a
// real sshd on loopback: lines and exit, early destruction kills the remote group, a closed
// session reports instead of hanging.
#include "loopback_fixtures.hpp"
#include "ssh_test_session.hpp"
#include "sshd_fixture.hpp"
#include "ssh/command_target.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

using runara::CommandTarget;
using runara::ssh::SshCommandTarget;
using runara::ssh::SshSession;
using runara::test::connect_session;
using runara::test::SshdFixture;
using runara::test::sshd_options;
using runara_test::TestLoop;

namespace {

int processes_with(const std::string& text) {
  int found = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    std::string args = s.str();
    for (char& c : args)
      if (c == '\0') c = ' ';
    if (args.find(text) != std::string::npos) ++found;
  }
  return found;
}

struct Target {
  SshdFixture sshd;
  TestLoop t;
  std::unique_ptr<SshSession> session = std::make_unique<SshSession>(&t.loop, sshd_options(sshd));
  std::unique_ptr<SshCommandTarget> target;
  Target() {
    REQUIRE(connect_session(t, *session) == "");
    target = std::make_unique<SshCommandTarget>(*session, "test-box");
  }
  ~Target() {
    target.reset();
    session.reset();
    CHECK(t.close() == 0);
  }
};

}  // namespace

TEST_CASE("ssh command target: stdout lines, then the exit with the end of stderr", "[ssh]") {
  Target c;
  std::vector<std::string> lines;
  std::optional<CommandTarget::Exit> exit;
  auto running = c.target->run("echo a; echo b; echo oops >&2; exit 3",
                               {[&](std::string_view l) { lines.emplace_back(l); },
                                [&](const CommandTarget::Exit& e) { exit = e; }});
  REQUIRE(c.t.run_until([&] { return exit.has_value(); }, 20));
  CHECK(lines == std::vector<std::string>{"a", "b"});
  CHECK(exit->code == 3);
  CHECK(exit->error == "");
  CHECK(exit->stderr_tail == "oops\n");
  CHECK(c.target->name() == "test-box");
}

TEST_CASE("ssh command target: dropping the handle kills the remote group, and no callback follows", "[ssh]") {
  Target c;
  bool started = false, called_after = false;
  auto running = c.target->run("echo up; sleep 4848 & sleep 4848",
                               {[&](std::string_view) { started = true; },
                                [&](const CommandTarget::Exit&) { called_after = true; }});
  REQUIRE(c.t.run_until([&] { return started; }, 20));
  // Both sleeps run (the echo may come before they are started).
  CHECK(c.t.run_until([] { return processes_with("sleep 4848") >= 2; }, 10));
  running.reset();
  CHECK(c.target->dying() == 1);
  REQUIRE(c.t.run_until([&] { return processes_with("sleep 4848") == 0 && c.target->dying() == 0; }, 20));
  CHECK_FALSE(called_after);
}

TEST_CASE("ssh command target: a lost session ends commands with an error, new ones at once", "[ssh]") {
  Target c;
  std::optional<CommandTarget::Exit> exit;
  auto running = c.target->run("sleep 4949", {nullptr, [&](const CommandTarget::Exit& e) { exit = e; }});
  c.t.run_until([] { return false; }, 0.3);
  c.sshd.kill_now();
  REQUIRE(c.t.run_until([&] { return exit.has_value(); }, 60));
  CHECK(exit->error.find("lost") != std::string::npos);
  std::optional<CommandTarget::Exit> late;
  auto again = c.target->run("true", {nullptr, [&](const CommandTarget::Exit& e) { late = e; }});
  REQUIRE(late.has_value());
  CHECK(late->error.find("cannot run on test-box") != std::string::npos);
}
