// `runara reap --expired`: from a computer that never saw the runs (an empty ledger folder, as on
// a cron machine), against the fake DigitalOcean API, it deletes exactly the droplets of runs
// whose deadline tags have all passed — not a future run's, not an untagged droplet, not a
// runara droplet without a deadline tag — and a run's own droplets carry that tag from their
// create. The choice itself, in-process: unit/test_expired_runs.cpp. See docs/controller_loss.md.
#include <catch2/catch.hpp>

#include <signal.h>

#include <cstdint>
#include <ctime>
#include <map>
#include <optional>
#include <string>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "test_paths.hpp"
#include "child_process.hpp"
#include "fake_do_droplets.hpp"
#include "eventually.hpp"
#include "sim/fake_digitalocean.hpp"
#include "test_text.hpp"

using runara::test::ChildProcess;
using runara::test::ChildResult;
using runara::test::contains;

namespace {

constexpr const char* kToken = "reap-expired-token-3e9a";

runara::sim::FakeDoConfig fake_config() {
  runara::sim::FakeDoConfig c;
  c.token = kToken;
  c.active_after_s = 0.1;
  c.delete_after_s = 0.1;
  c.enforce_rate_limits = false;
  return c;
}

// Droplets made straight through the API, not by runara (fake_do_droplets.hpp).
std::int64_t create_droplet(const runara::sim::FakeDigitalOcean& fake, const std::string& name,
                            const nlohmann::json& tags) {
  return runara::test::create_droplet(fake, kToken, name, tags);
}

bool exists(const runara::sim::FakeDigitalOcean& fake, std::int64_t id) { return runara::test::droplet_exists(fake, id); }

std::string deadline(double unix_seconds) {
  return "runara:deadline-" + std::to_string(static_cast<long long>(unix_seconds));
}

// The environment of a computer that never ran anything: its own empty ledger folder.
std::map<std::string, std::string> elsewhere(const runara::sim::FakeDigitalOcean& fake, const std::string& token = kToken) {
  return {{"RUNARA_DO_API_URL", fake.base_url()},
          {"DIGITALOCEAN_TOKEN", token},
          {"DIGITALOCEAN_ACCESS_TOKEN", ""},
          {"XDG_CONFIG_HOME", "/nonexistent"},
          {"RUNARA_STATE_DIR", runara::test::temp_dir("reap-expired") + "/state"},
          {"RUNARA_POLL_S", "0.1"}};
}

}  // namespace

TEST_CASE("reap --expired: exactly the expired runs' droplets go from a computer without their ledger",
          "[reap][droplet]") {
  runara::sim::FakeDigitalOcean fake(fake_config());
  fake.start();
  const double now = static_cast<double>(std::time(nullptr));
  const auto past = deadline(now - 3600), future = deadline(now + 3600);
  const std::int64_t expired_1 = create_droplet(fake, "runara-aaaa0001-1", {"runara", "runara:run-aaaa0001", past});
  const std::int64_t expired_2 = create_droplet(fake, "runara-aaaa0001-2", {"runara", "runara:run-aaaa0001", past});
  const std::int64_t live = create_droplet(fake, "runara-bbbb0002-1", {"runara", "runara:run-bbbb0002", future});
  const std::int64_t untagged = create_droplet(fake, "web-1", nlohmann::json::array());
  const std::int64_t users_own = create_droplet(fake, "db-1", {"prod", past});  // a deadline-looking tag, not runara's
  const std::int64_t old_runara = create_droplet(fake, "runara-cccc0003-1", {"runara", "runara:run-cccc0003"});
  const std::int64_t no_run = create_droplet(fake, "runara-lookalike", {"runara", past});
  const std::int64_t half_1 = create_droplet(fake, "runara-dddd0004-1", {"runara", "runara:run-dddd0004", past});
  const std::int64_t half_2 = create_droplet(fake, "runara-dddd0004-2", {"runara", "runara:run-dddd0004", future});

  const ChildResult r = runara::test::run_runara({"reap", "--expired", "--yes"}, 60, elsewhere(fake));
  INFO("runara reap --expired: " << r.out << r.err);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "EXPIRED " + std::to_string(expired_1) + " (runara-aaaa0001-1) of run aaaa0001"));
  CHECK(contains(r.out, "all expired reaped"));
  CHECK_FALSE(exists(fake, expired_1));
  CHECK_FALSE(exists(fake, expired_2));
  for (const auto id : {live, untagged, users_own, old_runara, no_run, half_1, half_2}) {
    INFO("droplet " << id);
    CHECK(exists(fake, id));
  }
  CHECK(contains(r.out, "NOT TOUCHED " + std::to_string(live) + " (runara-bbbb0002-1): deadline "));
  CHECK(contains(r.out, "NOT TOUCHED " + std::to_string(old_runara) + " (runara-cccc0003-1): no deadline tag"));
  CHECK(contains(r.out, "NOT TOUCHED " + std::to_string(half_1) + " (runara-dddd0004-1): its run dddd0004"));
  // Only the two expired droplets were ever asked to go (by id: never a delete by tag).
  CHECK(fake.requests("DELETE") == 2);
  CHECK(fake.requests("DELETE /v2/droplets/" + std::to_string(expired_1)) == 1);
  CHECK_FALSE(contains(r.out + r.err, kToken));

  // Run again: nothing expired is left, and that is not an error (a cron job's quiet night).
  const ChildResult again = runara::test::run_runara({"reap", "--expired", "--yes"}, 60, elsewhere(fake));
  CHECK(again.exit_code == 0);
  CHECK(contains(again.out, "nothing expired"));
  CHECK(fake.requests("DELETE") == 2);
}

