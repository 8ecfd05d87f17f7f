// Droplets when things go wrong, end to end: build/runara as a child process against an
// in-process fake DigitalOcean API that loses responses, lets droplets vanish, rate-limits,
// fails, goes away. Budgets and bad input are refused before anything is sent, the token never
// shows, several runs share one ledger, and whatever happens the fake ends with zero live
// droplets and nothing created twice. Each case has its own fake, ledger folder and HOME.
#include <catch2/catch.hpp>

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

#include "test_paths.hpp"
#include "child_process.hpp"
#include "eventually.hpp"
#include "sim/fake_digitalocean.hpp"
#include "test_text.hpp"

#include <nlohmann/json.hpp>

using runara::test::ChildProcess;
using runara::test::ChildResult;

using runara::test::eventually;

using runara::test::contains;
using runara::test::count_of;
using runara::test::read_all;

namespace {

namespace fs = std::filesystem;

constexpr const char* kToken = "droplet-test-token-7c1e";


std::string script(const std::string& name) { return std::string(RUNARA_SOURCE_DIR) + "/tests/scripts/" + name; }

// The line of `text` that starts with `prefix` (without the newline), or "".
std::string line_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) return line;
  }
  return {};
}

// The first word after `prefix` on the line starting with it ("RUN 2b0c51c0" -> "2b0c51c0").
std::string word_after(const std::string& text, const std::string& prefix) {
  const std::string line = line_starting(text, prefix);
  std::istringstream in(line.substr(std::min(prefix.size(), line.size())));
  std::string word;
  in >> word;
  return word;
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}


// The guardian process of a runtime (`runara __guardian --run ID ... --runtime-pid PID`).
struct GuardianInfo {
  pid_t pid = 0;
  std::string run_id;
};

// Every guardian process running now, with its arguments.
std::vector<std::pair<pid_t, std::vector<std::string>>> guardians() {
  std::vector<std::pair<pid_t, std::vector<std::string>>> out;
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::vector<std::string> args;
    std::string arg;
    for (char c : read_all(it->path().string() + "/cmdline")) {
      if (c == '\0') {
        args.push_back(arg);
        arg.clear();
      } else {
        arg += c;
      }
    }
    if (args.size() >= 2 && args[1] == "__guardian") out.emplace_back(static_cast<pid_t>(std::stol(name)), args);
  }
  return out;
}

// The value after `flag` in a guardian's arguments.
std::string flag_of(const std::vector<std::string>& args, const std::string& flag) {
  for (std::size_t i = 2; i + 1 < args.size(); ++i) {
    if (args[i] == flag) return args[i + 1];
  }
  return {};
}

GuardianInfo find_guardian(pid_t runtime_pid) {
  for (const auto& [pid, args] : guardians()) {
    if (flag_of(args, "--runtime-pid") == std::to_string(runtime_pid)) return {pid, flag_of(args, "--run")};
  }
  return {};
}

GuardianInfo guardian_for(pid_t runtime_pid) {
  GuardianInfo info;
  eventually([&] { return (info = find_guardian(runtime_pid)).pid != 0; }, 10);
  return info;
}

// The rows of `runara ls` by run id: "RUN ALIVE DROPLET NAME ...".
struct LsRow {
  std::string alive, droplet;
};

std::map<std::string, LsRow> ls_rows(const std::string& out) {
  std::map<std::string, LsRow> rows;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    const auto w = words(line);
    if (w.size() < 3 || w[0] == "RUN" || w[0] == "step" || contains(line, "(ssh key)")) continue;
    rows[w[0]] = {w[1], w[2]};
  }
  return rows;
}

// One fake cloud, one ledger folder, one HOME: what each case runs against.
class Cloud {
 public:
  explicit Cloud(double active_after_s = 0.2, double delete_after_s = 0.2)
      : fake(config(active_after_s, delete_after_s)), dir(runara::test::temp_dir("droplet")) {
    fake.start();
    fs::create_directories(dir + "/home");
  }

  // A guardian of this cloud's runs that is still at work (its runtime was killed, or its
  // teardown gave up) could only talk to a fake that is gone: it is ended with the case.
  ~Cloud() {
    for (const auto& [pid, args] : guardians()) {
      if (flag_of(args, "--state-dir") == dir + "/state") kill(pid, SIGTERM);
    }
  }
  Cloud(const Cloud&) = delete;
  Cloud& operator=(const Cloud&) = delete;

  // The environment runara runs with (no other token source than kToken); `extra` replaces entries.
  std::map<std::string, std::string> env(const std::map<std::string, std::string>& extra = {}) const {
    std::map<std::string, std::string> e{{"RUNARA_DO_API_URL", fake.base_url()},
                                         {"DIGITALOCEAN_TOKEN", kToken},
                                         {"DIGITALOCEAN_ACCESS_TOKEN", ""},
                                         {"XDG_CONFIG_HOME", ""},
                                         {"RUNARA_STATE_DIR", dir + "/state"},
                                         {"RUNARA_POLL_S", "0.1"},
                                         {"HOME", dir + "/home"}};
    for (const auto& [k, v] : extra) e[k] = v;
    return e;
  }

