// What a load's summary says of the two TTFT/E2EL origins (runtime/load_job/summary.*): vLLM's,
// from the send, always; runara's from-schedule figures beside them, with the queue, the send
// rates and whether the schedule was kept, only when they differ by more than 5 % of the mean.
// The figures themselves, from a real load: tests/end_to_end/test_ttft_origin.cpp.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "load_job/summary.hpp"
#include "test_text.hpp"

using nlohmann::json;
using runara::test::contains;

namespace {

json open_loop(double ttft_ms, double ttft_from_schedule_ms) {
  return {{"label", "r20"}, {"mode", "openai"}, {"load_model", "open"}, {"request_rate", 20}, {"completed", 100},
          {"count_ttft", 100}, {"mean_ttft_ms", ttft_ms}, {"median_ttft_ms", ttft_ms}, {"p99_ttft_ms", ttft_ms},
          {"mean_ttft_from_schedule_ms", ttft_from_schedule_ms}, {"median_ttft_from_schedule_ms", ttft_from_schedule_ms},
          {"p99_ttft_from_schedule_ms", ttft_from_schedule_ms}, {"count_e2el", 100}, {"mean_e2el_ms", 1000},
          {"mean_e2el_from_schedule_ms", 1000 + ttft_from_schedule_ms - ttft_ms},
          {"mean_queue_ms", ttft_from_schedule_ms - ttft_ms}, {"achieved_send_rate", 13.5}, {"scheduled_send_rate", 20.0}};
}

}  // namespace

TEST_CASE("summary: a capped open loop shows vLLM's TTFT and the from-schedule one beside it", "[summary]") {
  json r = open_loop(80, 2041);
  r["max_concurrency"] = 32;
  r["schedule_kept"] = false;
  const std::string text = runara::load_summary_text(r);
  INFO(text);
  CHECK(contains(text, "Mean TTFT (ms):                          80.00\n"));
  CHECK(contains(text, "Mean TTFT from schedule (ms):            2041.00\n"));
  CHECK(contains(text, "P99 TTFT from schedule (ms):             2041.00\n"));
  CHECK(contains(text, "Mean E2EL from schedule (ms):            2961.00\n"));
  CHECK(contains(text, "Mean queue before send (ms):             1961.00\n"));
  CHECK(contains(text, "Send rate achieved / scheduled (req/s):  13.50 / 20.00\n"));
  CHECK(contains(text, "Schedule kept:                           no: requests waited for one of 32 slots (max concurrency)\n"));
}

TEST_CASE("summary: an open loop that kept its schedule prints no from-schedule line", "[summary]") {
  json r = open_loop(80, 82);  // 2.5 %: the timer's lateness, not a queue
  r["schedule_kept"] = true;
  r["mean_e2el_from_schedule_ms"] = 1002;
  const std::string text = runara::load_summary_text(r);
  INFO(text);
  CHECK(contains(text, "Mean TTFT (ms):"));
  CHECK_FALSE(contains(text, "from schedule"));
  CHECK_FALSE(contains(text, "queue before send"));
  CHECK_FALSE(contains(text, "Schedule kept"));
}

TEST_CASE("summary: an uncapped open loop that fell behind says so beside both figures", "[summary]") {
  json r = open_loop(80, 300);
  r["schedule_kept"] = false;
  const std::string text = runara::load_summary_text(r);
  INFO(text);
  CHECK(contains(text, "Mean TTFT from schedule (ms):            300.00\n"));
  CHECK(contains(text, "Schedule kept:                           no: the client fell behind its schedule\n"));
}

TEST_CASE("summary: a sweep row of a capped open loop notes the wait and the from-schedule TTFT", "[summary]") {
  json r = open_loop(80, 2041);
  r["median_ttft_from_schedule_ms"] = 1900;
  r["p99_ttft_from_schedule_ms"] = 4000;
  const std::string row = runara::sweep_row_text(r);
  INFO(row);
  CHECK(contains(row, "  note: requests waited 1961.00 ms on average before the send (sent 13.50 of 20.00 req/s); "
                      "TTFT from schedule p50 1900.00, p99 4000.00 ms\n"));
  CHECK_FALSE(contains(runara::sweep_row_text(open_loop(80, 81)), "note:"));
}
