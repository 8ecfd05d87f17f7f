// Remote commands through the ssh engine, against a real OpenSSH server on loopback (so the
// "remote" processes are visible here too, in /proc).
#include "child_process.hpp"
#include "eventually.hpp"
#include "loopback_fixtures.hpp"
#include "ssh_test_session.hpp"
#include "sshd_fixture.hpp"
#include "ssh/exec.hpp"

#include <catch2/catch.hpp>

#include <signal.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

using runara::ssh::ExecOptions;
using runara::ssh::ExecResult;
using runara::ssh::SshExec;
using runara::ssh::SshSession;
using runara::test::connect_session;
using runara::test::SshdFixture;
using runara::test::sshd_options;
using runara_test::Clock;
using runara_test::seconds_since;
using runara_test::TestLoop;

namespace {

// Runs one command to the end on a connected session.
ExecResult run(TestLoop& t, SshSession& session, ExecOptions options, double max_s = 20) {
  std::optional<ExecResult> result;
  auto exec_owned = runara::test::must(SshExec::start(session, std::move(options), [&](const ExecResult& r) { result = r; }));
  [[maybe_unused]] SshExec& exec = *exec_owned;
  if (!t.run_until([&] { return result.has_value(); }, max_s)) FAIL("the exec did not finish in time");
  return *result;
}

// The command lines of every process on this machine containing `text` (loopback: the
// "remote" side's processes are ours to see).
std::vector<std::string> processes_with(const std::string& text) {
  std::vector<std::string> found;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    std::string args = s.str();
    for (char& c : args)
      if (c == '\0') c = ' ';
    if (args.find(text) != std::string::npos) found.push_back(args);
  }
  return found;
}

struct Connected {
  SshdFixture sshd;
  TestLoop t;
  std::unique_ptr<SshSession> session;
  Connected() : session(std::make_unique<SshSession>(&t.loop, sshd_options(sshd))) {
    REQUIRE(connect_session(t, *session) == "");
  }
  ~Connected() {
    session.reset();
    CHECK(t.close() == 0);
  }
};

}  // namespace

TEST_CASE("ssh exec: exit code, stdout and stderr kept apart", "[ssh]") {
  Connected c;
  ExecOptions o;
  o.command = "echo out1; echo err1 >&2; echo out2; printf 'no newline' >&2; exit 3";
  std::vector<std::string> out_lines, err_lines;
  o.on_stdout = [&](std::string_view l) { out_lines.emplace_back(l); };
  o.on_stderr = [&](std::string_view l) { err_lines.emplace_back(l); };
  const ExecResult r = run(c.t, *c.session, o);
  CHECK(r.error == "");
  REQUIRE(r.exit_code.has_value());
  CHECK(*r.exit_code == 3);
  CHECK(r.signal == "");
  CHECK(r.stdout_tail == "out1\nout2\n");  // the process-group marker is not output
  CHECK(r.stderr_tail == "err1\nno newline");
  CHECK(out_lines == std::vector<std::string>{"out1", "out2"});
  CHECK(err_lines == std::vector<std::string>{"err1", "no newline"});
  CHECK(run(c.t, *c.session, ExecOptions{.command = "true"}).exit_code == 0);
}

TEST_CASE("ssh exec: stdin reaches the command, and a command may ignore it", "[ssh]") {
  Connected c;
  std::string data(300000, 'x');
  for (std::size_t i = 0; i < data.size(); i += 1000) data[i] = '\n';
  ExecOptions o;
  o.command = "sha256sum";
  o.stdin_data = data;
  const ExecResult r = run(c.t, *c.session, o);
  const std::string local = runara::test::run_tool(
      {"/bin/sh", "-c", "head -c 300000 " + runara::test::write_temp_file(c.sshd.dir(), "in", data) + " | sha256sum"});
  CHECK(r.stdout_tail == local);
  CHECK(r.exit_code == 0);
  o.command = "echo ignored";  // never reads its input
  const ExecResult ignored = run(c.t, *c.session, o);
  CHECK(ignored.stdout_tail == "ignored\n");
  CHECK(ignored.error == "");
}

