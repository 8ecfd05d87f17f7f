// `runara --sim`: the simulated cloud's droplets are real sshds on loopback addresses of their
// own; a scenario reaches them with the real droplet, ssh and http primitives; nothing simulated
// outlives the run, even when runara is SIGKILLed; and the simulator's port and user are never
// honoured against another API.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "child_process.hpp"
#include "eventually.hpp"
#include "test_processes.hpp"
#include "runara/runtime.hpp"
#include "sim/fake_digitalocean.hpp"

using namespace runara::test;

namespace {


bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// The line after `key` in `text`, e.g. the folder a script printed.
std::string value_after(const std::string& text, const std::string& key) {
  const auto at = text.find(key);
  if (at == std::string::npos) return "";
  const auto start = at + key.size();
  return text.substr(start, text.find('\n', start) - start);
}

// Creates a machine, runs commands on it, starts a server there in the background and reaches
// it through a tunnel; prints the machine's folder for the checks that follow.
const char* kScenario = R"(
local d = droplet.create{ name = "sim", size = "gpu-mi300x1-192gb", image = "gpu-amd-base", region = "atl1" }
local s = ssh.connect(d, { timeout = 30 })
local r = s:exec("echo gpu=$RUNARA_SIM_GPU count=$RUNARA_SIM_GPU_COUNT; pwd; echo state=$RUNARA_SIM_STATE", { quiet = true })
print(r.stdout)
s:exec("$RUNARA_SIM_RUNARA serve-fake-llm --host $RUNARA_SIM_IP --port 8000 >/dev/null 2>&1 &", { quiet = true })
local url = s:forward(8000)
for _ = 1, 100 do
  local ok, m = pcall(metrics.get, url .. "/v1/models")
  if ok and m.status == 200 then print("models=" .. m.status) break end
  runara.sleep(0.1)
end
print("simulated=" .. tostring(runara.simulated))
if WAIT then print("READY") runara.sleep(WAIT) end
)";

}  // namespace

TEST_CASE("sim: a droplet is a real sshd with the machine environment, and nothing is left after the run", "[sim]") {
  const std::string dir = temp_dir("sim-run");
  const auto r = run_runara({"--sim", "--out", dir + "/out", "-e", kScenario}, 90);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("gpu=mi300x count=1") != std::string::npos);
  CHECK(r.out.find("models=200") != std::string::npos);  // a server on the machine, through s:forward
  CHECK(r.out.find("simulated=true") != std::string::npos);
  const std::string state = value_after(r.out, "state=");
  REQUIRE(state.find("/runara-sim-") != std::string::npos);
  const std::string home = state.substr(0, state.rfind('/')) + "/home";
  CHECK(r.out.find(home + "\n") != std::string::npos);  // commands start in the machine's own home
  const std::string root = state.substr(0, state.find('/', state.find("/runara-sim-") + 1));
  CHECK(r.err.find("is gone") != std::string::npos);
  CHECK(eventually([&] { return processes_mentioning(root) == 0 && !exists(root); }, 10));
}

TEST_CASE("sim: after SIGKILL of runara the sweeper kills the machines and their servers", "[sim]") {
  const std::string dir = temp_dir("sim-kill");
  ChildProcess child({RUNARA_BINARY, "--sim", "--out", dir + "/out", "-e", std::string("WAIT = 60\n") + kScenario});
  REQUIRE(child.wait_for_output("READY", 60));
  const std::string state = value_after(child.out_so_far(), "state=");
  REQUIRE(state.find("/runara-sim-") != std::string::npos);
  const std::string root = state.substr(0, state.find('/', state.find("/runara-sim-") + 1));
  REQUIRE(processes_mentioning(root) >= 3);  // sshd, its session, the server (and the sweeper)
  child.signal(SIGKILL);
  child.wait(10);
  CHECK(eventually([&] { return processes_mentioning(root) == 0 && !exists(root); }, 10));
}

