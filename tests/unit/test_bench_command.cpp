// `runara bench URL ...` (cli/bench_command.*, stdlib/runara_bench.lua): the one-liner against
// the simulated LLM server on loopback — a sweep's table and files, --saturate, and its flags
// checked with clear errors; the URL named is the only host granted.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

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

TEST_CASE("runara bench checks its flags", "[cli][bench]") {
  const ChildResult help = run_runara({"bench", "--help"});
  CHECK(help.exit_code == 0);
  CHECK(contains(help.out, "usage: runara bench URL"));
  const ChildResult no_url = run_runara({"bench", "--model", "m"});
  CHECK(no_url.exit_code == 2);
  CHECK(contains(no_url.err, "a URL is required"));
  const ChildResult no_model = run_runara({"bench", "http://127.0.0.1:9"});
  CHECK(no_model.exit_code == 2);
  CHECK(contains(no_model.err, "--model is required"));
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