  // Starts `runara FLAGS --out DIR tests/scripts/SCRIPT PARAMS`.
  std::unique_ptr<ChildProcess> start(const std::vector<std::string>& flags, const std::string& script_name,
                                      const std::vector<std::string>& params = {},
                                      const std::map<std::string, std::string>& extra_env = {}) {
    std::vector<std::string> args{RUNARA_BINARY};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"--out", dir + "/out-" + std::to_string(++runs_)});
    args.push_back(script(script_name));
    args.insert(args.end(), params.begin(), params.end());
    return std::make_unique<ChildProcess>(args, env(extra_env));
  }

  ChildResult run(const std::vector<std::string>& flags, const std::string& script_name,
                  const std::vector<std::string>& params = {}, const std::map<std::string, std::string>& extra_env = {},
                  double timeout_s = 60) {
    return start(flags, script_name, params, extra_env)->wait(timeout_s);
  }

  // `runara ls`, `runara reap ...` on this cloud's ledger.
  ChildResult command(const std::vector<std::string>& args, const std::map<std::string, std::string>& extra_env = {},
                      double timeout_s = 60) {
    return runara::test::run_runara(args, timeout_s, env(extra_env));
  }

  // The token is nowhere: not in the child's stdout/stderr, nor in any file of the runs (run.log,
  // results.json) or of the ledger folder (ledger, guardian logs). HOME is left out: the doctl
  // config test puts the token there on purpose.
  void check_no_token(const ChildResult& r, const std::string& token = kToken) const {
    CHECK_FALSE(contains(r.out, token));
    CHECK_FALSE(contains(r.err, token));
    // Guardians may still be writing there (SQLite's -wal and -shm files come and go): no throwing.
    std::error_code ec;
    for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->path() == fs::path(dir + "/home")) {
        it.disable_recursion_pending();
        continue;
      }
      std::error_code file_ec;
      if (!it->is_regular_file(file_ec)) continue;
      INFO("file " << it->path().string());
      CHECK_FALSE(contains(read_all(it->path().string()), token));
    }
  }

  // Files of the n-th run's output folder.
  std::string run_file(int n, const std::string& name) const {
    return read_all(dir + "/out-" + std::to_string(n) + "/" + name);
  }

  std::vector<std::int64_t> droplet_ids() const {
    std::vector<std::int64_t> ids;
    for (const auto& d : fake.droplets()) ids.push_back(d.value("id", std::int64_t{0}));
    return ids;
  }

  runara::sim::FakeDigitalOcean fake;
  std::string dir;

 private:
  static runara::sim::FakeDoConfig config(double active_after_s, double delete_after_s) {
    runara::sim::FakeDoConfig c;
    c.token = kToken;
    c.active_after_s = active_after_s;
    c.delete_after_s = delete_after_s;
    c.enforce_rate_limits = false;  // the tests poll faster than a real client may
    return c;
  }

  int runs_ = 0;
};

// What every run that ended on its own must leave: nothing live, nothing created twice.
void check_clean_end(Cloud& cloud, int max_creates) {
  CHECK(cloud.fake.live_droplets() == 0);  // the run's own teardown destroyed them
  CHECK(eventually([&] { return cloud.fake.existing_droplets() == 0; }, 20));
  CHECK(cloud.fake.creates() <= max_creates);
  // The run's own SSH key went with its machines.
  CHECK(eventually([&] { return cloud.fake.keys().empty(); }, 20));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Faults of the API

TEST_CASE("droplet: a lost create response is reconciled by tag, without a second create", "[droplet]") {
  Cloud cloud;
  cloud.fake.drop_next_create_response();
  const ChildResult r = cloud.run({}, "droplet_create.lua");
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "CREATED "));
  CHECK(contains(r.out, "ALL ACTIVE 1"));
  CHECK(contains(r.err, "looking for it by tag"));
  CHECK(cloud.fake.requests("POST /v2/droplets") == 1);
  CHECK(cloud.fake.creates() == 1);
  check_clean_end(cloud, 1);
  cloud.check_no_token(r);
}

TEST_CASE("droplet: a droplet that vanishes after its create is an error the script survives", "[droplet]") {
  Cloud cloud;
  cloud.fake.vanish_next_create(0.3);
  // The first create vanishes; the script pcalls it, carries on and creates a second one.
  const ChildResult r = cloud.run({}, "droplet_create.lua", {"n=2", "tolerate=1"});
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 0);
  const std::string failed = line_starting(r.out, "CREATE FAILED: ");
  CHECK(contains(failed, "disappeared"));
  CHECK(count_of(r.out, "CREATED ") == 1);
  CHECK(contains(r.out, "ALL ACTIVE 1"));
  CHECK(contains(r.out, "SCRIPT DONE"));
  CHECK(cloud.fake.creates() == 2);
  check_clean_end(cloud, 2);
  cloud.check_no_token(r);
}

