// The flagship scenario (scripts/llama70b_fp8.lua) where the user points it, end to end through
// build/runara: on a machine of the user's over ssh (--on USER@HOST:PORT; here a simulated GPU
// machine, a real sshd on 127.0.0.1 whose sessions run sim/machine's shims), against a server that
// is already running (--on http://HOST:PORT; `runara serve-fake-llm`), and stopped by Ctrl-C at
// several moments under --sim. Each run writes its report (PARTIAL when stopped), creates no
// droplet where none is asked for, and leaves nothing of the run running on the user's machine
// while what the user runs there goes on. Issue 24: every scenario in scripts/ on every path a user
// takes — Ctrl-C under --sim during its main work, --on USER@HOST, --on URL, a typo'd param.
// Issue 36: folders of the user's named as a scenario names its work (~/gemm, ~/training, ~/mlperf,
// ~/finetune) are left byte for byte; the run works in a folder of its own, gone after it.
#include <catch2/catch.hpp>

#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_paths.hpp"
#include "child_process.hpp"
#include "sim_teardown_checks.hpp"
#include "eventually.hpp"
#include "loopback_fixtures.hpp"
#include "loopback_socket.hpp"
#include "sim/fake_digitalocean.hpp"
#include "sim/sim_machine.hpp"
#include "sshd_fixture.hpp"
#include "test_processes.hpp"
#include "test_text.hpp"

using namespace runara::test;
using nlohmann::json;

namespace {

std::string scenario_script(const std::string& name) { return std::string(RUNARA_SOURCE_DIR) + "/scripts/" + name; }
const std::string kFlagship = scenario_script("llama70b_fp8.lua");

json results(const std::string& out) { return json::parse(read_all(out + "/results.json")); }

// results.json, or an empty object when the run wrote none (or half of one): the checks then fail
// on what they expected in it instead of throwing.
json results_or_empty(const std::string& out) {
  json j = json::parse(read_all(out + "/results.json"), nullptr, false);
  return j.is_object() ? j : json::object();
}

// j at a path ("/report/status"), or `fallback` where it is missing.
json at(const json& j, const std::string& pointer, json fallback = nullptr) {
  const json::json_pointer p(pointer);
  return j.contains(p) ? j.at(p) : fallback;
}

// The flagship's suite in results.json (every load, a throughput) and both reports on disk.
void check_flagship_report(const json& j, const std::string& out) {
  const json& loads = j["benchmarks"]["loads"];
  for (const char* load : {"throughput", "ttft", "concurrent_10", "concurrent_32"}) {
    INFO(load);
    CHECK(loads.contains(load));
  }
  CHECK(j["benchmarks"]["throughput"]["tokens_per_second"].get<double>() > 0);
  CHECK(std::filesystem::exists(out + "/report.md"));
  CHECK(std::filesystem::exists(out + "/report.html"));
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

// The user's own machine: a simulated MI300X machine (sim/sim_machine.hpp: a real sshd
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
    spec.isolated = false;  // a machine of the user's: this computer's loopback, reached directly
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
  std::vector<std::string> args(const std::string& out, std::vector<std::string> params = {},
                                const std::string& script = kFlagship) const {
    std::vector<std::string> a{"--on", on(), "--ssh-key", key_, "--accept-new-host-keys", "--out", out, script};
    a.insert(a.end(), params.begin(), params.end());
    return a;
  }
  std::map<std::string, std::string> env() const { return {{"HOME", client_home()}}; }
  std::string home() const { return dir_ + "/machine/home"; }

  // What is in the machine's home (its files and folders, relative, recursively): compared before
  // and after a run to find what the run left there.
  std::vector<std::string> home_entries() const {
    std::vector<std::string> found;
    const std::filesystem::path home = dir_ + "/machine/home";
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(home, ec); !ec && it != std::filesystem::end(it);
         it.increment(ec)) {
      found.push_back(std::filesystem::relative(it->path(), home).string());
    }
    std::sort(found.begin(), found.end());
    return found;
  }

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


void check_partial_reports(const std::string& out) {
  const json j = results_or_empty(out);
  INFO("results.json: " << j.dump().substr(0, 2000));
  CHECK(at(j, "/report/status") == "partial");
  CHECK(at(j, "/report/error").is_string());
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

// Whether `pid` (a child not yet waited for) has exited: a zombie, or gone.
bool exited(pid_t pid) {
  const std::string stat = proc_file("/proc/" + std::to_string(pid) + "/stat");
  return stat.empty() || stat.find(") Z ") != std::string::npos;
}

// Stops `child` with SIGINT once `reached()` holds (plus `after_s`), reading its output meanwhile.
ChildResult interrupt_when(ChildProcess& child, const std::string& what, const std::function<bool()>& reached,
                           double after_s = 0) {
  bool seen = false;
  for (const double until = now_s() + 120; !seen && now_s() < until && !exited(child.pid());) {
    seen = reached();
    if (!seen) child.wait_for_output("\x01never\x01", 0.05);
  }
  INFO("waiting for " << what << ":\n" << child.out_so_far() << child.err_so_far());
  REQUIRE(seen);
  if (after_s > 0) child.wait_for_output("\x01never\x01", after_s);
  child.signal(SIGINT);
  return child.wait(60);
}

// Whether a process runs whose command line contains `command` and whose environment or command
// line mentions `where` (a simulated machine's folder): e.g. a command the run started on its droplet.
bool running(const std::string& command, const std::string& where) {
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string cmd = proc_file(e.path().string() + "/cmdline");
    if (contains(cmd, command) && (contains(cmd, where) || contains(proc_file(e.path().string() + "/environ"), where))) {
      return true;
    }
  }
  return false;
}

// Runs `child` to its end, unless its output shows `must_not` (what the run must not get to, e.g.
// "creating droplet"): then it is stopped with SIGINT at once, so a wrong run stays short.
ChildResult run_unless(ChildProcess& child, const std::string& must_not, double timeout_s = 60) {
  for (const double until = now_s() + timeout_s; now_s() < until && !exited(child.pid());) {
    if (child.wait_for_output(must_not, 0.1)) {
      child.signal(SIGINT);
      break;
    }
  }
  return child.wait(60);
}

// A fake DigitalOcean API the run is pointed at (RUNARA_DO_API_URL, a token of its own), so that a
// run that must create nothing could not reach a real account even where this computer has a
// token, and anything it tried to create is counted.
class WatchedCloud {
 public:
  WatchedCloud() : fake_(config()) { fake_.start(); }
  // `env` plus the fake API's URL and token, and a ledger folder of the test's.
  std::map<std::string, std::string> env(std::map<std::string, std::string> env = {}) const {
    env["RUNARA_DO_API_URL"] = fake_.base_url();
    env["DIGITALOCEAN_TOKEN"] = "where-test-token";
    env["RUNARA_STATE_DIR"] = state_;
    return env;
  }
  void check_nothing_created() const {
    INFO("requests the fake API saw:\n" << describe_requests());
    CHECK(fake_.requests("POST /v2/droplets") == 0);
    CHECK(fake_.creates() == 0);
    CHECK(fake_.requests("POST /v2/account/keys") == 0);
  }