namespace {

// A simulated cloud that claims every address, at a port where nothing listens.
struct ClaimsEverything : runara::SimulatedCloud {
  std::string api_base() const override { return "http://127.0.0.1:9"; }
  std::optional<runara::SimulatedHost> host(std::string_view) const override {
    return runara::SimulatedHost{1, "nobody-here", "127.0.0.1"};
  }
};

}  // namespace

TEST_CASE("the simulator's port and user are not honoured when the run talks to another API", "[sim]") {
  // An embedding host hands a SimulatedCloud that claims every address, beside a different API
  // (the real one, in life): ssh must still go to the droplet's port 22 as root.
  runara::sim::FakeDigitalOcean api;
  api.start(0);
  const std::string dir = temp_dir("sim-other-api");
  runara::Options o;
  o.out_dir = dir + "/out";
  o.cloud.api_base = api.base_url();
  o.cloud.token = "test-token";
  o.cloud.state_dir = dir;
  o.cloud.poll_s = 0.2;
  o.cloud.simulated = std::make_shared<ClaimsEverything>();
  std::string printed;
  runara::Events events;
  events.print = [&](std::string_view text) { printed += text; };
  runara::Runtime runtime(o, events);
  const auto outcome = runtime.run_string(
      "local d = droplet.create{ size = 's-1vcpu-1gb', image = 'debian-12-x64', region = 'nyc3' }\n"
      "print(select(2, pcall(ssh.connect, d, { timeout = 1 })))");
  INFO(outcome.message << printed);
  CHECK(outcome.exit == runara::Exit::ok);
  CHECK(printed.find("root@203.0.113.") != std::string::npos);
  CHECK(printed.find(":22") != std::string::npos);
  CHECK(printed.find("nobody-here") == std::string::npos);
}

TEST_CASE("runara plan: machines, worst case and the grants a script asked for, with nothing left", "[sim]") {
  const std::string dir = temp_dir("sim-plan");
  const std::string script = write_temp_file(dir, "two.lua", R"(
local a = droplet.create{ name = "a", size = "gpu-mi300x1-192gb", image = "gpu-amd-base", region = "atl1" }
local b = droplet.create{ name = "b", size = "gpu-h100x1-80gb", image = "gpu-h100x1-base", region = "nyc2" }
pcall(runara.secret, "HF_TOKEN")
pcall(os.getenv, "HOME")
runara.write_file("x.txt", "not kept")
)");
  const auto r = run_runara({"plan", "--max-runtime", "3600", script}, 60);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("It creates 2 machines (at most 2 at once)") != std::string::npos);
  CHECK(r.out.find("gpu-mi300x1-192gb      atl1   image gpu-amd-base       $1.99/h") != std::string::npos);
  CHECK(r.out.find("gpu-h100x1-80gb        nyc2   image gpu-h100x1-base    $3.39/h") != std::string::npos);
  CHECK(r.out.find("Worst case: $5.38 (every machine alive until the 1.0 h deadline") != std::string::npos);
  CHECK(r.out.find("only --secret HF_TOKEN allows") != std::string::npos);
  CHECK(r.out.find("only --allow-env HOME allows") != std::string::npos);
  CHECK(r.out.find("it ran to the end") != std::string::npos);
}

TEST_CASE("runara plan runs no command on the simulated machines", "[sim]") {
  const std::string dir = temp_dir("sim-plan-exec");
  const std::string marker = dir + "/must-not-exist";
  const std::string script = write_temp_file(dir, "exec.lua",
      "local d = droplet.create{ size = 'gpu-h100x1-80gb', image = 'gpu-h100x1-base', region = 'nyc2' }\n"
      "local s = ssh.connect(d, { timeout = 30 })\n"
      "s:exec('touch " + marker + "')\n");
  const auto r = run_runara({"plan", script}, 60);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("commands are not run on simulated machines during a plan") != std::string::npos);
  CHECK(r.out.find("It creates 1 machine") != std::string::npos);
  CHECK(!exists(marker));
}
