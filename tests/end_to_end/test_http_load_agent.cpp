// http_load.run{ on = session }: the load run by runara-agent on the machine behind a real
// OpenSSH sshd on loopback (tests/support/sshd_fixture.*), against the simulated LLM server,
// compared with the same load run by runara itself; the agent's lifetime (channel closed,
// deadline, SIGKILL of runara) checked with the processes left on the "remote" (this machine).
#include "test_paths.hpp"
#include "child_process.hpp"
#include "eventually.hpp"
#include "load/agent_protocol.hpp"
#include "sim/fake_llm_server.hpp"
#include "sshd_fixture.hpp"
#include "test_processes.hpp"
#include "test_text.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <signal.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

namespace {

namespace fs = std::filesystem;
using runara::test::ChildProcess;
using runara::test::ChildResult;
using runara::test::eventually;
using runara::test::proc_file;
using runara::test::read_all;
using runara::test::replace_all;
using runara::test::run_runara;
using runara::test::SshdFixture;

// The agents running on this machine (the "remote" is loopback) for one sshd fixture: their
// command lines name the installed file (the real agent's and a fake agent script's alike), and
// they run in the fixture's home (tests running beside this one have their own).
std::vector<pid_t> agents_in(const std::string& home) {
  std::vector<pid_t> found;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    if (proc_file((entry.path() / "cmdline").string()).find(".cache/runara/runara-agent-") == std::string::npos) continue;
    std::error_code ec;
    if (fs::read_symlink(entry.path() / "cwd", ec) != fs::path(home)) continue;
    found.push_back(static_cast<pid_t>(std::atoi(entry.path().filename().c_str())));
  }
  return found;
}

// Lines in a file (0 when it is not there yet).
long lines_in(const std::string& path) {
  const std::string text = read_all(path);
  return std::count(text.begin(), text.end(), '\n');
}

struct AgentRun {
  SshdFixture sshd;
  std::string base = runara::test::temp_dir("http-load-agent");
  std::string home = base + "/home";
  std::string script = base + "/t.lua";
  std::string out = base + "/out";
  runara::FakeLlmServer server;
  int port = 0;

  explicit AgentRun(runara::FakeLlmConfig config) : server(config) {
    fs::create_directories(home + "/.ssh");
    std::ofstream(home + "/.ssh/known_hosts") << "[127.0.0.1]:" << sshd.port() << " " << read_all(sshd.dir() + "/host_key.pub");
    port = server.start(0);
  }
  ~AgentRun() { runara::test::remove_temp_dir(base); }
  std::string ssh_host() const { return "127.0.0.1:" + std::to_string(sshd.port()); }
  std::vector<std::string> args(const std::string& body, std::vector<std::string> more = {}) {
    std::string text = replace_all(body, "SSH_HOST", ssh_host());
    text = replace_all(text, "LLM_URL", "http://127.0.0.1:" + std::to_string(port));
    std::ofstream(script) << text;
    std::vector<std::string> a{"--out", out, "--allow-host", ssh_host(), "--allow-host", "127.0.0.1:" + std::to_string(port),
                               "--ssh-key", sshd.user_key_path()};
    a.insert(a.end(), more.begin(), more.end());
    a.push_back(script);
    return a;
  }
  ChildResult run(const std::string& body, std::vector<std::string> more = {}, double timeout_s = 90) {
    return run_runara(args(body, std::move(more)), timeout_s, {{"HOME", home}});
  }
  // An executable standing in for the agent (a shell script), for the protocol's failures.
  std::string fake_agent(const std::string& body) {
    const std::string path = base + "/fake-agent-" + std::to_string(++fakes);
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    fs::permissions(path, fs::perms::owner_all);
    return path;
  }
  int fakes = 0;
  std::vector<std::string> argv(const std::string& body) {
    auto a = args(body);
    a.insert(a.begin(), RUNARA_BINARY);
    return a;
  }
  int agents_running() const { return static_cast<int>(agents_in(sshd.home()).size()); }
  pid_t agent_pid() const {
    const auto pids = agents_in(sshd.home());
    return pids.empty() ? 0 : pids.front();
  }
  // The long load's agent runs and its records reach requests.jsonl (past the upload, which
  // takes seconds for the sanitizer build's agent).
  bool records_arriving() const { return agent_pid() != 0 && lines_in(out + "/long/requests.jsonl") > 20; }
  nlohmann::json result(const std::string& name) { return nlohmann::json::parse(read_all(out + "/" + name + "/results.json")); }
};

