// runara-agent needs nothing from the machine it runs on: the normal build's agent is a static
// executable ("not a dynamic executable" to ldd), and it runs a whole load from an empty root
// (a mount namespace whose root folder holds only the binary), driven by hand through its
// protocol (runtime/load/agent_protocol.hpp) against the simulated LLM server.
//
// The sanitizer build's agent links the sanitizers' shared runtimes, so these checks are the
// normal build's (CI runs both builds).
#include "test_paths.hpp"
#include "child_process.hpp"
#include "load/agent_protocol.hpp"
#include "sim/fake_llm_server.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <sstream>

#if !defined(__SANITIZE_ADDRESS__)

namespace {

namespace fs = std::filesystem;
using runara::test::ChildProcess;

const std::string kAgent = std::string(RUNARA_BINARY_DIR) + "/runara-agent";

std::string command_output(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return out;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  pclose(pipe);
  return out;
}

// The lines of `text` that start with `prefix`.
std::vector<std::string> lines_with(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) out.push_back(line);
  }
  return out;
}

}  // namespace

TEST_CASE("runara-agent is one static executable", "[agent_static]") {
  REQUIRE(fs::exists(kAgent));
  CHECK(command_output("ldd " + kAgent + " 2>&1").find("not a dynamic executable") != std::string::npos);
  CHECK(command_output(kAgent + " --version").rfind("runara-agent 3 ", 0) == 0);
}

TEST_CASE("runara-agent runs a load from an empty root", "[agent_static]") {
  runara::FakeLlmConfig config;
  config.ttft_ms = 2;
  config.itl_ms = 1;
  config.output_tokens = 8;
  runara::FakeLlmServer server(config);
  const int port = server.start(0);
  REQUIRE(port > 0);
  const std::string root = runara::test::temp_dir("agent-root");
  fs::copy_file(kAgent, root + "/runara-agent");
  fs::permissions(root + "/runara-agent", fs::perms::owner_all);
  REQUIRE(std::distance(fs::directory_iterator(root), fs::directory_iterator{}) == 1);

  // Nothing but the binary is visible to it: chroot as root (CI), else a user namespace, in
  // which the user is root and may change its root folder.
  std::vector<std::string> argv{"/usr/sbin/chroot", root, "/runara-agent"};
  if (geteuid() != 0) argv = {"/usr/bin/unshare", "--user", "--map-root-user", "--root=" + root, "/runara-agent"};
  ChildProcess agent(argv);
  REQUIRE(agent.wait_for_output("runara-agent 3 ", 10));
  agent.write_stdin("ping 7\n");
  REQUIRE(agent.wait_for_output("pong 7", 10));

  runara::LoadSpec spec;
  spec.mode = runara::LoadMode::kOpenAi;
  spec.name = "empty-root";
  spec.url = "http://127.0.0.1:" + std::to_string(port) + "/v1/completions";
  spec.url_host = "127.0.0.1";
  spec.url_port = port;
  spec.method = "POST";
  spec.headers = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"Content-Type: application/json"});
  spec.bodies = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{
      R"({"model":"fake-model","prompt":"one two three","max_tokens":8,"stream":true})",
      R"({"model":"fake-model","prompt":"four five","max_tokens":8,"stream":true})"});
  spec.body_tokens = std::make_shared<const std::vector<std::int32_t>>(std::vector<std::int32_t>{3, 2});
  spec.concurrency = 4;
  spec.requests = 50;
  agent.write_stdin("spec " + runara::encode_agent_spec(spec, 60, 0) + "\n");
  REQUIRE(agent.wait_for_output("\nS {", 30));
  const auto r = agent.wait(10);
  INFO(r.out << "\n--- stderr ---\n" << r.err);
  CHECK(r.exit_code == 0);
  CHECK(lines_with(r.out, "R ").size() == 50);
  const auto outcome_line = lines_with(r.out, "S ");
  REQUIRE(outcome_line.size() == 1);
  runara::LoadOutcome outcome;
  std::uint64_t dropped = 0;
  std::string error;
  REQUIRE(runara::decode_outcome(std::string_view(outcome_line[0]).substr(2), spec.slo, spec.max_lengths, outcome, dropped, error));
  CHECK(outcome.stats.completed == 50);
  CHECK(outcome.stats.failed == 0);
  CHECK(outcome.stats.output_tokens == 50 * 8);
  CHECK(outcome.stats.itl.count() == 50 * 7);
  CHECK(dropped == 0);
  std::error_code ignored;
  fs::remove_all(root, ignored);
}

#endif