TEST_CASE("reap --expired: the grace holds back a deadline just passed and no token or no --yes deletes nothing",
          "[reap][droplet]") {
  runara::sim::FakeDigitalOcean fake(fake_config());
  fake.start();
  const double now = static_cast<double>(std::time(nullptr));
  const std::int64_t recent =
      create_droplet(fake, "runara-eeee0005-1", {"runara", "runara:run-eeee0005", deadline(now - 120)});

  // The default grace (10 minutes, for two computers' clocks) keeps a deadline 2 minutes gone.
  const ChildResult graced = runara::test::run_runara({"reap", "--expired", "--yes"}, 60, elsewhere(fake));
  INFO(graced.out << graced.err);
  CHECK(graced.exit_code == 0);
  CHECK(contains(graced.out, "not passed (with 600 s grace)"));
  CHECK(exists(fake, recent));

  // Off a terminal without --yes: it says what it would do, asks nobody, deletes nothing.
  const ChildResult unasked = runara::test::run_runara({"reap", "--expired", "--grace", "0"}, 60, elsewhere(fake));
  CHECK(unasked.exit_code == 2);
  CHECK(contains(unasked.out, "EXPIRED " + std::to_string(recent)));
  CHECK(contains(unasked.err, "add --yes"));

  // A refused token: exit 1, nothing claimed, nothing deleted.
  const ChildResult refused =
      runara::test::run_runara({"reap", "--expired", "--yes", "--grace", "0"}, 60, elsewhere(fake, "wrong-token"));
  CHECK(refused.exit_code == 1);
  CHECK(contains(refused.err, "the API refused the token"));
  CHECK_FALSE(contains(refused.out, "nothing expired"));

  CHECK(fake.requests("DELETE") == 0);
  CHECK(exists(fake, recent));

  const ChildResult usage = runara::test::run_runara({"reap", "--expired", "--older-than", "1h"}, 60, elsewhere(fake));
  CHECK(usage.exit_code == 2);
  CHECK(contains(usage.err, "do not go together"));
}

TEST_CASE("reap --expired: a run's droplets carry its deadline and a run in progress is never reaped",
          "[reap][droplet]") {
  runara::sim::FakeDigitalOcean fake(fake_config());
  fake.start();
  const std::string dir = runara::test::temp_dir("deadline-run");
  std::map<std::string, std::string> env = elsewhere(fake);
  env["RUNARA_STATE_DIR"] = dir + "/state";
  env["HOME"] = dir;
  const double before = static_cast<double>(std::time(nullptr));
  ChildProcess run({RUNARA_BINARY, "--max-runtime", "900", "--out", dir + "/out",
                    std::string(RUNARA_SOURCE_DIR) + "/tests/scripts/droplet_create.lua", "sleep=60"},
                   env);
  REQUIRE(run.wait_for_output("CREATED ", 60));
  const double after = static_cast<double>(std::time(nullptr));

  const auto bodies = fake.create_bodies();
  REQUIRE(bodies.size() == 1);
  std::optional<long long> tagged;
  for (const auto& t : bodies[0]["tags"]) {
    const std::string tag = t.get<std::string>();
    if (tag.rfind("runara:deadline-", 0) == 0) tagged = std::stoll(tag.substr(16));
  }
  REQUIRE(tagged);
  // The run's hard deadline (--max-runtime 900 from its start) plus the teardown allowance (300 s).
  CHECK(*tagged >= static_cast<long long>(before) + 900 + 300);
  CHECK(*tagged <= static_cast<long long>(after) + 900 + 300 + 1);

  // Another computer's cron job, with no grace at all, leaves the run in progress alone.
  const ChildResult cron = runara::test::run_runara({"reap", "--expired", "--yes", "--grace", "0"}, 60, elsewhere(fake));
  INFO(cron.out << cron.err);
  CHECK(cron.exit_code == 0);
  CHECK(contains(cron.out, "not passed"));
  CHECK(fake.requests("DELETE") == 0);
  CHECK(fake.live_droplets() == 1);

  run.signal(SIGTERM);  // the run's own teardown still ends it
  const ChildResult ended = run.wait(120);
  CHECK_FALSE(ended.timed_out);
  CHECK(runara::test::eventually([&] { return fake.existing_droplets() == 0; }, 30));
}