std::string all(const ChildResult& r) { return r.out + "\n--- stderr ---\n" + r.err; }

#if defined(__SANITIZE_ADDRESS__)
constexpr double kParityMs = 1.0;  // both clients instrumented, beside an instrumented fake server
// The sanitizer build's agent is 24 MB, hashed and uploaded before the load starts: seconds
// (8.7 s once, with another suite sharing the cores), so the stoppers wait 20.
constexpr int kSettleS = 20;
#else
constexpr double kParityMs = 0.2;  // the issue's bound
constexpr int kSettleS = 3;
#endif

}  // namespace

// The medians are compared to a fifth of a millisecond. The two loads run one after the other,
// so other work on the machine (a build, a parallel test) can slow one and not the other: the pair
// runs again, up to three times, and one pair within the bound passes. An agent that adds latency
// of its own misses the bound every time.
TEST_CASE("http_load on an ssh session: the agent's results match a local run's", "[http_load][http_load_agent][ssh]") {
  runara::FakeLlmConfig config;
  config.ttft_ms = 20;
  config.itl_ms = 5;
  config.output_tokens = 32;
  AgentRun t(config);
  bool within = false;
  for (int attempt = 1; attempt <= 3 && !within; ++attempt) {
    std::error_code ignored;
    fs::remove_all(t.out, ignored);
    const auto r = t.run(R"(
      local s = ssh.connect("SSH_HOST")
      local opts = { url = "LLM_URL", model = "fake-model", concurrency = 8, requests = 400, max_tokens = 32,
                     prompts = { input_tokens = 64, count = 50 } }
      opts.name = "here"
      local here = http_load.run(opts)
      opts.name, opts.on = "there", s
      local there = http_load.run(opts)
      print("hosts", here.load_host, there.load_host, there.controller_rtt_ms ~= nil)
    )");
    INFO("attempt " << attempt << "\n" << all(r));
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("hosts\tlocal\t127.0.0.1\ttrue") != std::string::npos);
    const auto here = t.result("here"), there = t.result("there");
    for (const char* key : {"completed", "failed", "total_input_tokens", "total_output_tokens"}) {
      INFO(key);
      CHECK(here[key] == there[key]);
    }
    CHECK(there["completed"] == 400);
    CHECK(there["input_lens"] == here["input_lens"]);
    CHECK(there["controller_rtt_ms"].get<double>() > 0);
    CHECK(there["agent_max_rss_kb"].get<long>() > 1000);  // the agent's own peak memory
    CHECK(here["agent_max_rss_kb"].is_null());
    // requests.jsonl: one line per request, as a local run writes it.
    const std::string lines = read_all(t.out + "/there/requests.jsonl");
    CHECK(std::count(lines.begin(), lines.end(), '\n') == 400);
    CHECK(t.agents_running() == 0);
    within = true;
    for (const char* key : {"median_ttft_ms", "median_tpot_ms", "median_itl_ms"}) {
      const double gap = std::abs(here[key].get<double>() - there[key].get<double>());
      UNSCOPED_INFO("attempt " << attempt << ": " << key << ": here " << here[key] << ", there " << there[key]);
      within = within && gap < kParityMs;
    }
  }
  CHECK(within);
}

namespace {

// A long load through the agent (it stops only when something stops it), in a script that
// prints how http_load.run ended.
const char* const kLongLoad = R"(
    local s = ssh.connect("SSH_HOST")
    STOPPER
    local ok, err = pcall(http_load.run, { on = s, url = "LLM_URL", model = "fake-model", concurrency = 4,
                                           duration = 60, max_tokens = 16, name = "long" })
    print("ended", ok, err)
  )";

runara::FakeLlmConfig streaming() {
  runara::FakeLlmConfig config;
  config.ttft_ms = 5;
  config.itl_ms = 5;
  config.output_tokens = 16;
  return config;
}

}  // namespace

