// The `ssh` Lua primitive end to end: scripts run by the real `runara` binary log into a real
// OpenSSH sshd on loopback (tests/support/sshd_fixture.*) as a host granted with --allow-host,
// with --ssh-key and a known_hosts file in a throwaway HOME.
#include "child_process.hpp"
#include "gpu_shims.hpp"
#include "sim/fake_digitalocean.hpp"
#include "sim/fake_llm_server.hpp"
#include "sshd_fixture.hpp"
#include "test_processes.hpp"
#include "test_text.hpp"

#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

namespace {

namespace fs = std::filesystem;
using runara::test::ChildProcess;
using runara::test::ChildResult;
using runara::test::proc_file;
using runara::test::read_all;
using runara::test::replace_all;
using runara::test::run_runara;
using runara::test::SshdFixture;

// Command lines of the processes on this machine holding `text` (the "remote" is loopback).
int processes_with(const std::string& text) {
  int found = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::string args = proc_file((entry.path() / "cmdline").string());
    for (char& c : args)
      if (c == '\0') c = ' ';
    if (args.find(text) != std::string::npos) ++found;
  }
  return found;
}

// Environments of the processes on this machine holding `text`.
int environments_with(const std::string& text) {
  int found = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    if (proc_file((entry.path() / "environ").string()).find(text) != std::string::npos) ++found;
  }
  return found;
}

struct SshRun {
  explicit SshRun(bool start_now = true) : sshd(start_now) { prepare(); }
  SshdFixture sshd;
  std::string base = runara::test::temp_dir("ssh-binding");
  std::string home = base + "/home";
  std::string script_dir = base + "/script";
  std::string out = base + "/out";

  void prepare() {
    fs::create_directories(home + "/.ssh");
    fs::create_directories(script_dir);
    trust();
  }
  ~SshRun() {
    std::error_code ignored;
    fs::remove_all(base, ignored);
  }
  std::string host() const { return "127.0.0.1:" + std::to_string(sshd.port()); }
  // known_hosts holds the fixture's current host key.
  void trust() {
    std::ofstream(home + "/.ssh/known_hosts")
        << "[127.0.0.1]:" << sshd.port() << " " << read_all(sshd.dir() + "/host_key.pub");
  }
  std::vector<std::string> args(const std::string& body, std::vector<std::string> flags = {}) {
    const std::string script = script_dir + "/t.lua";
    std::ofstream(script) << replace_all(replace_all(body, "HOST", host()), "SSHDIR", sshd.dir());
    std::vector<std::string> a{"--out", out};
    bool grant = true;
    for (const auto& f : flags) grant = grant && f != "--no-grant";
    if (grant) a.insert(a.end(), {"--allow-host", host(), "--ssh-key", sshd.user_key_path()});
    for (const auto& f : flags)
      if (f != "--no-grant") a.push_back(f);
    a.push_back(script);
    return a;
  }
  std::map<std::string, std::string> env(std::map<std::string, std::string> more = {}) {
    more["HOME"] = home;
    return more;
  }
  ChildResult run(const std::string& body, std::vector<std::string> flags = {}, double timeout_s = 60,
                  std::map<std::string, std::string> extra_env = {}) {
    return run_runara(args(body, std::move(flags)), timeout_s, env(std::move(extra_env)));
  }
  std::string log() { return read_all(out + "/ssh/127.0.0.1.log"); }
};

std::string all(const ChildResult& r) { return r.out + "\n--- stderr ---\n" + r.err; }

}  // namespace

TEST_CASE("ssh exec: exit codes, stdout and stderr apart, env, stdin, live output and the log", "[ssh][ssh_lua]") {
  SshRun t;
  const auto r = t.run(R"(
    local s = ssh.connect("HOST")
    local a = s:exec("echo out; echo err >&2; exit 3", { check = false })
    print("code", a.code, "stdout", a.stdout, "stderr", a.stderr)
    local b = s:exec("printf '%s|%s' \"$GREETING\" \"$(cat)\"", { env = { GREETING = "hi there" }, stdin = "from stdin", quiet = true })
    print("env+stdin", b.stdout)
    local ok, err = pcall(s.exec, s, "echo doomed >&2; exit 7")
    print("check", err)
    s:close()
    print("closed", s.closed)
  )");
  INFO(all(r));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("code\t3\tstdout\tout\n\tstderr\terr\n") != std::string::npos);
  CHECK(r.out.find("env+stdin\thi there|from stdin") != std::string::npos);
  CHECK(r.out.find("`echo doomed >&2; exit 7` exited with code 7; stderr ends with:\ndoomed") != std::string::npos);
  CHECK(r.out.find("[127.0.0.1] out") != std::string::npos);  // live, prefixed
  CHECK(r.out.find("[127.0.0.1] hi there") == std::string::npos);  // quiet
  CHECK(r.out.find("closed\ttrue") != std::string::npos);
  const std::string log = t.log();
  CHECK(log.find("$ echo out; echo err >&2; exit 3\nout\n[stderr] err\n") != std::string::npos);
  CHECK(log.find("exited with code 3") != std::string::npos);
}

