// `runara bench URL ...` (cli/bench_command.*, stdlib/runara_bench.lua): the one-liner against
// the simulated LLM server on loopback — a sweep's table and files, --saturate, and its flags
// checked with clear errors; the URL named is the only host granted.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_paths.hpp"
#include "child_process.hpp"
#include "sim/fake_llm_server.hpp"
#include "test_text.hpp"

using runara::test::ChildResult;
using runara::test::run_runara;
using runara::test::temp_dir;

using runara::test::contains;
using runara::test::read_all;

namespace {



runara::FakeLlmConfig quick() {
  runara::FakeLlmConfig c;
  c.ttft_ms = 5;
  c.itl_ms = 1;
  c.output_tokens = 16;
  return c;
}

}  // namespace

TEST_CASE("runara bench: a concurrency sweep prints its rows and writes the sweep files", "[http_load][bench]") {
  runara::FakeLlmServer server(quick());
  const int port = server.start(0);
  REQUIRE(port > 0);
  const std::string out = temp_dir("bench") + "/out";
  const ChildResult r = run_runara({"bench", "http://127.0.0.1:" + std::to_string(port), "--model", "fake-model", "-c", "1,4",
                                    "-n", "12", "--output-len=16", "--input-len", "32", "--out", out}, 90);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "bench-c1 "));
  CHECK(contains(r.out, "bench-c4 "));
  const auto rows = nlohmann::json::parse(read_all(out + "/bench/sweep.json"), nullptr, false);
  REQUIRE(rows.is_array());
  CHECK(rows.size() == 2);
  CHECK(rows[1]["completed"] == 12);
  const auto record = nlohmann::json::parse(read_all(out + "/results.json"), nullptr, false);
  REQUIRE(record.is_object());
  CHECK(record["run"]["status"] == "ok");
  CHECK(record["run"]["flags"]["allow_host"] == nlohmann::json::array({"127.0.0.1:" + std::to_string(port)}));
}

TEST_CASE("runara bench --saturate stops when throughput stops growing", "[http_load][bench]") {
  runara::FakeLlmServer server(quick());
  const int port = server.start(0);
  REQUIRE(port > 0);
  const std::string out = temp_dir("bench") + "/out";
  // 8 requests per point: from 8 streams on every point sends them all at once, so throughput
  // stops growing there at the latest.
  const ChildResult r = run_runara({"bench", "http://127.0.0.1:" + std::to_string(port), "--model", "fake-model", "--saturate",
                                    "-n", "8", "--output-len", "16", "--input-len", "32", "--out", out}, 120);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "saturated: "));
  const auto results = nlohmann::json::parse(read_all(out + "/results.json"), nullptr, false);
  REQUIRE(results.is_object());
  CHECK(results["saturation"]["best_concurrency"].get<int>() >= 1);
  CHECK(results["saturation"]["best_concurrency"].get<int>() <= 16);
}

