// The promise, end to end: whatever ends a run, and whenever, the fake cloud ends with zero
// live droplets, and no droplet was created twice. Each case runs build/runara against an
// in-process fake DigitalOcean API with its own ledger folder.
#include <catch2/catch.hpp>

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "test_paths.hpp"
#include "child_process.hpp"
#include "eventually.hpp"
#include "test_text.hpp"
#include "sim/fake_digitalocean.hpp"

using runara::test::ChildProcess;
using runara::test::ChildResult;

using runara::test::eventually;

namespace {

enum class Moment { before_create, key_in_flight, create_in_flight, waiting_for_active, after_active, during_teardown };

struct Case {
  const char* ending;   // how the run ends: normal, error, task_error, watchdog, SIGINT, SIGTERM, SIGHUP, SIGKILL, crash
  Moment moment;
  int droplets = 1;
  int expected_exit;
};

const char* moment_name(Moment m) {
  switch (m) {
    case Moment::before_create: return "before create";
    case Moment::key_in_flight: return "the run's SSH key registration in flight";
    case Moment::create_in_flight: return "create in flight";
    case Moment::waiting_for_active: return "waiting for active";
    case Moment::after_active: return "after active";
    case Moment::during_teardown: return "during teardown";
  }
  return "?";
}

int signal_of(const std::string& ending) {
  if (ending == "SIGINT") return SIGINT;
  if (ending == "SIGTERM") return SIGTERM;
  if (ending == "SIGHUP") return SIGHUP;
  if (ending == "SIGKILL") return SIGKILL;
  return 0;
}

// A private key file left anywhere below `keys_dir` (state/keys/<run id>/id_ed25519).
bool has_private_key_file(const std::string& keys_dir) {
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(keys_dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file()) return true;
  }
  return false;
}

// The run's own SSH key: registered before the first create, passed to every create, and gone
// from the account and the state folder once the run (or its guardian) is done.
void check_run_key(runara::sim::FakeDigitalOcean& fake, const std::string& dir) {
  const auto log = fake.request_log();
  const auto first = [&](const std::string& prefix) {
    for (std::size_t i = 0; i < log.size(); ++i) {
      if (log[i].rfind(prefix, 0) == 0) return static_cast<long>(i);
    }
    return -1L;
  };
  const long key_post = first("POST /v2/account/keys"), create_post = first("POST /v2/droplets");
  if (create_post >= 0) {
    CHECK(key_post >= 0);
    CHECK(key_post < create_post);
  }
  for (const auto& body : fake.create_bodies()) {
    INFO("create body: " << body.dump());
    CHECK((body.contains("ssh_keys") && body["ssh_keys"].is_array() && body["ssh_keys"].size() == 1));
  }
  CHECK(eventually([&] { return fake.keys().empty(); }, 60));
  const bool key_file_gone = eventually([&] { return !has_private_key_file(dir + "/state/keys"); }, 60);
  if (!key_file_gone) {  // who was to remove it, and what it said
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir + "/state", ec)) {
      if (entry.path().filename().string().rfind("guardian-", 0) == 0) UNSCOPED_INFO(entry.path() << ":\n" << runara::test::read_all(entry.path()));
    }
  }
  CHECK(key_file_gone);
}