TEST_CASE("ssh exec: a secret env value reaches the command but no log, output or remote command line", "[ssh][ssh_lua]") {
  SshRun t;
  const std::string secret = "s3cr3t-ssh-binding-4c1e9a";
  const std::string body = R"(
    local s = ssh.connect("HOST")
    local p = s:spawn("echo len=${#TOKEN}; echo $TOKEN; echo STARTED; sleep 3", { env = { TOKEN = runara.secret("TOKEN") } })
    for line in p:lines() do print("line", line) if line == "STARTED" then break end end
    print("waited", p:wait().code)
  )";
  // The script is written (and its file closed) before runara starts: it must not find it empty.
  std::vector<std::string> argv{RUNARA_BINARY};
  for (auto& arg : t.args(body, {"--secret", "TOKEN@" + t.host()})) argv.push_back(std::move(arg));
  ChildProcess child(argv, t.env({{"TOKEN", secret}}));
  child.close_stdin();
  const bool started = child.wait_for_output("STARTED", 20);
  INFO("stdout: " << child.out_so_far() << "\nstderr: " << child.err_so_far());
  REQUIRE(started);
  // Running now: its environment holds the value (by design), no command line does.
  CHECK(processes_with(secret) == 0);
  CHECK(environments_with(secret) >= 1);
  const auto r = child.wait(30);
  INFO(all(r));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("len=" + std::to_string(secret.size())) != std::string::npos);
  CHECK(r.out.find("<secret TOKEN") != std::string::npos);  // the echoed value, redacted
  CHECK(all(r).find(secret) == std::string::npos);
  CHECK(t.log().find(secret) == std::string::npos);
  CHECK(read_all(t.out + "/run.log").find(secret) == std::string::npos);

  SECTION("a granted host gets a secret only when it is bound to it") {
    const auto refused = t.run(R"(
      local s = ssh.connect("HOST")
      s:exec("true", { env = { TOKEN = runara.secret("TOKEN") } })
    )", {"--secret", "TOKEN"}, 60, {{"TOKEN", secret}});
    INFO(all(refused));
    CHECK(refused.exit_code == 1);
    CHECK(refused.err.find("secret TOKEN may not be sent to " + t.host()) != std::string::npos);
  }
}

TEST_CASE("ssh download: a file the machine wrote with a secret's value lands masked in the output folder",
          "[ssh][ssh_lua]") {
  SshRun t;
  const std::string secret = "s3cr3t-ssh-download-77d0b2";
  const auto r = t.run(R"(
    local s = ssh.connect("HOST")
    s:exec("printf 'token=%s\\n' \"$TOKEN\" > SSHDIR/leak.txt", { env = { TOKEN = runara.secret("TOKEN") } })
    print("down", s:download("SSHDIR/leak.txt", "leak.txt").bytes)
  )", {"--secret", "TOKEN@" + t.host()}, 60, {{"TOKEN", secret}});
  INFO(all(r));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("down\t" + std::to_string(secret.size() + 7)) != std::string::npos);
  const std::string leak = read_all(t.out + "/leak.txt");
  CHECK(leak.find(secret) == std::string::npos);
  CHECK(leak == "token=<secret TOKEN" + std::string(secret.size() - 14, '*') + ">\n");  // as long as the value
}

TEST_CASE("ssh spawn: lines as they come, kill takes the whole process group", "[ssh][ssh_lua]") {
  SshRun t;
  const std::string marker = "sleep 4242";
  const auto r = t.run(R"(
    local s = ssh.connect("HOST")
    local p = s:spawn("for i in 1 2 3; do echo line$i; done; (sleep 4242; echo child) & sleep 4242")
    local got = {}
    for line in p:lines() do got[#got + 1] = line if #got == 3 then break end end
    print("got", table.concat(got, ","), "running", p:running())
    p:kill()
    local res = p:wait()
    print("signal", res.signal, "running", p:running(), "stdout", (p:output().stdout:gsub("\n", " ")))
  )");
  INFO(all(r));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("got\tline1,line2,line3\trunning\ttrue") != std::string::npos);
  CHECK(r.out.find("signal\tTERM\trunning\tfalse\tstdout\tline1 line2 line3 ") != std::string::npos);
  CHECK(processes_with(marker) == 0);
}