TEST_CASE("runara bench --save-detailed writes vLLM's per-request arrays", "[http_load][bench]") {
  runara::FakeLlmConfig config = quick();
  config.output_tokens = 4;
  config.error_500_fraction = 0.3;
  config.seed = 7;
  runara::FakeLlmServer server(config);
  const int port = server.start(0);
  REQUIRE(port > 0);
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  const std::string out = temp_dir("bench-detailed") + "/out";
  const ChildResult r = run_runara({"bench", url, "--model", "fake-model", "-n", "10", "--input-len", "16",
                                    "--output-len", "4", "--save-detailed", "--out", out}, 90);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto load = nlohmann::json::parse(read_all(out + "/bench/results.json"), nullptr, false);
  REQUIRE(load.is_object());
  REQUIRE(load.at("ttfts").is_array());
  REQUIRE(load.at("ttfts").size() == 10);
  for (const char* key : {"itls", "generated_texts", "errors", "input_lens", "output_lens"}) REQUIRE(load.at(key).size() == 10);
  int failed = 0;
  for (std::size_t i = 0; i < 10; ++i) {
    const bool ok = load.at("errors")[i].get<std::string>().empty();
    failed += ok ? 0 : 1;
    // vLLM's units: seconds from the send (about 5 ms here), 0.0 and "" for a request with no token.
    CHECK((ok ? load.at("ttfts")[i].get<double>() > 0.004 && load.at("ttfts")[i].get<double>() < 1 : load.at("ttfts")[i] == 0.0));
    CHECK(load.at("itls")[i].size() == (ok ? 3u : 0u));
    CHECK(load.at("generated_texts")[i].get<std::string>().empty() == !ok);
  }
  CHECK(failed == load.at("failed").get<int>());
  CHECK(failed > 0);
  // Without the flag, vLLM's file has none of them; runara's keeps input_lens/output_lens only.
  // (A server that does not fail: two requests that both failed would end the run with an error.)
  runara::FakeLlmServer healthy(quick());
  const int healthy_port = healthy.start(0);
  REQUIRE(healthy_port > 0);
  const std::string plain = temp_dir("bench-plain") + "/out";
  const ChildResult p = run_runara({"bench", "http://127.0.0.1:" + std::to_string(healthy_port), "--model", "fake-model", "-n", "2",
                                    "--input-len", "16", "--output-len", "4", "--out", plain}, 90);
  INFO(p.out << p.err);
  REQUIRE(p.exit_code == 0);
  const auto brief = nlohmann::json::parse(read_all(plain + "/bench/results.json"), nullptr, false);
  REQUIRE(brief.is_object());
  CHECK_FALSE(brief.contains("ttfts"));
  CHECK_FALSE(brief.contains("generated_texts"));
}

TEST_CASE("runara bench checks its flags", "[cli][bench]") {
  const ChildResult help = run_runara({"bench", "--help"});
  CHECK(help.exit_code == 0);
  CHECK(contains(help.out, "usage: runara bench URL"));
  const ChildResult no_url = run_runara({"bench", "--model", "m"});
  CHECK(no_url.exit_code == 2);
  CHECK(contains(no_url.err, "a URL is required"));
  const ChildResult bad_label = run_runara({"bench", "http://127.0.0.1:9", "--label", "../x"});
  CHECK(bad_label.exit_code == 2);
  CHECK(contains(bad_label.err, "--label expects a name of letters"));
  const ChildResult bad_c = run_runara({"bench", "http://127.0.0.1:9", "--model", "m", "-c", "1,x"});
  CHECK(bad_c.exit_code == 2);
  CHECK(contains(bad_c.err, "-c expects whole numbers > 0 separated by commas, such as 1,8,32, got '1,x'"));
  const ChildResult typo = run_runara({"bench", "http://127.0.0.1:9", "--modle", "m"});
  CHECK(typo.exit_code == 2);
  CHECK(contains(typo.err, "unknown option '--modle' (did you mean '--model'?)"));
  const ChildResult scheme = run_runara({"bench", "127.0.0.1:9", "--model", "m"});
  CHECK(scheme.exit_code == 2);
  CHECK(contains(scheme.err, "runara bench: URL "));
  const ChildResult both = run_runara({"bench", "http://127.0.0.1:9", "--model", "m", "-d", "5s", "-n", "3"});
  CHECK(both.exit_code == 2);
  CHECK(contains(both.err, "-d and -n are alternatives"));
}

