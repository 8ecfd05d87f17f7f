// The run history (runtime/run/history.*): rows recorded and listed newest first, filtered by
// script and kind, found by id or a unique start of it; the headline figures read from a
// results.json of any shape (run/history_entry.*); the script's SHA-256 (base/sha256.*). A run's
// row from its start: "running" with its process (base/process_identity.*), "killed" once that
// process is gone without the row's end (a recycled pid is not the run), completed in place when
// the run ends; a history.db of the earlier format opened and migrated, by several runara at once.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "base/process_identity.hpp"
#include "base/sha256.hpp"
#include "child_process.hpp"
#include "run/history.hpp"
#include "run/history_entry.hpp"
#include "test_text.hpp"

using runara::HistoryEntry;
using runara::HistoryQuery;
using runara::ProcessIdentity;
using runara::RunHistory;
using runara::test::ChildProcess;
using runara::test::ChildResult;
using runara::test::contains;
using runara::test::run_runara;
using runara::test::temp_dir;
using runara::test::write_temp_file;

namespace {

HistoryEntry entry(const std::string& id, const std::string& script, double start, bool simulated = false) {
  HistoryEntry e;
  e.run_id = id;
  e.script = script;
  e.start_unix = start;
  e.end_unix = start + 10;
  e.status = "ok";
  e.out_dir = "/results/" + id;
  e.simulated = simulated;
  return e;
}

// state_dir/history.db as the first runara with a history wrote it (no process columns), with
// one finished run in it.
void write_earlier_format(const std::string& state_dir) {
  std::filesystem::create_directories(state_dir);
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open((state_dir + "/history.db").c_str(), &db) == SQLITE_OK);
  const char* sql = R"sql(
    PRAGMA journal_mode=WAL;
    CREATE TABLE IF NOT EXISTS runs (
      run_id        TEXT PRIMARY KEY,
      script        TEXT NOT NULL,
      script_sha256 TEXT NOT NULL DEFAULT '',
      start_unix    REAL NOT NULL,
      end_unix      REAL NOT NULL,
      exit_code     INTEGER NOT NULL,
      status        TEXT NOT NULL,
      out_dir       TEXT NOT NULL,
      simulated     INTEGER NOT NULL,
      output_tokens_per_s REAL,
      ttft_p50_ms   REAL,
      cost_usd      REAL
    );
    CREATE INDEX IF NOT EXISTS runs_start ON runs (start_unix);
    INSERT INTO runs VALUES ('0ld0ld00', 'old.lua', 'feed', 100, 110, 0, 'ok', '/results/old', 0, 42, 7, NULL);
  )sql";
  char* error = nullptr;
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &error);
  INFO((error ? error : ""));
  sqlite3_free(error);
  sqlite3_close(db);
  REQUIRE(rc == SQLITE_OK);
}