TEST_CASE("ssh teardown kills what is still running and closes the session", "[ssh][ssh_lua]") {
  SshRun t;
  const auto r = t.run(R"(
    local s = ssh.connect("HOST")
    s:spawn("sleep 4343")
    local p = s:spawn("echo up; sleep 4343")
    p:lines()()
    print("leaving")
  )");
  INFO(all(r));
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("ssh: teardown: closing 1 session(s)") != std::string::npos);
  CHECK(r.err.find("killing 2 remote process group(s) first") != std::string::npos);
  CHECK(processes_with("sleep 4343") == 0);
}

TEST_CASE("ssh exec timeout kills the command and says so", "[ssh][ssh_lua]") {
  SshRun t;
  const auto r = t.run(R"(
    local s = ssh.connect("HOST", { wait_cloud_init = true })  -- no cloud-init here: skipped
    local a = s:exec("sleep 4444", { timeout = 1, check = false })
    print("timed_out", a.timed_out, "signal", a.signal, "fast", a.seconds < 5)
    local ok, err = pcall(s.exec, s, "sleep 4444", { timeout = 1 })
    print(err)
  )");
  INFO(all(r));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("timed_out\ttrue\tsignal\tTERM\tfast\ttrue") != std::string::npos);
  CHECK(r.out.find("`sleep 4444` timed out (its process group was killed with SIGTERM)") != std::string::npos);
  CHECK(processes_with("sleep 4444") == 0);
}

TEST_CASE("ssh upload and download of a folder tree, byte for byte, modes kept", "[ssh][ssh_lua]") {
  SshRun t;
  fs::create_directories(t.script_dir + "/tree/sub/deeper");
  std::string big(3 << 20, 'x');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 7919) >> 3);
  std::ofstream(t.script_dir + "/tree/big.bin", std::ios::binary) << big;
  std::ofstream(t.script_dir + "/tree/sub/a.txt") << "alpha\n";
  std::ofstream(t.script_dir + "/tree/sub/deeper/run.sh") << "#!/bin/sh\necho ran\n";
  ::chmod((t.script_dir + "/tree/sub/deeper/run.sh").c_str(), 0755);
  const auto r = t.run(R"(
    local s = ssh.connect("HOST")
    local up = s:upload("tree", "SSHDIR/remote_tree")
    print("up", up.files, up.bytes)
    print(s:exec("SSHDIR/remote_tree/sub/deeper/run.sh", { quiet = true }).stdout)
    local down = s:download("SSHDIR/remote_tree", "copy/tree")
    print("down", down.files, down.bytes)
  )");
  INFO(all(r));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("up\t3\t" + std::to_string(big.size() + 6 + 19)) != std::string::npos);
  CHECK(r.out.find("ran") != std::string::npos);
  CHECK(read_all(t.out + "/copy/tree/big.bin") == big);
  CHECK(read_all(t.out + "/copy/tree/sub/a.txt") == "alpha\n");
  struct stat st{};
  REQUIRE(::stat((t.out + "/copy/tree/sub/deeper/run.sh").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0755);
}

TEST_CASE("ssh local paths obey the sandbox", "[ssh][ssh_lua]") {
  SshRun t;
  fs::create_directories(t.base + "/outside");
  std::ofstream(t.base + "/outside/secret.txt") << "not for the script\n";
  fs::create_directories(t.out);
  fs::create_directory_symlink(t.base + "/outside", t.out + "/link");
  const auto r = t.run(R"(
    local s = ssh.connect("HOST")
    s:exec("echo x > SSHDIR/x.txt")
    for _, try in ipairs{
      function() return s:download("SSHDIR/x.txt", "../escaped.txt") end,
      function() return s:download("SSHDIR/x.txt", "/tmp/escaped.txt") end,
      function() return s:download("SSHDIR/x.txt", "link/escaped.txt") end,
      function() return s:download("SSHDIR/x.txt", "run.log") end,
      function() return s:upload("../outside/secret.txt", "SSHDIR/stolen.txt") end,
      function() return s:upload("/etc/hostname", "SSHDIR/stolen2.txt") end,
    } do
      local ok, err = pcall(try)
      print(ok and "ESCAPED" or "refused: " .. tostring(err))
    end
  )");
  INFO(all(r));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("ESCAPED") == std::string::npos);
  CHECK(!fs::exists(t.base + "/escaped.txt"));
  CHECK(!fs::exists(t.base + "/outside/escaped.txt"));
  CHECK(!fs::exists(t.sshd.dir() + "/stolen.txt"));
  CHECK(!fs::exists(t.sshd.dir() + "/stolen2.txt"));
  CHECK(r.out.find("s:download: local path") != std::string::npos);
  CHECK(r.out.find("symlink") != std::string::npos);
  CHECK(r.out.find("is written by runara itself") != std::string::npos);
  CHECK(r.out.find("--allow-read") != std::string::npos);
}