namespace {

enum class Phase { create_wait, teardown };

// A burst of failed requests while runara waits for its one droplet to become active, or while
// it tears it down. The failures are injected one at a time, each once the previous one has been
// served, so that none is left over for whoever comes next (the guardian, `runara reap`).
struct Burst {
  const char* label;
  Phase phase;
  std::vector<int> statuses;
  std::optional<int> retry_after_s;
};

struct BurstRun {
  const Burst* burst = nullptr;
  std::unique_ptr<Cloud> cloud;
  std::unique_ptr<ChildProcess> child;
  bool triggered = false, served = false, drained = false;
  std::size_t injected = 0;
  int requests_after_injection = 0;
  std::chrono::steady_clock::time_point burst_started;
};

// Runs the bursts side by side (each with its own fake and runara); every run must still end
// normally within `bound_s` of its burst, with nothing left and nothing created twice.
void run_bursts(const std::vector<Burst>& bursts, double bound_s) {
  using Clock = std::chrono::steady_clock;
  std::vector<BurstRun> runs(bursts.size());
  for (std::size_t i = 0; i < bursts.size(); ++i) {
    BurstRun& run = runs[i];
    run.burst = &bursts[i];
    // Long enough to still be polling (or sleeping) when the test gets to this run's burst.
    run.cloud = std::make_unique<Cloud>(run.burst->phase == Phase::create_wait ? 3.0 : 0.2, 0.2);
    const char* sleep = run.burst->phase == Phase::teardown ? "sleep=2" : "sleep=0";
    run.child = run.cloud->start({}, "droplet_create.lua", {sleep});
  }
  // Each run's trigger must come within 30 s; its burst is fed for at most `bound_s`.
  const auto trigger_deadline = Clock::now() + std::chrono::seconds(30);
  const auto bound = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(bound_s));
  while (true) {
    bool feeding = false;
    const auto now = Clock::now();
    for (BurstRun& run : runs) {
      if (run.served) continue;
      auto& fake = run.cloud->fake;
      if (!run.triggered) {
        if (now > trigger_deadline) continue;
        feeding = true;
        // create_wait: the POST was answered, what follows are the GETs polling for "active".
        run.triggered = run.burst->phase == Phase::create_wait ? fake.creates() == 1
                                                               : run.child->wait_for_output("ALL ACTIVE 1", 0.01);
        if (!run.triggered) continue;
        run.burst_started = now;
      } else if (now > run.burst_started + bound) {
        // runara never came back for the rest: given up on. A failure still queued would hit
        // whoever asks next (the guardian, once the test kills runara): the test takes it.
        if (!run.drained && fake.requests("") <= run.requests_after_injection) {
          httplib::Client client(fake.base_url());
          client.Get("/v2/account", {{"Authorization", std::string("Bearer ") + kToken}});
        }
        run.drained = true;
        continue;
      } else if (fake.requests("") <= run.requests_after_injection) {
        feeding = true;
        continue;  // the last failure is still waiting for a request
      }
      feeding = true;
      if (run.injected == run.burst->statuses.size()) {
        run.served = true;
        continue;
      }
      fake.fail_next(1, run.burst->statuses[run.injected++], run.burst->retry_after_s);
      run.requests_after_injection = fake.requests("");
    }
    if (!feeding) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (BurstRun& run : runs) {
    const Burst& burst = *run.burst;
    Cloud& cloud = *run.cloud;
    INFO("burst: " << burst.label);
    REQUIRE(run.triggered);
    const double elapsed = std::chrono::duration<double>(Clock::now() - run.burst_started).count();
    const ChildResult r = run.child->wait(std::max(1.0, bound_s - elapsed));
    const double took = std::chrono::duration<double>(Clock::now() - run.burst_started).count();
    INFO("stdout: " << r.out << "\nstderr: " << r.err << "\nthe run ended " << took << " s after its burst began");
    CHECK(run.served);  // every failure of the burst was answered to some request
    CHECK_FALSE(r.timed_out);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "ALL ACTIVE 1"));
    for (std::size_t i = 0; i < run.injected; ++i) {
      CHECK(contains(r.err, "(" + std::to_string(burst.statuses[i]) + ")"));  // "retrying GET ... (429)"
    }
    CHECK(cloud.fake.requests("POST /v2/droplets") == 1);
    CHECK(cloud.fake.creates() == 1);
    if (r.timed_out) {  // killed: its guardian destroys the droplet
      CHECK(eventually([&] { return cloud.fake.live_droplets() == 0; }, 60));
    }
    check_clean_end(cloud, 1);
    cloud.check_no_token(r);
  }
}

}  // namespace

TEST_CASE("droplet: 429 storms with retry-after while waiting for active and during teardown", "[droplet]") {
  const std::vector<Burst> bursts{
      {"429 x3 with retry-after 1 while waiting for active", Phase::create_wait, {429, 429, 429}, 1},
      {"429 x3 with retry-after 1 during teardown", Phase::teardown, {429, 429, 429}, 1},
  };
  run_bursts(bursts, 45);
}

// The fake's 429 without retry-after also says "ratelimit-remaining: 0" with the hourly window's
// ratelimit-reset (up to an hour away): the client waits for it at most 30 s, then retries.
TEST_CASE("droplet: 429 storms without retry-after while waiting for active and during teardown", "[droplet]") {
  const std::vector<Burst> bursts{
      {"429 without retry-after while waiting for active", Phase::create_wait, {429}, {}},
      {"429 without retry-after during teardown", Phase::teardown, {429}, {}},
  };
  run_bursts(bursts, 45);
}

TEST_CASE("droplet: 5xx bursts while waiting for active and during teardown", "[droplet]") {
  const std::vector<Burst> bursts{
      {"500, 502, 503 while waiting for active", Phase::create_wait, {500, 502, 503}, {}},
      {"503, 502, 500 during teardown", Phase::teardown, {503, 502, 500}, {}},
  };
  run_bursts(bursts, 45);
}

