// A load's metadata (load/result_metadata.hpp): bounded, never over a key runara writes itself,
// and the reserved list kept honest against what load_result_json really writes.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "load/report.hpp"
#include "load/result_metadata.hpp"

using nlohmann::json;

TEST_CASE("result metadata: every key a load's result has is reserved", "[result_metadata]") {
  // Every option that adds keys, on: an open loop capped by max_concurrency and ramped, an SLO,
  // save_detailed, an extra percentile, a stop reason, the options' echo.
  runara::LoadSpec spec;
  spec.mode = runara::LoadMode::kOpenAi;
  spec.endpoint = "completions";
  spec.rate = 5;
  spec.max_concurrency = 2;
  spec.ramp = runara::Ramp::kLinear;
  spec.ramp_start = 1;
  spec.ramp_end = 5;
  spec.save_detailed = true;
  spec.percentiles = {25, 99.5};
  spec.echo = std::make_shared<const json>(json::object());
  runara::LoadOutcome outcome;
  outcome.stats.slo.ttft_ms = 100;
  outcome.error = "gave up";
  const json result = runara::load_result_json(spec, outcome, "20260101-000000");
  REQUIRE(result.size() > 80);
  for (const auto& [key, value] : result.items()) {
    INFO(key);
    CHECK(runara::reserved_result_key(key));
  }
  for (const char* key : {"files", "token_count_check", "thresholds", "thresholds_crossed", "prefix_cache_hit_rate", "energy_j"}) {
    CHECK(runara::reserved_result_key(key));
  }
  for (const char* key : {"version", "tp", "framework", "gpu", "label_extra", "p_ttft", "mean_of_it"}) {
    INFO(key);
    CHECK_FALSE(runara::reserved_result_key(key));
  }
}

TEST_CASE("result metadata: bounds and refusals name the key", "[result_metadata]") {
  CHECK(runara::check_result_metadata(json{{"version", "0.9.2"}, {"tp", "1"}}));
  json many = json::object();
  for (int i = 0; i < 65; ++i) many["k" + std::to_string(i)] = "v";
  CHECK(runara::check_result_metadata(many).error() == "metadata holds 65 keys; at most 64");
  many.erase("k0");
  CHECK(runara::check_result_metadata(many));
  CHECK(runara::check_result_metadata(json{{std::string(65, 'k'), "v"}}).error().find("must be 1 to 64 bytes long, got 65") != std::string::npos);
  CHECK(runara::check_result_metadata(json{{"note", std::string(1025, 'x')}}).error() == "metadata key 'note' has a value of 1025 bytes; at most 1024");
  CHECK(runara::check_result_metadata(json{{"note", std::string(1024, 'x')}}));
  CHECK(runara::check_result_metadata(json{{"tp", 1}}).error() == "metadata key 'tp' must have a string value, got number");
  for (const char* key : {"completed", "output_throughput", "p99_ttft_ms", "p25_itl_ms", "mean_e2el_ms", "count_ttft", "date", "label"}) {
    const std::string why = runara::check_result_metadata(json{{key, "x"}}).error();
    INFO(why);
    CHECK(why.find(std::string("metadata key '") + key + "' is a key runara writes itself") != std::string::npos);
  }
}

TEST_CASE("result metadata: pairs land at the top level, over no key already there", "[result_metadata]") {
  json result = {{"completed", 4}, {"label", "load"}};
  runara::add_result_metadata(result, json{{"version", "0.9.2"}, {"completed", "7"}});
  CHECK(result == json{{"completed", 4}, {"label", "load"}, {"version", "0.9.2"}});
}