TEST_CASE("ssh forward: http_load reaches a server through the tunnel without a grant", "[ssh][ssh_lua]") {
  SshRun t;
  const auto r = t.run(R"(
    local server = http_load.fake_server{ ttft_ms = 2, itl_ms = 1, output_tokens = 8 }
    local s = ssh.connect("HOST")
    local url = s:forward(server.port)
    print("url", url:match("^http://127%.0%.0%.1:%d+$") ~= nil, url ~= server.url)
    local res = http_load.run{ url = url, model = server.model, max_tokens = 8, concurrency = 4, requests = 40 }
    print("completed", res.completed, "failed", res.failed)
  )");
  INFO(all(r));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("url\ttrue\ttrue") != std::string::npos);
  CHECK(r.out.find("completed\t40\tfailed\t0") != std::string::npos);
}

// sshd keeps Nagle's algorithm on until a command starts on the connection: a tunnel opened
// straight after connecting got each stream's first token only after our delayed ACK (~40 ms
// after the response head), 43 ms instead of 10 (as `ssh -N -L` still does), and one token gap
// in twenty or more waited as long. Linux delays an ACK 40 ms at least, so 35 ms tells the two
// apart with room for a loaded or sanitized build. Without the fix: TTFT 43-47 ms, p95 gap
// 42-45 ms. With it: 10.7 and 10.3 ms; under ASan with two busy cores 14-20 and 12-14 ms.
// Not p99: one scheduling stall delays all 8 streams at once, and 8 gaps of the 744 are 1 %
// (p99 43 ms once in a loaded sanitizer suite).
TEST_CASE("ssh forward: a tunnel on a fresh session adds no delayed-ACK wait to the first token", "[ssh][ssh_lua]") {
  SshRun t;
  const auto r = t.run(R"(
    local server = http_load.fake_server{ ttft_ms = 10, itl_ms = 10, output_tokens = 32 }
    local url = ssh.connect("HOST"):forward(server.port)
    local res = http_load.run{ url = url, model = server.model, max_tokens = 32, concurrency = 8, requests = 24, quiet = true }
    print(string.format("ttft %.1f itl_p95 %.1f itl_p99 %.1f failed %d", res.median_ttft_ms, res.p95_itl_ms, res.p99_itl_ms, res.failed))
    print("slow", res.median_ttft_ms > 35 or res.p95_itl_ms > 35)
  )");
  INFO(all(r));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("failed 0") != std::string::npos);
  CHECK(r.out.find("slow\tfalse") != std::string::npos);
}

TEST_CASE("ssh forward: remote_host names the address the machine connects to", "[ssh][ssh_lua]") {
  SshRun t;
  // A server only on 127.0.0.2: reached when the tunnel names that address, refused on the
  // default 127.0.0.1 (so the argument really is what sshd connects to).
  runara::FakeLlmConfig config;
  config.host = "127.0.0.2";
  config.output_tokens = 4;
  runara::FakeLlmServer server(config);
  const int port = server.start();
  REQUIRE(port > 0);
  const auto r = t.run(replace_all(R"(
    local other = http_load.run{ url = ssh.connect("HOST"):forward(PORT, "127.0.0.2"), model = "fake-model",
                                 max_tokens = 4, concurrency = 2, requests = 10, quiet = true }
    print("127.0.0.2", other.completed, other.failed)
    local default = ssh.connect("HOST"):forward(PORT)
    print("default", pcall(http_load.run, { url = default, model = "fake-model", max_tokens = 4, requests = 1, quiet = true }))
    print(pcall(function() return ssh.connect("HOST"):forward(PORT, "") end))
  )", "PORT", std::to_string(port)));
  INFO(all(r));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("127.0.0.2\t10\t0") != std::string::npos);
  CHECK(r.out.find("default\tfalse\t") != std::string::npos);
  CHECK(r.out.find("every request failed (1 of 1; reset)") != std::string::npos);
  CHECK(r.out.find("'remote_host' must be a host name or address") != std::string::npos);
  CHECK(server.stats().requests_served == 10);
}

// Hundreds of tunnels on one session: stepping them all costs more than a loop phase's budget,
// so a pump that always started over from the first one starved the last ones (the one opening
// its channel among them, which held every other open back): a 512-stream sweep through the
// tunnel stopped after a few dozen requests.
TEST_CASE("ssh forward: 600 connections at once through one session all get their answer", "[ssh][ssh_lua]") {
  SshRun t;
  const auto r = t.run(R"(
    local server = http_load.fake_server{ ttft_ms = 5, itl_ms = 2, output_tokens = 8 }
    local s = ssh.connect("HOST")
    local url = s:forward(server.port)
    local res = http_load.run{ url = url, model = server.model, max_tokens = 8, concurrency = 600, requests = 600,
                               threads = 2, timeout = 60 }
    print("completed", res.completed, "failed", res.failed)
  )", {}, 150);
  INFO(all(r));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("completed\t600\tfailed\t0") != std::string::npos);
}