TEST_CASE("droplet: a 5xx answer to the create itself creates no duplicate", "[droplet]") {
  Cloud cloud;
  // Three creates whose POST fails (500, 502, 503: the droplet may or may not exist), then one
  // that goes through. The script waits a second after each "READY i" for the fault.
  auto child = cloud.start({}, "droplet_create.lua", {"n=4", "tolerate=1", "ready=1"});
  int i = 0;
  for (int status : {500, 502, 503}) {
    REQUIRE(child->wait_for_output("READY " + std::to_string(++i), 30));
    cloud.fake.fail_next_create(1, status);  // not the run key's POST before the first create
  }
  // Teardown keeps looking for the three by tag until their creates can no longer land
  // (RunCleanup's max_create_s, 45 s), then the run ends normally.
  const ChildResult r = child->wait(90);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 0);
  CHECK_FALSE(contains(r.err, "TEARDOWN FAILED"));
  CHECK(count_of(r.out, "CREATE FAILED: ") == 3);
  CHECK(count_of(r.out, "ambiguous") == 3);
  CHECK(count_of(r.out, "CREATED ") == 1);
  CHECK(contains(r.out, "ALL ACTIVE 1"));
  CHECK(cloud.fake.requests("POST /v2/droplets") == 4);
  CHECK(cloud.fake.creates() == 1);  // the failed POSTs were looked for, not repeated
  check_clean_end(cloud, 1);
  cloud.check_no_token(r);
}

// A guardian outlives runara: it must not hold runara's stderr (a pipe such as `runara … | tee`,
// or the test runner's, would stay open until the guardian is done), and a ledger it cannot read
// (a test that removed its folder, a disk gone) is said as such; it then destroys what the cloud
// lists under the run's tag, without making an empty ledger in the run's folder again.
TEST_CASE("droplet: a guardian holds no pipe of runara's, and one whose ledger is gone says so and destroys by tag",
          "[droplet]") {
  Cloud cloud(0.2, 2.0);  // deletes take 2 s: the guardian is still at work after runara is gone
  auto run = cloud.start({}, "droplet_create.lua", {"sleep=300"});
  REQUIRE(run->wait_for_output("ALL ACTIVE 1", 30));
  const GuardianInfo g = guardian_for(run->pid());
  REQUIRE(g.pid > 0);
  std::error_code ec;
  CHECK(fs::read_symlink("/proc/" + std::to_string(g.pid) + "/fd/2", ec) == "/dev/null");
  CHECK(fs::read_symlink("/proc/" + std::to_string(g.pid) + "/fd/1", ec) == "/dev/null");
  const std::string state = cloud.dir + "/state";
  for (const char* f : {"/ledger.db", "/ledger.db-wal", "/ledger.db-shm"}) fs::remove(state + f, ec);
  run->signal(SIGKILL);
  CHECK(run->wait(10).exit_code == 128 + SIGKILL);
  CHECK(eventually([&] { return cloud.fake.existing_droplets() == 0; }, 30));
  const std::string log = state + "/guardian-" + g.run_id + ".log";
  CHECK(eventually([&] { return contains(read_all(log), "what the cloud listed under its tag is cleaned up"); }, 30));
  INFO(read_all(log));
  CHECK(contains(read_all(log), "cannot read the run's ledger: " + state + "/ledger.db is gone"));
  CHECK(contains(read_all(log), "destroys what the cloud lists under the run's tag runara:run-" + g.run_id));
  CHECK_FALSE(fs::exists(state + "/ledger.db"));
}

TEST_CASE("droplet: the API unreachable during teardown is reported, kept in the ledger, reaped later", "[droplet]") {
  Cloud cloud;
  auto child = cloud.start({}, "droplet_create.lua", {"n=2", "sleep=0.5"});
  REQUIRE(child->wait_for_output("ALL ACTIVE 2", 30));
  const std::vector<std::int64_t> ids = cloud.droplet_ids();
  REQUIRE(ids.size() == 2);
  cloud.fake.set_unreachable(true);
  const ChildResult r = child->wait(60);
  const std::string run_id = word_after(r.out, "RUN ");
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(run_id.size() == 8);
  CHECK_FALSE(r.timed_out);  // teardown gives up in bounded time and hands over to the guardian
  CHECK(r.exit_code != 0);
  // The last word names what may still be billing and how to clean it up.
  std::string loud;
  for (std::istringstream in(r.err); std::getline(in, loud);) {
    if (contains(loud, "runara reap --run " + run_id)) break;
  }
  INFO("the message: " << loud);
  CHECK(contains(loud, "runara reap --run " + run_id));
  for (std::int64_t id : ids) CHECK(contains(loud, std::to_string(id)));
  CHECK(cloud.fake.live_droplets() == 2);

  // The ledger still holds both. Without a token `runara ls` shows the ledger's word but says
  // it could not check, and fails: no all-clear from a stale ledger.
  const ChildResult ls = cloud.command({"ls"}, {{"DIGITALOCEAN_TOKEN", ""}});
  INFO("runara ls: " << ls.out << ls.err);
  CHECK(ls.exit_code == 1);
  CHECK(contains(ls.err, "could not check"));
  for (std::int64_t id : ids) CHECK(contains(ls.out, std::to_string(id)));
  CHECK(contains(ls.out, run_id));
  CHECK(contains(ls.out, "unchecked"));
  // The API still unreachable: the same, without waiting long.
  const ChildResult ls_down = cloud.command({"ls"});
  INFO("runara ls (API down): " << ls_down.out << ls_down.err);
  CHECK(ls_down.exit_code == 1);
  CHECK(contains(ls_down.err, "could not reach the API"));
  CHECK_FALSE(contains(ls_down.out, "no machines left"));

  // Back online: the guardian (trying in the background) or `runara reap` destroys them.
  cloud.fake.set_unreachable(false);
  const ChildResult reap = cloud.command({"reap", "--run", run_id, "--yes"}, {}, 90);
  INFO("runara reap: " << reap.out << reap.err);
  CHECK_FALSE(reap.timed_out);
  CHECK(reap.exit_code == 0);
  CHECK(eventually([&] { return cloud.fake.live_droplets() == 0; }, 60));
  CHECK(eventually([&] { return cloud.fake.existing_droplets() == 0; }, 30));
  CHECK(cloud.fake.creates() == 2);
  const ChildResult after = cloud.command({"ls"});
  CHECK(after.exit_code == 0);
  CHECK(contains(after.out, "no machines left"));
  cloud.check_no_token(r);
  cloud.check_no_token(reap);
}