TEST_CASE("http_load agent: the session closed mid-load ends the load with partial results and no agent left", "[http_load_agent][ssh]") {
  AgentRun t(streaming());
  const auto r = t.run(replace_all(kLongLoad, "STOPPER", "runara.spawn(function() runara.sleep(" + std::to_string(kSettleS) + ") s:close() end)"));
  INFO(all(r));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("ended\tfalse") != std::string::npos);
  CHECK(r.out.find("the load agent on") != std::string::npos);
  CHECK(r.out.find("ended before its results") != std::string::npos);
  CHECK(r.out.find("results written to") != std::string::npos);
  const auto result = t.result("long");
  CHECK(result["completed"].get<int>() > 20);  // what arrived before the session closed
  CHECK(result["load_host"] == "127.0.0.1");
  CHECK(eventually([&t] { return t.agents_running() == 0; }, 10));
}

TEST_CASE("http_load agent: the run's deadline stops the agent and keeps what it measured", "[http_load_agent][ssh]") {
  AgentRun t(streaming());
  const auto r = t.run(replace_all(kLongLoad, "STOPPER", ""), {"--max-runtime", std::to_string(kSettleS + 2)});
  INFO(all(r));
  CHECK(r.exit_code == 3);  // the watchdog
  const auto result = t.result("long");
  CHECK(result["completed"].get<int>() > 20);
  CHECK(result["interrupted"] == true);
  CHECK(eventually([&t] { return t.agents_running() == 0; }, 10));
}

TEST_CASE("http_load agent: SIGKILL of runara leaves no agent running on the machine", "[http_load_agent][ssh]") {
  AgentRun t(streaming());
  ChildProcess runara(t.argv(replace_all(kLongLoad, "STOPPER", "")), {{"HOME", t.home}});
  REQUIRE(eventually([&t] { return t.records_arriving(); }, 60));
  runara.signal(SIGKILL);
  runara.wait(10);
  // sshd sees the connection drop and closes the channel: the agent's stdin ends, and it stops.
  CHECK(eventually([&t] { return t.agents_running() == 0; }, 15));
}

TEST_CASE("http_load agent: an agent killed mid-load is a clear error, with what arrived kept", "[http_load_agent][ssh]") {
  AgentRun t(streaming());
  ChildProcess runara(t.argv(replace_all(kLongLoad, "STOPPER", "")), {{"HOME", t.home}});
  // Killed once records are arriving (requests.jsonl fills as they do).
  REQUIRE(eventually([&t] { return t.records_arriving(); }, 60));
  ::kill(t.agent_pid(), SIGKILL);
  const ChildResult r = runara.wait(60);
  INFO(all(r));
  CHECK(r.out.find("ended\tfalse") != std::string::npos);
  CHECK(r.out.find("ended before its results: killed by SIGKILL") != std::string::npos);
  const auto result = t.result("long");
  CHECK(result["completed"].get<int>() > 10);
  CHECK(t.agents_running() == 0);
}