 private:
  static runara::sim::FakeDoConfig config() {
    runara::sim::FakeDoConfig c;
    c.token = "where-test-token";
    return c;
  }
  std::string describe_requests() const {
    std::string s;
    for (const std::string& r : fake_.request_log()) s += r + "\n";
    return s;
  }
  runara::sim::FakeDigitalOcean fake_;
  std::string state_ = temp_dir("where-ledger");
};

// `runara serve-fake-llm`: a running OpenAI-compatible server (fake-model) at url().
class RunningServer {
 public:
  RunningServer() : server_({RUNARA_BINARY, "serve-fake-llm", "--port", "0", "--ttft-ms", "20", "--itl-ms", "2"}) {
    server_.close_stdin();
    REQUIRE(server_.wait_for_output("at http://127.0.0.1:", 10));
    const std::string said = server_.out_so_far() + server_.err_so_far();
    const auto at = said.find("http://127.0.0.1:");
    url_ = said.substr(at, said.find_first_of(" \n", at) - at);
  }
  const std::string& url() const { return url_; }
  ChildProcess& process() { return server_; }

 private:
  ChildProcess server_;
  std::string url_;
};

// A scenario under --sim stopped by Ctrl-C once `reached(child, out)` holds (plus `after_s`):
// exit 130, a PARTIAL report.md + report.html whose error is the interruption, every droplet
// destroyed. Returns results.json (or {}) for the scenario's own checks.
json interrupted_under_sim(const std::string& script, std::vector<std::string> params, const std::string& what,
                           const std::function<bool(ChildProcess&, const std::string&)>& reached, double after_s,
                           int droplets = 1) {
  const std::string tag = script.substr(0, script.find('.'));
  const std::string out = temp_dir("sim-int-" + tag) + "/out";
  std::filesystem::create_directories(sim_tmp(out));
  std::vector<std::string> argv{RUNARA_BINARY, "--sim", "--out", out, scenario_script(script)};
  argv.insert(argv.end(), params.begin(), params.end());
  ChildProcess child(argv, {{"TMPDIR", sim_tmp(out)}});
  child.close_stdin();
  const ChildResult r = interrupt_when(child, what, [&] { return reached(child, out); }, after_s);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 130);
  CHECK(r.seconds < 60);
  check_partial_reports(out);
  const json j = results_or_empty(out);
  CHECK(at(j, "/report/error") == "interrupted (SIGINT)");
  CHECK(at(j, "/metadata/simulated") == true);
  CHECK(contains(r.out, "PARTIAL report: "));
  CHECK(count_of(r.err, "destroying droplet") == static_cast<std::size_t>(droplets));
  check_torn_down(r, out, droplets);
  return j;
}