// ---------------------------------------------------------------------------------------------
// Refusals before anything is sent

TEST_CASE("droplet: the budget refuses an expensive size before any POST", "[droplet]") {
  Cloud cloud;
  const ChildResult r = cloud.run({"--budget", "1"}, "droplet_create.lua",
                                  {"size=gpu-mi300x8-1536gb", "image=gpu-amd-base", "region=atl1"});
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 1);
  CHECK(cloud.fake.requests("POST /v2/droplets") == 0);
  CHECK(contains(r.err, "$15.92"));  // the size's price
  CHECK(contains(r.err, "$31.84"));  // for the 2 h of the default --max-runtime
  CHECK(contains(r.err, "$1.00"));   // the budget
  CHECK(contains(r.err, "--budget"));
  CHECK(cloud.fake.creates() == 0);
  cloud.check_no_token(r);
}

TEST_CASE("droplet: --max-droplets refuses the create beyond it", "[droplet]") {
  Cloud cloud;
  const ChildResult r = cloud.run({"--max-droplets", "1"}, "droplet_create.lua", {"n=2", "tolerate=1"});
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 0);
  CHECK(count_of(r.out, "CREATED ") == 1);
  CHECK(contains(line_starting(r.out, "CREATE FAILED: "), "--max-droplets"));
  CHECK(cloud.fake.requests("POST /v2/droplets") == 1);
  CHECK(cloud.fake.creates() == 1);
  check_clean_end(cloud, 1);
  cloud.check_no_token(r);
}

TEST_CASE("droplet: a size /v2/sizes does not list needs --assume-price, then DigitalOcean's refusal shows",
          "[droplet]") {
  Cloud cloud;
  const std::vector<std::string> params{"size=gpu-mi300x8-contract", "image=gpu-amd-base", "region=atl1"};
  const ChildResult refused = cloud.run({}, "droplet_create.lua", params);
  {
    INFO("stdout: " << refused.out << "\nstderr: " << refused.err);
    CHECK(refused.exit_code == 2);  // a setup mistake: a usage error
    CHECK(contains(refused.err, "unknown size 'gpu-mi300x8-contract'"));
    CHECK(contains(refused.err, "--assume-price gpu-mi300x8-contract="));
    CHECK(cloud.fake.requests("POST /v2/droplets") == 0);
  }
  const ChildResult sent = cloud.run({"--assume-price", "gpu-mi300x8-contract=8.5"}, "droplet_create.lua", params);
  INFO("stdout: " << sent.out << "\nstderr: " << sent.err);
  CHECK(sent.exit_code == 1);
  CHECK(cloud.fake.requests("POST /v2/droplets") == 1);
  CHECK(contains(sent.err, "$8.50/h"));
  CHECK(contains(sent.err, "422"));
  CHECK(contains(sent.err, "You specified an invalid size"));  // the fake's own message
  CHECK(cloud.fake.creates() == 0);
  cloud.check_no_token(refused);
  cloud.check_no_token(sent);
}

TEST_CASE("droplet: bad input is refused with the option named, and nothing is sent", "[droplet]") {
  Cloud cloud;
  const ChildResult r = cloud.run({}, "droplet_bad_input.lua");
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "BAD INPUT DONE 0"));
  auto check_case = [&](const std::string& label, const std::vector<std::string>& parts) {
    const std::string line = line_starting(r.out, "CASE " + label + ": ");
    INFO("case " << label << ": " << line);
    CHECK_FALSE(line.empty());
    CHECK_FALSE(contains(line, "accepted"));
    for (const auto& part : parts) CHECK(contains(line, part));
  };
  check_case("unknown size", {"unknown size 's-99vcpu-1tb'", "droplet.sizes()"});
  check_case("size not in region", {"gpu-mi300x1-192gb", "region 'nyc3'", "atl1"});
  check_case("underscore name", {"name 'bad_name'", "underscore"});
  check_case("missing size", {"droplet.create", "'size' is required"});
  check_case("missing image", {"droplet.create", "'image' is required"});
  check_case("missing region", {"droplet.create", "'region' is required"});
  check_case("empty size", {"'size' is required"});
  check_case("unknown option", {"droplet.create", "unknown option 'colour'"});
  check_case("size not a string", {"droplet.create", "'size' must be a string"});
  check_case("wait not a boolean", {"droplet.create", "'wait' must be true or false"});
  check_case("timeout not a number", {"droplet.create", "'timeout' must be a number"});
  check_case("tags not a list", {"droplet.create", "'tags' must be a list of strings"});
  check_case("ssh_keys not strings", {"droplet.create", "'ssh_keys' must be a list of strings"});
  check_case("bad tag", {"tag 'no spaces allowed'"});
  // Hostile lengths get an error, not a crash (std::regex recursed per character: SIGSEGV).
  check_case("huge name", {"droplet.create", "(50000 characters)", "too long", "at most"});
  check_case("huge tag", {"droplet.create", "option 'tags'", "(50000 characters)", "at most 255"});
  check_case("long tag", {"option 'tags'", "at most 255"});
  check_case("long name", {"name 'nnnn", "too long"});
  check_case("reserved tag", {"option 'tags'", "tag 'runara:run-OTHER' is reserved"});
  // Tags are account-wide: only the run's own (runara-user:) or granted ones, at the script's line.
  check_case("reserved tag upper case", {"droplet_bad_input.lua:4: ", "tag 'RUNARA:run-OTHER' is reserved"});
  check_case("account tag", {"droplet_bad_input.lua:4: droplet.create: option 'tags': tag 'db-clients' is not the run's to set",
                             "'runara-user:NAME'", "--allow-tag db-clients"});
  check_case("user prefix alone", {"tag 'runara-user:' names no tag", "runara-user:NAME"});
  check_case("name ends in a dash", {"name 'web-'", "end in a letter or digit"});
  CHECK(r.out.size() < 20000);  // errors quote a prefix of hostile input, not all of it
  check_case("options not a table", {"droplet.create", "must be a table"});
  check_case("no options", {"droplet.create", "must be a table"});
  check_case("sizes option", {"droplet.sizes", "'cpu'"});
  CHECK(cloud.fake.requests("POST") == 0);
  CHECK(cloud.fake.creates() == 0);
  cloud.check_no_token(r);
}