void run_case(const Case& c) {
  INFO("ending " << c.ending << ", moment " << moment_name(c.moment) << ", " << c.droplets << " droplet(s)");
  runara::sim::FakeDoConfig config;
  config.token = "matrix-token-3f9a";
  config.active_after_s = c.moment == Moment::waiting_for_active ? 4 : 0.2;
  config.delete_after_s = c.moment == Moment::during_teardown ? 2 : 0.2;
  config.latency_s = c.moment == Moment::create_in_flight || c.moment == Moment::key_in_flight ? 2 : 0;
  config.enforce_rate_limits = false;  // the tests poll faster than a real client may
  runara::sim::FakeDigitalOcean fake(config);
  fake.start();
  const std::string dir = runara::test::temp_dir("matrix");
  const std::string ending = c.ending;
  std::map<std::string, std::string> env{{"RUNARA_DO_API_URL", fake.base_url()},
                                         {"DIGITALOCEAN_TOKEN", config.token},
                                         {"RUNARA_STATE_DIR", dir + "/state"},
                                         {"RUNARA_POLL_S", "0.1"},
                                         {"HOME", dir}};
  if (ending == "crash") env["RUNARA_FAULT"] = "crash-after-create";
  std::string script_ending = "wait";
  if (ending == "normal" || ending == "error" || ending == "task_error") script_ending = ending;
  if (ending == "watchdog") script_ending = c.moment == Moment::after_active ? "busy" : "wait";
  std::vector<std::string> args{RUNARA_BINARY, "--out", dir + "/out"};
  if (ending == "watchdog") {
    const char* limit = c.moment == Moment::after_active ? "3" : "1";
    args.insert(args.end(), {"--max-runtime", limit});
  }
  args.insert(args.end(), {std::string(RUNARA_SOURCE_DIR) + "/tests/scripts/fleet.lua", "n=" + std::to_string(c.droplets),
                           "ending=" + script_ending});
  if (c.moment == Moment::before_create) args.push_back("delay=3");
  ChildProcess child(args, env);

  const int sig = signal_of(ending);
  if (sig) {
    // Each moment is waited for as the fake API sees it, and checked just before the signal.
    const auto posts = [&] { return fake.requests("POST /v2/droplets"); };
    switch (c.moment) {
      case Moment::before_create:
        REQUIRE(child.wait_for_output("delaying", 10));
        CHECK(posts() == 0);
        break;
      case Moment::key_in_flight:  // the key is registered, its answer 2 s away; no droplet asked for yet
        REQUIRE(eventually([&] { return fake.requests("POST /v2/account/keys") >= 1; }, 10));
        CHECK(posts() == 0);
        break;
      case Moment::create_in_flight:  // the POST arrived; its answer is 2 s away (latency_s)
        REQUIRE(eventually([&] { return posts() >= 1; }, 10));
        CHECK(fake.creates() <= c.droplets);
        CHECK_FALSE(runara::test::contains(child.out_so_far(), "ALL ACTIVE"));
        break;
      case Moment::waiting_for_active:  // created, and polled while it is still "new"
        REQUIRE(eventually([&] { return posts() == c.droplets && fake.requests("GET /v2/droplets/") >= 1; }, 10));
        CHECK(fake.live_droplets() >= 1);
        CHECK_FALSE(runara::test::contains(child.out_so_far(), "ALL ACTIVE"));
        break;
      case Moment::after_active:
      case Moment::during_teardown: REQUIRE(child.wait_for_output("ALL ACTIVE", 20)); break;
    }
    if (c.moment == Moment::during_teardown) {
      child.signal(SIGINT);  // teardown starts; the case's own signal hits it mid-way
      REQUIRE(eventually([&] { return fake.requests("DELETE /v2/droplets") >= 1; }, 10));
      CHECK(fake.existing_droplets() >= 1);  // deleting takes 2 s (delete_after_s): still there
    }
    child.signal(sig);
  }
  ChildResult result = child.wait(90);
  INFO("stderr: " << result.err);
  CHECK_FALSE(result.timed_out);
  CHECK(result.exit_code == c.expected_exit);
  // Destroyed — by the runtime itself or, after SIGKILL/crash, by its guardian.
  CHECK(eventually([&] { return fake.live_droplets() == 0; }, 60));
  CHECK(eventually([&] { return fake.existing_droplets() == 0; }, 60));
  CHECK(fake.creates() <= c.droplets);  // nothing created twice
  check_run_key(fake, dir);
  CHECK(result.err.find(config.token) == std::string::npos);
  CHECK(result.out.find(config.token) == std::string::npos);
}

}  // namespace

TEST_CASE("teardown: normal end, script error, error in a task", "[teardown]") {
  for (int n : {1, 3}) {
    run_case({"normal", Moment::after_active, n, 0});
    run_case({"error", Moment::after_active, n, 1});
    run_case({"task_error", Moment::after_active, n, 1});
  }
}

TEST_CASE("teardown: watchdog while waiting and while computing", "[teardown]") {
  run_case({"watchdog", Moment::create_in_flight, 1, 3});
  run_case({"watchdog", Moment::waiting_for_active, 1, 3});
  run_case({"watchdog", Moment::after_active, 2, 3});
}

TEST_CASE("teardown: SIGINT at every moment", "[teardown]") {
  for (Moment m : {Moment::before_create, Moment::key_in_flight, Moment::create_in_flight, Moment::waiting_for_active, Moment::after_active,
                   Moment::during_teardown}) {
    run_case({"SIGINT", m, 2, 130});
  }
}