bool output_shows(ChildProcess& child, const std::string& text) {
  return contains(child.out_so_far(), text) || contains(child.err_so_far(), text);
}

// Files the user already has in the machine's home: path relative to it -> bytes.
using HomeFiles = std::map<std::string, std::string>;

// A scenario run on "your machine" (--on USER@HOST, the loopback stand-in): exit 0, a complete
// report saying where it ran, no droplet (the API was not even asked), nothing of the run left
// running there (the user's own process still is), nothing of it left in the machine's home but
// the load agent's cached executable (~/.cache/runara/runara-agent-*, documented as kept) and
// what `kept` names (prefixes of paths in the home, documented caches), and every file of
// `planted` (written into the home before the run) still there with the same bytes. Returns
// results.json for the scenario's own checks.
json run_on_your_machine(const std::string& script, std::vector<std::string> params, double time_scale,
                         const HomeFiles& planted = {}, const std::vector<std::string>& kept = {}) {
  YourMachine m(time_scale);
  m.start_unrelated();
  for (const auto& [path, bytes] : planted) {
    const std::filesystem::path file = std::filesystem::path(m.home()) / path;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << bytes;
  }
  const std::vector<std::string> home_before = m.home_entries();
  WatchedCloud cloud;
  const std::string out = temp_dir("on-machine-" + script.substr(0, script.find('.'))) + "/out";
  std::vector<std::string> argv = m.args(out, params, scenario_script(script));
  argv.insert(argv.begin(), RUNARA_BINARY);
  ChildProcess child(argv, cloud.env(m.env()));
  child.close_stdin();
  const ChildResult r = run_unless(child, "creating droplet", 120);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  const json j = results_or_empty(out);
  CHECK(at(j, "/report/status") == "complete");
  CHECK(at(j, "/metadata/simulated") == false);
  const std::string ran_on = at(j, "/metadata/ran_on", "").get<std::string>();
  CHECK(contains(ran_on, "your machine"));
  CHECK(contains(ran_on, m.on()));
  CHECK(std::filesystem::exists(out + "/report.md"));
  CHECK(std::filesystem::exists(out + "/report.html"));
  CHECK_FALSE(contains(read_all(out + "/report.md"), "PARTIAL"));
  check_no_droplet(r);
  cloud.check_nothing_created();
  check_machine_left_clean(m);
  std::string left;
  for (const std::string& e : m.home_entries()) {
    if (std::find(home_before.begin(), home_before.end(), e) != home_before.end()) continue;
    if (e == ".cache" || e == ".cache/runara" || e.rfind(".cache/runara/runara-agent-", 0) == 0) continue;
    if (std::any_of(kept.begin(), kept.end(), [&](const std::string& k) { return e.rfind(k, 0) == 0; })) continue;
    left += e + "\n";
  }
  INFO("left in the machine's home:\n" << left);
  CHECK(left.empty());
  // The user's own files: each still there, byte for byte, and nothing added beside them.
  std::map<std::string, std::uintmax_t> planted_bytes;
  for (const auto& [path, bytes] : planted) planted_bytes[path.substr(0, path.find('/'))] += bytes.size();
  for (const auto& [top, want] : planted_bytes) {
    std::uintmax_t got = 0;
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(m.home() + "/" + top, ec);
         !ec && it != std::filesystem::end(it); it.increment(ec)) {
      if (it->is_regular_file()) got += it->file_size();
    }
    INFO("the user's ~/" << top << ": " << want << " bytes in its files before the run, " << got << " after");
    CHECK(got == want);
  }
  for (const auto& [path, bytes] : planted) {
    INFO("the user's ~/" << path);
    const std::filesystem::path file = std::filesystem::path(m.home()) / path;
    REQUIRE(std::filesystem::is_regular_file(file));
    CHECK(read_all(file.string()) == bytes);
  }
  const std::vector<std::string> home_after = m.home_entries();
  for (const auto& [path, bytes] : planted) {
    const std::string top = path.substr(0, path.find('/'));
    for (const std::string& e : home_after) {
      if (e.rfind(top + "/", 0) != 0) continue;
      INFO("in the user's ~/" << top << " after the run: " << e);
      CHECK(std::find(home_before.begin(), home_before.end(), e) != home_before.end());
    }
  }
  // The run's own working folders (~/.cache/runara/runs/<run id>-NAME.XXXXXXXX) are gone.
  CHECK_FALSE(std::filesystem::exists(m.home() + "/.cache/runara/runs"));
  return j;
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
  check_flagship_report(j, out);
  // The manifest of a machine runara did not create: what it was rented as is unknown (and why);
  // what its own commands say is there. No price: no cost figure, and the headline says why.
  const json& mm = j["manifest"]["machines"][0];
  INFO(j["manifest"].dump(2));
  CHECK(mm["kind"] == "machine");
  CHECK(mm["size"] == "unknown (a machine of yours (--on): runara did not create it)");
  CHECK(mm["price_usd_per_hour"] == "unknown (a machine of yours (--on): runara did not create it)");
  CHECK(mm["gpu"] == "AMD Instinct MI300X");
  CHECK(mm["kernel"].get<std::string>().rfind("unknown", 0) != 0);
  CHECK(j["manifest"]["serving"][0]["image_digest"] == "rocm/vllm@sha256:" + std::string(64, '0'));
  // Issue 37: the droplet's params did not apply on a machine of yours; vLLM's did.
  CHECK_FALSE(j["params"].contains("size"));
  CHECK(j["params"]["quantization"] == "fp8");
  CHECK(j["manifest"]["params_not_applied"]["names"] == json({"image", "region", "size"}));
  CHECK_FALSE(j["benchmarks"]["loads"]["concurrent_32"].contains("usd_per_million_output_tokens"));
  CHECK(j["benchmarks"]["loads"]["concurrent_32"]["output_tokens_per_joule"].get<double>() > 0);
  CHECK(j["benchmarks"]["efficiency"]["cost_note"].get<std::string>().rfind("no hourly price", 0) == 0);
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
  const ChildResult r = interrupt_at(child, "http_load ttft-r1: starting");
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
    const std::string state = temp_dir("on-endpoint-state");
    const ChildResult r = run_runara({"--on", url, "--out", out, kFlagship, "profile=quick"}, 60, {{"RUNARA_STATE_DIR", state}});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const json j = results(out);
    CHECK(j["report"]["status"] == "complete");
    CHECK(contains(j["metadata"].value("ran_on", ""), url));
    CHECK(j["metadata"]["model"] == "fake-model");  // the model the server lists, not the script's
    // Issue 37: the reports are true to the path. The title names the model served, not the
    // script's default nor a quantization nobody chose; the params are those that applied (no
    // droplet size, no vLLM options of a server runara did not start); the load went straight.
    const std::string md = read_all(out + "/report.md");
    CHECK(md.rfind("# fake-model on " + url + "\n", 0) == 0);
    CHECK(contains(read_all(out + "/report.html"), "<title>fake-model on " + url + "</title>"));
    CHECK(contains(r.out, "fake-model on " + url + "\n"));
    CHECK_FALSE(contains(md, "Llama-3.3-70B-Instruct FP8"));
    CHECK(j["params"] == json({{"model", "fake-model"}, {"profile", "quick"}}));
    CHECK(j["manifest"]["params"] == j["params"]);
    CHECK(j["manifest"]["params_not_applied"]["asked_model"] == "meta-llama/Llama-3.3-70B-Instruct");
    CHECK(contains(j["manifest"]["params_not_applied"]["names"].dump(), "\"size\""));
    CHECK_FALSE(contains(md, "size=gpu-mi300x1-192gb"));
    CHECK(contains(md, "| params | model=fake-model profile=quick |"));
    CHECK(contains(md, "sent straight to the server (no tunnel)"));
    CHECK_FALSE(contains(md, "through a tunnel"));
    // `runara runs` says where it ran.
    const ChildResult runs = run_runara({"runs"}, 30, {{"RUNARA_STATE_DIR", state}});
    CHECK(contains(runs.out, "WHERE"));
    CHECK(contains(runs.out, "endpoint " + url));
    CHECK(contains(run_runara({"runs", "--json"}, 30, {{"RUNARA_STATE_DIR", state}}).out, "\"where\": \"endpoint " + url + "\""));
    // Its /v1/models lists one model (vLLM's shape: each model carries a "permission" list whose
    // entries have ids "modelperm-..."); those are not models it serves.
    CHECK(contains(r.err, "serves fake-model, not meta-llama/Llama-3.3-70B-Instruct"));
    CHECK_FALSE(contains(r.err, "modelperm"));
    check_flagship_report(j, out);
    // The manifest of a server only: the machine is not reached, the stack not started by runara;
    // each says so instead of a guess. The seeds and prompt sets are the loads' own.
    const json& man = j["manifest"];
    INFO(man.dump(2));
    CHECK(man["machines"][0]["kind"] == "endpoint");
    CHECK(contains(man["machines"][0]["note"].get<std::string>(), "unknown (--on " + url + " names only a server"));
    CHECK(man["serving"][0]["image"] == "unknown (a running server (--on URL): runara did not start it)");
    CHECK(man["serving"][0]["command"] == "unknown (a running server (--on URL): runara did not start it)");
    CHECK(man["serving"][0]["vllm_version"].get<std::string>().rfind("unknown (GET /version", 0) == 0);
    CHECK(man["serving"][0]["model"] == "fake-model");
    CHECK(man["seeds"]["concurrent_32"] == 0);
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
    CHECK(r.exit_code == 2);  // the command line's mistake: a usage error, no report, no folder
    CHECK(contains(r.err, "runara: --on " + bad + " is not an OpenAI-compatible server: GET /v1/models answered HTTP 404"));
    CHECK_FALSE(std::filesystem::exists(out));
    check_no_droplet(r);
  }
  SECTION("nothing listens there: refused, naming the URL") {
    const std::string bad = "http://127.0.0.1:" + std::to_string(unused_loopback_port());
    const std::string out = temp_dir("on-endpoint-none") + "/out";
    const ChildResult r = run_runara({"--on", bad, "--out", out, kFlagship, "profile=quick"}, 60);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "runara: --on " + bad + ": the server cannot be reached"));
    CHECK_FALSE(std::filesystem::exists(out));
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
  check_torn_down(r, out);

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

