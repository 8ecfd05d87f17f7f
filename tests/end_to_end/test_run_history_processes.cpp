// The run history with real processes (the store alone: tests/unit/test_run_history.cpp): a
// process's identity (base/process_identity.*: this process, a recycled pid, another boot, a
// zombie); `runara runs` listing a run as running from its start and as killed after SIGKILL;
// several runara started at once on a history.db of the earlier format all migrate it and land.
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "test_paths.hpp"
#include "base/process_identity.hpp"
#include "base/sha256.hpp"
#include "child_process.hpp"
#include "earlier_history_db.hpp"
#include "test_text.hpp"

using runara::ProcessIdentity;
using runara::test::ChildProcess;
using runara::test::ChildResult;
using runara::test::contains;
using runara::test::run_columns;
using runara::test::run_runara;
using runara::test::temp_dir;
using runara::test::write_earlier_format;
using runara::test::write_temp_file;

namespace {

// `runara runs --json` with this state folder, parsed.
nlohmann::json listed_runs(const std::map<std::string, std::string>& env) {
  const ChildResult r = run_runara({"runs", "--json"}, 30, env);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  auto runs = nlohmann::json::parse(r.out, nullptr, false);
  REQUIRE(runs.is_array());
  return runs;
}

}  // namespace

TEST_CASE("process identity: this process, a recycled pid, another boot, a zombie", "[history]") {
  const ProcessIdentity me = runara::this_process();
  CHECK(me.pid == ::getpid());
  CHECK(me.start_ticks > 0);
  CHECK(me.boot_id.size() == 36);  // a UUID
  CHECK(runara::still_running(me));
  CHECK(runara::still_running({me.pid, 0, ""}));  // parts not known are not compared
  CHECK_FALSE(runara::still_running({}));

  ProcessIdentity recycled = me;
  recycled.start_ticks = me.start_ticks + 1;
  CHECK_FALSE(runara::still_running(recycled));
  ProcessIdentity rebooted = me;
  rebooted.boot_id = "00000000-0000-0000-0000-000000000000";
  CHECK_FALSE(runara::still_running(rebooted));

  // A run's pid handed to a later process: the pid is alive, the run is not.
  ChildProcess later({"/bin/sleep", "30"});
  const ProcessIdentity sleeper = runara::process_identity(later.pid());
  REQUIRE(sleeper.pid == later.pid());
  REQUIRE(sleeper.start_ticks > 0);
  CHECK(sleeper.start_ticks >= me.start_ticks);
  CHECK(runara::still_running(sleeper));
  CHECK_FALSE(runara::still_running({later.pid(), sleeper.start_ticks - 1, sleeper.boot_id}));

  // A process that ended and was not collected yet (a zombie) is gone.
  ChildProcess ended({"/bin/true"});
  const std::string stat_path = "/proc/" + std::to_string(ended.pid()) + "/stat";
  bool zombie = false;
  for (int i = 0; i < 1000 && !zombie; ++i) {
    zombie = contains(runara::test::read_all(stat_path), ") Z");
    if (!zombie) ::usleep(10000);
  }
  REQUIRE(zombie);
  CHECK(runara::process_identity(ended.pid()).pid == 0);
  CHECK_FALSE(runara::still_running({ended.pid(), 0, ""}));
}