TEST_CASE("runara bench --tokenizer: prompts are the asked length in that tokenizer's tokens", "[http_load][bench]") {
  runara::FakeLlmServer server(quick());
  const int port = server.start(0);
  REQUIRE(port > 0);
  const std::string dir = temp_dir("bench-tokenizer");
  const std::string gpt2 = std::string(RUNARA_SOURCE_DIR) + "/tests/fixtures/tokenizers/gpt2/tokenizer.json";
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  const ChildResult r = run_runara({"bench", url, "--model", "fake-model", "-n", "10", "--input-len", "77",
                                    "--output-len", "4", "--tokenizer", gpt2, "--out", dir + "/out"}, 90);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto result = nlohmann::json::parse(read_all(dir + "/out/bench/results.json"), nullptr, false);
  REQUIRE(result.is_object());
  CHECK(result["tokenizer_id"] == gpt2);
  CHECK(result["input_tokens_client"] == 770);
  CHECK(result["options"]["prompts"]["tokenizer"] == gpt2);

  // A file that is not a byte-level BPE tokenizer: refused before any request, naming the file and the field.
  std::ofstream(dir + "/spm.json") << R"({"normalizer": {"type": "NFKC"}, "model": {"type": "Unigram"}})";
  const ChildResult bad = run_runara({"bench", url, "--model", "fake-model", "-n", "2", "--tokenizer", dir + "/spm.json",
                                      "--out", dir + "/out2"}, 60);
  CHECK(bad.exit_code != 0);
  CHECK(contains(bad.err, "prompts.tokenizer " + dir + "/spm.json: normalizer \"NFKC\" is not supported"));
  CHECK(server.stats().requests_served == 10);
}

// A `vllm bench serve` command line, flag for flag, as a user pastes it: each flag does what
// vLLM's does, the key is masked as a secret, and the summary shows the asked percentiles only.
TEST_CASE("runara bench takes vllm bench serve's own flags", "[http_load][bench]") {
  runara::FakeLlmServer server(quick());
  const int port = server.start(0);
  REQUIRE(port > 0);
  const std::string dir = temp_dir("bench-vllm-flags");
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  const ChildResult r = run_runara(
      {"bench", "--backend", "openai-chat", "--base-url", url, "--model", "fake-model", "--request-rate", "inf",
       "--max-concurrency", "4", "--num-prompts", "12", "--num-warmups", "2", "--dataset-name", "random",
       "--random-input-len", "32", "--random-output-len", "8", "--random-range-ratio", "0.5", "--goodput", "ttft:1000",
       "tpot:100", "--percentile-metrics", "ttft,itl", "--metric-percentiles", "50,90,99.5", "--api-key",
       "sk-bench-secret-4711", "--ignore-eos", "--save-result", "--result-dir", dir + "/out"}, 90);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto result = nlohmann::json::parse(read_all(dir + "/out/bench/results.json"), nullptr, false);
  REQUIRE(result.is_object());
  CHECK(result["backend"] == "openai-chat");
  CHECK(result["max_concurrency"] == 4);
  CHECK(result["completed"] == 12);
  CHECK(result["warmup_requests"] == 2);
  CHECK(result["request_goodput"].is_number());
  CHECK(result["slo"]["ttft_ms"] == 1000);
  CHECK(result["slo"]["tpot_ms"] == 100);
  CHECK(result["options"]["prompts"]["range_ratio"] == 0.5);
  CHECK(result["p99.5_ttft_ms"].is_number());
  // The client's own CPU time is measured (load/client_limit.hpp): a light load is not client-limited.
  CHECK(result["client_cpu_s"].get<double>() > 0);
  CHECK(result["client_cpu_utilization"].get<double>() < 0.9);
  CHECK(result["client_limited"] == false);
  CHECK(result["client_limit"].is_null());
  CHECK(result["p90_itl_ms"].is_number());
  CHECK(contains(r.out, "P99.5 TTFT (ms)"));
  CHECK(contains(r.out, "P50 ITL (ms)"));
  CHECK_FALSE(contains(r.out, "TPOT (ms)"));  // not among --percentile-metrics
  CHECK_FALSE(contains(r.out, "P99 TTFT"));   // not among --metric-percentiles
  CHECK(server.stats().requests_served == 14);
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir + "/out")) {
    if (!entry.is_regular_file()) continue;
    INFO(entry.path());
    CHECK_FALSE(contains(read_all(entry.path().string()), "sk-bench-secret-4711"));
  }
  CHECK_FALSE(contains(r.out + r.err, "sk-bench-secret-4711"));
}