std::set<std::string> run_columns(const std::string& state_dir) {
  sqlite3* db = nullptr;
  sqlite3_open_v2((state_dir + "/history.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  std::set<std::string> names;
  if (sqlite3_prepare_v2(db, "PRAGMA table_info(runs)", -1, &st, nullptr) == SQLITE_OK) {
    while (sqlite3_step(st) == SQLITE_ROW) names.insert(reinterpret_cast<const char*>(sqlite3_column_text(st, 1)));
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return names;
}

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

TEST_CASE("sha256: the FIPS 180-4 test vectors, across the padding boundary", "[history]") {
  CHECK(runara::sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(runara::sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(runara::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");  // 56 bytes: a second padding block
  CHECK(runara::sha256_hex(std::string(1000000, 'a')) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("run history: newest first, by script and kind, by id or its start", "[history]") {
  const std::string dir = runara::test::temp_dir("history") + "/state";
  RunHistory history(dir);
  history.record(entry("aaaa1111", "scripts/llama70b_fp8.lua", 100, true));
  history.record(entry("aaaa2222", "scripts/llama70b_fp8.lua", 200));
  HistoryEntry failed = entry("bbbb3333", "/tmp/fail.lua", 300);
  failed.status = "failed";
  failed.exit_code = 1;
  failed.output_tokens_per_s = 12.5;
  history.record(failed);

  const auto all = history.list({});
  REQUIRE(all.size() == 3);
  CHECK(all[0].run_id == "bbbb3333");
  CHECK(all[0].exit_code == 1);
  CHECK(all[0].output_tokens_per_s == 12.5);
  CHECK_FALSE(all[0].ttft_p50_ms);
  CHECK(all[2].simulated);
  CHECK(history.list({"llama70b_fp8", 0, HistoryQuery::Kind::any}).size() == 2);       // the name without .lua
  CHECK(history.list({"llama70b_fp8.lua", 1, HistoryQuery::Kind::any}).size() == 1);   // the file name, limited
  CHECK(history.list({"", 0, HistoryQuery::Kind::real}).size() == 2);
  CHECK(history.list({"", 0, HistoryQuery::Kind::simulated})[0].run_id == "aaaa1111");
  CHECK(history.find("bbbb")->run_id == "bbbb3333");
  CHECK_FALSE(history.find("cccc"));
  CHECK_THROWS_WITH(history.find("aaaa"), Catch::Contains("ambiguous"));
  // A second connection (another runara process) sees the same rows; a rewrite replaces one.
  RunHistory other(dir);
  failed.status = "stopped";
  other.record(failed);
  CHECK(history.list({}).size() == 3);
  CHECK(history.find("bbbb3333")->status == "stopped");
}

TEST_CASE("run history: headline figures from a results.json of any shape", "[history]") {
  using nlohmann::json;
  // The report's: the headline load's throughput, the single-request TTFT, the run's cost.
  auto h = runara::headline_of(json::parse(R"({"benchmarks": {"efficiency": {"output_tokens_per_s": 2000},
      "latency": {"time_to_first_token_ms": 40}, "loads": {"a": {"output_throughput": 9999}}}, "run": {"total_cost_usd": 0.5}})"));
  CHECK(h.output_tokens_per_s == 2000);
  CHECK(h.ttft_p50_ms == 40);
  CHECK(h.cost_usd == 0.5);
  // No report: the load of the highest throughput, from benchmarks.loads or the script's own results.
  h = runara::headline_of(json::parse(R"({"benchmarks": {"loads": {"a": {"output_throughput": 10, "median_ttft_ms": 5},
      "b": {"output_throughput": 30, "median_ttft_ms": 9}}}})"));
  CHECK(h.output_tokens_per_s == 30);
  CHECK(h.ttft_p50_ms == 9);
  CHECK_FALSE(h.cost_usd);
  h = runara::headline_of(json::parse(R"({"my_load": {"output_throughput": 7, "median_ttft_ms": 3}})"));
  CHECK(h.output_tokens_per_s == 7);
  // Nothing it knows, or the wrong types: absent, never an exception.
  h = runara::headline_of(json::parse(R"({"benchmarks": [1, 2], "run": {"total_cost_usd": "x"}, "loads": 5})"));
  CHECK_FALSE(h.output_tokens_per_s);
  CHECK_FALSE(h.cost_usd);
  CHECK_FALSE(runara::headline_of(json::parse("[]")).output_tokens_per_s);
}

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

TEST_CASE("run history: a running row whose process is gone reads as killed; its own results.json, not a stale one, gives the ending", "[history]") {
  const std::string dir = temp_dir("history-killed");
  HistoryEntry row = entry("kkkk1111", "/tmp/k.lua", 1000.25);
  row.status = runara::kRunning;
  row.end_unix = 0;
  row.script_sha256 = "abc";
  row.out_dir = dir + "/out";
  row.process = runara::this_process();
  CHECK(runara::as_seen_now(row).status == "running");  // this very process: still running

  HistoryEntry gone = row;
  gone.process.start_ticks += 1;  // the pid names a process that started at another time
  HistoryEntry seen = runara::as_seen_now(gone);
  CHECK(seen.status == "killed");
  CHECK(seen.run_id == "kkkk1111");
  CHECK(seen.start_unix == 1000.25);
  CHECK(seen.script == "/tmp/k.lua");
  CHECK(seen.script_sha256 == "abc");
  CHECK(seen.out_dir == row.out_dir);
  CHECK(seen.end_unix == 0);
  CHECK_FALSE(seen.output_tokens_per_s);

  // An --out folder reused from an earlier run holds that run's results.json: not this run's.
  std::filesystem::create_directories(row.out_dir);
  write_temp_file(row.out_dir, "results.json", R"({"run": {"status": "ok", "exit_code": 0, "start_unix": 900,
      "end_unix": 950}, "benchmarks": {"efficiency": {"output_tokens_per_s": 5}}})");
  seen = runara::as_seen_now(gone);
  CHECK(seen.status == "killed");
  CHECK_FALSE(seen.output_tokens_per_s);
  // A damaged one says nothing either.
  write_temp_file(row.out_dir, "results.json", R"({"run": {"start_unix": 1000.25, "status": )");
  CHECK(runara::as_seen_now(gone).status == "killed");
  // Its own (the run was killed after writing it, before its row's end): the record's ending and the headline.
  write_temp_file(row.out_dir, "results.json", R"({"run": {"status": "stopped", "exit_code": 143, "start_unix": 1000.25,
      "end_unix": 1010, "total_cost_usd": 0.5}, "benchmarks": {"efficiency": {"output_tokens_per_s": 2000},
      "latency": {"time_to_first_token_ms": 40}}})");
  seen = runara::as_seen_now(gone);
  CHECK(seen.status == "stopped");
  CHECK(seen.exit_code == 143);
  CHECK(seen.end_unix == 1010);
  CHECK(seen.output_tokens_per_s == 2000);
  CHECK(seen.ttft_p50_ms == 40);
  CHECK(seen.cost_usd == 0.5);

  // A row that ended is never judged by its process.
  HistoryEntry ended = entry("kkkk2222", "/tmp/k.lua", 2000);
  ended.process = gone.process;
  CHECK(runara::as_seen_now(ended).status == "ok");
}

TEST_CASE("run history: a history.db of the earlier format opens, keeps its rows and gains the process columns", "[history]") {
  const std::string dir = temp_dir("history-old") + "/state";
  write_earlier_format(dir);
  REQUIRE_FALSE(run_columns(dir).count("pid"));

  RunHistory history(dir);
  const std::set<std::string> columns = run_columns(dir);
  CHECK(columns.size() == 15);
  CHECK(columns.count("pid"));
  CHECK(columns.count("pid_start"));
  CHECK(columns.count("boot_id"));
  auto rows = history.list({});
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].run_id == "0ld0ld00");
  CHECK(rows[0].status == "ok");
  CHECK(rows[0].script_sha256 == "feed");
  CHECK(rows[0].output_tokens_per_s == 42);
  CHECK(rows[0].process.pid == 0);
  CHECK(runara::as_seen_now(rows[0]).status == "ok");

  HistoryEntry now = entry("new00001", "new.lua", 200);
  now.status = runara::kRunning;
  now.end_unix = 0;
  now.process = runara::this_process();
  history.record(now);
  RunHistory again(dir);  // a migrated file opens as it is: nothing is added twice
  CHECK(run_columns(dir).size() == 15);
  const auto found = again.find("new00001");
  REQUIRE(found);
  CHECK(found->status == "running");
  CHECK(found->process.pid == now.process.pid);
  CHECK(found->process.start_ticks == now.process.start_ticks);
  CHECK(found->process.boot_id == now.process.boot_id);
  // Its end rewrites the row: still two rows, not three.
  now.status = "ok";
  now.end_unix = 210;
  again.record(now);
  CHECK(history.list({}).size() == 2);
  CHECK(history.find("new00001")->status == "ok");
  history.forget("new00001");
  CHECK_FALSE(again.find("new00001"));
  CHECK(again.list({}).size() == 1);
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
  CHECK(run_columns(state).size() == 15);
}
