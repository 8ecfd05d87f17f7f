// `runara compare` (cli/compare_command.*, stdlib/runara_compare.lua, runara.run_comparison) and
// `runara runs` (cli/runs_command.*, runtime/run/history.*) end to end: one pair of simulated
// flagship runs (MI300X, and an H100 through the script's size/image/region params) and one
// failed run, their history, and every comparison the issue asks for on that one pair: the two
// against each other, a run against itself, a threshold crossed and not, a damaged results.json,
// runs with no load in common, runs named by id and by --last, the page in Chromium.
#include <catch2/catch.hpp>

#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "test_paths.hpp"
#include "child_process.hpp"
#include "runara/runtime.hpp"
#include "test_text.hpp"

using runara::test::ChildProcess;
using runara::test::ChildResult;
using runara::test::contains;
using runara::test::read_all;
using runara::test::run_runara;
using runara::test::temp_dir;
using runara::test::write_temp_file;

namespace {

const std::string kFlagship = std::string(RUNARA_SOURCE_DIR) + "/scripts/llama70b_fp8.lua";

nlohmann::json json_file(const std::string& path) { return nlohmann::json::parse(read_all(path), nullptr, false); }

}  // namespace

TEST_CASE("runara compare and runara runs on two simulated runs and a failed one", "[scenario][compare]") {
  const std::string dir = temp_dir("compare");
  // The history of these runs only, not the suite's shared test-state.
  const std::map<std::string, std::string> env{{"RUNARA_STATE_DIR", dir + "/state"}, {"RUNARA_SIM_TIME_SCALE", "0.05"}};
  const auto runara = [&](std::vector<std::string> args, double timeout = 60) { return run_runara(std::move(args), timeout, env); };

  const std::string mi300x = dir + "/mi300x", h100 = dir + "/h100";
  const ChildResult a = runara({"--sim", "--out", mi300x, kFlagship}, 180);
  INFO(a.out << a.err);
  REQUIRE(a.exit_code == 0);
  const ChildResult b = runara({"--sim", "--out", h100, kFlagship, "size=gpu-h100x1-80gb", "image=gpu-h100x1-base", "region=nyc2"}, 180);
  INFO(b.out << b.err);
  REQUIRE(b.exit_code == 0);
  const std::string failing = write_temp_file(dir, "failing.lua", "runara.log('about to fail')\nerror('the scenario broke')\n");
  CHECK(runara({"--out", dir + "/failed", failing}).exit_code == 1);

  // The history: newest first, the failed run included, each with its headline figures.
  const ChildResult listed = runara({"runs", "--json"});
  INFO(listed.out << listed.err);
  REQUIRE(listed.exit_code == 0);
  const auto runs = nlohmann::json::parse(listed.out, nullptr, false);
  REQUIRE(runs.is_array());
  REQUIRE(runs.size() == 3);
  CHECK(runs[0]["status"] == "failed");
  CHECK(runs[0]["exit_code"] == 1);
  CHECK(runs[0]["simulated"] == false);
  CHECK(runs[1]["out_dir"] == h100);
  CHECK(runs[1]["simulated"] == true);
  CHECK(runs[1]["output_tokens_per_s"].get<double>() > 0);
  CHECK(runs[1]["ttft_p50_ms"].get<double>() > 0);
  CHECK(runs[1]["cost_usd"].get<double>() > 0);
  CHECK(runs[2]["out_dir"] == mi300x);
  CHECK(runs[2]["script_sha256"] == json_file(mi300x + "/results.json")["manifest"]["script"]["sha256"]);
  const std::string h100_id = runs[1]["run_id"], mi300x_id = runs[2]["run_id"];
  const ChildResult table = runara({"runs", "--script", "llama70b_fp8", "--limit", "5"});
  CHECK(table.exit_code == 0);
  CHECK(contains(table.out, "RUN "));
  CHECK(contains(table.out, h100_id));
  CHECK_FALSE(contains(table.out, "failing.lua"));
  CHECK(runara({"runs", "--limit", "x"}).exit_code == 2);

  // MI300X (baseline) against H100: every figure with both values, a difference and a verdict.
  const std::string pair = dir + "/pair";
  const ChildResult c = runara({"compare", mi300x, h100, "--out", pair});
  INFO(c.out << c.err);
  CHECK(c.exit_code == 0);
  const auto cmp = json_file(pair + "/compare.json");
  REQUIRE(cmp.is_object());
  CHECK(cmp["baseline"] == mi300x_id);
  CHECK(cmp["loads_compared"].size() == 4);
  bool judged = false;
  // Run-level metrics have no "load": value() reads what may be missing (operator[] on a const
  // json asserts in a debug build).
  for (const auto& m : cmp["metrics"]) {
    if (m.value("load", "") == "concurrent_32" && m.value("id", "") == "output_tokens_per_second") {
      const nlohmann::json v = m.value("verdicts", nlohmann::json::object()).value(h100_id, nlohmann::json::object());
      judged = v.contains("verdict") && v.value("difference_pct", nlohmann::json()).is_number();
    }
  }
  CHECK(judged);
  bool gpu_differs = false;
  for (const auto& d : cmp["manifest_differences"]) gpu_differs = gpu_differs || d.value("field", "") == "machines.1.gpu";
  CHECK(gpu_differs);
  const std::string md = read_all(pair + "/compare.md");
  CHECK(contains(md, "| Metric | " + mi300x_id + " (baseline) | " + h100_id + " | " + h100_id + " vs " + mi300x_id + " | Notes |"));
  CHECK(contains(md, "## Manifest differences"));
  CHECK(contains(md, "SIMULATED"));

  // A run against itself: everything within noise, exit 0.
  const std::string self = dir + "/self";
  const ChildResult s = runara({"compare", mi300x, mi300x, "--out", self});
  INFO(s.out << s.err);
  CHECK(s.exit_code == 0);
  const auto same = json_file(self + "/compare.json");
  REQUIRE(same["summary"].size() == 1);
  CHECK(same["summary"][0]["better"] == 0);
  CHECK(same["summary"][0]["worse"] == 0);
  CHECK(same["summary"][0]["within_noise"].get<int>() > 20);

  // Thresholds. The pair's own cost ratio rides on two simulated throughputs measured over a few
  // requests (the H100's price is 1.70 times the MI300X's, its simulated throughput about 0.95
  // times: under ASan on a loaded machine one load's ratio crossed -95 % once), so the verdicts are
  // judged against a copy of the MI300X run whose every load costs exactly 1.5 times as much per
  // million output tokens: 50 % worse, crossed at -20 %, not at -95 %.
  const std::string dearer = dir + "/dearer";
  std::filesystem::create_directories(dearer);
  auto doc = json_file(mi300x + "/results.json");
  REQUIRE(doc["benchmarks"]["loads"].size() == 4);
  for (auto& [name, load] : doc["benchmarks"]["loads"].items()) {
    INFO(name);
    REQUIRE(load["usd_per_million_output_tokens"].is_number());
    load["usd_per_million_output_tokens"] = load["usd_per_million_output_tokens"].get<double>() * 1.5;
  }
  write_temp_file(dearer, "results.json", doc.dump());
  const ChildResult crossed = runara({"compare", mi300x, dearer, "--out", dir + "/t1", "--threshold", "usd_per_million_output_tokens=-20"});
  INFO(crossed.out << crossed.err);
  CHECK(crossed.exit_code == 4);
  CHECK(contains(crossed.err, "thresholds crossed: usd_per_million_output_tokens=-20"));
  CHECK(json_file(dir + "/t1/results.json")["run"]["status"] == "thresholds");
  const auto t1 = json_file(dir + "/t1/compare.json");
  CHECK(t1["thresholds"][0]["crossed"].size() == 4);  // every load, none twice
  const ChildResult within = runara({"compare", mi300x, dearer, "--out", dir + "/t2", "--threshold=usd_per_million_output_tokens=-95"});
  INFO(within.out << within.err);
  CHECK(within.exit_code == 0);
  const ChildResult typo = runara({"compare", mi300x, h100, "--out", dir + "/t3", "--threshold", "usd_per_milion_output_tokens=-5"});
  CHECK(typo.exit_code == 2);
  CHECK(contains(typo.err, "did you mean 'usd_per_million_output_tokens'?"));

  // By id (a unique start of it) and as "the last two of this script".
  const ChildResult ids = runara({"compare", mi300x_id.substr(0, 6), h100_id, "--out", dir + "/ids"});
  INFO(ids.err);
  CHECK(ids.exit_code == 0);
  const ChildResult last = runara({"compare", "--last", "2", "--script", "llama70b_fp8", "--out", dir + "/last"});
  INFO(last.err);
  CHECK(last.exit_code == 0);
  CHECK(json_file(dir + "/last/compare.json")["baseline"] == mi300x_id);  // the older of the two

  // A damaged results.json: reported and left out; with only one run left, nothing to compare (1).
  std::filesystem::create_directories(dir + "/damaged");
  const std::string text = read_all(mi300x + "/results.json");
  write_temp_file(dir + "/damaged", "results.json", text.substr(0, text.size() / 3));
  const ChildResult three = runara({"compare", mi300x, dir + "/damaged", h100, "--out", dir + "/d1"});
  INFO(three.out << three.err);
  CHECK(three.exit_code == 0);
  CHECK(contains(three.out, "results.json is damaged"));
  const ChildResult two = runara({"compare", mi300x, dir + "/damaged", "--out", dir + "/d2"});
  CHECK(two.exit_code == 1);
  CHECK(contains(two.err, "only one run could be compared"));
  CHECK(contains(read_all(dir + "/d2/compare.md"), "results.json is damaged"));

  // No load in common and no headline figure both measured: a clear error, exit 1; an older
  // results.json with only the plan's headline figures: those compared.
  std::filesystem::create_directories(dir + "/other");
  write_temp_file(dir + "/other", "results.json", R"({"benchmarks": {"loads": {"x": {"output_throughput": 5, "max_concurrency": 2}}}})");
  const ChildResult none = runara({"compare", dir + "/other", mi300x, "--out", dir + "/n1"});
  CHECK(none.exit_code == 1);
  CHECK(contains(none.err, "no figure in common"));
  std::filesystem::create_directories(dir + "/older");
  write_temp_file(dir + "/older", "results.json", R"({"benchmarks": {"throughput": {"tokens_per_second": 900}}, "run": {"script": "old.lua"}})");
  const ChildResult older = runara({"compare", dir + "/older", mi300x, "--out", dir + "/o1"});
  CHECK(older.exit_code == 0);
  CHECK(contains(older.out, "the runs share no load"));

  // A deleted folder: `runs` says so; naming its run id is a usage error that says where it was.
  std::filesystem::rename(h100, dir + "/moved");
  CHECK(contains(runara({"runs"}).out, "(missing) " + h100));
  const ChildResult gone = runara({"compare", mi300x_id, h100_id});
  CHECK(gone.exit_code == 2);
  CHECK(contains(gone.err, "is gone (moved or deleted)"));
  std::filesystem::rename(dir + "/moved", h100);

#ifdef RUNARA_CHROMIUM
  // The page as a browser parses it: the tables and a series per run in the charts.
  ChildProcess dump({RUNARA_CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", "file://" + pair + "/compare.html"});
  const ChildResult d = dump.wait(60);
  INFO(d.err);
  REQUIRE(d.exit_code == 0);
  CHECK(contains(d.out, "<table id=\"load-concurrent_32\">"));
  CHECK(contains(d.out, "<table id=\"manifest\">"));
  CHECK(contains(d.out, "data-series=\"" + mi300x_id + "\""));
  CHECK(contains(d.out, "data-series=\"" + h100_id + "\""));
  CHECK_FALSE(contains(d.out, "<script"));
#endif
}

TEST_CASE("runara compare and runara runs check their arguments", "[cli][compare]") {
  const std::string dir = temp_dir("compare-usage");
  const std::map<std::string, std::string> env{{"RUNARA_STATE_DIR", dir + "/state"}};
  const auto runara = [&](std::vector<std::string> args) { return run_runara(std::move(args), 30, env); };
  ChildResult r = runara({"compare", dir});
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "name at least two runs"));
  r = runara({"compare", dir, dir + "/nope"});
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "is neither a folder nor a run id"));
  r = runara({"compare", dir, dir, "--threshold", "ttft_p50_ms"});
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "--threshold expects METRIC=PCT"));
  r = runara({"compare", dir, dir, "--baselin", dir});
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "did you mean '--baseline'?"));
  r = runara({"compare", "--last", "2"});
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "the run history has 0 run(s)"));
  r = runara({"runs"});  // nothing recorded yet: an empty listing, not a failure
  CHECK(r.exit_code == 0);
  CHECK(contains(r.err, "no run recorded yet"));
  CHECK(runara({"runs", "--json"}).out == "[]\n");
  CHECK(runara({"runs", "--bogus"}).exit_code == 2);
}