TEST_CASE("runara bench --ramp-up-strategy sends at a rising rate, as vLLM's", "[http_load][bench]") {
  runara::FakeLlmServer server(quick());
  const int port = server.start(0);
  REQUIRE(port > 0);
  const std::string dir = temp_dir("bench-ramp");
  const ChildResult r = run_runara({"bench", "http://127.0.0.1:" + std::to_string(port), "--model", "fake-model",
                                    "--ramp-up-strategy", "linear", "--ramp-up-start-rps", "20", "--ramp-up-end-rps", "200",
                                    "-n", "40", "--input-len", "16", "--output-len", "4", "--out", dir + "/out"}, 90);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto result = nlohmann::json::parse(read_all(dir + "/out/bench/results.json"), nullptr, false);
  REQUIRE(result.is_object());
  CHECK(result["ramp_up_strategy"] == "linear");
  CHECK(result["ramp_up_start_rps"] == 20);
  CHECK(result["ramp_up_end_rps"] == 200);
  CHECK(result["completed"] == 40);
  // Poisson arrivals (vLLM's default) on a ramp from 20/s to 200/s: the first gaps average about
  // 1/30 s, the last ones about 1/195 s.
  std::ifstream lines(dir + "/out/bench/requests.jsonl");
  std::vector<double> due;
  for (std::string line; std::getline(lines, line);) due.push_back(nlohmann::json::parse(line)["intended_ms"].get<double>());
  std::sort(due.begin(), due.end());
  REQUIRE(due.size() == 40);
  const double early = (due[10] - due[0]) / 10, late = (due[39] - due[29]) / 10;
  INFO("mean gap of the first 10: " << early << " ms, of the last 10: " << late << " ms");
  CHECK(early > 3 * late);
}

TEST_CASE("runara bench: vLLM's flags are checked, and the ones it does not take say what to use", "[cli][bench]") {
  const std::string url = "http://127.0.0.1:9";
  const ChildResult host = run_runara({"bench", "--host", "10.0.0.5", "--model", "m"});
  CHECK(host.exit_code == 2);
  CHECK(contains(host.err, "--host is vllm bench's; here give the server as URL"));
  const ChildResult dataset = run_runara({"bench", url, "--model", "m", "--dataset-name", "sonnet"});
  CHECK(dataset.exit_code == 2);
  CHECK(contains(dataset.err, "--dataset-name expects random, prefix_repetition, sharegpt or custom"));
  const ChildResult no_path = run_runara({"bench", url, "--model", "m", "--dataset-name", "sharegpt"});
  CHECK(no_path.exit_code == 2);
  CHECK(contains(no_path.err, "--dataset-name sharegpt needs --dataset-path FILE"));
  const ChildResult goodput = run_runara({"bench", url, "--model", "m", "--goodput", "itl:5"});
  CHECK(goodput.exit_code == 2);
  CHECK(contains(goodput.err, "--goodput expects KEY:MS items (ttft, tpot or e2el)"));
  const ChildResult ramp = run_runara({"bench", url, "--model", "m", "--ramp-up-strategy", "linear", "--ramp-up-start-rps", "1"});
  CHECK(ramp.exit_code == 2);
  CHECK(contains(ramp.err, "--ramp-up-strategy needs --ramp-up-start-rps and --ramp-up-end-rps"));
  const ChildResult ramp_n = run_runara({"bench", url, "--model", "m", "--ramp-up-strategy", "linear", "--ramp-up-start-rps", "1",
                                         "--ramp-up-end-rps", "5"});
  CHECK(ramp_n.exit_code == 2);
  CHECK(contains(ramp_n.err, "give -n/--num-prompts"));
  const ChildResult burst = run_runara({"bench", url, "--model", "m", "--burstiness", "0.5"});
  CHECK(burst.exit_code == 2);
  CHECK(contains(burst.err, "--burstiness shapes an open loop"));
  const ChildResult pct = run_runara({"bench", url, "--model", "m", "--metric-percentiles", "50,100"});
  CHECK(pct.exit_code == 2);
  CHECK(contains(pct.err, "--metric-percentiles expects percentiles between 0 and 100"));
}