// --- Issue 24: every scenario in scripts/ on every path a user takes. ---

// Ctrl-C during each scenario's main work under --sim.

TEST_CASE("serving_sweep under --sim with Ctrl-C during the sweep: PARTIAL report with the finished level - droplet destroyed",
          "[scenario]") {
  // levels=8,16: Ctrl-C while the second level runs, the first one measured.
  const json j = interrupted_under_sim("serving_sweep.lua", {"levels=8,16"}, "the second level",
                                       [](ChildProcess& c, const std::string&) {
                                         return output_shows(c, "http_load sweep-c16: starting");
                                       }, 0.5);
  // What was measured before Ctrl-C is in the report (docs/scenarios.md: "the loads that finished").
  bool c8 = at(j, "/benchmarks/loads", json::object()).contains("sweep-c8");
  for (const json& row : at(j, "/benchmarks/sweep", json::array())) c8 = c8 || row.value("label", "") == "sweep-c8";
  INFO("benchmarks: " << at(j, "/benchmarks", json::object()).dump().substr(0, 1500));
  CHECK(c8);
}

TEST_CASE("gemm under --sim with Ctrl-C while the GEMM container runs: PARTIAL report - droplet destroyed", "[scenario]") {
  // The benchmark prints its rows only at its end (~2 s), and the ssh log has the command only
  // once it ended: the moment is the benchmark running on the droplet (`docker run ...
  // gemm_bench.py`, which the docker shim execs as sim/machine/lib/sim-gemm).
  const json j = interrupted_under_sim("gemm.lua", {}, "the GEMM benchmark running on the droplet",
                                       [](ChildProcess&, const std::string& out) {
                                         const std::string droplets = sim_tmp(out) + "/runara-sim-";
                                         return running("gemm_bench.py", droplets) || running("lib/sim-gemm", droplets);
                                       }, 0.3);
  CHECK_FALSE(at(j, "/benchmarks", json::object()).contains("gemm"));  // nothing measured yet
}