TEST_CASE("teardown: SIGTERM at every moment", "[teardown]") {
  for (Moment m : {Moment::before_create, Moment::create_in_flight, Moment::waiting_for_active, Moment::after_active,
                   Moment::during_teardown}) {
    run_case({"SIGTERM", m, 2, m == Moment::during_teardown ? 130 : 143});
  }
}

TEST_CASE("teardown: SIGHUP at every moment", "[teardown]") {
  for (Moment m : {Moment::create_in_flight, Moment::waiting_for_active, Moment::after_active}) {
    run_case({"SIGHUP", m, 1, 129});
  }
}

TEST_CASE("teardown: SIGKILL of the runtime at every moment (the guardian cleans up)", "[teardown]") {
  // key_in_flight: the run has no droplet yet, only its key; the guardian used to see nothing to
  // do and exit, leaving the key on the account.
  for (Moment m : {Moment::before_create, Moment::key_in_flight, Moment::create_in_flight, Moment::waiting_for_active, Moment::after_active,
                   Moment::during_teardown}) {
    run_case({"SIGKILL", m, 2, 128 + SIGKILL});
  }
}

TEST_CASE("teardown: a crash of the runtime right after a create (the guardian cleans up)", "[teardown]") {
  run_case({"crash", Moment::after_active, 1, 128 + SIGABRT});
}

// --- the run's private network: a VPC, a firewall and droplets in the VPC ---

