// The run history (runtime/run/history.*): rows recorded and listed newest first, filtered by
// script and kind, found by id or a unique start of it; the headline figures read from a
// results.json of any shape (run/history_entry.*); the script's SHA-256 (base/sha256.*). A
// "running" row reads as "killed" once its process is gone without the row's end (a recycled pid
// is not the run); a history.db of the earlier format opened and migrated. With real processes
// (a process's identity, `runara runs`, several runara at once on an earlier history.db):
// tests/end_to_end/test_run_history_processes.cpp.
#include <catch2/catch.hpp>

#include <filesystem>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "base/process_identity.hpp"
#include "base/sha256.hpp"
#include "child_process.hpp"
#include "earlier_history_db.hpp"
#include "run/history.hpp"
#include "run/history_entry.hpp"

using runara::HistoryEntry;
using runara::HistoryQuery;
using runara::RunHistory;
using runara::test::run_columns;
using runara::test::temp_dir;
using runara::test::write_earlier_format;
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

TEST_CASE("run history: a history.db of the earlier format opens, keeps its rows and gains the process and where columns", "[history]") {
  const std::string dir = temp_dir("history-old") + "/state";
  write_earlier_format(dir);
  REQUIRE_FALSE(run_columns(dir).count("pid"));

  RunHistory history(dir);
  const std::set<std::string> columns = run_columns(dir);
  CHECK(columns.size() == 16);
  CHECK(columns.count("ran_where"));
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
  CHECK(rows[0].where.empty());  // an older row: where it ran was not recorded

  HistoryEntry now = entry("new00001", "new.lua", 200);
  now.where = "endpoint http://127.0.0.1:8000";
  now.status = runara::kRunning;
  now.end_unix = 0;
  now.process = runara::this_process();
  history.record(now);
  RunHistory again(dir);  // a migrated file opens as it is: nothing is added twice
  CHECK(run_columns(dir).size() == 16);
  const auto found = again.find("new00001");
  REQUIRE(found);
  CHECK(found->status == "running");
  CHECK(found->where == "endpoint http://127.0.0.1:8000");
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