TEST_CASE("ssh exec: env reaches the command but never a command line", "[ssh]") {
  Connected c;
  const std::string secret = "s3cr3t-value-4711-'quoted' \"and\" $(not run)";
  ExecOptions o;
  o.command = "printf '%s' \"$API_TOKEN\"; sleep 2";
  o.env = {{"API_TOKEN", secret}, {"OTHER", "x"}};
  std::optional<ExecResult> result;
  auto exec_owned = runara::test::must(SshExec::start(*c.session, o, [&](const ExecResult& r) { result = r; }));
  [[maybe_unused]] SshExec& exec = *exec_owned;
  // While it runs: no process on the machine shows the value in its arguments.
  bool running_seen = false;
  REQUIRE(c.t.run_until([&] { return !processes_with("sleep 2").empty(); }, 10));
  running_seen = true;
  CHECK(processes_with("s3cr3t-value-4711").empty());
  REQUIRE(c.t.run_until([&] { return result.has_value(); }, 10));
  CHECK(running_seen);
  CHECK(result->stdout_tail == secret);
  CHECK(result->exit_code == 0);
  CHECK(c.sshd.log().find("s3cr3t") == std::string::npos);
}

TEST_CASE("ssh exec: a bad env name is refused before anything is sent", "[ssh]") {
  Connected c;
  ExecOptions o;
  o.command = "true";
  o.env = {{"BAD-NAME", "v"}};
  CHECK(SshExec::start(*c.session, o, [](const ExecResult&) {}).error() ==
        "env name 'BAD-NAME' is not a shell variable name ([A-Za-z_][A-Za-z0-9_]*)");
}

TEST_CASE("ssh exec: lines stream while the command runs", "[ssh]") {
  Connected c;
  ExecOptions o;
  o.command = "for i in 1 2 3 4; do echo line$i; sleep 0.4; done";
  std::vector<double> at;
  const auto t0 = Clock::now();
  o.on_stdout = [&](std::string_view) { at.push_back(seconds_since(t0)); };
  const ExecResult r = run(c.t, *c.session, o);
  REQUIRE(at.size() == 4);
  CHECK(r.seconds >= 1.5);
  CHECK(r.seconds - at[0] >= 1.0);  // the first line came long before the end (shell start-up not counted)
  CHECK(at[3] - at[0] >= 1.0);   // and the others as they were printed
}

TEST_CASE("ssh exec: 100 MB of output keeps only the tail in memory", "[ssh]") {
  Connected c;
  ExecOptions o;
  const std::string line = "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789abcde";
  o.command = "yes " + line + " | head -c 104857600";
  std::size_t lines = 0, longest = 0;
  o.on_stdout = [&](std::string_view l) {
    ++lines;
    longest = std::max(longest, l.size());
  };
  const ExecResult r = run(c.t, *c.session, o, 120);
  CHECK(r.error == "");
  CHECK(r.exit_code == 0);
  CHECK(r.stdout_bytes == 104857600);
  CHECK(r.stdout_tail.size() == (8u << 20));
  CHECK(lines == 104857600 / (line.size() + 1) + 1);  // whole lines, the last one cut short
  CHECK(longest == line.size());
}

TEST_CASE("ssh exec: a timeout kills the whole remote process group", "[ssh]") {
  Connected c;
  ExecOptions o;
  // A child in the background and one in the foreground: both must go.
  o.command = "sleep 3171 & sleep 3172; echo never";
  o.timeout_s = 1;
  const ExecResult r = run(c.t, *c.session, o);
  CHECK(r.timed_out);
  CHECK(r.signal == "TERM");
  CHECK_FALSE(r.exit_code.has_value());
  CHECK(r.stdout_tail == "");
  CHECK(r.seconds < 5);  // the command sleeps for an hour: only the 1 s timeout ends it this soon
  // Each test's sleeps have their own numbers: ctest runs tests side by side.
  CHECK(runara::test::eventually([] { return processes_with("sleep 3171").empty() && processes_with("sleep 3172").empty(); }, 3));
}

