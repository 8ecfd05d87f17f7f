// http_load's results.json against a real `vllm bench serve --save-result` file
// (tests/fixtures/vllm-bench/): every key vLLM writes is there; options a script did not set are
// null; a closed loop has no send rates; input tokens counted both ways; `record` chooses which
// requests requests.jsonl gets.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "test_paths.hpp"
#include "child_process.hpp"
#include "test_text.hpp"

using nlohmann::json;
using runara::test::ChildResult;
using runara::test::run_runara;
using runara::test::temp_dir;
using runara::test::write_temp_file;

using runara::test::read_all;

namespace {


std::size_t lines_of(const std::string& text) { return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')); }

struct Load {
  ChildResult r;
  json result;
  std::string requests;
};

Load run_one(const std::string& options) {
  const std::string dir = temp_dir("vllm-keys");
  const std::string script = write_temp_file(
      dir, "load.lua",
      "local s = http_load.fake_server{ ttft_ms = 2, itl_ms = 1, output_tokens = 16, error_500 = 0.25, seed = 7 }\n"
      "http_load.run{ name = 'l', url = s.url, model = s.model, max_tokens = 16, quiet = true, give_up_after = false, " +
          options + " }\n");
  Load load;
  load.r = run_runara({"--max-runtime", "60", "--out", dir + "/out", script}, 90);
  load.result = json::parse(read_all(dir + "/out/l/results.json"), nullptr, false);
  load.requests = read_all(dir + "/out/l/requests.jsonl");
  return load;
}

}  // namespace

TEST_CASE("http_load results.json has every key of vLLM's --save-result file", "[http_load][vllm]") {
  const json vllm = json::parse(read_all(std::string(RUNARA_SOURCE_DIR) + "/tests/fixtures/vllm-bench/benchmark_serving-save-result-random-c16.json"));
  const Load load = run_one("concurrency = 4, requests = 40, slo = { ttft_ms = 500 }");
  INFO(load.r.err);
  REQUIRE(load.result.is_object());
  for (const auto& [key, value] : vllm.items()) {
    INFO("key " << key);
    CHECK(load.result.contains(key));
  }
  CHECK(load.result["best_of"] == 1);
  CHECK(load.result["input_lens"].size() == 40);
  CHECK(load.result["output_lens"].size() == 40);
  CHECK(load.result["request_goodput:"] == load.result["request_goodput"]);
  const double start = load.result["benchmark_start_time_unix"], end = load.result["benchmark_end_time_unix"];
  CHECK(end > start);
  CHECK(end - start == Approx(load.result["wall_time_s"].get<double>()).margin(1e-6));
}

TEST_CASE("http_load results: unset options are null, a closed loop has no send rates, input tokens both ways", "[http_load][vllm]") {
  const Load load = run_one("concurrency = 4, requests = 20, slo = { ttft_ms = 500 }");
  INFO(load.r.err);
  REQUIRE(load.result.is_object());
  CHECK(load.result["options"]["duration"].is_null());
  CHECK(load.result["options"]["requests"] == 20);
  CHECK(load.result["slo"]["e2el_ms"].is_null());
  CHECK(load.result["slo"]["ttft_ms"] == 500.0);
  CHECK(load.result["achieved_send_rate"].is_null());
  CHECK(load.result["scheduled_send_rate"].is_null());
  // The simulated server reports usage.prompt_tokens with its own count (a word a token): both
  // counts are reported, and the server's feeds the throughputs.
  CHECK(load.result["input_tokens_client"].get<std::int64_t>() > 0);
  CHECK(load.result["input_tokens_server"].is_number());
  CHECK(load.result["input_tokens_source"] == "server");
  CHECK(load.result["total_input_tokens"] == load.result["input_tokens_server"]);
  // ... and, the synthetic prompts being a word a token for both, the token count check agrees,
  // by the difference computed from both counts.
  const json& check = load.result["token_count_check"];
  const double client = load.result["input_tokens_client"].get<double>(), server = load.result["input_tokens_server"].get<double>();
  CHECK(server == client);
  CHECK(check["status"] == "ok");
  CHECK(check["ok"] == true);
  CHECK(check["source"] == "usage.prompt_tokens");
  CHECK(check["difference_pct"].get<double>() == Approx(100 * (server - client) / client));

  const Load open = run_one("rate = 200, duration = 0.3");
  REQUIRE(open.result.is_object());
  CHECK(open.result["options"]["requests"].is_null());
  CHECK(open.result["achieved_send_rate"].get<double>() > 0);
}

// Prompts whose GPT-2 token count and whitespace word count agree ("the" is one token, " the"
// another): the client (with GPT-2's tokenizer.json) and the simulated server count the same.
TEST_CASE("http_load token count check: counts that agree pass; without the server's counts it says it could not run", "[http_load][vllm]") {
  const std::string dir = temp_dir("token-check");
  std::string lines;
  for (int words = 20; words < 30; ++words) {
    for (int i = 0; i < words; ++i) lines += i ? " the" : "the";
    lines += "\n";
  }
  write_temp_file(dir, "prompts.txt", lines);
  const std::string gpt2 = std::string(RUNARA_SOURCE_DIR) + "/tests/fixtures/tokenizers/gpt2/tokenizer.json";
  const std::string script = write_temp_file(dir, "load.lua",
      "local s = http_load.fake_server{ ttft_ms = 1, itl_ms = 1, output_tokens = 4 }\n"
      "http_load.run{ name = 'same', url = s.url, model = s.model, max_tokens = 4, quiet = true, requests = 10,\n"
      "  prompts = { file = 'prompts.txt', format = 'lines', tokenizer = '" + gpt2 + "' } }\n"
      "local quiet = http_load.fake_server{ ttft_ms = 1, itl_ms = 1, output_tokens = 4, usage = 'never' }\n"
      "http_load.run{ name = 'no-usage', url = quiet.url, model = quiet.model, max_tokens = 4, quiet = true, requests = 3 }\n");
  const ChildResult r = run_runara({"--allow-read", gpt2, "--out", dir + "/out", script}, 60);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const json same = json::parse(read_all(dir + "/out/same/results.json"))["token_count_check"];
  CHECK(same["status"] == "ok");
  CHECK(same["ok"] == true);
  CHECK(same["difference_pct"] == 0.0);
  CHECK(same["requests"] == 10);
  const json no_usage = json::parse(read_all(dir + "/out/no-usage/results.json"))["token_count_check"];
  CHECK(no_usage["status"] == "not run: the server reported no usage.prompt_tokens");
  CHECK_FALSE(no_usage.contains("ok"));
}

TEST_CASE("http_load record = errors | none | a fraction chooses what requests.jsonl gets", "[http_load][vllm]") {
  const Load all = run_one("concurrency = 4, requests = 40");
  REQUIRE(all.result.is_object());
  CHECK(lines_of(all.requests) == 40);
  const Load errors = run_one("concurrency = 4, requests = 40, record = 'errors'");
  REQUIRE(errors.result.is_object());
  const auto failed = errors.result["failed"].get<std::size_t>();
  CHECK(failed > 0);
  CHECK(lines_of(errors.requests) == failed);
  CHECK(errors.requests.find("\"error\":\"none\"") == std::string::npos);
  CHECK(errors.result["request_lines_left_out"] == 0);
  const Load none = run_one("concurrency = 4, requests = 40, record = 'none'");
  CHECK(lines_of(none.requests) == 0);
  CHECK(none.result["completed"].get<int>() + none.result["failed"].get<int>() == 40);
  const Load some = run_one("concurrency = 4, requests = 200, record = 0.25");
  CHECK(lines_of(some.requests) > 20);
  CHECK(lines_of(some.requests) < 80);
  const Load bad = run_one("concurrency = 4, requests = 4, record = 'some'");
  CHECK(bad.r.exit_code == 1);
  CHECK(bad.r.err.find("option 'record' must be \"all\", \"errors\", \"none\" or a fraction") != std::string::npos);
}