namespace {

struct NetworkCase {
  const char* ending;  // normal, error, task_error, watchdog, SIGINT, SIGTERM, SIGHUP, SIGKILL, crash
  int expected_exit;
  const char* lost_answer = "";  // "POST /v2/vpcs" or "POST /v2/firewalls": its answer is dropped
  const char* existing = "";     // the script uses this account VPC instead of its own
  int vpc_conflicts = 0;         // the VPC's first DELETEs answer 409 (members still leaving)
};

// Index of the first (or last) request starting with `prefix`; -1 when there is none.
long request_at(const std::vector<std::string>& log, const std::string& prefix, bool last) {
  long found = -1;
  for (std::size_t i = 0; i < log.size(); ++i) {
    if (log[i].rfind(prefix, 0) != 0) continue;
    found = static_cast<long>(i);
    if (!last) break;
  }
  return found;
}

int count_named(const std::vector<nlohmann::json>& items, const std::string& prefix) {
  int n = 0;
  for (const auto& item : items) n += item.value("name", "").rfind(prefix, 0) == 0;
  return n;
}

void run_network_case(const NetworkCase& c) {
  INFO("network case: ending " << c.ending << ", lost answer '" << c.lost_answer << "', existing '" << c.existing << "'");
  runara::sim::FakeDoConfig config;
  config.token = "matrix-token-3f9a";
  config.active_after_s = 0.2;
  config.delete_after_s = 0.2;
  config.firewall_apply_s = 0.2;
  config.enforce_rate_limits = false;
  runara::sim::FakeDigitalOcean fake(config);
  fake.start();
  if (*c.lost_answer) fake.drop_next_response(c.lost_answer);
  if (c.vpc_conflicts) fake.fail_next_matching("DELETE /v2/vpcs/*", c.vpc_conflicts, 409);
  const std::string dir = runara::test::temp_dir("matrix-net");
  const std::string ending = c.ending;
  std::map<std::string, std::string> env{{"RUNARA_DO_API_URL", fake.base_url()},
                                         {"DIGITALOCEAN_TOKEN", config.token},
                                         {"RUNARA_STATE_DIR", dir + "/state"},
                                         {"RUNARA_POLL_S", "0.1"},
                                         {"HOME", dir}};
  std::vector<std::string> args{RUNARA_BINARY, "--out", dir + "/out"};
  std::string script_ending = signal_of(ending) || ending == "crash" ? "wait" : ending;
  // crash: the runtime aborts right after its first droplet's create was answered, with the VPC,
  // the firewall and the other droplet's create already made or in flight.
  const bool crash = ending == "crash";
  if (crash) env["RUNARA_FAULT"] = "crash-after-create";
  if (ending == "watchdog") {
    args.insert(args.end(), {"--max-runtime", "4"});
    script_ending = "busy";
  }
  if (*c.existing) args.insert(args.end(), {"--allow-vpc", c.existing});  // an account VPC is the user's to grant
  args.insert(args.end(), {std::string(RUNARA_SOURCE_DIR) + "/tests/scripts/fleet_network.lua", "n=2",
                           "ending=" + script_ending});
  if (*c.existing) args.push_back(std::string("existing=") + c.existing);
  const auto vpcs_before = fake.vpcs().size();
  ChildProcess child(args, env);
  if (const int sig = signal_of(ending)) {
    REQUIRE(child.wait_for_output("ALL ACTIVE", 30));
    CHECK(count_named(fake.firewalls(), "runara-") == 1);
    child.signal(sig);
  }
  ChildResult result = child.wait(90);
  INFO("stdout: " << result.out);
  INFO("stderr: " << result.err);
  CHECK_FALSE(result.timed_out);
  CHECK(result.exit_code == c.expected_exit);
  if (!crash) {
    CHECK(runara::test::contains(result.out, "ALL ACTIVE"));
    CHECK(runara::test::contains(result.out, " private 10."));  // each droplet's address in the VPC
  }
  // Everything of the run is gone: droplets, key, firewall, VPC.
  CHECK(eventually([&] { return fake.existing_droplets() == 0; }, 60));
  CHECK(eventually([&] { return fake.firewalls().empty(); }, 60));
  CHECK(eventually([&] { return count_named(fake.vpcs(), "runara-") == 0; }, 60));
  CHECK(eventually([&] { return fake.keys().empty(); }, 60));
  // Nothing created twice, a lost answer included (found by name, not sent again).
  if (*c.lost_answer) CHECK(runara::test::contains(result.err, "ended ambiguously"));
  if (crash) CHECK(fake.creates() >= 1);
  CHECK(fake.creates() <= 2);
  if (!crash) CHECK(fake.creates() == 2);
  CHECK(fake.requests("POST /v2/firewalls") == 1);
  CHECK(fake.requests("POST /v2/vpcs") == (*c.existing ? 0 : 1));
  // Dependency order: every droplet's DELETE before the firewall's, the firewall's before the VPC's.
  const auto log = fake.request_log();
  const long last_droplet = request_at(log, "DELETE /v2/droplets/", true);
  const long first_fw = request_at(log, "DELETE /v2/firewalls/", false), last_fw = request_at(log, "DELETE /v2/firewalls/", true);
  const long first_vpc = request_at(log, "DELETE /v2/vpcs/", false);
  CHECK(last_droplet >= 0);
  CHECK(first_fw > last_droplet);
  if (*c.existing) {
    CHECK(first_vpc == -1);  // an existing VPC is never deleted
    CHECK(fake.vpcs().size() == vpcs_before);
  } else {
    CHECK(first_vpc > last_fw);
  }
  if (c.vpc_conflicts) {
    CHECK(fake.requests("DELETE /v2/vpcs/") == c.vpc_conflicts + 1);  // asked again until it went
    if (!signal_of(ending)) CHECK(runara::test::contains(result.err, "asking again until its members are gone"));
  }
  CHECK(result.err.find(config.token) == std::string::npos);
  CHECK(result.out.find(config.token) == std::string::npos);
}

}  // namespace

TEST_CASE("teardown of a VPC and a firewall: every ending, in dependency order", "[teardown][teardown_network]") {
  run_network_case({"normal", 0});
  run_network_case({"error", 1});
  run_network_case({"watchdog", 3});
  run_network_case({"SIGINT", 130});
  run_network_case({"SIGTERM", 143});
  run_network_case({"SIGKILL", 128 + SIGKILL});  // the guardian tears down
  run_network_case({"task_error", 1});
  run_network_case({"SIGHUP", 129});
  run_network_case({"crash", 128 + SIGABRT});  // the guardian tears down
}

TEST_CASE("teardown of a VPC and a firewall: lost create answers, an existing VPC", "[teardown][teardown_network]") {
  run_network_case({"normal", 0, "POST /v2/vpcs"});
  run_network_case({"normal", 0, "POST /v2/firewalls"});
  run_network_case({"SIGKILL", 128 + SIGKILL, "POST /v2/vpcs"});
  run_network_case({"normal", 0, "", "default-nyc3"});  // the account's VPC: used, never deleted
  run_network_case({"normal", 0, "", "", 3});            // 409 "with members": backoff, then deleted
  run_network_case({"SIGKILL", 128 + SIGKILL, "", "", 3});
}