TEST_CASE("ssh exec: a command ignoring TERM gets KILL after the grace period", "[ssh]") {
  Connected c;
  ExecOptions o;
  o.command = "trap '' TERM; sleep 3173 & sleep 3174";
  o.timeout_s = 0.5;
  // The KILL goes over a second exec channel, which the engine waits for 2 × grace + 2 s: with
  // 0.5 s, a shell slow to start beside the 50-command test (ctest -j2) once ran past it, and
  // with 1.5 s once beside the simulated-cloud scenarios.
  o.kill_grace_s = 3;
  const ExecResult r = run(c.t, *c.session, o);
  CHECK(r.timed_out);
  CHECK(r.signal == "KILL");
  CHECK(r.seconds < 10);  // the sleeps last an hour: only TERM, then KILL 3 s later, end it this soon
  CHECK(runara::test::eventually([] { return processes_with("sleep 3173").empty() && processes_with("sleep 3174").empty(); }, 3));
}

TEST_CASE("ssh exec: kill() on demand", "[ssh]") {
  Connected c;
  ExecOptions o;
  o.command = "echo started; sleep 3175";
  std::optional<ExecResult> result;
  auto exec = runara::test::must(SshExec::start(*c.session, o, [&](const ExecResult& r) { result = r; }));
  REQUIRE(c.t.run_until([&] { return exec->pgid() > 0; }, 10));
  exec->kill();
  REQUIRE(c.t.run_until([&] { return result.has_value(); }, 10));
  CHECK(result->signal == "TERM");
  CHECK_FALSE(result->timed_out);
  CHECK(result->stdout_tail == "started\n");
  CHECK(runara::test::eventually([] { return processes_with("sleep 3175").empty(); }, 3));
}

TEST_CASE("ssh exec: 50 concurrent commands across 5 sessions", "[ssh]") {
  SshdFixture sshd;
  TestLoop t;
  {
    std::vector<std::unique_ptr<SshSession>> sessions;
    for (int i = 0; i < 5; ++i) {
      sessions.push_back(std::make_unique<SshSession>(&t.loop, sshd_options(sshd)));
      REQUIRE(connect_session(t, *sessions.back()) == "");
    }
    std::vector<std::unique_ptr<SshExec>> execs;
    std::vector<std::optional<ExecResult>> results(50);
    const auto t0 = Clock::now();
    for (int i = 0; i < 50; ++i) {
      ExecOptions o;
      o.command = "sleep 1; echo $N; echo e$N >&2; exit $((N % 7))";
      o.env = {{"N", std::to_string(i)}};
      execs.push_back(runara::test::must(SshExec::start(*sessions[i % 5], o, [&results, i](const ExecResult& r) { results[i] = r; })));
    }
    REQUIRE(t.run_until([&] { return std::all_of(results.begin(), results.end(), [](auto& r) { return r.has_value(); }); }, 60));
    // Side by side, not one after another (50 s); generous, since CI cores are shared.
    CHECK(seconds_since(t0) < 25);
    for (int i = 0; i < 50; ++i) {
      CHECK(results[i]->error == "");
      CHECK(results[i]->stdout_tail == std::to_string(i) + "\n");
      // Ends with: the remote user's shell start-up files may write to stderr first (root's
      // .bashrc here runs `pyenv rehash`, which races with itself across 50 shells).
      const std::string want = "e" + std::to_string(i) + "\n";
      const std::string& err = results[i]->stderr_tail;
      CHECK(err.size() >= want.size());
      CHECK(err.compare(err.size() - std::min(err.size(), want.size()), want.size(), want) == 0);
      CHECK(results[i]->exit_code == i % 7);
    }
  }
  CHECK(t.close() == 0);
}

TEST_CASE("ssh exec: sshd killed mid-command ends it with a clear error, no hang", "[ssh]") {
  Connected c;
  ExecOptions o;
  o.command = "echo started; sleep 3176";
  bool started = false;  // sshd is killed only once the line has arrived: it must be kept
  o.on_stdout = [&](std::string_view) { started = true; };
  std::optional<ExecResult> result;
  auto exec_owned = runara::test::must(SshExec::start(*c.session, o, [&](const ExecResult& r) { result = r; }));
  [[maybe_unused]] SshExec& exec = *exec_owned;
  REQUIRE(c.t.run_until([&] { return exec.pgid() > 0 && started; }, 10));
  const auto t0 = Clock::now();
  c.sshd.kill_now();
  REQUIRE(c.t.run_until([&] { return result.has_value(); }, 10));
  CHECK(seconds_since(t0) < 4);  // the socket closing ends it, not a keepalive timeout
  CHECK(result->error.find("the SSH connection to " + c.sshd.user() + "@127.0.0.1:" + std::to_string(c.sshd.port()) +
                           " was lost") == 0);
  CHECK(result->stdout_tail == "started\n");  // what came before is kept
  CHECK_FALSE(c.session->ready());
  CHECK_THAT(SshExec::start(*c.session, o, [](const ExecResult&) {}).error(),
             Catch::Contains("is not connected") && Catch::Contains("was lost"));
}