TEST_CASE("runara runs: a run is listed as running from its start and as killed after SIGKILL; a normal run has one row", "[history]") {
  const std::string dir = temp_dir("history-runs");
  const std::map<std::string, std::string> env{{"RUNARA_STATE_DIR", dir + "/state"}};
  const std::string code = "runara.log('sleeping')\nrunara.sleep(60)\n";
  const std::string sleeper = write_temp_file(dir, "sleeper.lua", code);
  ChildProcess child({RUNARA_BINARY, "--out", dir + "/slept", sleeper}, env);
  REQUIRE(child.wait_for_output("sleeping", 30));

  // Running: its row, with the pid of the runara process.
  auto runs = listed_runs(env);
  REQUIRE(runs.size() == 1);
  const nlohmann::json running = runs[0];
  const std::string id = running["run_id"];
  CHECK(running["status"] == "running");
  CHECK(running["pid"] == child.pid());
  CHECK(running["script"] == sleeper);
  CHECK(running["script_sha256"] == runara::sha256_hex(code));
  CHECK(running["out_dir"] == std::filesystem::canonical(dir + "/slept").string());
  CHECK(running["start_unix"].get<double>() > 0);
  CHECK(running["end_unix"].is_null());
  CHECK(contains(run_runara({"runs"}, 30, env).out, "running"));

  // Killed outright: no end was written; the row reads as killed, with what was known.
  child.signal(SIGKILL);
  CHECK(child.wait(30).exit_code == 128 + SIGKILL);
  runs = listed_runs(env);
  REQUIRE(runs.size() == 1);
  CHECK(runs[0]["run_id"] == id);
  CHECK(runs[0]["status"] == "killed");
  CHECK(runs[0]["start_unix"] == running["start_unix"]);
  CHECK(runs[0]["script"] == sleeper);
  CHECK(runs[0]["script_sha256"] == running["script_sha256"]);
  CHECK(runs[0]["out_dir"] == running["out_dir"]);
  CHECK(runs[0]["out_dir_exists"] == true);
  CHECK(runs[0]["end_unix"].is_null());
  const ChildResult table = run_runara({"runs"}, 30, env);
  CHECK(contains(table.out, id));
  CHECK(contains(table.out, "killed"));
  CHECK(contains(table.out, "ended without a record"));
  const ChildResult compared = run_runara({"compare", id, id, "--out", dir + "/compared"}, 30, env);
  CHECK(compared.exit_code == 2);
  CHECK(contains(compared.err, "ended without a record"));

  // A run that ends: its one row completed in place.
  const std::string quick = write_temp_file(dir, "quick.lua", "runara.log('done')\n");
  const ChildResult ok = run_runara({"--out", dir + "/quick", quick}, 30, env);
  INFO(ok.out << ok.err);
  REQUIRE(ok.exit_code == 0);
  runs = listed_runs(env);
  REQUIRE(runs.size() == 2);
  CHECK(runs[0]["script"] == quick);
  CHECK(runs[0]["status"] == "ok");
  CHECK(runs[0]["end_unix"].get<double>() >= runs[0]["start_unix"].get<double>());
  CHECK(runs[1]["run_id"] == id);
  CHECK(runs[1]["status"] == "killed");
  // A script that could not be loaded leaves no row (the one its start wrote is taken back).
  CHECK(run_runara({dir + "/no-such-script.lua"}, 30, env).exit_code == 2);
  CHECK(listed_runs(env).size() == 2);
}

TEST_CASE("run history: runara processes started at once on a history.db of the earlier format all land", "[history]") {
  const std::string dir = temp_dir("history-many");
  const std::string state = dir + "/state";
  write_earlier_format(state);
  const std::map<std::string, std::string> env{{"RUNARA_STATE_DIR", state}};
  const std::string script = write_temp_file(dir, "brief.lua", "runara.log('hello')\nrunara.sleep(0.2)\n");
  constexpr int kRuns = 4;
  std::vector<std::unique_ptr<ChildProcess>> children;
  for (int i = 0; i < kRuns; ++i) {
    children.push_back(std::make_unique<ChildProcess>(
        std::vector<std::string>{RUNARA_BINARY, "--out", dir + "/out" + std::to_string(i), script}, env));
  }
  for (auto& child : children) {
    const ChildResult r = child->wait(60);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK_FALSE(contains(r.err, "run history"));  // no warning: every write landed
  }
  const auto runs = listed_runs(env);
  REQUIRE(runs.size() == kRuns + 1);
  std::set<std::string> ids;
  for (const auto& r : runs) {
    ids.insert(r["run_id"].get<std::string>());
    CHECK(r["status"] == "ok");
  }
  CHECK(ids.size() == kRuns + 1);
  CHECK(ids.count("0ld0ld00"));
  // Migrated once, to the columns a fresh history.db has.
  const std::string fresh = dir + "/fresh-state";
  REQUIRE(run_runara({"--out", dir + "/out-fresh", script}, 60, {{"RUNARA_STATE_DIR", fresh}}).exit_code == 0);
  CHECK(run_columns(state) == run_columns(fresh));
}
