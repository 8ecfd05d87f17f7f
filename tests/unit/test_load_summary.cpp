// What a load shows without the script writing code (runtime/load_job/summary.*,
// sweep_files.*, thresholds.*; bindings/http_load_summary.*): the summary printed by default
// and silenced by quiet / --quiet, a sweep's rows and files, thresholds and exit status 4, and
// a concurrency the load could never reach said so. Against the built-in simulated server.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "child_process.hpp"
#include "base/did_you_mean.hpp"
#include "load_job/summary.hpp"
#include "load_job/sweep_files.hpp"
#include "load/thresholds.hpp"
#include "test_text.hpp"

using nlohmann::json;
using runara::test::ChildResult;
using runara::test::run_runara;
using runara::test::temp_dir;
using runara::test::write_temp_file;

using runara::test::contains;
using runara::test::read_all;

namespace {



struct Run {
  ChildResult r;
  std::string out;
};

Run run_load(const std::string& code, std::vector<std::string> flags = {}) {
  Run run;
  const std::string dir = temp_dir("summary");
  run.out = dir + "/out";
  const std::string script = write_temp_file(
      dir, "load.lua", "local s = http_load.fake_server{ ttft_ms = 5, itl_ms = 1, output_tokens = 16 }\n" + code);
  std::vector<std::string> args{"--max-runtime", "60", "--out", run.out};
  args.insert(args.end(), flags.begin(), flags.end());
  args.push_back(script);
  run.r = run_runara(args, 90);
  return run;
}

const char* const kOneLoad =
    "local r = http_load.run{ name = 'one', url = s.url, model = s.model, max_tokens = 16, concurrency = 4, requests = 20 %s }\n"
    "print('completed', r.completed)\n";

std::string one_load(const std::string& extra = "") {
  char text[512];
  std::snprintf(text, sizeof text, kOneLoad, extra.c_str());
  return text;
}

}  // namespace

TEST_CASE("http_load prints a vllm-like summary by default; quiet and --quiet silence it", "[http_load][summary]") {
  SECTION("by default") {
    const Run run = run_load(one_load());
    INFO(run.r.out << run.r.err);
    CHECK(run.r.exit_code == 0);
    CHECK(contains(run.r.out, "http_load one"));
    CHECK(contains(run.r.out, "Successful requests:                     20\n"));
    CHECK(contains(run.r.out, "Median TTFT (ms):"));
    CHECK(contains(run.r.out, "P99 ITL (ms):"));
    CHECK(contains(run.r.out, "Output token throughput (tok/s):"));
    CHECK(contains(run.r.out, "completed\t20"));
  }
  SECTION("quiet = true") {
    const Run run = run_load(one_load(", quiet = true"));
    CHECK(run.r.exit_code == 0);
    CHECK(run.r.out == "completed\t20\n");
  }
  SECTION("--quiet, and --flag=value") {
    const Run run = run_load(one_load(), {"--quiet", "--max-memory=512M"});
    INFO(run.r.err);
    CHECK(run.r.exit_code == 0);
    CHECK(run.r.out == "completed\t20\n");
  }
}

TEST_CASE("http_load: a sweep prints a row per point and writes sweep.csv and sweep.json", "[http_load][summary]") {
  const Run run = run_load(
      "local rows = http_load.run{ name = 'sw', url = s.url, model = s.model, max_tokens = 16, concurrency = {1, 2, 4}, "
      "requests = 8 }\nprint('points', #rows)\n");
  INFO(run.r.out << run.r.err);
  CHECK(run.r.exit_code == 0);
  CHECK(contains(run.r.out, "ttft p50"));
  const std::size_t c1 = run.r.out.find("sw-c1 "), c2 = run.r.out.find("sw-c2 "), c4 = run.r.out.find("sw-c4 ");
  REQUIRE(c1 != std::string::npos);
  REQUIRE(c2 != std::string::npos);
  REQUIRE(c4 != std::string::npos);
  CHECK(c1 < c2);
  CHECK(c2 < c4);
  const json rows = json::parse(read_all(run.out + "/sw/sweep.json"), nullptr, false);
  REQUIRE(rows.is_array());
  REQUIRE(rows.size() == 3);
  CHECK(rows[0]["label"] == "sw-c1");
  CHECK(rows[2]["max_concurrency"] == 4);
  CHECK(rows[1]["completed"] == 8);
  const std::string csv = read_all(run.out + "/sw/sweep.csv");
  CHECK(csv.rfind("label,load_model,max_concurrency,", 0) == 0);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 4);
  CHECK(contains(csv, "\nsw-c2,closed,2,"));
}

