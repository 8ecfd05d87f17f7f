// The Prometheus text parser (runtime/metrics/prometheus_text.*) against recorded vLLM /metrics
// scrapes in tests/fixtures/vllm-metrics/; expected values read off the files by hand.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

#include "test_paths.hpp"
#include "metrics/sampler.hpp"
#include "metrics/prometheus_text.hpp"

#include <map>
#include <random>

using namespace runara::metrics;

namespace {

std::string fixture(const std::string& name) {
  std::ifstream f(std::string(RUNARA_SOURCE_DIR) + "/tests/fixtures/vllm-metrics/" + name, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

const PromSample* find(const PromParse& p, const std::string& name, const std::string& label = "", const std::string& value = "") {
  for (const auto& s : p.samples) {
    if (s.name != name) continue;
    if (label.empty()) return &s;
    for (const auto& [k, v] : s.labels)
      if (k == label && v == value) return &s;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("prometheus: a full vLLM V0 scrape (no trailing newline)", "[prometheus]") {
  const PromParse p = parse_prometheus_text(fixture("vllm-v0-opt125m-2024-06-datadog.prom"));
  REQUIRE(p.error == "");
  const PromSample* running = find(p, "vllm:num_requests_running");
  REQUIRE(running);
  CHECK(running->value == 0.0);
  CHECK(running->labels == std::vector<std::pair<std::string, std::string>>{{"model_name", "facebook/opt-125m"}});
  CHECK(p.families.at("vllm:num_requests_running").type == "gauge");
  CHECK(p.families.at("vllm:num_requests_running").help == "Number of requests currently running on GPU.");
  CHECK(find(p, "vllm:prompt_tokens_total")->value == 5.0);
  CHECK(find(p, "vllm:generation_tokens_total")->value == 7.0);
  CHECK(find(p, "process_virtual_memory_bytes")->value == 6.634254336e+09);
  const PromSample* sum = find(p, "vllm:time_to_first_token_seconds_sum");
  REQUIRE(sum);
  CHECK(sum->value == 0.31326723098754883);
  CHECK(sum->family == "vllm:time_to_first_token_seconds");
  const PromSample* bucket = find(p, "vllm:time_to_first_token_seconds_bucket", "le", "0.005");
  REQUIRE(bucket);
  CHECK(bucket->family == "vllm:time_to_first_token_seconds");
  CHECK(p.families.at("vllm:time_to_first_token_seconds").type == "histogram");
  CHECK(find(p, "vllm:cache_config_info", "num_gpu_blocks", "7281"));

  const auto totals = prometheus_totals(p);
  CHECK(totals.at("python_gc_objects_collected_total") == 7431.0 + 4936.0 + 1661.0);
  CHECK(totals.at("vllm:time_to_first_token_seconds_count") == 1.0);
  CHECK(totals.count("vllm:time_to_first_token_seconds_bucket") == 0);
}

TEST_CASE("prometheus: vLLM V1 (engine label, _created gauges) and _sum before _bucket", "[prometheus]") {
  const PromParse v1 = parse_prometheus_text(fixture("vllm-v1-engine-label-created-series-head40-PARTIAL.prom"));
  REQUIRE(v1.error == "");
  const PromSample* kv = find(v1, "vllm:kv_cache_usage_perc", "engine", "0");
  REQUIRE(kv);
  CHECK(kv->value == 0.0);
  const PromSample* created = find(v1, "vllm:prefix_cache_queries_created");
  REQUIRE(created);
  CHECK(created->value == 1.7769301736864316e+09);
  CHECK(created->family == "vllm:prefix_cache_queries_created");  // its own gauge family
  // The cut file ends with a HELP line whose family has no sample: still known, untyped.
  CHECK(v1.families.at("vllm:request_success_total").help == "Count of successfully processed requests.");

  const PromParse it = parse_prometheus_text(fixture("vllm-v1-docs-iteration-tokens-PARTIAL.prom"));
  REQUIRE(it.error == "");
  REQUIRE(it.samples.size() == 9);
  CHECK(it.samples[0].name == "vllm:iteration_tokens_total_sum");
  CHECK(it.samples[0].family == "vllm:iteration_tokens_total");
  CHECK(find(it, "vllm:iteration_tokens_total_bucket", "le", "512.0")->value == 3.0);
}

TEST_CASE("prometheus: escapes, special values, timestamps", "[prometheus]") {
  const PromParse p = parse_prometheus_text(
      "# HELP m A \\\\ help\\nline\n# TYPE m gauge\n"
      "m{path=\"C:\\\\dir\",quote=\"say \\\"hi\\\"\",nl=\"a\\nb\",} NaN\n"
      "m +Inf 1700000000000\r\n"
      "  m{}   -Inf\n"
      "# a plain comment\n\n");
  REQUIRE(p.error == "");
  REQUIRE(p.samples.size() == 3);
  CHECK(p.families.at("m").help == "A \\ help\nline");
  CHECK(p.samples[0].labels.at(0).second == "C:\\dir");
  CHECK(p.samples[0].labels.at(1).second == "say \"hi\"");
  CHECK(p.samples[0].labels.at(2).second == "a\nb");
  CHECK(std::isnan(p.samples[0].value));
  CHECK(p.samples[1].value == INFINITY);
  CHECK(p.samples[1].timestamp_ms == 1700000000000);
  CHECK(p.samples[2].value == -INFINITY);
}

TEST_CASE("prometheus: malformed text fails with the line and what was expected", "[prometheus]") {
  CHECK(parse_prometheus_text("").samples.empty());
  CHECK(parse_prometheus_text("").error == "");
  CHECK(parse_prometheus_text("ok 1\nbad{le=\"1\" 2\n").error ==
        "metrics text line 2: expected ',' or '}' after the value of label 'le': \"bad{le=\"1\" 2\"");
  CHECK(parse_prometheus_text("m{le=\"1} 2").error ==
        "metrics text line 1: the value of label 'le' is not closed with '\"': \"m{le=\"1} 2\"");
  CHECK(parse_prometheus_text("m twelve").error == "metrics text line 1: 'twelve' is not a number: \"m twelve\"");
  CHECK(parse_prometheus_text("m").error == "metrics text line 1: expected a value after the metric name: \"m\"");
  CHECK(parse_prometheus_text("{a=\"b\"} 1").error == "metrics text line 1: expected a metric name: \"{a=\"b\"} 1\"");
  CHECK(parse_prometheus_text("m 1 2 3").error == "metrics text line 1: unexpected text after the timestamp: \"m 1 2 3\"");
  CHECK(parse_prometheus_text("# TYPE m weird").error == "metrics text line 1: unknown metric type 'weird' for m: \"# TYPE m weird\"");
  CHECK_THAT(parse_prometheus_text("<html><body>502 Bad Gateway</body></html>").error,
             Catch::StartsWith("metrics text line 1: expected a metric name"));
  const PromParse bad = parse_prometheus_text("a 1\nb 2\nc x\n");
  CHECK(bad.samples.empty());
  CHECK(bad.families.empty());
}

// Issue 25: a 16 MiB /metrics took 0.8 GB of RSS under --max-memory 64M. What a parse holds is
// bounded in samples, families and estimated bytes (per item, not only the text's), each with
// a clear error; the recorded scrapes stay far below every bound.
TEST_CASE("prometheus: hostile texts are bounded in samples, families and parsed size", "[prometheus]") {
  const PromParse real = parse_prometheus_text(fixture("vllm-v0-opt125m-2024-06-datadog.prom"));
  REQUIRE(real.error.empty());
  CHECK(real.bytes > 0);
  CHECK(real.bytes < kMaxParsedBytes / 32);
  CHECK(real.samples.size() < kMaxSamples / 20);

  std::string text;
  for (std::size_t i = 0; i <= kMaxSamples; ++i) text += "m{a=\"" + std::to_string(i) + "\"} 1\n";
  PromParse p = parse_prometheus_text(text);
  CHECK(p.error == "metrics text line 50001: more than 50000 samples: \"m{a=\"50000\"} 1\"");
  CHECK(p.samples.empty());
  CHECK(p.bytes == 0);

  text.clear();
  for (std::size_t i = 0; i <= kMaxFamilies; ++i) text += "# TYPE f" + std::to_string(i) + " counter\n";
  p = parse_prometheus_text(text);
  CHECK(p.error == "metrics text line 50001: more than 50000 metric families: \"# TYPE f50000 counter\"");
  CHECK(p.families.empty());

  // 1000 labels a sample: 2 MiB of text, but 64 bytes a label pair (and more) once parsed.
  text.clear();
  std::string labels;
  for (int l = 0; l < 1000; ++l) labels += "l" + std::to_string(l) + "=\"\",";
  for (int i = 0; text.size() < (std::size_t{2} << 20); ++i) text += "m" + std::to_string(i) + "{" + labels + "} 1\n";
  p = parse_prometheus_text(text);
  CHECK_THAT(p.error, Catch::StartsWith("metrics text line "));
  CHECK_THAT(p.error, Catch::Contains(": the parsed samples would take more than 16 MiB ("));
  CHECK(p.samples.empty());
  CHECK(kMaxBodyBytes == std::size_t{4} << 20);
}

// Issue 25: a metrics sampler's phases were each a scan of every sample (marks x samples x names:
// seconds to minutes in stop()); summarize_phases makes them all in one scan. Its figures equal
// summarize_window's for each phase exactly, in time order or not. Samples and marks are
// charged with their map nodes and heap blocks, not their bytes alone.
TEST_CASE("metrics summaries: all phases in one scan equal each window's, and samples cost their nodes", "[prometheus][hostile_buffers]") {
  using runara::metrics::MetricsSampler;
  using runara::metrics::MetricStats;
  using runara::metrics::ScrapeMark;
  using runara::metrics::ScrapeSample;
  std::mt19937 rng(4);
  std::uniform_real_distribution<double> u(0, 1);
  for (int trial = 0; trial < 30; ++trial) {
    std::vector<ScrapeSample> samples;
    double t = 0;
    for (int i = 0; i < trial * 5; ++i) {
      t += u(rng) < 0.1 ? 0 : u(rng);
      ScrapeSample s;
      s.t_s = trial % 6 == 5 && u(rng) < 0.3 ? t - 2 * u(rng) : t;
      for (int k = 0; k < 6; ++k)
        if (u(rng) < 0.7) s.values["m" + std::to_string(k)] = std::floor(100 * u(rng)) + i;
      samples.push_back(s);
    }
    std::vector<ScrapeMark> marks;
    for (double m = -0.5; m < t + 1; m += 2 * u(rng)) marks.push_back({m, "p" + std::to_string(marks.size())});
    if (trial % 7 == 6 && marks.size() > 2) std::swap(marks[0], marks[1]);  // out of order: window by window
    std::size_t calls = 0;
    runara::metrics::summarize_phases(samples, marks, t, [&](std::size_t i, const std::map<std::string, MetricStats>& got) {
      INFO("trial " << trial << ", phase " << i);
      REQUIRE(i == calls++);
      const auto want = runara::metrics::summarize_window(samples, marks[i].t_s, i + 1 < marks.size() ? marks[i + 1].t_s : t);
      REQUIRE(got.size() == want.size());
      for (const auto& [name, w] : want) {
        const MetricStats& g = got.at(name);
        CHECK(g.first == w.first);
        CHECK(g.last == w.last);
        CHECK(g.delta == w.delta);
        CHECK(g.mean == w.mean);
        CHECK(g.max == w.max);
        CHECK(g.samples == w.samples);
      }
    });
    CHECK(calls == marks.size());
  }
  ScrapeSample many;
  for (int i = 0; i < 1000; ++i) many.values["m" + std::to_string(i)] = 1;  // short names: 1000 map nodes
  CHECK(MetricsSampler::sample_cost(many) >= 1000 * (32 + sizeof(std::pair<const std::string, double>)));
  ScrapeSample longer;
  longer.values[std::string(100, 'n')] = 1;
  CHECK(MetricsSampler::sample_cost(longer) >= 2 * sizeof(ScrapeSample) + 32 + sizeof(std::pair<const std::string, double>) + 101);
  CHECK(MetricsSampler::mark_cost(std::string(256, 'x')) >= 2 * sizeof(ScrapeMark) + 257);
}