TEST_CASE("an earlier run's folder granted by name is readable, unless the run holds a secret", "[compare]") {
  const std::string dir = temp_dir("earlier-run");
  const std::string earlier = dir + "/earlier";
  std::filesystem::create_directories(earlier);
  write_temp_file(earlier, ".runara-output", "an output folder\n");
  write_temp_file(earlier, "results.json", "{}\n");
  const auto read = [&](bool with_secret) {
    runara::Options options;
    options.out_dir = dir + (with_secret ? "/out-secret" : "/out");
    options.permissions.earlier_runs = {earlier};
    if (with_secret) options.secrets["TOKEN"] = "s3cret-value";
    std::string printed;
    runara::Events events;
    events.print = [&](std::string_view text) { printed += text; };
    runara::Runtime runtime(options, events);
    runtime.run_string("print(pcall(runara.read_file, '" + earlier + "/results.json'))");
    return printed;
  };
  CHECK(contains(read(false), "true\t{}"));
  const std::string refused = read(true);
  INFO(refused);
  CHECK(contains(refused, "false\t"));  // refused: outside what the script may read
  CHECK_FALSE(contains(refused, "{}"));
}

// Issue 37: like with like. Two sweeps against one running server (serve-fake-llm) that differ
// only in the output length asked for: compare refuses them in one line (exit 2, nothing
// written) and names the difference; --allow-different-workloads compares them, marked loudly.
// The same workload twice compares as before.
TEST_CASE("runara compare refuses runs of different workloads unless --allow-different-workloads", "[compare]") {
  ChildProcess server({RUNARA_BINARY, "serve-fake-llm", "--port", "0", "--ttft-ms", "5", "--itl-ms", "1"});
  server.close_stdin();
  REQUIRE(server.wait_for_output("at http://127.0.0.1:", 10));
  const std::string said = server.out_so_far() + server.err_so_far();
  const auto at = said.find("http://127.0.0.1:");
  const std::string url = said.substr(at, said.find_first_of(" \n", at) - at);
  const std::string dir = temp_dir("compare-workloads");
  const std::map<std::string, std::string> env{{"RUNARA_STATE_DIR", dir + "/state"}};
  const std::string sweep = std::string(RUNARA_SOURCE_DIR) + "/scripts/serving_sweep.lua";
  const auto measure = [&](const std::string& out, const std::string& max_tokens) {
    const ChildResult r = run_runara({"--on", url, "--out", dir + "/" + out, sweep, "levels=4", "max_tokens=" + max_tokens}, 60, env);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
  };
  measure("a", "16");
  measure("b", "16");
  measure("c", "32");

  ChildResult r = run_runara({"compare", dir + "/a", dir + "/b", "--out", dir + "/same"}, 30, env);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK_FALSE(contains(r.out, "WORKLOADS DIFFER"));

  r = run_runara({"compare", dir + "/a", dir + "/c", "--out", dir + "/refused"}, 30, env);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "runara compare: the runs measured different workloads (output length (max_tokens) of sweep-c4: 16 ("));
  CHECK(contains(r.err, "add --allow-different-workloads to compare them anyway"));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);  // one line: no usage text, no traceback
  CHECK_FALSE(std::filesystem::exists(dir + "/refused/compare.md"));

  r = run_runara({"compare", dir + "/a", dir + "/c", "--allow-different-workloads", "--out", dir + "/allowed"}, 30, env);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "WORKLOADS DIFFER (compared anyway: --allow-different-workloads): output length (max_tokens) of sweep-c4"));
  CHECK(contains(r.out, "DIFFERENT WORKLOADS"));
  CHECK(contains(read_all(dir + "/allowed/compare.md"), "WORKLOADS DIFFER"));
  const auto j = json_file(dir + "/allowed/compare.json");
  REQUIRE(j["workload_differences"].size() == 1);
  CHECK(j["workload_differences"][0]["what"] == "output length (max_tokens) of sweep-c4");
  CHECK(j["different_workloads_allowed"] == true);
  server.signal(SIGTERM);
  CHECK(server.wait(10).exit_code == 0);
}
