// The flagship scenario (scripts/llama70b_fp8.lua) where the user points it, end to end through
// build/runara: on a machine of the user's over ssh (--on USER@HOST:PORT; here a simulated GPU
// machine, a real sshd on 127.0.0.1 whose sessions run sim/machine's shims), against a server that
// is already running (--on http://HOST:PORT; `runara serve-fake-llm`), and stopped by Ctrl-C at
// several moments under --sim. Each run writes its report (PARTIAL when stopped), creates no
// droplet where none is asked for, and leaves nothing of the run running on the user's machine
// while what the user runs there goes on.
#include <catch2/catch.hpp>

#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "child_process.hpp"
#include "eventually.hpp"
#include "loopback_fixtures.hpp"
#include "loopback_socket.hpp"
#include "sim/sim_machine.hpp"
#include "sshd_fixture.hpp"
#include "test_processes.hpp"
#include "test_text.hpp"

using namespace runara::test;
using nlohmann::json;

namespace {

const std::string kFlagship = std::string(RUNARA_SOURCE_DIR) + "/scripts/llama70b_fp8.lua";

json results(const std::string& out) { return json::parse(read_all(out + "/results.json")); }

int count_of(const std::string& text, const std::string& part) {
  int n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// A process seen in /proc: its id and its command line (arguments joined by spaces).
struct Proc {
  pid_t pid;
  std::string cmdline;
};

// Processes whose environment holds `entry` ("NAME=value").
std::vector<Proc> processes_with_env(const std::string& entry) {
  std::vector<Proc> found;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string env = proc_file(e.path().string() + "/environ");
    bool has = false;
    for (std::size_t at = 0; at < env.size();) {
      const std::size_t end = std::min(env.find('\0', at), env.size());
      if (env.compare(at, end - at, entry) == 0) has = true;
      at = end + 1;
    }
    if (!has) continue;
    std::string cmd = proc_file(e.path().string() + "/cmdline");
    for (char& c : cmd) if (c == '\0') c = ' ';
    found.push_back({static_cast<pid_t>(std::stol(name)), cmd});
  }
  return found;
}

// The user's own machine: a simulated MI300X machine (runtime/sim/sim_machine.hpp: a real sshd
// whose sessions have sim/machine's shims first on PATH) at 127.0.0.1, where the scenario's
// vLLM answers (the shim binds RUNARA_SIM_IP:8000, and the scenario reaches a machine of the
// user's through a tunnel to 127.0.0.1:8000, as on a real one), logged into with a key of its
// own. It was not created by the run: runara must leave it, and what the user runs there, alone.
class YourMachine {
 public:
  explicit YourMachine(double time_scale) : dir_(temp_dir("your-machine")) {
    key_ = dir_ + "/user_key";
    run_tool({"/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "runara-test", "-f", key_});
    std::filesystem::create_directories(dir_ + "/client-home");  // runara's HOME: no known_hosts
    runara::sim::SimMachineSpec spec;
    spec.dir = dir_ + "/machine";
    spec.address = "127.0.0.1";
    spec.size_slug = "gpu-mi300x1-192gb";
    std::string pub = read_all(key_ + ".pub");
    while (!pub.empty() && (pub.back() == '\n' || pub.back() == '\r')) pub.pop_back();
    spec.public_keys = {pub};
    spec.runara_executable = RUNARA_BINARY;
    spec.shims_dir = std::string(RUNARA_SOURCE_DIR) + "/sim/machine";
    spec.cloud_entry = "RUNARA_SIM_DIR=" + spec.dir;
    spec.time_scale = time_scale;
    marker_ = "RUNARA_SIM_STATE=" + spec.dir + "/state";
    machine_ = std::make_unique<runara::sim::SimMachine>(spec);
  }

  int port() const { return machine_->ssh_port(); }
  const std::string& key() const { return key_; }
  std::string client_home() const { return dir_ + "/client-home"; }
  std::string on() const { return user() + "@127.0.0.1:" + std::to_string(port()); }
  static std::string user() {
    const passwd* pw = getpwuid(geteuid());
    return pw ? pw->pw_name : "root";
  }

  // What the user runs there, unrelated to the run: a `sleep` in a session of its own, started
  // over ssh like any command of theirs (so with the machine's environment). Returns its pid.
  pid_t start_unrelated() {
    ChildProcess ssh({"/usr/bin/ssh", "-F", "/dev/null", "-i", key_, "-p", std::to_string(port()), "-o", "BatchMode=yes",
                      "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
                      user() + "@127.0.0.1", "setsid nohup sleep 300 </dev/null >/dev/null 2>&1 &"});
    ssh.close_stdin();
    const ChildResult r = ssh.wait(30);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    pid_t pid = -1;
    eventually([&] {
      for (const Proc& p : processes_with_env(marker_)) if (p.cmdline == "sleep 300 ") pid = p.pid;
      return pid > 0;
    }, 10);
    REQUIRE(pid > 0);
    unrelated_ = pid;
    return pid;
  }

  // Processes on the machine other than its sshd listener and the user's unrelated one: what the
  // run started there (vLLM and its docker shim, runara-agent, sessions' shells, sshd's
  // per-connection children) and left.
  std::vector<Proc> left_by_the_run() const {
    std::vector<Proc> left;
    for (const Proc& p : processes_with_env(marker_)) {
      // (sshd's listener rewrites its command line, and with it usually its environment)
      if (p.pid == unrelated_ || contains(p.cmdline, "/usr/sbin/sshd -D -e -f ")) continue;
      left.push_back(p);
    }
    return left;
  }

  bool unrelated_alive() const {
    return unrelated_ > 0 && proc_file("/proc/" + std::to_string(unrelated_) + "/cmdline").rfind("sleep", 0) == 0 &&
           proc_file("/proc/" + std::to_string(unrelated_) + "/stat").find(") Z") == std::string::npos;
  }

  // runara on this machine: --on USER@127.0.0.1:PORT with its key, accepting its host key.
  std::vector<std::string> args(const std::string& out, std::vector<std::string> params = {}) const {
    std::vector<std::string> a{"--on", on(), "--ssh-key", key_, "--accept-new-host-keys", "--out", out, kFlagship};
    a.insert(a.end(), params.begin(), params.end());
    return a;
  }
  std::map<std::string, std::string> env() const { return {{"HOME", client_home()}}; }

 private:
  std::string dir_, key_, marker_;
  std::unique_ptr<runara::sim::SimMachine> machine_;
  pid_t unrelated_ = -1;
};

std::string describe(const std::vector<Proc>& procs) {
  std::string s;
  for (const Proc& p : procs) s += std::to_string(p.pid) + " " + p.cmdline + "\n";
  return s;
}

// The scenario's vLLM listens on 127.0.0.1:8000 of "your machine" (this computer).
bool port_8000_free() {
  const int fd = connect_loopback(8000);
  if (fd >= 0) ::close(fd);
  return fd < 0;
}

// After the run: nothing it started still runs there; the user's own process does.
void check_machine_left_clean(const YourMachine& m) {
  std::vector<Proc> left;
  const bool clean = eventually([&] { return (left = m.left_by_the_run()).empty(); }, 10);
  INFO("still running on the machine:\n" << describe(left));
  CHECK(clean);
  CHECK(m.unrelated_alive());
}

void check_no_droplet(const ChildResult& r) {
  CHECK_FALSE(contains(r.err, "destroying droplet"));
  CHECK_FALSE(contains(r.err, "creating droplet"));
  CHECK_FALSE(contains(r.err, "simulated cloud"));
}

// --sim helpers (the same conventions as test_scenarios_sim.cpp).
std::string sim_tmp(const std::string& out) { return out.substr(0, out.rfind('/')) + "/tmp"; }

void check_droplet_destroyed(const ChildResult& r, const std::string& out) {
  CHECK(count_of(r.err, "is gone") == 1);
  CHECK(contains(r.err, "ssh key runara-"));
  CHECK(contains(r.err, " deleted"));
  const std::string machines = sim_tmp(out) + "/runara-sim-";
  CHECK(eventually([&] { return processes_mentioning(machines) == 0; }, 10));
  bool folder_left = false;
  for (const auto& e : std::filesystem::directory_iterator(sim_tmp(out))) {
    if (e.path().filename().string().rfind("runara-sim-", 0) == 0) folder_left = true;
  }
  CHECK_FALSE(folder_left);
}

void check_partial_reports(const std::string& out) {
  const json j = results(out);
  CHECK(j["report"]["status"] == "partial");
  CHECK(j["report"]["error"].is_string());
  const std::string md = read_all(out + "/report.md");
  CHECK(contains(md, "PARTIAL"));
  const std::string html = read_all(out + "/report.html");
  CHECK(contains(html, "id=\"partial\""));
  CHECK(contains(html, "PARTIAL"));
}

// Stops `child` with SIGINT once its output shows `moment` (plus `after_s`); returns how it ended.
ChildResult interrupt_at(ChildProcess& child, const std::string& moment, double after_s = 0) {
  const bool reached = child.wait_for_output(moment, 120);
  INFO("waiting for '" << moment << "':\n" << child.out_so_far() << child.err_so_far());
  REQUIRE(reached);
  if (after_s > 0) child.wait_for_output("\x01never\x01", after_s);  // keeps reading while it waits
  child.signal(SIGINT);
  return child.wait(60);
}

}  // namespace

TEST_CASE("llama70b_fp8 --on your machine over ssh: a full report and no droplet - nothing of the run left there",
          "[scenario]") {
  REQUIRE(port_8000_free());  // the simulated machine's vLLM takes 127.0.0.1:8000
  YourMachine m(0.25);
  m.start_unrelated();
  const std::string out = temp_dir("on-machine") + "/out";
  std::vector<std::string> argv = m.args(out, {"profile=quick"});
  argv.insert(argv.begin(), RUNARA_BINARY);
  ChildProcess child(argv, m.env());
  child.close_stdin();
  // While it runs, the run's processes are there (so the check afterwards can see them).
  std::string during;
  for (const double until = now_s() + 120; now_s() < until && !child.wait_for_output("ssh: teardown", 0.1);) {
    for (const Proc& p : m.left_by_the_run()) {
      if (!contains(during, p.cmdline)) during += std::to_string(p.pid) + " " + p.cmdline + "\n";
    }
  }
  const ChildResult r = child.wait(120);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  INFO("during the loads:\n" << during);
  CHECK(contains(during, "serve-fake-llm"));  // the vLLM shim's server
  CHECK(contains(during, "runara-agent"));    // the load, sent from the machine itself
  const json j = results(out);
  CHECK(j["report"]["status"] == "complete");
  CHECK(j["metadata"]["gpu"] == "AMD Instinct MI300X");  // described through the machine's own amd-smi
  CHECK(j["metadata"]["simulated"] == false);
  CHECK(j["metadata"]["framework"].get<std::string>().rfind("vLLM", 0) == 0);
  const std::string ran_on = j["metadata"].value("ran_on", "");
  CHECK(contains(ran_on, "your machine"));
  CHECK(contains(ran_on, m.on()));
  const json& loads = j["benchmarks"]["loads"];
  for (const char* load : {"throughput", "ttft", "concurrent_10", "concurrent_32"}) {
    INFO(load);
    CHECK(loads.contains(load));
  }
  CHECK(j["benchmarks"]["throughput"]["tokens_per_second"].get<double>() > 0);
  CHECK(std::filesystem::exists(out + "/report.md"));
  CHECK(std::filesystem::exists(out + "/report.html"));
  CHECK(contains(read_all(out + "/report.md"), m.on()));
  CHECK_FALSE(contains(read_all(out + "/report.md"), "PARTIAL"));
  check_no_droplet(r);
  check_machine_left_clean(m);
}

TEST_CASE("llama70b_fp8 --on your machine with Ctrl-C while the loads run: PARTIAL report - nothing of the run left there",
          "[scenario]") {
  REQUIRE(port_8000_free());
  YourMachine m(1);  // real-time loads: the throughput load has results when the ttft one starts
  m.start_unrelated();
  const std::string out = temp_dir("on-machine-int") + "/out";
  std::vector<std::string> argv = m.args(out, {"profile=quick"});
  argv.insert(argv.begin(), RUNARA_BINARY);
  ChildProcess child(argv, m.env());
  child.close_stdin();
  const ChildResult r = interrupt_at(child, "http_load ttft: starting");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 130);
  CHECK(r.seconds < 60);
  check_partial_reports(out);
  const json j = results(out);
  CHECK(j["report"]["error"] == "interrupted (SIGINT)");
  CHECK(contains(j["metadata"].value("ran_on", ""), m.on()));
  CHECK(j["benchmarks"]["loads"].contains("throughput"));  // what was measured before Ctrl-C
  CHECK(contains(r.out, "PARTIAL report: "));
  check_no_droplet(r);
  check_machine_left_clean(m);
}

TEST_CASE("llama70b_fp8 --on a running OpenAI-compatible server: loads sent from here - no droplet", "[scenario]") {
  ChildProcess server({RUNARA_BINARY, "serve-fake-llm", "--port", "0", "--ttft-ms", "20", "--itl-ms", "2"});
  server.close_stdin();
  REQUIRE(server.wait_for_output("at http://127.0.0.1:", 10));
  const std::string said = server.out_so_far() + server.err_so_far();
  const auto at = said.find("http://127.0.0.1:");
  const std::string url = said.substr(at, said.find_first_of(" \n", at) - at);
  INFO(url);

  SECTION("it answers: a full report on that server") {
    const std::string out = temp_dir("on-endpoint") + "/out";
    const ChildResult r = run_runara({"--on", url, "--out", out, kFlagship, "profile=quick"}, 60);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const json j = results(out);
    CHECK(j["report"]["status"] == "complete");
    CHECK(contains(j["metadata"].value("ran_on", ""), url));
    CHECK(j["metadata"]["model"] == "fake-model");  // the model the server lists, not the script's
    // Its /v1/models lists one model (vLLM's shape: each model carries a "permission" list whose
    // entries have ids "modelperm-..."); those are not models it serves.
    CHECK(contains(r.err, "serves fake-model, not meta-llama/Llama-3.3-70B-Instruct"));
    CHECK_FALSE(contains(r.err, "modelperm"));
    const json& loads = j["benchmarks"]["loads"];
    for (const char* load : {"throughput", "ttft", "concurrent_10", "concurrent_32"}) {
      INFO(load);
      CHECK(loads.contains(load));
    }
    CHECK(j["benchmarks"]["throughput"]["tokens_per_second"].get<double>() > 0);
    CHECK(std::filesystem::exists(out + "/report.md"));
    CHECK(std::filesystem::exists(out + "/report.html"));
    check_no_droplet(r);
    // The server measured is the one named: runara neither stops nor starts one.
    CHECK(contains(r.err, url + "/v1/completions"));
    server.signal(SIGTERM);
    CHECK(server.wait(10).exit_code == 0);
  }
  SECTION("an HTTP server that is not OpenAI-compatible (404 for /v1/models): refused, naming the URL") {
    runara_test::LocalServer not_llm;
    not_llm.start();
    const std::string bad = "http://127.0.0.1:" + std::to_string(not_llm.port);
    const std::string out = temp_dir("on-endpoint-404") + "/out";
    const ChildResult r = run_runara({"--on", bad, "--out", out, kFlagship, "profile=quick"}, 60);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "--on " + bad + ": not an OpenAI-compatible server: GET /v1/models answered HTTP 404"));
    CHECK(results(out)["report"]["status"] == "partial");
    check_no_droplet(r);
  }
  SECTION("nothing listens there: refused, naming the URL") {
    const std::string bad = "http://127.0.0.1:" + std::to_string(unused_loopback_port());
    const std::string out = temp_dir("on-endpoint-none") + "/out";
    const ChildResult r = run_runara({"--on", bad, "--out", out, kFlagship, "profile=quick"}, 60);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "--on " + bad + ": the server cannot be reached"));
    check_no_droplet(r);
  }
}

