// A simulated machine is a box (sim/sim_isolation.hpp): what a stranger's script tries
// from it under `runara --sim` — this computer's files, its loopback-only and all-interface
// services, its processes, runara's own state, your environment — and what it gets: none of it.
// And from runara's side: the droplet's 127.x address is not a door to this computer's services.
#include <catch2/catch.hpp>

#include <signal.h>

#include <filesystem>
#include <string>

#include "test_paths.hpp"
#include "child_process.hpp"
#include "test_text.hpp"

using namespace runara::test;

namespace {

// A service of this computer's: `runara serve-fake-llm` on 127.0.0.1 (loopback only) or on every
// interface (0.0.0.0), answering GET /v1/models.
class HostService {
 public:
  explicit HostService(const std::string& address)
      : server_({RUNARA_BINARY, "serve-fake-llm", "--host", address, "--port", "0"}) {
    server_.close_stdin();
    REQUIRE(server_.wait_for_output("at http://", 10));
    const std::string said = server_.out_so_far() + server_.err_so_far();
    const auto colon = said.find(':', said.find("at http://") + 10);
    port_ = std::stoi(said.substr(colon + 1));
  }
  int port() const { return port_; }
  // Stops it; what it says it served ("... (N connections, ...").
  std::string stop() {
    server_.signal(SIGINT);
    const ChildResult r = server_.wait(10);
    return r.out + r.err;
  }

 private:
  ChildProcess server_;
  int port_ = 0;
};

// Each probe prints NAME=yes when it got through, NAME=no when it did not.
const char* kProbe = R"(
local d = droplet.create{ name = "box", size = "gpu-mi300x1-192gb", image = "gpu-amd-base", region = "atl1" }
local s = ssh.connect(d, { timeout = 30 })
local function probe(name, command)
  local r = s:exec(command .. " >/dev/null 2>&1 && echo " .. name .. "=yes || echo " .. name .. "=no", { quiet = true })
  print(r.stdout)
end
probe("host_file", "cat " .. SECRET_FILE)
probe("host_folder", "ls " .. SECRET_DIR)
probe("ledger", "ls $RUNARA_SIM_STATE/../../state")
probe("loopback_service", "bash -c 'exec 3<>/dev/tcp/127.0.0.1/" .. LOOPBACK_PORT .. "'")
probe("any_service", "bash -c 'exec 3<>/dev/tcp/$RUNARA_SIM_IP/" .. ANY_PORT .. "'")
probe("host_process", "ps -e -o args | grep -v grep | grep -q runara_tests")
probe("environment", "env | grep -q RUNARA_TEST_SECRET")
probe("write_usr", "touch /usr/runara-box-probe")
probe("own_home", "echo hi > $HOME/x && cat $HOME/x")
-- A tunnel through the machine reaches what the machine can reach: its own loopback only.
local url = s:forward(LOOPBACK_PORT)
local ok, got = pcall(metrics.get, url .. "/v1/models", { timeout = 3 })
print("tunnel_to_host=" .. ((ok and got.status == 200) and "yes" or "no"))
local any_url = s:forward(ANY_PORT)
local ok_any, got_any = pcall(metrics.get, any_url .. "/v1/models", { timeout = 3 })
print("tunnel_to_any=" .. ((ok_any and got_any.status == 200) and "yes" or "no"))
-- From runara's side, the droplet's address is not this computer's loopback.
local direct, answer = pcall(metrics.get, "http://" .. d.ip .. ":" .. ANY_PORT .. "/v1/models", { timeout = 3 })
print("direct_to_address=" .. ((direct and answer.status == 200) and "yes" or "no"))
)";

}  // namespace

TEST_CASE("sim: a simulated machine reaches none of this computer: files, services, processes, state, environment",
          "[sim][isolation]") {
  const std::string dir = temp_dir("sim-box");
  const std::string secret = write_temp_file(dir, "secret.txt", "host-secret\n");
  HostService loopback("127.0.0.1"), any("0.0.0.0");
  const std::string prelude = "SECRET_FILE='" + secret + "' SECRET_DIR='" + dir + "' LOOPBACK_PORT=" +
                              std::to_string(loopback.port()) + " ANY_PORT=" + std::to_string(any.port()) + "\n";
  const auto r = run_runara({"--sim", "--out", dir + "/out", "-e", prelude + kProbe}, 90,
                            {{"RUNARA_TEST_SECRET", "should-not-travel"}});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  for (const char* got : {"host_file=no", "host_folder=no", "ledger=no", "loopback_service=no", "any_service=no",
                          "host_process=no", "environment=no", "write_usr=no", "own_home=yes", "tunnel_to_host=no", "tunnel_to_any=no",
                          "direct_to_address=no"})
    CHECK(r.out.find(got) != std::string::npos);
  CHECK(loopback.stop().find("(0 connections") != std::string::npos);
  CHECK(any.stop().find("(0 connections") != std::string::npos);
}

TEST_CASE("runara plan: the same attempts run in the box and reach nothing of this computer", "[sim][isolation]") {
  const std::string dir = temp_dir("plan-box");
  const std::string secret = write_temp_file(dir, "secret.txt", "host-secret\n");
  HostService loopback("127.0.0.1"), any("0.0.0.0");
  const std::string script = write_temp_file(dir, "probe.lua",
      "SECRET_FILE='" + secret + "' SECRET_DIR='" + dir + "' LOOPBACK_PORT=" + std::to_string(loopback.port()) +
      " ANY_PORT=" + std::to_string(any.port()) + "\n" + kProbe +
      "s:exec('cp " + secret + " $HOME/stolen || touch " + dir + "/written-from-the-box || true')\n");
  const auto r = run_runara({"plan", script}, 120);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("it ran to the end") != std::string::npos);
  CHECK(r.out.find("x  cat " + secret) != std::string::npos);  // the attempts ran, and are listed
  CHECK(r.out.find("touch " + dir + "/written-from-the-box") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir + "/written-from-the-box"));
  CHECK(loopback.stop().find("(0 connections") != std::string::npos);
  CHECK(any.stop().find("(0 connections") != std::string::npos);
}