TEST_CASE("ssh exec of 100 MB of output keeps memory bounded", "[ssh][ssh_lua]") {
  SshRun t;
  const auto r = t.run(R"(
    local s = ssh.connect("HOST")
    local a = s:exec("head -c 100000000 /dev/zero | tr '\\0' a | fold -w 99", { quiet = true })
    print("bytes", a.stdout_bytes, "kept", #a.stdout)
  )", {"--max-memory", "96M"}, 120);
  INFO(all(r));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("bytes\t101010101\tkept\t8388608") != std::string::npos);
#if !defined(__SANITIZE_ADDRESS__)  // ASan's quarantine alone holds 256 MiB of freed blocks
  CHECK(r.max_rss_kb < 200 * 1024);
#endif
  CHECK(fs::file_size(t.out + "/ssh/127.0.0.1.log") > 100000000);
}

TEST_CASE("ssh spawn: 20 MB of empty lines never read keeps memory bounded", "[ssh][ssh_lua]") {
  // Each empty line costs a std::string in the backlog (32 bytes) though it holds 0 bytes: the
  // backlog's 4 MiB bound counted bytes only, and this took 680 MB past --max-memory 64M.
#if defined(__SANITIZE_ADDRESS__)
  const std::string lines = "5000000";  // 20 million take the sanitized build 90 s
#else
  const std::string lines = "20000000";
#endif
  SshRun t;
  const auto r = t.run(replace_all(R"(
    local s = ssh.connect("HOST")
    local p = s:spawn("head -c LINES /dev/zero | tr '\\0' '\\n'", { quiet = true })
    local res = p:wait()
    local kept = 0
    for _ in p:lines() do kept = kept + 1 end
    print("bytes", res.stdout_bytes, "kept", kept)
  )", "LINES", lines), {"--max-memory", "64M"}, 180);
  INFO(all(r));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("bytes\t" + lines + "\tkept\t131072\n") != std::string::npos);  // 4 MiB / 32 bytes a line
  CHECK(all(r).find(":lines() is not keeping up; dropping the oldest lines") != std::string::npos);
#if !defined(__SANITIZE_ADDRESS__)  // ASan's quarantine alone holds 256 MiB of freed blocks
  CHECK(r.max_rss_kb < 96 * 1024);
#endif
}

TEST_CASE("ssh refuses hosts not granted, unknown and changed host keys, and a wrong key", "[ssh][ssh_lua]") {
  SshRun t;
  const std::string body = R"(
    local s = ssh.connect("HOST", { timeout = 5 })
    print("CONNECTED", s:exec("echo ok", { quiet = true }).stdout)
  )";
  SECTION("not granted") {
    const auto r = t.run(body, {"--no-grant"});
    INFO(all(r));
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("ssh.connect: host " + t.host() + " is not granted") != std::string::npos);
    CHECK(r.err.find("--allow-host " + t.host()) != std::string::npos);
  }
  SECTION("unknown host key, then accepted with --accept-new-host-keys") {
    fs::remove(t.home + "/.ssh/known_hosts");
    const auto r = t.run(body);
    INFO(all(r));
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("is unknown") != std::string::npos);
    CHECK(r.err.find(t.sshd.host_key_fingerprint()) != std::string::npos);
    const auto ok = t.run(body, {"--accept-new-host-keys"});
    INFO(all(ok));
    CHECK(ok.exit_code == 0);
    CHECK(ok.out.find("CONNECTED\tok") != std::string::npos);
  }
  SECTION("changed host key, even with --accept-new-host-keys") {
    t.sshd.replace_host_key();
    const auto r = t.run(body, {"--accept-new-host-keys"});
    INFO(all(r));
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("does NOT match") != std::string::npos);
  }
  SECTION("a key the server does not accept") {
    std::vector<std::string> a = t.args(body, {"--no-grant"});
    a.insert(a.begin(), {"--allow-host", t.host(), "--ssh-key", t.sshd.dir() + "/other_key"});
    const auto r = run_runara(a, 60, t.env());
    INFO(all(r));
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("ssh.connect: ") != std::string::npos);
    CHECK(r.out.find("CONNECTED") == std::string::npos);
  }
}

TEST_CASE("ssh: sshd killed mid-command gives a clear error, no hang, and teardown goes on", "[ssh][ssh_lua]") {
  SshRun t;
  auto argv = t.args(R"(
    local s = ssh.connect("HOST")
    local p = s:spawn("echo started; sleep 4545")
    p:lines()()
    print("RUNNING")
    local ok, err = pcall(s.exec, s, "sleep 4546")
    print("after", err)
  )");
  argv.insert(argv.begin(), RUNARA_BINARY);
  ChildProcess child(argv, t.env());
  child.close_stdin();
  REQUIRE(child.wait_for_output("RUNNING", 20));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  t.sshd.kill_now();
  const auto r = child.wait(60);
  INFO(all(r));
  CHECK(r.exit_code == 0);
  CHECK(r.seconds < 50);
  CHECK(r.out.find("was lost") != std::string::npos);
}