// The parent of a process (field 4 of /proc/PID/stat, after the command's parentheses).
pid_t parent_of(pid_t pid) {
  const std::string stat = proc_file("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat.substr(close + 2));
  std::string state;
  pid_t parent = 0;
  rest >> state >> parent;
  return parent;
}

TEST_CASE("http_load agent: the server closing the connection mid-load is a clear error, and the agent stops", "[http_load_agent][ssh]") {
  AgentRun t(streaming());
  ChildProcess runara(t.argv(replace_all(kLongLoad, "STOPPER", "")), {{"HOME", t.home}});
  REQUIRE(eventually([&t] { return t.records_arriving(); }, 60));
  // The agent was exec'd by the session's shell: its parent is sshd's process for this connection.
  const pid_t session = parent_of(t.agent_pid());
  REQUIRE(session > 1);
  REQUIRE(proc_file("/proc/" + std::to_string(session) + "/cmdline").find("sshd") != std::string::npos);
  ::kill(session, SIGKILL);
  const ChildResult r = runara.wait(60);
  INFO(all(r));
  CHECK(r.out.find("ended\tfalse") != std::string::npos);
  CHECK(r.out.find("ended before its results") != std::string::npos);
  CHECK(t.result("long")["completed"].get<int>() > 10);
  CHECK(eventually([&t] { return t.agents_running() == 0; }, 15));
}

TEST_CASE("http_load agent: a wrong protocol, broken lines and a refused target are clear errors", "[http_load_agent][ssh]") {
  AgentRun t(streaming());
  const std::string load = R"(
    local s = ssh.connect("SSH_HOST")
    local ok, err = pcall(http_load.run, { on = s, url = "LLM_URL", model = "fake-model", requests = 10, name = "x" })
    print("ended", ok, err)
  )";
  const std::string pongs = "echo 'runara-agent 3 fake'; for i in 0 1 2; do read l; echo \"pong $i\"; done; read spec; ";
  struct Case {
    const char* what;
    std::string agent;
    const char* expected;
  } cases[] = {
      {"another protocol", "echo 'runara-agent 1 9.0'; while read l; do :; done", "speaks protocol 1 (runara-agent 9.0), this runara speaks 3"},
      {"not an agent", "echo 'hello there'; while read l; do :; done", "did not answer as one (its first line: 'hello there')"},
      {"a garbage line", pongs + "echo 'R 1 2 3'; while read l; do :; done", "sent a broken line: a request record is not 12 integers"},
      {"an unknown line", pongs + "printf 'Z \\001\\n'; while read l; do :; done", "sent a line runara does not understand: 'Z ?'"},
      {"a truncated outcome", pongs + "echo 'S {\"stats\": {'; while read l; do :; done", "the agent's results are not valid"},
      {"an exit before results", pongs + "echo 'R 0 0 1 2 3 4 5 1 0 200 0 0'; echo oops >&2; exit 4", "ended before its results: exit status 4; its last error output: oops"},
      {"the agent's refusal", pongs + "echo 'E nothing to see'", "refused the load: nothing to see"},
      {"a terminal escape in its progress", pongs + "printf 'P \\033[2J\\033]0;owned\\007 evil\\n'; sleep 1; exit 3", "exit status 3"},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    const auto r = t.run(load, {"--load-agent", t.fake_agent(c.agent)});
    INFO(all(r));
    CHECK(r.out.find("ended\tfalse") != std::string::npos);
    CHECK(r.out.find(c.expected) != std::string::npos);
    CHECK(all(r).find('\033') == std::string::npos);  // the machine's bytes never reach a terminal raw
    CHECK(eventually([&t] { return t.agents_running() == 0; }, 10));
    std::error_code ignored;
    fs::remove_all(t.out, ignored);
  }
  // Refused before anything starts, each naming the option.
  const struct {
    const char* options;
    const char* expected;
  } refusals[] = {
      {R"(url = "https://127.0.0.1:1/")", "the load agent speaks plain http://"},
      {R"(url = "LLM_URL", http2 = true)", "leave out http2"},
      {R"(url = "http://localhost:8000/")", "must be a numeric address on that machine"},
      {R"(url = "http://8.8.8.8:80/")", "may load only the machine it runs on"},
  };
  for (const auto& c : refusals) {
    INFO(c.options);
    const auto r = t.run(std::string(R"(
      local s = ssh.connect("SSH_HOST")
      local ok, err = pcall(http_load.run, { on = s, model = "m", requests = 1, )") + c.options + R"( })
      print("ended", ok, err)
    )");
    INFO(all(r));
    CHECK(r.out.find(c.expected) != std::string::npos);
    CHECK(r.out.find("option 'on'") != std::string::npos);
  }
  const auto r = t.run(load, {"--load-agent", t.base + "/no-such-agent"});
  INFO(all(r));
  CHECK(r.out.find("option 'on': the load agent " + t.base + "/no-such-agent is not an executable file here") != std::string::npos);
}

namespace {

// A request record as the engine writes it: request i, due i us after the start.
runara::RequestRecord fake_record(std::uint64_t i) {
  runara::RequestRecord r;
  r.index = i;
  r.intended_ns = static_cast<std::int64_t>(i) * 1000;
  r.sent_ns = r.intended_ns + 10;
  r.first_token_ns = r.intended_ns + 20;
  r.done_ns = r.intended_ns + 30;
  r.input_tokens = 4;
  r.output_tokens = 5;
  r.chunks = 5;
  r.status = 200;
  return r;
}

// The "S ..." line an agent would end with after `n` such records.
std::string fake_outcome_line(std::uint64_t n, const std::function<void(nlohmann::json&)>& edit = {}) {
  runara::LoadOutcome o;
  std::atomic<std::uint64_t> taken{0};
  for (std::uint64_t i = 0; i < n; ++i) {
    o.stats.add(fake_record(i), {}, "");
    o.lengths.add(fake_record(i), taken);
  }
  o.wall_s = 0.01;
  o.max_in_flight = 1;
  o.threads = 1;
  o.agent_max_rss_kb = 2000;
  auto j = nlohmann::json::parse(runara::encode_outcome(o, 0));
  if (edit) edit(j);
  return "S " + j.dump();
}

}  // namespace

TEST_CASE("http_load agent: a hostile agent's records and results are held to the load asked for", "[http_load_agent][ssh][agent_plausibility]") {
  AgentRun t(streaming());
  const std::string pongs = "echo 'runara-agent 3 fake'; for i in 0 1 2; do read l; echo \"pong $i\"; done; read spec; ";
  // `n` records, as fast as sh writes them, then `last` (the outcome line, or nothing).
  const auto agent = [&](int n, const std::string& last) {
    const std::string outcome = t.base + "/outcome-" + std::to_string(t.fakes + 1);
    std::ofstream(outcome) << last << (last.empty() ? "" : "\n");
    return t.fake_agent(pongs + "i=0; while [ $i -lt " + std::to_string(n) +
                        " ]; do echo \"R $i $((i*1000)) $((i*1000+10)) $((i*1000+20)) $((i*1000+30)) 4 5 5 0 200 0 0\"; i=$((i+1)); done; cat " +
                        outcome + "; while read l; do :; done");
  };
  SECTION("max_request_lines holds: 5000 records, 100 in requests.jsonl, the rest counted") {
    const auto r = t.run(R"(
      local s = ssh.connect("SSH_HOST")
      local res = http_load.run{ on = s, url = "LLM_URL", model = "fake-model", duration = 5, max_request_lines = 100,
                                 name = "flood", quiet = true }
      print("completed", res.completed, "left out", res.request_lines_left_out)
    )", {"--load-agent", agent(5000, fake_outcome_line(5000))});
    INFO(all(r));
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("completed\t5000\tleft out\t4900") != std::string::npos);
    CHECK(lines_in(t.out + "/flood/requests.jsonl") == 100);
    CHECK(t.result("flood")["request_lines_left_out"] == 4900);
  }
  const std::string ten = R"(
    local s = ssh.connect("SSH_HOST")
    local ok, err = pcall(http_load.run, { on = s, url = "LLM_URL", model = "fake-model", requests = 10, name = "x", quiet = true })
    print("ended", ok, err)
  )";
  struct Case {
    const char* what;
    int records;
    std::string outcome;
    const char* expected;
  } cases[] = {
      {"more records than requests", 11, "",
       "sent an impossible request record: request 10 is past the load's 10 requests"},
      {"more completed than requested", 0, fake_outcome_line(11),
       ": the agent's results are impossible: 11 requests finished (11 completed, 0 failed), but the load asked for 10"},
      {"negative throughput", 10, fake_outcome_line(10, [](nlohmann::json& j) { j["stats"]["output_tokens"] = -50; }),
       "the agent's results are impossible: total_output_tokens is -50: a count cannot be negative"},
      {"a wall time longer than the load ran", 10, fake_outcome_line(10, [](nlohmann::json& j) { j["wall_s"] = 1e9; }),
       "the agent's results are impossible: wall_s is 1e+09 s, but the load has run for"},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    const auto r = t.run(ten, {"--load-agent", agent(c.records, c.outcome)});
    INFO(all(r));
    CHECK(r.out.find("ended\tfalse") != std::string::npos);
    CHECK(r.out.find(c.expected) != std::string::npos);
    CHECK(r.out.find("the load agent on 127.0.0.1 (root@" + t.ssh_host() + ")") != std::string::npos);  // the machine, named
    // The load's files hold what arrived, within the load: never more than it asked for.
    const auto result = t.result("x");
    CHECK(result["completed"].get<int>() <= 10);
    CHECK(result["total_output_tokens"].get<long>() >= 0);
    CHECK(eventually([&t] { return t.agents_running() == 0; }, 10));
    std::error_code ignored;
    fs::remove_all(t.out, ignored);
  }
}

TEST_CASE("http_load agent: a secret the load carries goes only where it may, and comes back masked", "[http_load_agent][ssh]") {
  AgentRun t(streaming());
  const std::string load = R"(
    local s = ssh.connect("SSH_HOST")
    local ok, err = pcall(http_load.run, { on = s, url = "LLM_URL", model = "fake-model", requests = 4,
                                           api_key = runara.secret("TOKEN"), name = "x" })
    -- print() masks secrets itself: whether the error holds the value is asked directly.
    print("ended", ok, err, "leaked", tostring(err):find("sk-agent-", 1, true) ~= nil)
  )";
  const std::string token = "sk-agent-7f3a9c1e5b";
  ::setenv("TOKEN", token.c_str(), 1);
  // Not bound to the machine: refused before anything is sent.
  auto r = t.run(load, {"--secret", "TOKEN"});
  INFO(all(r));
  CHECK(r.out.find("option 'on': the load carries a secret, which would go to") != std::string::npos);
  CHECK(t.agents_running() == 0);
  // Bound to it: sent. A machine that echoes it back into an error gets it masked.
  const std::string echo = "echo 'runara-agent 3 fake'; for i in 0 1 2; do read l; echo \"pong $i\"; done; read spec; echo \"E $(echo \"$spec\" | grep -o 'Bearer [^\\\"]*')\"";
  r = t.run(load, {"--secret", "TOKEN@" + t.ssh_host(), "--load-agent", t.fake_agent(echo)});
  INFO(all(r));
  CHECK(r.out.find("refused the load: Bearer ") != std::string::npos);
  CHECK(r.out.find("leaked\tfalse") != std::string::npos);
  CHECK(r.out.find(token) == std::string::npos);
  CHECK(r.err.find(token) == std::string::npos);
  ::unsetenv("TOKEN");
}

// Issue 25: the agent's results line, as long as the protocol allows (16 MiB) and made of small
// numbers, would be a document of about 256 MiB once parsed (0.5 GB of peak RSS before this
// bound). It is refused before it is built, naming the bound; runara's peak RSS under
// --max-memory 64M stays near what it takes doing nothing.
TEST_CASE("http_load agent: a 16 MiB results line cannot grow runara past --max-memory", "[http_load_agent][ssh][hostile_buffers]") {
  AgentRun t(streaming());
  const auto idle = t.run("print(1)", {"--max-memory", "64M"});
  REQUIRE(idle.exit_code == 0);
  const long baseline = idle.max_rss_kb / 1024;
  const std::string pongs = "echo 'runara-agent 3 fake'; for i in 0 1 2; do read l; echo \"pong $i\"; done; read spec; ";
  // An agent whose results line lists `n` input lengths; a load on it under `max_memory`.
  const auto run_with_lines_of = [&](long n, const char* max_memory) {
    const std::string agent =
        t.fake_agent(pongs + "awk 'BEGIN { printf \"S {\\\"input_lens\\\": [\"; for (i = 0; i < " + std::to_string(n) +
                     "; i++) printf \"0,\"; print \"0]}\" }'; while read l; do :; done");
    return t.run(R"(
      local s = ssh.connect("SSH_HOST")
      local ok, err = pcall(http_load.run, { on = s, url = "LLM_URL", model = "fake-model", requests = 10, name = "x", quiet = true })
      print("ended", ok, err)
    )", {"--max-memory", max_memory, "--load-agent", agent});
  };
  const auto r = run_with_lines_of(8388000, "64M");
  const long peak = r.max_rss_kb / 1024;
  WARN("a 16 MiB results line: peak RSS " << peak << " MiB with --max-memory 64M (" << baseline << " MiB doing nothing), "
                                          << r.seconds << " s");
  INFO(all(r));
  CHECK(r.out.find("ended\tfalse") != std::string::npos);
  CHECK(r.out.find("the load agent on 127.0.0.1 (root@" + t.ssh_host() + "): the agent's results would take about ") !=
        std::string::npos);
  CHECK(r.out.find(" MiB once parsed, more than the 48 MiB allowed") != std::string::npos);
  CHECK(peak < baseline + 64 + 32);
  CHECK(eventually([&t] { return t.agents_running() == 0; }, 10));

  // Within that bound but not within the run's memory: 2.5 MiB of numbers, about 45 MiB to
  // decode, refused by --max-memory 32M before anything is built.
  std::error_code ignored;
  fs::remove_all(t.out, ignored);
  const auto charged = run_with_lines_of(1300000, "32M");
  INFO(all(charged));
  CHECK(charged.out.find("ended\tfalse") != std::string::npos);
  CHECK(charged.out.find("the load agent on 127.0.0.1 (root@" + t.ssh_host() + "): decoding the agent's results (2539 KiB) "
                         "needs about 45 MiB, more than the ") != std::string::npos);
  CHECK(charged.out.find(" MiB left of the run's memory limit of 32 MiB (raise it with --max-memory)") != std::string::npos);
  CHECK(eventually([&t] { return t.agents_running() == 0; }, 10));
}