TEST_CASE("runara bench --saturate does not conclude from a point that never had its streams in flight", "[http_load][bench]") {
  runara::FakeLlmConfig slow = quick();
  slow.itl_ms = 4;  // replies long enough that every stream of a point is in flight at once
  runara::FakeLlmServer server(slow);
  const int port = server.start(0);
  REQUIRE(port > 0);
  const std::string out = temp_dir("bench-sat") + "/out";
  // 6 requests a point: 8 streams can never be in flight, so the search must stop there, not
  // call 8 streams "saturated" when throughput stops growing for want of requests.
  const ChildResult r = run_runara({"bench", "http://127.0.0.1:" + std::to_string(port), "--model", "fake-model", "--saturate",
                                    "-n", "6", "--output-len", "16", "--input-len", "16", "--out", out}, 120);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK_FALSE(contains(r.out, "saturated: 8 streams"));
  CHECK(contains(r.out, "not saturated: at 8 streams at most 6 requests were ever in flight"));
  const auto results = nlohmann::json::parse(read_all(out + "/results.json"), nullptr, false);
  REQUIRE(results.is_object());
  CHECK(contains(results["saturation"]["note"].get<std::string>(), "not saturated"));
}

TEST_CASE("runara bench without --model sends the server's first model; --label names the loads; --metadata tops each load's results.json", "[http_load][bench]") {
  runara::FakeLlmConfig config = quick();
  config.model = "served-by-the-server";
  runara::FakeLlmServer server(config);
  const int port = server.start(0);
  REQUIRE(port > 0);
  const std::string out = temp_dir("bench-model") + "/out";
  const ChildResult r = run_runara({"bench", "http://127.0.0.1:" + std::to_string(port), "--label", "tp1-run", "--metadata",
                                    "version=0.9.2", "tp=1", "framework=SGLang", "-n", "4", "--input-len", "16", "--output-len", "4", "--out", out}, 90);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "--model not given; the server serves served-by-the-server"));
  const auto load = nlohmann::json::parse(read_all(out + "/tp1-run/results.json"), nullptr, false);
  REQUIRE(load.is_object());
  CHECK(load.at("model_id") == "served-by-the-server");
  CHECK(load.at("label") == "tp1-run");
  CHECK(load.at("completed") == 4);
  // As vLLM writes --metadata: each pair at the top level of the load's result file.
  CHECK(load.value("version", "") == "0.9.2");
  CHECK(load.value("tp", "") == "1");
  CHECK(load.value("framework", "") == "SGLang");
  const auto record = nlohmann::json::parse(read_all(out + "/results.json"), nullptr, false);
  REQUIRE(record.is_object());
  CHECK(record["bench_metadata"] == nlohmann::json({{"version", "0.9.2"}, {"tp", "1"}, {"framework", "SGLang"}}));
  // Not the run's own metadata, whose framework compare's workload check reads.
  const nlohmann::json own = record.contains("metadata") ? record["metadata"] : nlohmann::json::object();
  INFO("metadata: " << own.dump());
  CHECK_FALSE((own.is_object() && own.contains("tp")));
  CHECK_FALSE((own.is_object() && own.value("framework", nlohmann::json()) == "SGLang"));
  CHECK(record["benchmarks"]["loads"].contains("tp1-run"));
  // A key runara writes itself would overwrite a measured figure: refused before any request.
  const auto served = server.stats().requests_served;
  const ChildResult clash = run_runara({"bench", "http://127.0.0.1:" + std::to_string(port), "--model", "served-by-the-server",
                                        "--metadata", "completed=100", "-n", "4", "--out", out + "-clash"}, 60);
  CHECK(clash.exit_code != 0);
  CHECK(contains(clash.out + clash.err, "metadata key 'completed' is a key runara writes itself"));
  CHECK(server.stats().requests_served == served);
  // No --model and no server: the error says to give one.
  const ChildResult none = run_runara({"bench", "http://127.0.0.1:9", "-n", "1", "--out", out + "-none"}, 60);
  CHECK(none.exit_code != 0);
  CHECK(contains(none.out + none.err, "no --model given"));
  CHECK(contains(none.out + none.err, "give --model"));
}

