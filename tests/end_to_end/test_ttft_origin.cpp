// vLLM's names with vLLM's meanings (runtime/load/report.*, request_record.hpp): with
// --max-concurrency, vLLM's client starts a request's clock when it is sent, after the wait for
// a slot, so results.json's mean_ttft_ms is the server's TTFT; runara's from-schedule figures
// (queue included) sit beside it under their own names, and under vLLM's newer
// client_queue_time / e2el_including_client_queue. Against the simulated LLM server on loopback.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "test_paths.hpp"
#include "child_process.hpp"
#include "sim/fake_llm_server.hpp"
#include "test_text.hpp"

using runara::test::ChildResult;
using runara::test::contains;
using runara::test::read_all;
using runara::test::run_runara;
using runara::test::temp_dir;

namespace {

// About 50 + 19 × 5 = 145 ms a request.
runara::FakeLlmConfig slow_enough() {
  runara::FakeLlmConfig c;
  c.ttft_ms = 50;
  c.itl_ms = 5;
  c.output_tokens = 20;
  return c;
}

double number(const nlohmann::json& r, const char* key) { return r.at(key).get<double>(); }

}  // namespace

TEST_CASE("runara bench: a capped open loop gives vLLM's TTFT and the from-schedule one beside it", "[http_load][bench]") {
  runara::FakeLlmServer server(slow_enough());
  const int port = server.start(0);
  REQUIRE(port > 0);
  const std::string out = temp_dir("ttft-origin") + "/out";
  // 2 slots serve about 14 requests/s; 100/s are scheduled, so requests wait for a slot.
  const ChildResult r = run_runara({"bench", "http://127.0.0.1:" + std::to_string(port), "--model", "fake-model",
                                    "--request-rate", "100", "--max-concurrency", "2", "-n", "40", "--input-len", "32",
                                    "--output-len", "20", "--out", out}, 120);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto res = nlohmann::json::parse(read_all(out + "/bench/results.json"), nullptr, false);
  REQUIRE(res.is_object());
  REQUIRE(res.at("completed") == 40);
  // vLLM's TTFT: the server's 50 ms and the way there, no wait for a slot.
  CHECK(number(res, "mean_ttft_ms") >= 50);
  CHECK(number(res, "mean_ttft_ms") < 1000);
  // The from-schedule TTFT carries the queue: the last requests waited about 2 s.
  CHECK(number(res, "mean_queue_ms") > 500);
  CHECK(number(res, "mean_ttft_from_schedule_ms") > number(res, "mean_ttft_ms") + 500);
  CHECK(number(res, "mean_ttft_from_schedule_ms") ==
        Approx(number(res, "mean_ttft_ms") + number(res, "mean_queue_ms")).epsilon(0.01));
  CHECK(number(res, "mean_e2el_from_schedule_ms") ==
        Approx(number(res, "mean_e2el_ms") + number(res, "mean_queue_ms")).epsilon(0.01));
  CHECK(number(res, "p99_ttft_from_schedule_ms") > number(res, "p99_ttft_ms"));
  // vLLM's own names for the same wait (--max-concurrency with a finite rate).
  CHECK(res.at("mean_client_queue_time_ms") == res.at("mean_queue_ms"));
  CHECK(res.at("p99_client_queue_time_ms") == res.at("p99_queue_ms"));
  CHECK(res.at("mean_e2el_including_client_queue_ms") == res.at("mean_e2el_from_schedule_ms"));
  CHECK(res.at("schedule_kept") == false);
  CHECK(number(res, "achieved_send_rate") < 0.5 * number(res, "scheduled_send_rate"));
  // requests.jsonl: each request's ttft_ms from its send, its wait in queue_ms.
  std::ifstream lines(out + "/bench/requests.jsonl");
  std::string line, last;
  while (std::getline(lines, line)) last = line;
  const auto request = nlohmann::json::parse(last, nullptr, false);
  REQUIRE(request.is_object());
  CHECK(number(request, "ttft_ms") < 1000);
  CHECK(number(request, "queue_ms") > 500);
  // The summary shows both, the queue, the rates and that the schedule was not kept.
  CHECK(contains(r.out, "Mean TTFT (ms):"));
  CHECK(contains(r.out, "Mean TTFT from schedule (ms):"));
  CHECK(contains(r.out, "Mean E2EL from schedule (ms):"));
  CHECK(contains(r.out, "Mean queue before send (ms):"));
  CHECK(contains(r.out, "Send rate achieved / scheduled (req/s):"));
  CHECK(contains(r.out, "Schedule kept:                           no: requests waited for one of 2 slots"));
}

TEST_CASE("runara bench: an uncapped open loop prints no from-schedule line", "[http_load][bench]") {
  runara::FakeLlmConfig config = slow_enough();
  config.ttft_ms = 200;  // 5 % of it (10 ms) is far more than a late timer's mean
  runara::FakeLlmServer server(config);
  const int port = server.start(0);
  REQUIRE(port > 0);
  const std::string out = temp_dir("ttft-origin-uncapped") + "/out";
  const ChildResult r = run_runara({"bench", "http://127.0.0.1:" + std::to_string(port), "--model", "fake-model",
                                    "--request-rate", "20", "-n", "20", "--input-len", "32", "--output-len", "4", "--out", out}, 120);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto res = nlohmann::json::parse(read_all(out + "/bench/results.json"), nullptr, false);
  REQUIRE(res.is_object());
  CHECK(res.at("mean_ttft_from_schedule_ms").is_number());   // runara's own names: in every load
  CHECK_FALSE(res.contains("mean_client_queue_time_ms"));  // vLLM's: only with --max-concurrency
  CHECK(contains(r.out, "Mean TTFT (ms):"));
  CHECK_FALSE(contains(r.out, "from schedule"));
  CHECK_FALSE(contains(r.out, "Schedule kept"));
}