TEST_CASE("mlperf_llama2_70b under --sim with Ctrl-C during the Server scenario: PARTIAL report with Offline's results - droplet destroyed",
          "[scenario]") {
  const json j = interrupted_under_sim("mlperf_llama2_70b.lua", {}, "LoadGen's Server scenario",
                                       [](ChildProcess& c, const std::string&) {
                                         // The script's own line as it starts the Server run (live
                                         // on stderr; the harness's lines reach the machine's log
                                         // later, when the Server run may be over).
                                         return output_shows(c, "mlperf: LoadGen Server running");
                                       }, 0);
  CHECK(at(j, "/benchmarks/mlperf/Offline/samples_per_second", 0).get<double>() > 0);  // measured before Ctrl-C
  CHECK_FALSE(at(j, "/benchmarks/mlperf", json::object()).contains("Server"));
}

TEST_CASE("compare_mi300x_h100 under --sim with Ctrl-C during the loads: PARTIAL report - both droplets destroyed",
          "[scenario]") {
  interrupted_under_sim("compare_mi300x_h100.lua", {}, "the MI300X's first load",
                        [](ChildProcess& c, const std::string&) {
                          return output_shows(c, "http_load mi300x_throughput: starting");
                        }, 1, 2);
}

// --on USER@HOST: the loopback SimMachine standing in for a machine of the user's.

