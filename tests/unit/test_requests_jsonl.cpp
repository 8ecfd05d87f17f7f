// requests.jsonl lines: the fields and number format ("%.3f" ms) the file has always had, now
// written without printf. Each line is checked against snprintf and parsed back as JSON.
#include <catch2/catch.hpp>

#include <cstdio>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "load/report.hpp"

using runara::ErrorKind;
using runara::RequestRecord;

namespace {

// The line as the printf-based writer produced it.
std::string printf_line(const RequestRecord& r) {
  char line[1024];
  std::snprintf(line, sizeof line,
                "{\"index\":%llu,\"warmup\":%s,\"intended_ms\":%.3f,\"sent_ms\":%.3f,\"queue_ms\":%.3f,"
                "\"ttft_ms\":%.3f,\"e2el_ms\":%.3f,\"tpot_ms\":%.3f,\"input_tokens\":%d,\"output_tokens\":%d,"
                "\"tokens_from\":\"%s\",\"chunks\":%u,\"prompt\":%u,\"status\":%d,\"error\":\"%s\"}\n",
                static_cast<unsigned long long>(r.index), r.warmup ? "true" : "false", r.intended_ns / 1e6,
                r.sent_ns / 1e6, r.queue_ms(), r.ttft_ms(), r.e2el_ms(), r.tpot_ms(), r.input_tokens,
                r.output_tokens, r.tokens_from_usage ? "usage" : "chunks", r.chunks, r.prompt, r.status,
                std::string(runara::error_kind_name(r.error)).c_str());
  return line;
}

}  // namespace

TEST_CASE("requests.jsonl: a line is what \"%.3f\" printf wrote, for every kind of record", "[load_report]") {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<std::int64_t> ns(0, 3'600'000'000'000);
  for (int i = 0; i < 20000; ++i) {
    RequestRecord r;
    r.index = rng();
    r.intended_ns = ns(rng);
    r.sent_ns = r.intended_ns + ns(rng) % 5'000'000;
    r.first_token_ns = i % 7 == 0 ? -1 : r.sent_ns + ns(rng) % 2'000'000'000;
    r.done_ns = i % 11 == 0 ? -1 : r.sent_ns + ns(rng) % 90'000'000'000;
    r.input_tokens = i % 5 == 0 ? -1 : static_cast<std::int32_t>(rng() % 100000);
    r.output_tokens = static_cast<std::int32_t>(rng() % 5000);
    r.chunks = static_cast<std::uint32_t>(rng() % 5000);
    r.prompt = static_cast<std::uint32_t>(rng());
    r.status = static_cast<std::int16_t>(rng() % 600);
    r.error = static_cast<ErrorKind>(rng() % runara::kErrorKinds);
    r.tokens_from_usage = i % 2 == 0;
    r.warmup = i % 3 == 0;
    std::string line;
    runara::append_request_line(line, r);
    INFO("record " << i);
    REQUIRE(line == printf_line(r));
  }
}

TEST_CASE("requests.jsonl: times exactly half a microsecond round as printf rounds their double", "[load_report]") {
  // The integer path hands these to the double's own rounding (load/report.cpp: append_ns_as_ms).
  for (std::int64_t ns : {500LL, 1'500LL, 2'500LL, 1'234'567'500LL, 3'599'999'999'500LL, 999'999'500LL}) {
    RequestRecord r;
    r.intended_ns = ns;
    r.sent_ns = 2 * ns;
    r.first_token_ns = 3 * ns;
    r.done_ns = 4 * ns;
    r.output_tokens = 3;
    std::string line;
    runara::append_request_line(line, r);
    INFO(ns << " ns");
    CHECK(line == printf_line(r));
  }
}

TEST_CASE("requests.jsonl: a line parses back to the record's values", "[load_report]") {
  RequestRecord r;
  r.index = 41;
  r.intended_ns = 1'500'000;      // 1.5 ms
  r.sent_ns = 1'500'250;
  r.first_token_ns = 81'700'499;  // 80.200499 ms after intended: rounds to 80.200
  r.done_ns = 231'700'000;
  r.input_tokens = 1024;
  r.output_tokens = 16;
  r.chunks = 16;
  r.status = 200;
  r.tokens_from_usage = true;
  std::string line;
  runara::append_request_line(line, r);
  REQUIRE(line.back() == '\n');
  const auto j = nlohmann::json::parse(line);
  CHECK(j["index"] == 41);
  CHECK(j["warmup"] == false);
  CHECK(j["intended_ms"] == 1.5);
  CHECK(j["queue_ms"] == 0.0);  // 0.25 us
  CHECK(j["ttft_ms"] == 80.2);
  CHECK(j["e2el_ms"] == 230.2);
  CHECK(j["tpot_ms"] == 10.0);
  CHECK(j["tokens_from"] == "usage");
  CHECK(j["error"] == "none");
}
