// The pieces of a load's summary, without a run (runtime/load/thresholds.*,
// runtime/base/did_you_mean.*, runtime/load_job/sweep_files.*): a threshold's names, limits and
// check, the "did you mean" for a misspelled name, and sweep.csv's quoting. What a run prints and
// writes with them: tests/end_to_end/test_load_summary.cpp.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "base/did_you_mean.hpp"
#include "load_job/sweep_files.hpp"
#include "load/thresholds.hpp"
#include "test_text.hpp"

using nlohmann::json;
using runara::test::contains;

TEST_CASE("thresholds: names, limits and the check itself", "[summary]") {
  const auto t = runara::parse_threshold("ttft_p99_ms", 500);
  REQUIRE(t);
  CHECK(t->key == "p99_ttft_ms");
  CHECK(t->upper);
  const auto scheduled = runara::parse_threshold("ttft_from_schedule_p99_ms", 500);  // queue included
  REQUIRE(scheduled);
  CHECK(scheduled->key == "p99_ttft_from_schedule_ms");
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