TEST_CASE("serving_sweep --on your machine over ssh: a full sweep, no droplet - nothing of the run left there",
          "[scenario]") {
  REQUIRE(port_8000_free());  // the machine's vLLM takes 127.0.0.1:8000
  const json j = run_on_your_machine("serving_sweep.lua", {"levels=8,16", "max_tokens=32"}, 0.25);
  std::vector<std::string> labels;
  for (const json& row : at(j, "/benchmarks/sweep", json::array())) labels.push_back(row.value("label", ""));
  CHECK(labels == std::vector<std::string>{"sweep-c8", "sweep-c16"});
  CHECK(at(j, "/metadata/gpu") == "AMD Instinct MI300X");
}

TEST_CASE("gemm --on your machine over ssh: TFLOPS rows, no droplet - its working folder removed, nothing of the run left there",
          "[scenario]") {
  const json j = run_on_your_machine("gemm.lua", {}, 0.25);
  CHECK(at(j, "/benchmarks/gemm/results", json::array()).size() == 14);  // 7 shapes x fp16, bf16
  CHECK(at(j, "/metadata/gpu") == "AMD Instinct MI300X");
}

TEST_CASE("mlperf_llama2_70b --on your machine over ssh: Offline and Server, no droplet - its working folder removed, nothing of the run left there",
          "[scenario]") {
  const json j = run_on_your_machine("mlperf_llama2_70b.lua", {}, 0.25);
  CHECK(at(j, "/benchmarks/mlperf/Offline/samples_per_second", 0).get<double>() > 0);
  CHECK(at(j, "/benchmarks/mlperf/Server/samples_per_second", 0).get<double>() > 0);
}

// Issue 36: folders of the user's with the names the scenarios once worked in (`mkdir -p gemm`,
// then `rm -rf gemm`), holding files of the names the scenarios write (gemm_bench.py,
// train_bench.py, mlperf-results/, out/, models/) and bytes no text tool would keep (NUL, invalid
// UTF-8, no final newline).
TEST_CASE("gemm, training, mlperf_llama2_70b, finetune --on your machine: the user's ~/gemm, ~/training, ~/mlperf, "
          "~/finetune left byte for byte - the run's own folder gone", "[scenario]") {
  struct Case {
    const char* script;
    std::vector<std::string> params;
    const char* folder;
    std::vector<std::string> files;   // the scenario's own file names, inside the user's folder
    std::vector<std::string> kept;    // documented caches the run may leave
  };
  const Case c = GENERATE(
      Case{"gemm.lua", {"reps=5", "warmup=1"}, "gemm", {"gemm_bench.py"}, {}},
      Case{"training.lua", {"parts=matmul,mlp"}, "training", {"train_bench.py"}, {}},
      Case{"mlperf_llama2_70b.lua", {"scenarios=Offline"}, "mlperf", {"mlperf-results/keep/mlperf_log_summary.txt"}, {}},
      Case{"finetune.lua", {"steps=4"}, "finetune", {"out/logs/log_1.txt", "models/Qwen3-8B/config.json"},
           {".cache/runara/models"}});
  INFO(c.script);
  using namespace std::string_literals;  // the NUL inside stays part of the bytes
  const std::string bytes = "the user's own "s + c.folder + "\n\0\xff\xfe binary\r\nno final newline"s;
  HomeFiles planted{{std::string(c.folder) + "/notes.txt", bytes},
                    {std::string(c.folder) + "/deeper/data.bin", std::string(4096, '\x5a') + bytes}};
  for (const std::string& f : c.files) planted[std::string(c.folder) + "/" + f] = "# the user's " + f + "\n" + bytes;
  run_on_your_machine(c.script, c.params, 0.25, planted, c.kept);
}