TEST_CASE("ssh teardown ends before the droplets are destroyed", "[ssh][ssh_lua]") {
  SshRun t;
  runara::sim::FakeDoConfig config;
  config.token = "order-token-8d2c";
  config.active_after_s = 0.1;
  config.delete_after_s = 0.1;
  config.enforce_rate_limits = false;
  runara::sim::FakeDigitalOcean fake(config);
  fake.start();
  // The remote command takes 2 s to die: with teardowns running side by side, the droplet
  // would be destroyed while the session still works on it.
  const auto r = t.run(R"(
    local d = droplet.create{ name = "order", size = "s-1vcpu-1gb", image = "ubuntu-22-04-x64", region = "nyc3" }
    local s = ssh.connect("HOST")
    local p = s:spawn("trap 'sleep 2; exit 0' TERM; echo up; while :; do sleep 0.1; done")
    p:lines()()
    print("LEAVING")
  )", {}, 90, {{"RUNARA_DO_API_URL", fake.base_url()}, {"DIGITALOCEAN_TOKEN", config.token},
               {"RUNARA_STATE_DIR", t.base + "/state"}, {"RUNARA_POLL_S", "0.1"}});
  INFO(all(r));
  REQUIRE(r.exit_code == 0);
  const auto closed = r.err.find("ssh: closed 127.0.0.1");
  const auto destroying = r.err.find("destroying droplet order");
  REQUIRE(closed != std::string::npos);
  REQUIRE(destroying != std::string::npos);
  CHECK(closed < destroying);
  CHECK(fake.live_droplets() == 0);
}

// The droplet's authorized_keys as cloud-init would write it on a real machine: the public keys
// the create named, here read back from the fake API once the run registered its own.
void authorize_api_keys(const SshdFixture& sshd, const runara::sim::FakeDigitalOcean& fake) {
  std::ofstream keys(sshd.dir() + "/authorized_keys", std::ios::trunc);
  for (const auto& k : fake.keys()) keys << k.value("public_key", "") << "\n";
}

TEST_CASE("ssh into the run's own droplet: the run's key lets it in, trust on first use, a changed key is refused",
          "[ssh][ssh_lua]") {
  SshRun t;
  fs::remove(t.home + "/.ssh/known_hosts");  // droplets never need known_hosts
  runara::sim::FakeDoConfig config;
  config.token = "tofu-token-51ab";
  config.active_after_s = 0.1;
  config.delete_after_s = 0.1;
  config.enforce_rate_limits = false;
  config.public_ipv4 = [](std::int64_t) { return std::string("127.0.0.1"); };  // the sshd fixture
  runara::sim::FakeDigitalOcean fake(config);
  fake.start();
  std::map<std::string, std::string> cloud{{"RUNARA_DO_API_URL", fake.base_url()}, {"DIGITALOCEAN_TOKEN", config.token},
                                           {"RUNARA_STATE_DIR", t.base + "/state"}, {"RUNARA_POLL_S", "0.1"}};
  const std::string body = R"(
    local d = droplet.create{ name = "tofu", size = "s-1vcpu-1gb", image = "ubuntu-22-04-x64", region = "nyc3" KEYS }
    print("CREATED")
    while not pcall(runara.read_file, "keys.txt") do runara.sleep(0.1) end
    local opts = { port = PORT, user = "USER", timeout = 10 }
    local s = ssh.connect(d, opts)
    print("FIRST", s.name, s:exec("echo in", { quiet = true }).stdout)
    while not pcall(runara.read_file, "go.txt") do runara.sleep(0.1) end
    local ok, err = pcall(ssh.connect, d, opts)
    print("SECOND", ok, err)
  )";
  auto script_for = [&](const std::string& keys) {
    return replace_all(replace_all(replace_all(body, "PORT", std::to_string(t.sshd.port())), "USER", t.sshd.user()),
                       "KEYS", keys);
  };

  SECTION("a droplet made with the user's own keys needs --ssh-key") {
    fake.add_key("mine", read_all(t.sshd.user_key_path() + ".pub"));
    const std::string fingerprint = fake.keys().at(0).value("fingerprint", "");
    std::ofstream(t.script_dir + "/keys.txt") << "ready";
    auto args = t.args(script_for(", ssh_keys = { \"" + fingerprint + "\" }"), {"--no-grant"});
    const auto r = run_runara(args, 60, t.env(cloud));
    INFO(all(r));
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("pass --ssh-key PATH") != std::string::npos);
    CHECK(fake.live_droplets() == 0);
    CHECK(fake.keys().size() == 1);  // the user's key is not the run's: teardown left it alone
  }
  SECTION("the run's own key, pinned on first use, refused when the host key changed") {
    auto args = t.args(script_for(""), {"--no-grant"});  // no --ssh-key, no grant
    args.insert(args.begin(), RUNARA_BINARY);
    ChildProcess child(args, t.env(cloud));
    child.close_stdin();
    REQUIRE(child.wait_for_output("CREATED", 30));
    REQUIRE(fake.keys().size() == 1);
    authorize_api_keys(t.sshd, fake);
    std::ofstream(t.script_dir + "/keys.txt") << "ready";
    REQUIRE(child.wait_for_output("FIRST", 30));
    t.sshd.replace_host_key();
    std::ofstream(t.script_dir + "/go.txt") << "go";
    const auto r = child.wait(60);
    INFO(all(r));
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("FIRST\ttofu") != std::string::npos);
    CHECK(r.err.find("trusted on first use, pinned for the run") != std::string::npos);
    CHECK(r.out.find("SECOND\tfalse") != std::string::npos);
    CHECK(r.out.find("CHANGED during this run") != std::string::npos);
    CHECK(fake.live_droplets() == 0);
    CHECK(fake.keys().empty());  // the run's key went with the droplet
  }
}

