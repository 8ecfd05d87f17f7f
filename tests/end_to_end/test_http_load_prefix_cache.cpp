// Shared prefixes end to end: `runara` running http_load.run against the built-in simulated server
// with its prefix cache. The server's hit rate over each load is the expected one, ~0 for the
// default prompts, and with prefill costing time, shared prefixes bring TTFT down.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "child_process.hpp"
#include "test_text.hpp"

using nlohmann::json;
using runara::test::contains;

TEST_CASE("http_load shared prefixes: the server's hit rate is the expected one and TTFT falls", "[http_load][prefix_cache]") {
  const std::string dir = runara::test::temp_dir("prefix-cache");
  // 1024-token prompts, 200 requests; prefill 0.05 ms a token not cached (~51 ms for a whole prompt).
  const std::string script = runara::test::write_temp_file(dir, "load.lua",
      "local s = http_load.fake_server{ output_tokens = 2, ttft_ms = 2, prefill_ms_per_token = 0.05 }\n"
      "local function load(name, prompts)\n"
      "  return http_load.run{ name = name, url = s.url, model = s.model, max_tokens = 2, concurrency = 4,\n"
      "    requests = 200, prompts = prompts }\n"
      "end\n"
      "local plain = load('plain', { input_tokens = 1024, count = 4096 })\n"
      "local shared = load('shared', { input_tokens = 1024, prefix_tokens = 768, prefixes = 4, count = 4096 })\n"
      "print(('rates %.4f %.4f'):format(plain.prefix_cache_hit_rate, shared.prefix_cache_hit_rate))\n"
      "print(pcall(http_load.run, { url = s.url, model = s.model, requests = 1, prompts = { input_tokens = 64, prefix_tokens = 64 } }))\n"
      "print(pcall(http_load.run, { url = s.url, model = s.model, requests = 1, prompts = { input_tokens = 64, prefix_tokens = 16, prefixes = 0 } }))\n"
      "print(pcall(http_load.run, { url = s.url, model = s.model, requests = 1, prompts = { input_tokens = 64, prefix_tokens = 1.5 } }))\n"
      "print(pcall(http_load.run, { url = s.url, model = s.model, requests = 1, prompts = { input_tokens = 64, prefixes = 2 } }))\n");
  const runara::test::ChildResult r = runara::test::run_runara({"--out", dir + "/out", script}, 120);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto result = [&](const std::string& name) {
    return json::parse(runara::test::read_all(dir + "/out/" + name + "/results.json"));
  };
  const json plain = result("plain"), shared = result("shared");
  // Default prompts: only a prompt picked twice hits (about 5 of 200 from 4096).
  CHECK(plain["prefix_cache_hit_rate"].get<double>() < 0.02);
  CHECK(plain["prefix_cache_queried_tokens"] == 200 * 1024);
  // 768 of 1024 tokens (48 whole blocks) hit, but for each prefix's first request: 0.75 * (1 - 4/200).
  CHECK(shared["prefix_cache_hit_rate"].get<double>() == Approx(0.735).margin(0.01));
  CHECK(shared["options"]["prompts"]["prefix_tokens"] == 768);
  CHECK(shared["options"]["prompts"]["prefixes"] == 4);
  CHECK_FALSE(plain["options"]["prompts"].contains("prefix_tokens"));
  // Prefill of 256 tokens (~13 ms) instead of 1024 (~51 ms).
  CHECK(shared["median_ttft_ms"].get<double>() < plain["median_ttft_ms"].get<double>() - 20);
  CHECK(contains(r.out, "Prefix cache hit rate (server, %):       73."));
  CHECK(contains(r.out, "prompts.prefix_tokens (64) must be less than input_tokens (64)"));
  CHECK(contains(r.out, "option 'prefixes' must be an integer number > 0"));
  CHECK(contains(r.out, "option 'prefix_tokens' must be an integer number > 0"));
  CHECK(contains(r.out, "prompts.prefixes needs prompts.prefix_tokens"));
}