TEST_CASE("compare_mi300x_h100 --on your machine: refused (it needs two machines) before anything is created",
          "[scenario]") {
  YourMachine m(0.25);
  m.start_unrelated();
  WatchedCloud cloud;
  const std::string out = temp_dir("on-machine-compare") + "/out";
  std::vector<std::string> argv = m.args(out, {}, scenario_script("compare_mi300x_h100.lua"));
  argv.insert(argv.begin(), RUNARA_BINARY);
  ChildProcess child(argv, cloud.env(m.env()));
  child.close_stdin();
  const ChildResult r = run_unless(child, "creating droplet", 30);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);  // refused by itself as a usage error, not stopped by the test at "creating droplet"
  CHECK_FALSE(contains(r.err, "stack traceback"));
  CHECK(contains(r.err, "--on"));
  // Why: it measures two machines at once, and --on names one.
  CHECK((contains(r.err, "two machines") || contains(r.err, "two droplets") || contains(r.err, "second")));
  check_no_droplet(r);
  cloud.check_nothing_created();
  check_machine_left_clean(m);
}

// --on URL: a running server (serve-fake-llm).

TEST_CASE("serving_sweep --on a running OpenAI-compatible server: every level measured from here - no droplet",
          "[scenario]") {
  RunningServer server;
  WatchedCloud cloud;
  const std::string out = temp_dir("on-endpoint-sweep") + "/out";
  const ChildResult r =
      run_runara({"--on", server.url(), "--out", out, scenario_script("serving_sweep.lua"), "levels=8,16"}, 60, cloud.env());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const json j = results_or_empty(out);
  CHECK(at(j, "/report/status") == "complete");
  CHECK(contains(at(j, "/metadata/ran_on", "").get<std::string>(), server.url()));
  CHECK(at(j, "/metadata/model") == "fake-model");
  const std::string md = read_all(out + "/report.md");
  CHECK(md.rfind("# Serving sweep: fake-model on " + server.url() + "\n", 0) == 0);
  // The machine line says what runara knows of the machine behind the URL: nothing.
  CHECK(contains(md, "a running server at " + server.url() + " (runara did not make or inspect its machine)"));
  CHECK(contains(md, "sent straight to the server (no tunnel)"));
  CHECK_FALSE(contains(md, "through a tunnel"));
  CHECK_FALSE(contains(md, "size=gpu-mi300x1-192gb"));
  std::vector<std::string> labels;
  for (const json& row : at(j, "/benchmarks/sweep", json::array())) {
    labels.push_back(row.value("label", ""));
    CHECK(row.value("completed", 0) > 0);
    CHECK(row.value("failed", -1) == 0);
  }
  CHECK(labels == std::vector<std::string>{"sweep-c8", "sweep-c16"});
  CHECK(std::filesystem::exists(out + "/sweep-c8"));
  CHECK(std::filesystem::exists(out + "/sweep-c16"));
  CHECK(std::filesystem::exists(out + "/report.html"));
  CHECK(contains(r.err, server.url() + "/v1/completions"));
  check_no_droplet(r);
  cloud.check_nothing_created();
}