TEST_CASE("ssh.connect retries until sshd comes up, saying what it waits for", "[ssh][ssh_lua]") {
  SshRun t(/*start_now=*/false);
  auto argv = t.args(R"(
    local s = ssh.connect("HOST", { timeout = 30 })
    print("IN", s:exec("echo yes", { quiet = true }).stdout)
  )");
  argv.insert(argv.begin(), RUNARA_BINARY);
  ChildProcess child(argv, t.env());
  child.close_stdin();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  t.sshd.start();
  const auto r = child.wait(60);
  INFO(all(r));
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("IN\tyes") != std::string::npos);
  const std::string log = read_all(t.out + "/run.log");
  CHECK(log.find("after 1 attempt(s)") == std::string::npos);
  CHECK(log.find("ssh: connected to 127.0.0.1") != std::string::npos);
}

TEST_CASE("ssh: Ctrl-C during a remote command kills it and closes the session", "[ssh][ssh_lua]") {
  SshRun t;
  auto argv = t.args(R"(
    local s = ssh.connect("HOST")
    s:spawn("echo started; sleep 5151")
    print("RUNNING")
    s:exec("sleep 5152")
  )");
  argv.insert(argv.begin(), RUNARA_BINARY);
  ChildProcess child(argv, t.env());
  child.close_stdin();
  REQUIRE(child.wait_for_output("RUNNING", 20));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  child.signal(SIGINT);
  const auto r = child.wait(60);
  INFO(all(r));
  CHECK(r.exit_code == 130);
  CHECK(r.err.find("ssh: closed 127.0.0.1") != std::string::npos);
  CHECK(processes_with("sleep 5151") == 0);
  CHECK(processes_with("sleep 5152") == 0);
}