namespace {

// The output lengths a load's requests got (the fake server generates max_tokens of them).
std::vector<int> output_lens(const std::string& results) {
  const auto r = nlohmann::json::parse(read_all(results), nullptr, false);
  REQUIRE(r.is_object());
  return r.at("output_lens").get<std::vector<int>>();
}

}  // namespace

TEST_CASE("runara bench --dataset-name sharegpt: each reply's length as max_tokens unless --sharegpt-output-len", "[http_load][bench]") {
  runara::FakeLlmConfig cfg = quick();
  cfg.output_tokens = 1000;  // more than any max_tokens: each request gets what it asked for
  runara::FakeLlmServer server(cfg);
  const int port = server.start(0);
  REQUIRE(port > 0);
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  const std::string data = std::string(RUNARA_SOURCE_DIR) + "/tests/fixtures/sharegpt/small.json";
  SECTION("the replies' lengths (as vLLM's ShareGPT dataset), pairs vLLM drops left out") {
    const std::string out = temp_dir("bench-sharegpt") + "/out";
    const ChildResult r = run_runara({"bench", url, "--model", "fake-model", "-n", "16", "--dataset-name", "sharegpt",
                                      "--dataset-path", data, "--out", out}, 90);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const std::vector<int> lens = output_lens(out + "/bench/results.json");
    REQUIRE(lens.size() == 16);
    CHECK(std::count(lens.begin(), lens.end(), 20) + std::count(lens.begin(), lens.end(), 30) == 16);
    CHECK(std::count(lens.begin(), lens.end(), 20) > 0);
    CHECK(std::count(lens.begin(), lens.end(), 30) > 0);
    const auto options = nlohmann::json::parse(read_all(out + "/bench/results.json"))["options"];
    CHECK(options["max_tokens"].is_null());
    CHECK(options["max_tokens_from"] == "sharegpt replies");
    CHECK(options["prompts"]["sharegpt_pairs"] == nlohmann::json{{"kept", 2}, {"dropped", 3}});
  }
  SECTION("--sharegpt-output-len fixes every request's length; the minimum reply length is not checked then") {
    const std::string out = temp_dir("bench-sharegpt-fixed") + "/out";
    const ChildResult r = run_runara({"bench", url, "--model", "fake-model", "-n", "8", "--dataset-name", "sharegpt",
                                      "--dataset-path", data, "--sharegpt-output-len", "7", "--out", out}, 90);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(output_lens(out + "/bench/results.json") == std::vector<int>(8, 7));
    const auto options = nlohmann::json::parse(read_all(out + "/bench/results.json"))["options"];
    CHECK(options["max_tokens"] == 7);
    CHECK(options["prompts"]["sharegpt_pairs"] == nlohmann::json{{"kept", 4}, {"dropped", 1}});
  }
  SECTION("--sharegpt-output-len without ShareGPT, or --output-len with it: usage errors") {
    const ChildResult alone = run_runara({"bench", url, "--model", "m", "--sharegpt-output-len", "7"});
    CHECK(alone.exit_code == 2);
    CHECK(contains(alone.err, "--sharegpt-output-len fixes the output length of ShareGPT prompts: give --dataset-name sharegpt too"));
    const ChildResult both = run_runara({"bench", url, "--model", "m", "--dataset-name", "sharegpt", "--dataset-path", data,
                                         "--output-len", "7"});
    CHECK(both.exit_code == 2);
    CHECK(contains(both.err, "give --sharegpt-output-len N to fix it instead of --output-len/--random-output-len"));
  }
}