// Issue 37: gates in the report. A scenario whose loads carry http_load thresholds, against a
// running server whose TTFT (20 ms) crosses ttft_p99_ms = 5: the run exits 4, and both reports,
// the printed summary and report.status say which gate was crossed, and which passed.
TEST_CASE("a scenario's crossed threshold shows in report.md and report.html - status thresholds - exit 4", "[scenario]") {
  RunningServer server;
  const std::string dir = temp_dir("on-endpoint-gated");
  const std::string script = dir + "/gated.lua";
  {
    std::ofstream f(script);
    f << R"lua(
local scenario = require("runara.scenario")
local suite = require("runara.suite")
scenario.run({
  title = function(p, where) return "Gated load: " .. p.model .. " on " .. where end,
  params = { { name = "model", default = "some-model", help = "model" } },
}, function(sc)
  local server = sc:serve(nil, { model = sc.params.model })
  suite.run(server, { report = sc.report, tests = { "concurrent" }, profile = "quick", quiet = true,
                      thresholds = { ttft_p99_ms = 5, failure_rate = 0.01 } })
end)
)lua";
  }
  const std::string out = dir + "/out";
  const ChildResult r = run_runara({"--on", server.url(), "--out", out, script}, 60);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 4);
  const json j = results_or_empty(out);
  CHECK(at(j, "/report/status") == "thresholds");
  CHECK(at(j, "/run/status") == "thresholds");
  CHECK(at(j, "/report/thresholds_crossed") == 2);
  CHECK(at(j, "/benchmarks/loads/concurrent_32/thresholds/ttft_p99_ms/ok") == false);
  CHECK(at(j, "/benchmarks/loads/concurrent_32/thresholds/failure_rate/ok") == true);
  const std::string md = read_all(out + "/report.md");
  CHECK(contains(md, "THRESHOLDS CROSSED — 2 of 4 gates: ttft_p99_ms at concurrent_10: "));
  CHECK(contains(md, "## Thresholds"));
  CHECK(contains(md, "| concurrent_32 | ttft_p99_ms | at most 5 | "));
  CHECK(contains(md, "| CROSSED |"));
  CHECK(contains(md, "| concurrent_32 | failure_rate | at most 0.01 | 0.00 | passed |"));
  const std::string html = read_all(out + "/report.html");
  CHECK(contains(html, "id=\"thresholds-crossed\""));
  CHECK(contains(html, "<h2>Thresholds</h2>"));
  CHECK(contains(r.out, "THRESHOLDS CROSSED: 2 of 4 (exit status 4)"));
  CHECK(contains(r.out, "ttft_p99_ms at concurrent_32: "));
}

TEST_CASE("gemm and mlperf_llama2_70b --on a server only: refused, they need a machine - nothing created", "[scenario]") {
  const std::string script = GENERATE(std::string("gemm.lua"), std::string("mlperf_llama2_70b.lua"));
  INFO(script);
  RunningServer server;
  WatchedCloud cloud;
  const std::string out = temp_dir("on-endpoint-needs-machine") + "/out";
  ChildProcess child({RUNARA_BINARY, "--on", server.url(), "--out", out, scenario_script(script)}, cloud.env());
  child.close_stdin();
  const ChildResult r = run_unless(child, "creating droplet", 30);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);  // a usage error: the command line named the wrong kind of target
  CHECK(contains(r.err, "needs a machine to run on"));
  CHECK_FALSE(contains(r.err, "stack traceback"));
  CHECK(contains(r.err, "--on " + server.url() + " names only a server"));
  check_no_droplet(r);
  cloud.check_nothing_created();
}

// A typo'd param: refused before anything is created.

TEST_CASE("every scenario refuses a typo'd param before anything is created, suggesting the right name", "[scenario]") {
  struct Typo {
    const char* script;
    const char* arg;
    const char* suggestion;
  };
  const Typo t = GENERATE(Typo{"llama70b_fp8.lua", "sise=gpu-h100x1-80gb", "did you mean 'size'"},
                          Typo{"serving_sweep.lua", "sise=gpu-h100x1-80gb", "did you mean 'size'"},
                          Typo{"gemm.lua", "sise=gpu-h100x1-80gb", "did you mean 'size'"},
                          Typo{"mlperf_llama2_70b.lua", "sise=gpu-mi300x8-1536gb", "did you mean 'size'"},
                          Typo{"compare_mi300x_h100.lua", "amd_sise=gpu-mi300x1-192gb", "did you mean 'amd_size'"});
  INFO(t.script << " " << t.arg);
  const std::string out = temp_dir("typo") + "/out";
  std::filesystem::create_directories(sim_tmp(out));
  // Under --sim: a run that goes on anyway creates only local machines, and is stopped at once.
  ChildProcess child({RUNARA_BINARY, "--sim", "--out", out, scenario_script(t.script), t.arg}, {{"TMPDIR", sim_tmp(out)}});
  child.close_stdin();
  const ChildResult r = run_unless(child, "creating droplet", 30);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK_FALSE(contains(r.err, "stack traceback"));
  CHECK(contains(r.err, std::string("unknown param '") + std::string(t.arg).substr(0, std::string(t.arg).find('=')) + "'"));
  CHECK(contains(r.err, t.suggestion));
  CHECK_FALSE(contains(r.err, "creating droplet"));
  CHECK_FALSE(contains(r.err, "registering the run's SSH key"));
}