// ---------------------------------------------------------------------------------------------
// The token

TEST_CASE("droplet: no token anywhere is a clear error, and doctl's config file is a token source", "[droplet]") {
  Cloud cloud;
  SECTION("no token") {
    const ChildResult r = cloud.run({}, "droplet_create.lua", {"tolerate=1"}, {{"DIGITALOCEAN_TOKEN", ""}});
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.exit_code == 0);
    const std::string failed = line_starting(r.out, "CREATE FAILED: ");
    CHECK(contains(failed, "no DigitalOcean token"));
    CHECK(contains(failed, "DIGITALOCEAN_TOKEN"));
    CHECK(cloud.fake.requests("") == 0);  // nothing at all was sent
    CHECK(cloud.fake.creates() == 0);
  }
  // A fleet created from several tasks, with no token: every create fails, but the how-to is
  // said once, not once per call (the per-task failure logs and the final error would repeat it).
  SECTION("no token, creates in three tasks and in two calls one after another: the how-to is said once") {
    const std::string how_to = "set DIGITALOCEAN_TOKEN";
    const ChildResult tasks = cloud.run({}, "droplet_create.lua", {"spawn=1", "n=3"}, {{"DIGITALOCEAN_TOKEN", ""}});
    const std::string log = cloud.run_file(1, "run.log");
    INFO("stdout: " << tasks.out << "\nstderr: " << tasks.err << "\nrun.log: " << log);
    CHECK(tasks.exit_code == 1);
    CHECK(count_of(tasks.err, how_to) == 1);
    CHECK(count_of(log, how_to) == 1);
    // Each task still fails, and says why.
    CHECK(count_of(tasks.err, "no DigitalOcean token") >= 3);
    CHECK(contains(tasks.err, "task 3 "));
    CHECK(contains(tasks.err, "task 4 "));
    const ChildResult calls = cloud.run({}, "droplet_create.lua", {"n=2", "tolerate=1"}, {{"DIGITALOCEAN_TOKEN", ""}});
    INFO("stdout: " << calls.out << "\nstderr: " << calls.err);
    CHECK(calls.exit_code == 0);
    CHECK(count_of(calls.out, "CREATE FAILED: no DigitalOcean token") == 2);
    CHECK(count_of(calls.out, how_to) == 1);
    CHECK(cloud.fake.requests("") == 0);
  }
  SECTION("doctl's config.yaml") {
    fs::create_directories(cloud.dir + "/home/.config/doctl");
    std::ofstream(cloud.dir + "/home/.config/doctl/config.yaml")
        << "access-token: " << kToken << "\ncontext: default\nauth-contexts:\n  other: not-this-one\n";
    const ChildResult r = cloud.run({}, "droplet_create.lua", {}, {{"DIGITALOCEAN_TOKEN", ""}});
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "ALL ACTIVE 1"));
    CHECK(cloud.fake.creates() == 1);
    check_clean_end(cloud, 1);
    cloud.check_no_token(r);
  }
}

TEST_CASE("droplet: the token never shows, whatever the script prints and whatever the API answers", "[droplet]") {
  Cloud cloud;
  SECTION("a script printing its droplet, the account and the token itself; API errors; a script error") {
    auto child = cloud.start({"--assume-price", "gpu-contract-x=1"}, "droplet_leak.lua",
                             {std::string("echo=") + kToken, "pause=1"});
    REQUIRE(child->wait_for_output("LEAK READY", 30));
    cloud.fake.fail_next(1, 401);  // d:refresh()
    cloud.fake.fail_next(1, 403);  // droplet.account()
    const ChildResult r = child->wait(60);
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.exit_code == 1);
    CHECK(contains(line_starting(r.out, "refresh\tfalse"), "401"));
    CHECK(contains(line_starting(r.out, "account\tfalse"), "403"));
    CHECK(contains(line_starting(r.out, "create\tfalse"), "422"));
    CHECK(contains(r.err, "the scenario fails on purpose"));
    CHECK(contains(r.out, "echo "));
    CHECK_FALSE(cloud.run_file(1, "run.log").empty());
    CHECK_FALSE(cloud.run_file(1, "results.json").empty());
    check_clean_end(cloud, 1);
    cloud.check_no_token(r);
  }
  SECTION("a token DigitalOcean rejects") {
    const std::string wrong = "droplet-test-token-wrong-5d2b";
    const ChildResult r = cloud.run({}, "droplet_create.lua", {}, {{"DIGITALOCEAN_TOKEN", wrong}}, 30);
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    CHECK_FALSE(r.timed_out);  // nothing was created: nothing to wait for at the end
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "401"));
    CHECK(cloud.fake.creates() == 0);
    cloud.check_no_token(r, wrong);
    cloud.check_no_token(r);
  }
}