TEST_CASE("llama70b_fp8 under --sim with Ctrl-C during boot / model load / loads: PARTIAL reports - droplet destroyed",
          "[scenario]") {
  struct Moment {
    const char* phase;
    const char* marker;  // the line of the run's output after which Ctrl-C comes
    double after_s;
  };
  const Moment moment = GENERATE(Moment{"boot", "creating droplet", 0.5}, Moment{"model_load", "vllm: starting", 1},
                                 Moment{"loads", "http_load concurrent_10: starting", 1});
  INFO("Ctrl-C during " << moment.phase);
  const std::string out = temp_dir(std::string("sim-int-") + moment.phase) + "/out";
  std::filesystem::create_directories(sim_tmp(out));
  ChildProcess child({RUNARA_BINARY, "--sim", "--out", out, kFlagship}, {{"TMPDIR", sim_tmp(out)}});
  child.close_stdin();
  const ChildResult r = interrupt_at(child, moment.marker, moment.after_s);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 130);
  check_partial_reports(out);
  CHECK(results(out)["report"]["error"] == "interrupted (SIGINT)");
  CHECK(results(out)["metadata"]["simulated"] == true);
  if (std::string(moment.phase) == "loads") CHECK(results(out)["benchmarks"]["loads"].contains("throughput"));
  CHECK(contains(r.out, "PARTIAL report: "));
  CHECK(contains(r.err, "destroying droplet"));
  check_droplet_destroyed(r, out);

#ifdef RUNARA_CHROMIUM
  if (std::string(moment.phase) == "loads") {  // the browser shows the PARTIAL banner
    ChildProcess dump({RUNARA_CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                       "file://" + out + "/report.html"});
    dump.close_stdin();
    const ChildResult d = dump.wait(60);
    INFO(d.err);
    REQUIRE(d.exit_code == 0);
    const auto banner = d.out.find("id=\"partial\"");
    REQUIRE(banner != std::string::npos);
    CHECK(contains(d.out.substr(banner, d.out.find("</div>", banner) - banner), "PARTIAL"));
  }
#endif
}