TEST_CASE("http_load thresholds: a crossed one is reported and the run exits with status 4", "[http_load][summary]") {
  SECTION("crossed") {
    const Run run = run_load(one_load(", thresholds = { ttft_p99_ms = 1, failure_rate = 0.5 }"));
    INFO(run.r.out << run.r.err);
    CHECK(run.r.exit_code == 4);
    CHECK(contains(run.r.out, "completed\t20"));  // the script went on
    CHECK(contains(run.r.out, "Thresholds crossed"));
    CHECK(contains(run.r.err, "ttft_p99_ms: "));
    CHECK(contains(run.r.err, " > 1"));
    const json results = json::parse(read_all(run.out + "/one/results.json"));
    CHECK(results["thresholds"]["ttft_p99_ms"]["ok"] == false);
    CHECK(results["thresholds"]["failure_rate"]["ok"] == true);
    CHECK(results["thresholds_crossed"].size() == 1);
    const json record = json::parse(read_all(run.out + "/results.json"))["run"];
    CHECK(record["status"] == "thresholds");
    CHECK(record["exit_code"] == 4);
  }
  SECTION("held") {
    const Run run = run_load(one_load(", thresholds = { ttft_p99_ms = 5000, min_output_throughput = 1 }"));
    INFO(run.r.out << run.r.err);
    CHECK(run.r.exit_code == 0);
  }
  SECTION("a misspelled name is an error that suggests the right one") {
    const Run run = run_load(one_load(", thresholds = { ttft_p99_sm = 5 }"));
    CHECK(run.r.exit_code == 1);
    CHECK(contains(run.r.err, "unknown threshold 'ttft_p99_sm' (did you mean 'ttft_p99_ms'?)"));
  }
  SECTION("a misspelled option suggests the right one") {
    const Run run = run_load(one_load(", thresolds = { ttft_p99_ms = 5 }"));
    CHECK(run.r.exit_code == 1);
    CHECK(contains(run.r.err, "unknown option 'thresolds' (did you mean 'thresholds'?)"));
  }
}

TEST_CASE("http_load: a closed loop whose concurrency cannot be reached says so", "[http_load][summary]") {
  const Run run = run_load(
      "local r = http_load.run{ name = 'few', url = s.url, model = s.model, max_tokens = 16, concurrency = 32, requests = 16 }\n");
  INFO(run.r.out << run.r.err);
  CHECK(run.r.exit_code == 0);
  CHECK(contains(run.r.out, "concurrency 32 was never reached: at most 16 request(s) in flight"));
}

TEST_CASE("thresholds: names, limits and the check itself", "[summary]") {
  const auto t = runara::parse_threshold("ttft_p99_ms", 500);
  REQUIRE(t);
  CHECK(t->key == "p99_ttft_ms");
  CHECK(t->upper);
  const auto lower = runara::parse_threshold("min_output_throughput", 10);
  REQUIRE(lower);
  CHECK_FALSE(lower->upper);
  CHECK(runara::parse_threshold("failure_rate", 2).error().find("between 0 and 1") != std::string::npos);
  CHECK(runara::parse_threshold("e2el_p99_ms", -1).error().find(">= 0") != std::string::npos);
  const auto first = runara::parse_threshold("ttft_p99_ms", 10), second = runara::parse_threshold("failure_rate", 0.1);
  REQUIRE(first);
  REQUIRE(second);
  runara::Thresholds list{first.value(), second.value()};
  json r = {{"completed", 9}, {"failed", 1}, {"p99_ttft_ms", 12.5}};
  runara::apply_thresholds(list, r);
  CHECK(r["thresholds"]["ttft_p99_ms"]["ok"] == false);
  CHECK(r["thresholds"]["failure_rate"]["ok"] == true);
  CHECK(r["thresholds_crossed"] == json::array({"ttft_p99_ms: 12.5 > 10"}));
  json none = {{"completed", 0}, {"failed", 4}, {"p99_ttft_ms", 0}};
  runara::apply_thresholds(list, none);
  CHECK(none["thresholds"]["ttft_p99_ms"]["ok"] == false);  // nothing measured is no pass
}

TEST_CASE("did you mean: close names only", "[summary]") {
  CHECK(runara::closest_name("szie", {"size", "image", "region"}) == "size");
  CHECK(runara::closest_name("--max-runtim", {"--max-runtime", "--max-memory"}) == "--max-runtime");
  CHECK(runara::closest_name("banana", {"size", "image", "region"}).empty());
}

TEST_CASE("sweep.csv quotes what needs quoting", "[summary]") {
  const json rows = json::array({runara::sweep_row({{"label", "a,b"}, {"completed", 3}})});
  const std::string csv = runara::sweep_csv(rows);
  CHECK(contains(csv, "\n\"a,b\",,,,,3,"));
}

TEST_CASE("http_load progress reaches a non-terminal stderr and run.log as plain lines", "[http_load][summary]") {
  // The child's stderr is a pipe, as under CI or nohup.
  const Run run = run_load(
      "http_load.run{ name = 'slow', url = s.url, model = s.model, max_tokens = 16, concurrency = 2, duration = 2.5 }\n");
  INFO(run.r.err);
  CHECK(run.r.exit_code == 0);
  CHECK(contains(run.r.err, "slow 1s "));
  CHECK(contains(run.r.err, " done "));
  CHECK(run.r.err.find('\r') == std::string::npos);  // no terminal redraws
  const std::string log = read_all(run.out + "/run.log");
  INFO(log);
  CHECK(contains(log, "] slow 1s "));
}