// ---------------------------------------------------------------------------------------------
// Several runs, one ledger

TEST_CASE("droplet: two runs sharing a ledger folder both end normally", "[droplet]") {
  Cloud cloud;
  auto a = cloud.start({}, "droplet_create.lua", {"sleep=0.5"});
  auto b = cloud.start({}, "droplet_create.lua", {"sleep=0.5"});
  const ChildResult ra = a->wait(60), rb = b->wait(60);
  INFO("A stdout: " << ra.out << "\nA stderr: " << ra.err << "\nB stdout: " << rb.out << "\nB stderr: " << rb.err);
  CHECK(ra.exit_code == 0);
  CHECK(rb.exit_code == 0);
  CHECK(word_after(ra.out, "RUN ") != word_after(rb.out, "RUN "));
  CHECK(cloud.fake.creates() == 2);
  check_clean_end(cloud, 2);
  const ChildResult ls = cloud.command({"ls"});
  CHECK(contains(ls.out, "no machines left"));
  cloud.check_no_token(ra);
  cloud.check_no_token(rb);
}

TEST_CASE("droplet: runs killed next to a live one: the live run's droplets are never reaped", "[droplet]") {
  Cloud cloud;
  // A lives on; B is SIGKILLed together with its guardian (nothing cleans up after it until
  // `runara reap`); C is SIGKILLed alone (its guardian cleans up).
  auto a = cloud.start({}, "droplet_create.lua", {"sleep=300"});
  auto b = cloud.start({}, "droplet_create.lua", {"sleep=300"});
  auto c = cloud.start({}, "droplet_create.lua", {"sleep=300"});
  for (auto* child : {a.get(), b.get(), c.get()}) REQUIRE(child->wait_for_output("ALL ACTIVE 1", 30));
  const GuardianInfo ga = guardian_for(a->pid()), gb = guardian_for(b->pid()), gc = guardian_for(c->pid());
  REQUIRE(ga.pid > 0);
  REQUIRE(gb.pid > 0);
  REQUIRE(gc.pid > 0);
  INFO("runs: A " << ga.run_id << ", B " << gb.run_id << ", C " << gc.run_id);

  const ChildResult ls_before = cloud.command({"ls"});
  INFO("runara ls (all alive): " << ls_before.out << ls_before.err);
  const auto rows_before = ls_rows(ls_before.out);
  REQUIRE(rows_before.count(ga.run_id));
  REQUIRE(rows_before.count(gb.run_id));
  REQUIRE(rows_before.count(gc.run_id));
  for (const auto& run : {ga.run_id, gb.run_id, gc.run_id}) CHECK(rows_before.at(run).alive == "yes");
  const std::string id_a = rows_before.at(ga.run_id).droplet, id_b = rows_before.at(gb.run_id).droplet,
                    id_c = rows_before.at(gc.run_id).droplet;
  // Each live run's own key is listed, with the line that logs into its droplet by hand.
  for (const auto& run : {ga.run_id, gb.run_id, gc.run_id}) {
    CHECK(contains(ls_before.out, "runara-" + run));
    CHECK(contains(ls_before.out, "/keys/" + run + "/id_ed25519 root@"));
  }
  CHECK(count_of(ls_before.out, "step in: ssh -i ") == 3);
  CHECK(cloud.fake.keys().size() == 3);
  auto has_key = [&](const std::string& run) {
    for (const auto& k : cloud.fake.keys()) {
      if (k.value("name", "") == "runara-" + run) return true;
    }
    return false;
  };

  kill(gb.pid, SIGKILL);
  b->signal(SIGKILL);
  c->signal(SIGKILL);
  const ChildResult rb = b->wait(10), rc = c->wait(10);
  CHECK(rb.exit_code == 128 + SIGKILL);
  CHECK(rc.exit_code == 128 + SIGKILL);
  auto exists = [&](const std::string& id) {
    for (std::int64_t d : cloud.droplet_ids()) {
      if (std::to_string(d) == id) return true;
    }
    return false;
  };
  // C's guardian destroys C's droplet; B's stays: its guardian died with it.
  CHECK(eventually([&] { return !exists(id_c); }, 30));
  CHECK(exists(id_b));
  CHECK(exists(id_a));
  CHECK(eventually([&] { return !has_key(gc.run_id); }, 30));  // and C's key
  CHECK(has_key(gb.run_id));

  const ChildResult ls = cloud.command({"ls"});
  INFO("runara ls (B and C dead): " << ls.out << ls.err);
  const auto rows = ls_rows(ls.out);
  CHECK((rows.count(ga.run_id) && rows.at(ga.run_id).alive == "yes"));
  CHECK((rows.count(gb.run_id) && rows.at(gb.run_id).alive == "no"));

  const ChildResult reap = cloud.command({"reap", "--yes"});
  INFO("runara reap --yes: " << reap.out << reap.err);
  CHECK(reap.exit_code == 0);
  CHECK(contains(reap.out, id_b));
  CHECK_FALSE(contains(reap.out, id_a));
  CHECK(eventually([&] { return !exists(id_b); }, 30));
  CHECK(exists(id_a));  // the live run's droplet survived the reap
  CHECK(contains(reap.out, "ssh key runara-" + gb.run_id + " deleted"));
  CHECK_FALSE(has_key(gb.run_id));
  CHECK(has_key(ga.run_id));
  CHECK(cloud.fake.live_droplets() == 1);

  // A notices nothing and ends when asked, tearing its own droplet down.
  a->signal(SIGINT);
  const ChildResult ra = a->wait(60);
  INFO("A stdout: " << ra.out << "\nA stderr: " << ra.err);
  CHECK(ra.exit_code == 130);
  CHECK_FALSE(contains(ra.err, "TEARDOWN FAILED"));
  CHECK(cloud.fake.live_droplets() == 0);
  CHECK(eventually([&] { return cloud.fake.existing_droplets() == 0; }, 20));
  CHECK(cloud.fake.creates() == 3);
  CHECK(cloud.fake.keys().empty());
  CHECK(contains(cloud.command({"ls"}).out, "no machines left"));
  cloud.check_no_token(ra);
  cloud.check_no_token(reap);
}