// gpu_metrics on an ssh session from Lua: the session is a command target (Context), the GPU
// tool is a shim first on the remote PATH (sshd's SetEnv), replaying an H100's nvidia-smi line.
TEST_CASE("gpu_metrics reads and samples through an ssh session", "[ssh][ssh_lua][gpu_metrics]") {
  SshRun t(false);
  gpu_test::ShimDir shims;
  shims.nvidia(2);
  t.sshd.set_env("PATH", shims.path());
  t.sshd.start();
  t.trust();
  const auto r = t.run(R"(
    local s = ssh.connect("HOST")
    local snap = gpu_metrics.read(s)
    print("READ", #snap.gpus, snap.gpus[2].power_w)
    local sampler = gpu_metrics.start(s, { interval = 0.05 })
    runara.sleep(0.5)
    local res = sampler:stop()
    print("SAMPLED", #res.samples >= 3, res.summary ~= nil)
  )");
  INFO(all(r));
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("READ\t2\t631.95") != std::string::npos);
  CHECK(r.out.find("SAMPLED\ttrue\ttrue") != std::string::npos);
}

namespace {

// A real ssh-agent on a private socket, holding the keys given; killed with this object.
struct SshAgent {
  explicit SshAgent(const std::string& dir) : socket(dir + "/agent.sock"), process({"/usr/bin/ssh-agent", "-D", "-a", socket}) {
    for (int i = 0; i < 100 && !fs::exists(socket); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    REQUIRE(fs::exists(socket));
  }
  void add(const std::string& key_path) {
    ChildProcess add({"/usr/bin/ssh-add", key_path}, {{"SSH_AUTH_SOCK", socket}});
    const ChildResult r = add.wait(10);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
  }
  std::string socket;
  ChildProcess process;
};

}  // namespace

TEST_CASE("ssh: the user's SSH agent logs in to a granted host, before any key file and instead of an encrypted one",
          "[ssh][ssh_lua]") {
  SshRun t;
  const std::string body = R"(
    local s = ssh.connect("HOST", { timeout = 5 })
    print("CONNECTED", s:exec("echo ok", { quiet = true }).stdout)
  )";
  auto granted_only = [&] {  // --allow-host, no --ssh-key
    std::vector<std::string> a = t.args(body, {"--no-grant"});
    a.insert(a.begin(), {"--allow-host", t.host()});
    return a;
  };
  // An encrypted key where OpenSSH would look first; it is not the authorised one.
  ChildProcess keygen({"/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "a passphrase", "-f", t.home + "/.ssh/id_ed25519"});
  REQUIRE(keygen.wait(10).exit_code == 0);
  SshAgent agent(t.base);

  SECTION("the agent holds the authorised key: in, though no key file is usable") {
    agent.add(t.sshd.user_key_path());
    const auto r = run_runara(granted_only(), 60, t.env({{"SSH_AUTH_SOCK", agent.socket}}));
    INFO(all(r));
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("CONNECTED\tok") != std::string::npos);
  }
  SECTION("no agent: the encrypted key gets an error saying what to do") {
    const auto r = run_runara(granted_only(), 60, t.env({{"SSH_AUTH_SOCK", ""}}));
    INFO(all(r));
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("is encrypted with a passphrase") != std::string::npos);
    CHECK(r.err.find("load it into an SSH agent") != std::string::npos);
  }
  SECTION("the agent holds only a key the server refuses: an error counting what was offered") {
    agent.add(t.sshd.dir() + "/other_key");
    const auto r = run_runara(granted_only(), 60, t.env({{"SSH_AUTH_SOCK", agent.socket}}));
    INFO(all(r));
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("the server refused all 1 key of the SSH agent at " + agent.socket) != std::string::npos);
    CHECK(r.out.find("CONNECTED") == std::string::npos);
  }
  SECTION("the agent's keys are refused, then --ssh-key logs in") {
    agent.add(t.sshd.dir() + "/other_key");
    std::vector<std::string> a = granted_only();
    a.insert(a.begin(), {"--ssh-key", t.sshd.user_key_path()});
    const auto r = run_runara(a, 60, t.env({{"SSH_AUTH_SOCK", agent.socket}}));
    INFO(all(r));
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("CONNECTED\tok") != std::string::npos);
  }
}

TEST_CASE("ssh: a granted host name is looked up off the loop; known_hosts is read under that name", "[ssh][ssh_lua]") {
  SshRun t;
  const std::string named = "localhost:" + std::to_string(t.sshd.port());
  const std::string body = R"(
    local s = ssh.connect("NAME", { timeout = 5 })
    print("CONNECTED", s:exec("echo ok", { quiet = true }).stdout)
  )";
  auto run_named = [&](const std::string& target, const std::string& grant) {
    std::vector<std::string> a = t.args(replace_all(body, "NAME", target), {"--no-grant"});
    a.insert(a.begin(), {"--allow-host", grant, "--ssh-key", t.sshd.user_key_path()});
    return run_runara(a, 60, t.env());
  };
  SECTION("known under its name: in") {
    std::ofstream(t.home + "/.ssh/known_hosts") << "[localhost]:" << t.sshd.port() << " " << read_all(t.sshd.dir() + "/host_key.pub");
    const auto r = run_named(named, named);
    INFO(all(r));
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("CONNECTED\tok") != std::string::npos);
  }
  SECTION("known only under its address: the name's key is unknown, as OpenSSH would say") {
    const auto r = run_named(named, named);  // known_hosts has [127.0.0.1]:PORT only
    INFO(all(r));
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("is unknown") != std::string::npos);
  }
  SECTION("the grant is for the name: its address alone does not grant it") {
    const auto r = run_named(named, t.host());
    INFO(all(r));
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("host " + named + " is not granted") != std::string::npos);
  }
  SECTION("a name that does not exist: a clear error, at once") {
    const auto r = run_named("no-such-host.invalid:22", "no-such-host.invalid:22");
    INFO(all(r));
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("cannot resolve the host name 'no-such-host.invalid'") != std::string::npos);
  }
  SECTION("what is not a host name is refused before anything is looked up") {
    for (const std::string bad : {"-oProxyCommand=x", "a..b", "host_name", "a b"}) {
      const auto r = run_named(bad, "example.com");
      INFO(bad << ": " << all(r));
      CHECK(r.exit_code == 1);
      CHECK(r.err.find("expected an IP address or a host name") != std::string::npos);
    }
  }
}