TEST_CASE("ssh exec: a host gone silent is declared lost by the keepalive, no hang", "[ssh]") {
  SshdFixture sshd;
  TestLoop t;
  {
    auto options = sshd_options(sshd);
    options.keepalive_s = 1;  // lost after 3 unanswered intervals
    SshSession session(&t.loop, options);
    REQUIRE(connect_session(t, session) == "");
    std::optional<ExecResult> result;
    bool started = false;  // frozen only once the line has arrived: it must be kept
    ExecOptions o{.command = "echo started; sleep 3178"};
    o.on_stdout = [&](std::string_view) { started = true; };
    auto exec_owned = runara::test::must(SshExec::start(session, o, [&](const ExecResult& r) { result = r; }));
    [[maybe_unused]] SshExec& exec = *exec_owned;
    REQUIRE(t.run_until([&] { return exec.pgid() > 0 && started; }, 10));
    const auto t0 = Clock::now();
    sshd.freeze_connections();  // TCP stays up; nothing answers any more
    REQUIRE(t.run_until([&] { return result.has_value(); }, 15));
    // 3 silent 1 s intervals counted from the last answer (up to ~1.3 s before the freeze).
    INFO("after " << seconds_since(t0) << " s: " << (result ? result->error : std::string("-")));
    CHECK(seconds_since(t0) >= 1.5);
    CHECK(seconds_since(t0) < 10);
    CHECK(result->error.find("was lost: no answer from the host for") != std::string::npos);
    CHECK(result->stdout_tail == "started\n");
    sshd.kill_now();
  }
  CHECK(t.close() == 0);
}

TEST_CASE("ssh exec: closing the session ends running commands", "[ssh]") {
  Connected c;
  ExecOptions o;
  o.command = "sleep 3177";
  std::optional<ExecResult> result;
  auto exec_owned = runara::test::must(SshExec::start(*c.session, o, [&](const ExecResult& r) { result = r; }));
  [[maybe_unused]] SshExec& exec = *exec_owned;
  REQUIRE(c.t.run_until([&] { return exec.pgid() > 0; }, 10));
  bool closed = false;
  c.session->close([&](runara::Status) { closed = true; });
  REQUIRE(c.t.run_until([&] { return closed && result.has_value(); }, 5));
  CHECK(result->error.find("was closed") != std::string::npos);
  // Closing does not kill what runs there (teardown kills process groups first): clean up, by
  // its group (loopback: the "remote" group is on this machine).
  ::kill(-static_cast<pid_t>(exec.pgid()), SIGKILL);
}

TEST_CASE("ssh exec: an idle session survives its keepalives without spinning, and notices sshd dying", "[ssh]") {
  SshdFixture sshd;
  TestLoop t;
  auto options = sshd_options(sshd);
  options.keepalive_s = 0.5;  // dead-peer limit: 3 unanswered keepalives + 1 s = 2.5 s
  auto session = std::make_unique<SshSession>(&t.loop, options);
  REQUIRE(connect_session(t, *session) == "");
  const double cpu_before = static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
  t.run_until([] { return false; }, 4);  // idle: no command, no transfer, no tunnel
  const double cpu = static_cast<double>(std::clock()) / CLOCKS_PER_SEC - cpu_before;
  CHECK(session->ready());
  INFO(session->error());
  CHECK(cpu < 1.0);
  CHECK(run(t, *session, ExecOptions{.command = "echo still here"}).stdout_tail == "still here\n");
  sshd.kill_now();
  REQUIRE(t.run_until([&] { return !session->ready(); }, 10));
  CHECK(session->error().find("was lost") != std::string::npos);
  session.reset();
  CHECK(t.close() == 0);
}