// ---------------------------------------------------------------------------------------------
// The droplet API

TEST_CASE("droplet: the droplet API (list, sizes, account, refresh, destroy, cost)", "[droplet]") {
  Cloud cloud;
  const ChildResult r = cloud.run({"--max-runtime", "300"}, "droplet_api.lua");
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "API OK"));
  CHECK(cloud.fake.creates() == 2);
  CHECK(cloud.fake.requests("DELETE /v2/droplets/") >= 2);
  check_clean_end(cloud, 2);
  cloud.check_no_token(r);
}



// Off a terminal (CI, nohup, a pipe) a boot is not silent: a plain progress line, on stderr and
// in run.log, while the droplet is still new; at most one every few seconds, not one per poll.
TEST_CASE("droplet: a boot shows progress lines on stderr and in run.log when stderr is not a terminal", "[droplet]") {
  Cloud cloud(/*active_after_s=*/2.0);
  const ChildResult r = cloud.run({}, "droplet_create.lua");
  const std::string log = cloud.run_file(1, "run.log");
  INFO("stdout: " << r.out << "\nstderr: " << r.err << "\nrun.log: " << log);
  CHECK(r.exit_code == 0);
  const std::string name = words(line_starting(r.out, "CREATED ")).at(2);
  const std::string booting = "droplet " + name + ": new (";
  const std::string active = "droplet " + name + " is active at ";
  CHECK(line_starting(r.err, booting).size() > booting.size());  // a whole line of its own
  CHECK_FALSE(contains(r.err, "\r"));  // nothing meant to be overwritten
  CHECK_FALSE(contains(r.err, "\033["));
  REQUIRE(contains(r.err, active));
  CHECK(r.err.find(booting) < r.err.find(active));
  REQUIRE(contains(log, active));
  CHECK(contains(log, "] " + booting));
  CHECK(log.find(booting) < log.find(active));
  // About twenty polls while it booted (every 0.1 s for 2 s), and a line every 5 s at most.
  const int polls = cloud.fake.requests("GET /v2/droplets/");
  const int lines = count_of(r.err, booting);
  CHECK(polls >= 5);
  CHECK(lines <= 2);
  CHECK(count_of(log, booting) <= 2);
  check_clean_end(cloud, 1);
}

TEST_CASE("droplet: the run record lists each machine with its size, lifetime and unrounded cost", "[droplet][record]") {
  Cloud cloud;
  const ChildResult r = cloud.run({"--assume-price", "s-1vcpu-1gb=0.5"}, "fleet.lua", {"n=2", "ending=error"}, {}, 60);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 1);
  const auto results = nlohmann::json::parse(cloud.run_file(1, "results.json"), nullptr, false);
  REQUIRE(results.is_object());
  const auto& run = results["run"];
  CHECK(run["status"] == "failed");
  CHECK(run["error_location"].get<std::string>().find("fleet.lua:") != std::string::npos);
  REQUIRE(run["machines"].size() == 2);
  double sum = 0;
  for (const auto& m : run["machines"]) {
    CHECK(m["size"] == "s-1vcpu-1gb");
    CHECK(m["lifetime_s"].get<double>() > 0);
    CHECK(m["cost_usd"].get<double>() > 0);
    CHECK(m["cost_usd"].get<double>() == Approx(m["price_hourly"].get<double>() * m["lifetime_s"].get<double>() / 3600));
    sum += m["cost_usd"].get<double>();
  }
  CHECK(run["total_cost_usd"].get<double>() == Approx(sum));
  // What run.log prints adds up: the total is the sum of the printed parts.
  const std::string log = cloud.run_file(1, "run.log");
  INFO(log);
  double printed = 0;
  for (std::size_t at = log.find(", cost $"); at != std::string::npos; at = log.find(", cost $", at + 1)) {
    printed += std::stod(log.substr(at + 8));
  }
  const std::size_t total_at = log.find("machines of this run cost $");
  REQUIRE(total_at != std::string::npos);
  CHECK(std::stod(log.substr(total_at + 27)) == Approx(printed).margin(1e-9));
  check_clean_end(cloud, 2);
}
