// The remote load agent's line protocol (runtime/load/agent_protocol): every message round trips
// (the spec, request records, the outcome with full histograms), and every decoder refuses what
// a broken or hostile other side could send, saying what was wrong. Also the two pieces the agent
// got so that it links no libcurl: LatencyHistogram::from_state (a histogram rebuilt from a
// state that crossed a network) and request_target_of (the request line's target, checked against
// libcurl's own parser, which computed it before).
#include <catch2/catch.hpp>

#include <curl/curl.h>

#include <atomic>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "http/latency_histogram.hpp"
#include "base/json_limits.hpp"
#include "load/agent_protocol.hpp"
#include "load/arrival_schedule.hpp"
#include "load/request_target.hpp"
#include "load_job/target_url.hpp"

using nlohmann::json;
using runara::ErrorKind;
using runara::LatencyHistogram;
using runara::LoadMode;
using runara::LoadOutcome;
using runara::LoadSpec;
using runara::LoadStats;
using runara::RequestRecord;
using runara::Slo;

namespace {

constexpr double kPercentiles[] = {0, 1, 10, 50, 90, 99, 99.9, 100};

void check_same_histogram(const LatencyHistogram& a, const LatencyHistogram& b) {
  CHECK(a.highest_trackable_value() == b.highest_trackable_value());
  CHECK(a.significant_figures() == b.significant_figures());
  CHECK(a.count() == b.count());
  CHECK(a.saturated() == b.saturated());
  CHECK(a.min() == b.min());
  CHECK(a.max() == b.max());
  CHECK(a.mean() == b.mean());      // the same 128-bit sums: exactly equal, not approximately
  CHECK(a.stddev() == b.stddev());
  for (double q : kPercentiles) {
    INFO("percentile " << q);
    CHECK(a.percentile(q) == b.percentile(q));
  }
  CHECK(a.state().buckets == b.state().buckets);
}

// ---- the spec ----

LoadSpec openai_spec() {
  LoadSpec s;
  s.mode = LoadMode::kOpenAi;
  s.name = "sweep-03 \xc3\xa9";
  s.url = "http://10.0.0.5:8000/v1/completions?x=1";
  s.url_host = "10.0.0.5";
  s.url_port = 8000;
  s.method = "POST";
  s.headers = std::make_shared<const std::vector<std::string>>(
      std::vector<std::string>{"Authorization: Bearer sk-1", "X-Tag: \xe6\xbc\xa2 \"quoted\""});
  s.bodies = std::make_shared<const std::vector<std::string>>(
      std::vector<std::string>{R"({"prompt":"a"})", "{\"prompt\":\"line\\nbreak \xc3\xbc\"}", "third"});
  s.body_tokens = std::make_shared<const std::vector<std::int32_t>>(std::vector<std::int32_t>{5, -1, 70000});
  s.seed = 0xDEADBEEFCAFEBABEull;  // above INT64_MAX: travels unsigned
  s.templated = true;
  s.stream = false;
  s.concurrency = 0;
  s.rate = 12.5;
  s.arrival = runara::Arrival::kGamma;
  s.burstiness = 0.25;
  s.max_concurrency = 64;
  s.requests = 1234;
  s.duration_s = 90.5;
  s.warmup_requests = 7;
  s.warmup_s = 1.5;
  s.threads = 3;
  s.timeout_s = 12.25;
  s.slo = Slo{250, 20.5, 4000};
  s.give_up_s = 45;
  s.max_request_lines = 5000;
  s.request_queue_bytes = 4u << 20;
  s.max_lengths = 777;
  s.record = LoadSpec::Record::kErrors;
  s.record_sample = 0.25;
  s.ramp = runara::Ramp::kExponential;
  s.ramp_start = 2;
  s.ramp_end = 12.5;
  s.percentiles = {25, 99.5};
  return s;
}

LoadSpec http_spec() {
  LoadSpec s;
  s.mode = LoadMode::kHttp;
  s.name = "plain";
  s.url = "http://[::1]:8080/index.html";
  s.url_host = "[::1]";
  s.url_port = 8080;
  s.method = "PUT";
  s.bodies = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"n={{index}} r={{random}}"});
  s.seed = 42;
  s.templated = true;
  s.concurrency = 17;
  s.arrival = runara::Arrival::kConstant;
  s.burstiness = 2;
  s.duration_s = 3.5;
  s.threads = 256;
  s.timeout_s = 0.5;
  s.give_up_s = 0;
  s.max_request_lines = 0;
  s.request_queue_bytes = 65536;
  s.max_lengths = 0;
  s.record = LoadSpec::Record::kNone;
  return s;
}

// Every field the protocol carries. Not carried, so not compared: the target policy and the
// memory budget (the agent sets its own), echo, thresholds, model/tokenizer_id/endpoint (only
// the report uses them, on runara's side), http2, ca_file and buffer_bytes (the agent has only
// the native http:// transport).
void check_same_spec(const LoadSpec& a, const LoadSpec& b) {
  CHECK(a.mode == b.mode);
  CHECK(a.name == b.name);
  CHECK(a.url == b.url);
  CHECK(a.url_host == b.url_host);
  CHECK(a.url_port == b.url_port);
  CHECK(a.method == b.method);
  CHECK(a.header_lines() == b.header_lines());
  REQUIRE(a.bodies);
  REQUIRE(b.bodies);
  CHECK(*a.bodies == *b.bodies);
  REQUIRE(bool(a.body_tokens) == bool(b.body_tokens));
  if (a.body_tokens) CHECK(*a.body_tokens == *b.body_tokens);
  CHECK(a.seed == b.seed);
  CHECK(a.templated == b.templated);
  CHECK(a.stream == b.stream);
  CHECK(a.concurrency == b.concurrency);
  CHECK(a.rate == b.rate);
  CHECK(a.arrival == b.arrival);
  CHECK(a.burstiness == b.burstiness);
  CHECK(a.max_concurrency == b.max_concurrency);
  CHECK(a.requests == b.requests);
  CHECK(a.duration_s == b.duration_s);
  CHECK(a.warmup_requests == b.warmup_requests);
  CHECK(a.warmup_s == b.warmup_s);
  CHECK(a.threads == b.threads);
  CHECK(a.timeout_s == b.timeout_s);
  CHECK(a.slo.ttft_ms == b.slo.ttft_ms);
  CHECK(a.slo.tpot_ms == b.slo.tpot_ms);
  CHECK(a.slo.e2el_ms == b.slo.e2el_ms);
  CHECK(a.give_up_s == b.give_up_s);
  CHECK(a.max_request_lines == b.max_request_lines);
  CHECK(a.request_queue_bytes == b.request_queue_bytes);
  CHECK(a.max_lengths == b.max_lengths);
  CHECK(a.record == b.record);
  CHECK(a.record_sample == b.record_sample);
  CHECK(a.ramp == b.ramp);
  CHECK(a.ramp_start == b.ramp_start);
  CHECK(a.ramp_end == b.ramp_end);
  CHECK(a.percentiles == b.percentiles);
}

// The spec's JSON with `edit` applied: refused, with an error that mentions `expected`.
void check_spec_refused(const std::function<void(json&)>& edit, const std::string& expected) {
  json j = json::parse(runara::encode_agent_spec(openai_spec(), 60, 0));
  edit(j);
  LoadSpec s;
  double deadline = 0;
  std::size_t memory = 0;
  std::string error;
  INFO("spec: " << j.dump().substr(0, 300));
  CHECK_FALSE(runara::decode_agent_spec(j.dump(), s, deadline, memory, error));
  CHECK_THAT(error, Catch::Contains(expected));
}

// ---- records ----

RequestRecord full_record(ErrorKind kind) {
  RequestRecord r;
  r.index = std::numeric_limits<std::uint64_t>::max() - 3;
  r.intended_ns = -5'000'000'000;  // due before the start (an open loop's first arrivals may be)
  r.sent_ns = std::numeric_limits<std::int64_t>::max();
  r.first_token_ns = -1;
  r.done_ns = 7'200'000'000'000;
  r.input_tokens = std::numeric_limits<std::int32_t>::min();
  r.output_tokens = std::numeric_limits<std::int32_t>::max();
  r.chunks = std::numeric_limits<std::uint32_t>::max();
  r.prompt = 123456;
  r.status = 999;
  r.error = kind;
  r.tokens_from_usage = true;
  r.warmup = true;
  return r;
}

void check_same_record(const RequestRecord& a, const RequestRecord& b) {
  CHECK(a.index == b.index);
  CHECK(a.intended_ns == b.intended_ns);
  CHECK(a.sent_ns == b.sent_ns);
  CHECK(a.first_token_ns == b.first_token_ns);
  CHECK(a.done_ns == b.done_ns);
  CHECK(a.input_tokens == b.input_tokens);
  CHECK(a.output_tokens == b.output_tokens);
  CHECK(a.chunks == b.chunks);
  CHECK(a.prompt == b.prompt);
  CHECK(a.status == b.status);
  CHECK(a.error == b.error);
  CHECK(a.tokens_from_usage == b.tokens_from_usage);
  CHECK(a.warmup == b.warmup);
}

// The line append_record_line writes, without "R " and "\n": what parse_record_line is given.
std::string record_fields(const RequestRecord& r) {
  std::string line;
  runara::append_record_line(line, r);
  REQUIRE(line.starts_with("R "));
  REQUIRE(line.ends_with("\n"));
  REQUIRE(line.find('\n') == line.size() - 1);
  return line.substr(2, line.size() - 3);
}

void check_record_refused(const std::string& fields, const std::string& expected) {
  RequestRecord r;
  std::string error;
  INFO("fields: '" << fields << "'");
  CHECK_FALSE(runara::parse_record_line(fields, r, error));
  CHECK_THAT(error, Catch::Contains(expected));
}

// ---- the outcome ----

constexpr Slo kSlo{200, 30, 5000};

LoadOutcome full_outcome() {
  LoadOutcome o;
  o.stats = LoadStats(kSlo);
  o.lengths = runara::RequestLengths(100000);
  std::atomic<std::uint64_t> taken{0};
  const int kinds = runara::kErrorKinds;
  for (int i = 0; i < 4000; ++i) {
    RequestRecord r;
    r.index = static_cast<std::uint64_t>(i);
    r.intended_ns = i * 1'000'000ll;
    r.sent_ns = r.intended_ns + (i % 97) * 1000;
    r.first_token_ns = r.sent_ns + 1'000'000ll * (1 + i % 300);
    // Every 500th takes two hours: above the histograms' highest trackable value (1 h).
    r.done_ns = i % 500 == 7 ? r.intended_ns + 2 * LatencyHistogram::kOneHourNs : r.first_token_ns + 37'000'000ll * (1 + i % 50);
    r.input_tokens = 100 + i % 900;
    r.output_tokens = 1 + i % 200;
    r.chunks = static_cast<std::uint32_t>(r.output_tokens);
    r.prompt = static_cast<std::uint32_t>(i % 13);
    r.status = 200;
    r.tokens_from_usage = i % 3 == 0;
    r.warmup = i < 20;
    std::string message;
    if (i % 40 == 39) {  // every error kind, a few times each
      r.error = static_cast<ErrorKind>(1 + (i / 40) % (kinds - 1));
      r.status = r.error == ErrorKind::kHttpStatus ? static_cast<std::int16_t>(500 + (i / 320) % 4) : 0;
      message = "failure " + std::to_string(i) + " \xe2\x80\x94 \"quoted\"";
    }
    std::vector<std::int64_t> itl;
    for (int k = 0; k < 5; ++k) itl.push_back(1000ll * (1 + (i * 7 + k * 13) % 5000));
    o.stats.add(r, itl, message);
    o.stats.add_tokens_at(r.done_ns, r.output_tokens);
    o.lengths.add(r, taken);
  }
  // Above the highest trackable value, straight into each histogram (saturated() > 0 everywhere).
  for (LatencyHistogram* h : {&o.stats.ttft, &o.stats.tpot, &o.stats.itl, &o.stats.e2el, &o.stats.queue}) {
    h->record(3 * LatencyHistogram::kOneHourNs);
    h->record(LatencyHistogram::kOneHourNs + 1);
  }
  o.stats.client_input_tokens = 123456789;
  o.stats.server_input_tokens = 123456700;
  o.stats.server_input_counted = 3900;
  o.wall_s = 41.25;
  o.abandoned = 3;
  o.max_in_flight = 77;
  o.interrupted = true;
  o.threads = 4;
  o.error = "the target gave up \xc3\xa9";
  o.left_out = 11;
  o.agent_max_rss_kb = 654321;
  return o;
}

void check_same_stats(const LoadStats& a, const LoadStats& b) {
  CHECK(a.completed == b.completed);
  CHECK(a.failed == b.failed);
  CHECK(a.warmup == b.warmup);
  CHECK(a.good == b.good);
  CHECK(a.input_tokens == b.input_tokens);
  CHECK(a.output_tokens == b.output_tokens);
  CHECK(a.client_input_tokens == b.client_input_tokens);
  CHECK(a.server_input_tokens == b.server_input_tokens);
  CHECK(a.server_input_counted == b.server_input_counted);
  CHECK(a.usage_counted == b.usage_counted);
  CHECK(a.chunk_counted == b.chunk_counted);
  const char* names[] = {"ttft", "tpot", "itl", "e2el", "queue"};
  const LatencyHistogram* ha[] = {&a.ttft, &a.tpot, &a.itl, &a.e2el, &a.queue};
  const LatencyHistogram* hb[] = {&b.ttft, &b.tpot, &b.itl, &b.e2el, &b.queue};
  for (int i = 0; i < 5; ++i) {
    INFO("histogram " << names[i]);
    check_same_histogram(*ha[i], *hb[i]);
  }
  CHECK(a.errors == b.errors);
  CHECK(a.statuses == b.statuses);
  CHECK(a.error_samples == b.error_samples);
  CHECK(a.first_sent_ns == b.first_sent_ns);
  CHECK(a.last_sent_ns == b.last_sent_ns);
  CHECK(a.first_due_ns == b.first_due_ns);
  CHECK(a.last_due_ns == b.last_due_ns);
  CHECK(a.last_done_ns == b.last_done_ns);
  CHECK(a.tokens_per_second == b.tokens_per_second);
  CHECK(a.slo.ttft_ms == b.slo.ttft_ms);
  CHECK(a.slo.tpot_ms == b.slo.tpot_ms);
  CHECK(a.slo.e2el_ms == b.slo.e2el_ms);
}

json lengths_json(const runara::RequestLengths& l) {
  json j = json::object();
  l.to_json(j);
  return j;
}

void check_same_outcome(const LoadOutcome& a, const LoadOutcome& b) {
  check_same_stats(a.stats, b.stats);
  CHECK(lengths_json(a.lengths) == lengths_json(b.lengths));
  CHECK(a.wall_s == b.wall_s);
  CHECK(a.abandoned == b.abandoned);
  CHECK(a.max_in_flight == b.max_in_flight);
  CHECK(a.interrupted == b.interrupted);
  CHECK(a.threads == b.threads);
  CHECK(a.error == b.error);
  CHECK(a.left_out == b.left_out);
  CHECK(a.agent_max_rss_kb == b.agent_max_rss_kb);
}

void check_outcome_refused(const json& j, const std::string& expected) {
  LoadOutcome o;
  std::uint64_t dropped = 0;
  std::string error;
  CHECK_FALSE(runara::decode_outcome(j.dump(), kSlo, 100000, o, dropped, error));
  CHECK_THAT(error, Catch::Contains(expected));
}

// ---- histograms ----

LatencyHistogram sample_histogram() {
  LatencyHistogram h;
  for (int i = 0; i < 3000; ++i) h.record(1000ll + static_cast<std::int64_t>(i) * i * 977);
  h.record(0);
  h.record(5 * LatencyHistogram::kOneHourNs);  // saturated
  return h;
}

void check_state_refused(const LatencyHistogram::State& s, const std::string& expected) {
  const auto out = LatencyHistogram::from_state(s);
  CHECK_FALSE(out);
  CHECK_THAT(out.error(), Catch::Contains(expected));
}

// ---- the request target, as libcurl sees it ----

std::string curl_target(const std::string& url) {
  CURLU* u = curl_url();
  REQUIRE(curl_url_set(u, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK);
  char *path = nullptr, *query = nullptr;
  curl_url_get(u, CURLUPART_PATH, &path, 0);
  curl_url_get(u, CURLUPART_QUERY, &query, 0);
  std::string target = path && *path ? path : "/";
  if (query) target += std::string("?") + query;
  curl_free(path);
  curl_free(query);
  curl_url_cleanup(u);
  return target;
}

}  // namespace

// ---------------------------------------------------------------- the spec

TEST_CASE("agent protocol: a load spec round trips, openai and http modes", "[agent_protocol]") {
  for (const LoadSpec& spec : {openai_spec(), http_spec()}) {
    const std::string text = runara::encode_agent_spec(spec, 321.5, std::size_t{3} << 30);
    INFO(text.substr(0, 400));
    CHECK(text.find('\n') == std::string::npos);  // one line
    LoadSpec back;
    double deadline = 0;
    std::size_t memory = 0;
    std::string error;
    REQUIRE(runara::decode_agent_spec(text, back, deadline, memory, error));
    CHECK(error.empty());
    CHECK(deadline == 321.5);
    CHECK(memory == std::size_t{3} << 30);
    check_same_spec(spec, back);
    CHECK_FALSE(back.policy);  // the agent sets its own
    CHECK_FALSE(back.memory);
  }
}

TEST_CASE("agent protocol: a body or header that is not UTF-8 arrives byte for byte", "[agent_protocol]") {
  // http mode sends a script's body as given: a Lua string, any bytes.
  LoadSpec spec = http_spec();
  const std::string binary("\xff\xfe\x00\x01 latin-1 caf\xe9 \xc3", 20);
  spec.bodies = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{binary});
  spec.headers = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"X-Name: caf\xe9"});
  LoadSpec back;
  double deadline = 0;
  std::size_t memory = 0;
  std::string error;
  REQUIRE(runara::decode_agent_spec(runara::encode_agent_spec(spec, 1, 0), back, deadline, memory, error));
  REQUIRE(back.bodies);
  CHECK((*back.bodies)[0] == binary);
  CHECK(back.header_lines() == spec.header_lines());
  // Only such strings travel as hex: UTF-8 ones stay readable.
  const json j = json::parse(runara::encode_agent_spec(spec, 1, 0));
  CHECK(j["bodies"][0].is_object());
  CHECK(j["headers"][0].is_object());
  CHECK(j["url"] == spec.url);
  CHECK(json::parse(runara::encode_agent_spec(openai_spec(), 1, 0))["bodies"][1] == (*openai_spec().bodies)[1]);
}

TEST_CASE("agent protocol: a load spec that is not valid is refused, saying why", "[agent_protocol]") {
  SECTION("not JSON, not an object") {
    LoadSpec s;
    double d = 0;
    std::size_t m = 0;
    std::string error;
    CHECK_FALSE(runara::decode_agent_spec("{\"protocol\": 1,", s, d, m, error));
    CHECK_THAT(error, Catch::Contains("the load spec is not valid"));
    error.clear();
    CHECK_FALSE(runara::decode_agent_spec("[1, 2]", s, d, m, error));
    CHECK_FALSE(error.empty());
    error.clear();
    CHECK_FALSE(runara::decode_agent_spec("", s, d, m, error));
    CHECK_FALSE(error.empty());
  }
  SECTION("another protocol") {
    check_spec_refused([](json& j) { j["protocol"] = 99; }, "protocol 99");
  }
  SECTION("a missing field") {
    check_spec_refused([](json& j) { j.erase("threads"); }, "threads");
    check_spec_refused([](json& j) { j.erase("bodies"); }, "bodies");
    check_spec_refused([](json& j) { j.erase("protocol"); }, "protocol");
  }
  SECTION("a wrong type") {
    check_spec_refused([](json& j) { j["threads"] = "4"; }, "threads");
    check_spec_refused([](json& j) { j["rate"] = true; }, "rate");
    check_spec_refused([](json& j) { j["stream"] = 1; }, "boolean");
    check_spec_refused([](json& j) { j["headers"] = "X-A: b"; }, "array");
    check_spec_refused([](json& j) { j["bodies"] = json::array({1, 2}); }, "string");
    check_spec_refused([](json& j) { j["slo"] = json::array({1, 2}); }, "not valid");
    check_spec_refused([](json& j) { j["mode"] = "grpc"; }, "mode");
  }
  SECTION("a number that does not fit its field") {
    check_spec_refused([](json& j) { j["threads"] = 4294967297ull; }, "threads");  // 2^32 + 1: 1 if cut to 32 bits
    check_spec_refused([](json& j) { j["concurrency"] = -4294967295ll; }, "concurrency");
    check_spec_refused([](json& j) { j["memory_bytes"] = -1; }, "memory_bytes");
    check_spec_refused([](json& j) { j["threads"] = 2.5; }, "threads");
  }
  SECTION("a ramp or percentiles out of range") {
    check_spec_refused([](json& j) { j["ramp"] = 7; }, "ramp out of range");
    check_spec_refused([](json& j) { j["ramp_start"] = 0; }, "a ramp needs");
    check_spec_refused([](json& j) { j["percentiles"] = json::array({50, 100}); }, "(0, 100)");
    check_spec_refused([](json& j) { j["percentiles"] = json(std::vector<int>(17, 50)); }, "at most 16");
  }
  SECTION("nested 100 levels deep") {
    check_spec_refused(
        [](json& j) {
          json deep = 1;
          for (int i = 0; i < 100; ++i) deep = json::array({deep});
          j["extra"] = deep;
        },
        "nested deeper than");
  }
  SECTION("numbers out of range") {
    check_spec_refused([](json& j) { j["threads"] = 0; }, "out of range");
    check_spec_refused([](json& j) { j["threads"] = 1000; }, "out of range");
    check_spec_refused([](json& j) { j["concurrency"] = 0, j["rate"] = 0; }, "out of range");
    check_spec_refused([](json& j) { j["concurrency"] = 5, j["rate"] = 2; }, "out of range");
    check_spec_refused([](json& j) { j["url_port"] = 70000; }, "out of range");
    check_spec_refused([](json& j) { j["record_sample"] = 0; }, "out of range");
    check_spec_refused([](json& j) { j["requests"] = 0, j["duration_s"] = 0; }, "out of range");
    check_spec_refused([](json& j) { j["arrival"] = 3; }, "arrival");
    check_spec_refused([](json& j) { j["record"] = -1; }, "record");
  }
  SECTION("bodies and their token counts") {
    check_spec_refused([](json& j) { j["body_tokens"] = json::array({1, 2}); }, "one count per body");
    check_spec_refused([](json& j) { j["bodies"] = json::array(), j.erase("body_tokens"); }, "bodies must not be empty");
    check_spec_refused([](json& j) { j["bodies"][0] = {{"hex", "abc"}}; }, "bodies must be a string");
    check_spec_refused([](json& j) { j["bodies"][0] = {{"hex", "zz"}}; }, "bodies must be a string");
    check_spec_refused([](json& j) { j["bodies"][0] = {{"hex", "+f"}}; }, "bodies must be a string");
    check_spec_refused([](json& j) { j["bodies"][0] = {{"hex", "00"}, {"more", 1}}; }, "bodies must be a string");
    check_spec_refused([](json& j) { j["url"] = {{"hex", 5}}; }, "url must be a string");
  }
}

// ---------------------------------------------------------------- hello

TEST_CASE("agent protocol: the hello line names the protocol and the agent's version", "[agent_protocol]") {
  int protocol = -1;
  std::string version;
  REQUIRE(runara::parse_hello(runara::hello_line("0.7.1 (abc123)"), protocol, version));
  CHECK(protocol == runara::kAgentProtocol);
  CHECK(version == "0.7.1 (abc123)");

  // Another protocol is still a hello: parsed, so that runara can say which the agent speaks.
  REQUIRE(runara::parse_hello("runara-agent 2 9.9", protocol, version));
  CHECK(protocol == 2);
  CHECK(version == "9.9");
  REQUIRE(runara::parse_hello("runara-agent 17", protocol, version));
  CHECK(protocol == 17);
  CHECK(version.empty());

  for (const char* line : {"", "runara-agent", "runara-agent ", "runara-agent x 1", "runara-agent 1x 0.1",
                           "runara-agentX 1 0.1", "Runara-agent 1 0.1", " runara-agent 1 0.1", "hello 1",
                           "runara-agent 99999999999 0.1", "runara-agent 1.5 0.1", "bash: runara-agent: not found"}) {
    INFO("line: '" << line << "'");
    CHECK_FALSE(runara::parse_hello(line, protocol, version));
  }
}

// ---------------------------------------------------------------- request records

TEST_CASE("agent protocol: request records round trip, every field and every error kind", "[agent_protocol]") {
  for (int kind = 0; kind < runara::kErrorKinds; ++kind) {
    for (int flags = 0; flags < 4; ++flags) {
      RequestRecord r = full_record(static_cast<ErrorKind>(kind));
      r.tokens_from_usage = flags & 1;
      r.warmup = flags & 2;
      if (flags == 3) {  // and the other extremes
        r.index = 0;
        r.first_token_ns = 123;
        r.done_ns = -1;
        r.input_tokens = -1;
        r.output_tokens = 0;
        r.status = 0;
        r.intended_ns = std::numeric_limits<std::int64_t>::min();
      }
      const std::string fields = record_fields(r);
      INFO("line: R " << fields);
      RequestRecord back;
      back.index = 99;  // overwritten
      std::string error;
      REQUIRE(runara::parse_record_line(fields, back, error));
      check_same_record(r, back);
    }
  }
  SECTION("a default record") {
    RequestRecord r, back;
    std::string error;
    REQUIRE(runara::parse_record_line(record_fields(r), back, error));
    check_same_record(r, back);
  }
}

TEST_CASE("agent protocol: a broken request record is refused, saying why", "[agent_protocol]") {
  // 12 fields: i intended sent first done in out chunks prompt status error flags
  const std::string good = "5 100 200 300 400 10 20 3 1 200 0 1";
  {
    RequestRecord r;
    std::string error;
    REQUIRE(runara::parse_record_line(good, r, error));
  }
  check_record_refused("", "12 integers");
  check_record_refused("5 100 200 300 400 10 20 3 1 200 0", "12 integers");      // 11
  check_record_refused(good + " 7", "12 integers");                              // 13
  check_record_refused("5 100 200 300 400 10 20 3 1 200 0 x", "12 integers");
  check_record_refused("5 100 200 3.5 400 10 20 3 1 200 0 1", "12 integers");
  check_record_refused("5 100 200 0x10 400 10 20 3 1 200 0 1", "12 integers");
  check_record_refused("5 100 200 +300 400 10 20 3 1 200 0 1", "12 integers");
  check_record_refused("-5 100 200 300 400 10 20 3 1 200 0 1", "12 integers");   // the index is unsigned
  check_record_refused("5 100 200 300 400 10 20 -3 1 200 0 1", "12 integers");   // so are chunks
  check_record_refused("5 100 200 300 400 10 20 3 1 200 0 1\n", "12 integers");
  check_record_refused("5,100,200,300,400,10,20,3,1,200,0,1", "12 integers");
  check_record_refused("5 100 200 300 400 2147483648 20 3 1 200 0 1", "12 integers");  // int32 + 1
  check_record_refused("5 100 200 300 400 10 20 4294967296 1 200 0 1", "12 integers");  // uint32 + 1
  check_record_refused("18446744073709551616 100 200 300 400 10 20 3 1 200 0 1", "12 integers");
  check_record_refused("5 9223372036854775808 200 300 400 10 20 3 1 200 0 1", "12 integers");
  check_record_refused("5 100 200 300 400 10 20 3 1 1000 0 1", "out of range");  // status
  check_record_refused("5 100 200 300 400 10 20 3 1 -1 0 1", "out of range");
  check_record_refused("5 100 200 300 400 10 20 3 1 200 9 1", "out of range");   // kind
  check_record_refused("5 100 200 300 400 10 20 3 1 200 -1 1", "out of range");
  check_record_refused("5 100 200 300 400 10 20 3 1 200 0 4", "out of range");   // flags
  check_record_refused("5 100 200 300 400 10 20 3 1 200 0 -1", "out of range");
  check_record_refused("5 100 200 -2 400 10 20 3 1 200 0 1", "out of range");    // first token
  check_record_refused("5 100 200 300 -2 10 20 3 1 200 0 1", "out of range");    // done
  check_record_refused("5 100 200 300 400 10 -1 3 1 200 0 1", "out of range");   // output tokens
}

// ---------------------------------------------------------------- the outcome

TEST_CASE("agent protocol: an outcome round trips: statistics, full histograms, lengths, counters", "[agent_protocol]") {
  const LoadOutcome o = full_outcome();
  // Every field holds something (else the round trip would prove little).
  REQUIRE(o.stats.completed > 0);
  REQUIRE(o.stats.failed > 0);
  REQUIRE(o.stats.warmup > 0);
  REQUIRE(o.stats.good > 0);
  REQUIRE(o.stats.usage_counted > 0);
  REQUIRE(o.stats.chunk_counted > 0);
  for (const LatencyHistogram* h : {&o.stats.ttft, &o.stats.tpot, &o.stats.itl, &o.stats.e2el, &o.stats.queue}) {
    REQUIRE(h->count() >= 2000);
    REQUIRE(h->saturated() > 0);
    REQUIRE(h->state().buckets.size() > 2);
  }
  for (int k = 1; k < runara::kErrorKinds; ++k) REQUIRE(o.stats.errors[static_cast<std::size_t>(k)] > 0);
  REQUIRE(o.stats.statuses.size() >= 4);
  REQUIRE(o.stats.error_samples.size() == runara::kErrorKinds - 1);
  REQUIRE(o.stats.tokens_per_second.size() > 1);
  REQUIRE(o.lengths.complete());
  REQUIRE(o.lengths.size() > 3000);

  const std::string text = runara::encode_outcome(o, 42);
  CHECK(text.find('\n') == std::string::npos);
  LoadOutcome back;
  std::uint64_t dropped = 0;
  std::string error;
  REQUIRE(runara::decode_outcome(text, kSlo, 100000, back, dropped, error));
  CHECK(dropped == 42);
  check_same_outcome(o, back);
  // And again: the decoded outcome encodes to the same line.
  CHECK(runara::encode_outcome(back, 42) == text);

  SECTION("more lengths than runara keeps: null arrays, the rest intact") {
    LoadOutcome cut;
    REQUIRE(runara::decode_outcome(text, kSlo, 100, cut, dropped, error));
    CHECK_FALSE(cut.lengths.complete());
    CHECK(lengths_json(cut.lengths)["input_lens"].is_null());
    check_same_stats(o.stats, cut.stats);
  }
  SECTION("null lengths stay null") {
    LoadOutcome overflowed = full_outcome();
    overflowed.lengths.overflow();
    LoadOutcome again;
    REQUIRE(runara::decode_outcome(runara::encode_outcome(overflowed, 0), kSlo, 100000, again, dropped, error));
    CHECK_FALSE(again.lengths.complete());
    CHECK(lengths_json(again.lengths) == lengths_json(overflowed.lengths));
  }
}

TEST_CASE("agent protocol: an outcome with no requests round trips", "[agent_protocol]") {
  LoadOutcome o;
  o.stats = LoadStats(kSlo);
  o.error = "no request could connect";
  const std::string text = runara::encode_outcome(o, 0);
  LoadOutcome back;
  back.wall_s = 9;
  std::uint64_t dropped = 7;
  std::string error;
  REQUIRE(runara::decode_outcome(text, kSlo, 100000, back, dropped, error));
  CHECK(dropped == 0);
  check_same_outcome(o, back);
  CHECK(back.stats.ttft.count() == 0);
  CHECK(back.stats.ttft.percentile(50) == 0);
  CHECK(lengths_json(back.lengths) == json({{"input_lens", json::array()}, {"output_lens", json::array()}}));
}

TEST_CASE("agent protocol: a broken outcome is refused, saying why", "[agent_protocol]") {
  const json good = json::parse(runara::encode_outcome(full_outcome(), 3));
  {
    LoadOutcome o;
    std::uint64_t dropped = 0;
    std::string error;
    REQUIRE(runara::decode_outcome(good.dump(), kSlo, 100000, o, dropped, error));
  }
  auto edited = [&](const std::function<void(json&)>& edit) {
    json j = good;
    edit(j);
    return j;
  };
  SECTION("not JSON, too deep, a field missing") {
    LoadOutcome o;
    std::uint64_t dropped = 0;
    std::string error;
    CHECK_FALSE(runara::decode_outcome("S {}", kSlo, 100000, o, dropped, error));
    CHECK_THAT(error, Catch::Contains("the agent's results are not valid"));
    std::string deep(100, '[');
    deep += std::string(100, ']');
    error.clear();
    CHECK_FALSE(runara::decode_outcome(deep, kSlo, 100000, o, dropped, error));
    CHECK_THAT(error, Catch::Contains("nested deeper than"));
    check_outcome_refused(edited([](json& j) { j.erase("records_dropped"); }), "records_dropped");
    check_outcome_refused(edited([](json& j) { j["stats"].erase("e2el"); }), "e2el");
    check_outcome_refused(edited([](json& j) { j["stats"]["ttft"].erase("buckets"); }), "buckets");
  }
  SECTION("histogram buckets") {
    check_outcome_refused(edited([](json& j) { j["stats"]["ttft"]["buckets"][0] = 40000; }), "ttft");
    // Another shape is refused: it would be an allocation of the agent's choosing (50 MB at 5 figures).
    check_outcome_refused(edited([](json& j) { j["stats"]["itl"]["figures"] = 5; }), "itl: histogram shape differs");
    check_outcome_refused(edited([](json& j) { j["stats"]["itl"]["highest"] = 1000000; }), "histogram shape differs");
    check_outcome_refused(edited([](json& j) { j["stats"]["ttft"]["buckets"][0] = 40000; }), "out of range");
    check_outcome_refused(edited([](json& j) { j["stats"]["tpot"]["buckets"].push_back(5); }), "tpot: buckets must be");
    check_outcome_refused(edited([](json& j) {
                            auto& b = j["stats"]["itl"]["buckets"];
                            std::swap(b[0], b[2]);
                            std::swap(b[1], b[3]);
                          }),
                          "out of order");
    check_outcome_refused(edited([](json& j) {
                            auto& b = j["stats"]["itl"]["buckets"];  // a slot twice
                            b[2] = b[0];
                          }),
                          "itl");
    check_outcome_refused(edited([](json& j) { j["stats"]["queue"]["buckets"][1] = 0; }), "queue");
  }
  SECTION("counts and extremes") {
    check_outcome_refused(edited([](json& j) { j["stats"]["e2el"]["count"] = j["stats"]["e2el"]["count"].get<std::uint64_t>() + 1; }),
                          "do not add up");
    check_outcome_refused(edited([](json& j) { j["stats"]["e2el"]["count"] = j["stats"]["e2el"]["count"].get<std::uint64_t>() - 1; }),
                          "e2el");
    check_outcome_refused(edited([](json& j) { j["stats"]["e2el"]["saturated"] = 1u << 30; }), "do not add up");
    check_outcome_refused(edited([](json& j) { j["stats"]["ttft"]["min"] = j["stats"]["ttft"]["max"].get<std::int64_t>() + 1; }),
                          "do not add up");
    check_outcome_refused(edited([](json& j) { j["stats"]["ttft"]["min"] = -1; }), "do not add up");
    // min and max within range but not where the first and last buckets are
    check_outcome_refused(edited([](json& j) { j["stats"]["ttft"]["min"] = j["stats"]["ttft"]["min"].get<std::int64_t>() * 4; }),
                          "min/max do not match");
    check_outcome_refused(edited([](json& j) { j["stats"]["itl"]["max"] = 20'000; }), "min/max do not match");
    check_outcome_refused(edited([](json& j) { j["stats"]["itl"]["figures"] = 9; }), "shape");
    check_outcome_refused(edited([](json& j) { j["stats"]["itl"]["highest"] = 1; }), "shape");
  }
  SECTION("128-bit sums") {
    check_outcome_refused(edited([](json& j) { j["stats"]["ttft"]["sum"] = "123456"; }), "[high, low]");
    check_outcome_refused(edited([](json& j) { j["stats"]["ttft"]["sum_sq"] = json::array({1, 2, 3}); }), "[high, low]");
    check_outcome_refused(edited([](json& j) { j["stats"]["ttft"]["sum"] = json::array({"0", 5}); }), "128-bit");
    check_outcome_refused(edited([](json& j) { j["stats"]["ttft"]["sum"] = json::array({-1, 5}); }), "128-bit");
  }
  SECTION("statuses, error samples, lengths") {
    check_outcome_refused(edited([](json& j) { j["stats"]["error_samples"]["gremlins"] = json::array({"x"}); }),
                          "unknown kind 'gremlins'");
    check_outcome_refused(edited([](json& j) { j["stats"]["error_samples"]["timeout"] = "x"; }), "array");
    check_outcome_refused(edited([](json& j) { j["stats"]["statuses"]["abc"] = 1; }), "'abc' is not an HTTP status");
    check_outcome_refused(edited([](json& j) { j["stats"]["statuses"]["1000"] = 1; }), "'1000' is not an HTTP status");
    check_outcome_refused(edited([](json& j) { j["stats"]["statuses"]["-1"] = 1; }), "'-1' is not an HTTP status");
    check_outcome_refused(edited([](json& j) { j["stats"]["statuses"][""] = 1; }), "is not an HTTP status");
    check_outcome_refused(edited([](json& j) { j["stats"]["statuses"]["200 "] = 1; }), "is not an HTTP status");
    check_outcome_refused(edited([](json& j) { j["input_lens"].push_back(5); }), "differ in length");
    check_outcome_refused(edited([](json& j) { j["output_lens"] = json::array(); }), "differ in length");
    check_outcome_refused(edited([](json& j) { j["output_lens"][0] = "5"; }), "output_lens");
    check_outcome_refused(edited([](json& j) { j["input_lens"][0] = 2147483648ll; }), "input_lens");
    check_outcome_refused(edited([](json& j) { j["stats"]["errors"] = json::array({1, 2}); }), "errors");
    check_outcome_refused(edited([](json& j) { j["stats"]["errors"].push_back(1); }), "errors");  // 10 kinds
  }
  SECTION("numbers that do not fit their field") {
    check_outcome_refused(edited([](json& j) { j["threads"] = 4294967297ull; }), "threads");
    check_outcome_refused(edited([](json& j) { j["stats"]["completed"] = -1; }), "completed");
    check_outcome_refused(edited([](json& j) { j["stats"]["ttft"]["count"] = 1e300; }), "count");
    check_outcome_refused(edited([](json& j) { j["stats"]["itl"]["buckets"][0] = 4294967296ull; }), "itl");
    check_outcome_refused(edited([](json& j) { j["stats"]["tokens_per_second"][0] = -1; }), "tokens_per_second");
    check_outcome_refused(edited([](json& j) { j["stats"]["statuses"]["200"] = 0.5; }), "statuses");
    check_outcome_refused(edited([](json& j) { j["wall_s"] = "1"; }), "number");
  }
}

// ---------------------------------------------------------------- plausibility

namespace {

// A load of 10 requests after 2 warm-up ones, 4 at a time, as runara sends it.
LoadSpec ten_requests() {
  LoadSpec s = http_spec();
  s.concurrency = 4;
  s.requests = 10;
  s.duration_s = 0;
  s.warmup_requests = 2;
  s.max_request_lines = 1000;
  s.max_lengths = 100000;
  return s;
}

// Request i of a load as the engine records it: due i * `gap_ns` after the start (1 ms by
// default), answered 6 ms later.
RequestRecord engine_record(const LoadSpec& spec, std::uint64_t i, ErrorKind error = ErrorKind::kNone,
                            std::int64_t gap_ns = 1'000'000) {
  RequestRecord r;
  r.index = i;
  r.intended_ns = static_cast<std::int64_t>(i) * gap_ns;
  r.sent_ns = r.intended_ns + 1000;
  r.first_token_ns = r.sent_ns + 1'000'000;
  r.done_ns = r.first_token_ns + 5'000'000;
  r.input_tokens = 16;
  r.output_tokens = error == ErrorKind::kNone ? 8 : 0;
  r.chunks = static_cast<std::uint32_t>(r.output_tokens);
  r.status = error == ErrorKind::kNone ? 200 : 0;
  r.error = error;
  r.warmup = i < spec.warmup_requests || r.intended_ns < static_cast<std::int64_t>(spec.warmup_s * 1e9);
  return r;
}

// What an honest agent reports after `n` requests of `spec` (warm-up included), the last failed.
LoadOutcome honest_outcome(const LoadSpec& spec, std::uint64_t n) {
  LoadOutcome o;
  o.stats = LoadStats(spec.slo);
  o.lengths = runara::RequestLengths(spec.max_lengths);
  std::atomic<std::uint64_t> taken{0};
  for (std::uint64_t i = 0; i < n; ++i) {
    const RequestRecord r = engine_record(spec, i, i + 1 == n ? ErrorKind::kTimeout : ErrorKind::kNone);
    o.stats.add(r, {1'000'000, 1'000'000}, r.ok() ? "" : "timed out");
    if (!r.warmup) o.stats.add_tokens_at(r.done_ns, r.output_tokens);
    o.lengths.add(r, taken);
  }
  o.wall_s = static_cast<double>(n) / 1000 + 0.006;
  o.max_in_flight = std::min<std::int64_t>(static_cast<std::int64_t>(n), spec.concurrency ? spec.concurrency : 1);
  o.threads = 1;
  o.agent_max_rss_kb = 4000;
  return o;
}

// The outcome `j` (JSON, as sent) decoded and checked against `spec`: "" when accepted, else why not.
std::string judged(const LoadSpec& spec, const json& j, runara::RecordTally seen = {}, double elapsed_s = 10) {
  LoadOutcome o;
  std::uint64_t dropped = 0;
  std::string error;
  if (!runara::decode_outcome(j.dump(), spec.slo, spec.max_lengths, o, dropped, error)) return error;
  if (!runara::check_outcome(spec, o, dropped, seen, elapsed_s, error)) return error.empty() ? "(refused, saying nothing)" : error;
  return "";
}

json outcome_json(const LoadOutcome& o) { return json::parse(runara::encode_outcome(o, 0)); }

}  // namespace

TEST_CASE("agent protocol: records are held to the load asked for", "[agent_protocol][agent_plausibility]") {
  const LoadSpec spec = ten_requests();
  runara::RecordTally tally;
  std::string error;
  for (std::uint64_t i = 0; i < 12; ++i) {
    INFO("request " << i);
    REQUIRE(runara::admit_record(spec, engine_record(spec, i), 1, tally, error));
  }
  CHECK(tally.warmup == 2);
  CHECK(tally.measured == 10);
  const auto refused = [&spec](RequestRecord r, runara::RecordTally t, const std::string& expected, double elapsed_s = 1) {
    std::string why;
    CHECK_FALSE(runara::admit_record(spec, r, elapsed_s, t, why));
    CHECK_THAT(why, Catch::Contains(expected));
  };
  SECTION("more than the requests asked for") {
    refused(engine_record(spec, 12), tally, "request 12 is past the load's 12 requests");
    refused(engine_record(spec, 5), tally, "request 5 is one record more than the load's 10 requests");  // a repeat
    runara::RecordTally warm;
    warm.warmup = 2;
    refused(engine_record(spec, 1), warm, "one warm-up record more than the load's 2 warm-up requests");
  }
  SECTION("times before the start or after what runara saw, a warm-up flag the engine would not set") {
    RequestRecord r = engine_record(spec, 3);
    r.intended_ns = -1;
    refused(r, {}, "was due or sent before the load started");
    r = engine_record(spec, 3);
    r.sent_ns = -7;
    refused(r, {}, "before the load started");
    r = engine_record(spec, 3);
    r.done_ns = 3'000'000'000;  // 3 s into a load runara started 1 s ago (1% and 1 s allowed)
    refused(r, {}, "has a time later than the load has run (1 s)");
    CHECK(runara::admit_record(spec, r, 2, tally = {}, error));
    r = engine_record(spec, 3);
    r.warmup = true;
    refused(r, {}, "is marked warm-up, but the load's warm-up was over");
    r = engine_record(spec, 1);
    r.warmup = false;
    refused(r, {}, "is not marked warm-up, but was due within the load's warm-up");
  }
  SECTION("a duration: no count, but nothing due after its end") {
    LoadSpec timed = spec;
    timed.requests = 0;
    timed.warmup_requests = 0;
    timed.duration_s = 2;
    runara::RecordTally many;
    for (std::uint64_t i = 0; i < 100000; ++i) {
      const RequestRecord r = engine_record(timed, i, ErrorKind::kNone, 20'000);  // a fast closed loop: 50,000 a second
      if (!runara::admit_record(timed, r, 3, many, error)) FAIL(error);
    }
    CHECK(many.measured == 100000);
    RequestRecord late = engine_record(timed, 100000, ErrorKind::kNone, 20'000);
    late.intended_ns = 2'000'000'001;
    std::string why;
    CHECK_FALSE(runara::admit_record(timed, late, 3, many, why));
    CHECK_THAT(why, Catch::Contains("was due after the load's duration ended"));
  }
}

TEST_CASE("agent protocol: an honest outcome passes the plausibility checks", "[agent_protocol][agent_plausibility]") {
  const LoadSpec spec = ten_requests();
  runara::RecordTally seen{10, 2};
  CHECK(judged(spec, outcome_json(honest_outcome(spec, 12)), seen).empty());
  CHECK(judged(spec, outcome_json(honest_outcome(spec, 5)), {3, 2}).empty());  // stopped early
  LoadOutcome none;
  none.stats = LoadStats(spec.slo);
  none.threads = 1;
  CHECK(judged(spec, outcome_json(none)).empty());
  // A closed loop bound by duration has no count to be held to.
  LoadSpec timed = spec;
  timed.requests = 0;
  timed.warmup_requests = 0;
  timed.duration_s = 60;
  CHECK(judged(timed, outcome_json(honest_outcome(timed, 50000)), {}, 61).empty());
}

TEST_CASE("agent protocol: an outcome impossible for the load is refused, saying why", "[agent_protocol][agent_plausibility]") {
  const LoadSpec spec = ten_requests();
  const json good = outcome_json(honest_outcome(spec, 12));
  REQUIRE(judged(spec, good).empty());
  const auto refused = [&](const std::function<void(json&)>& edit, const std::string& expected, runara::RecordTally seen = {},
                           double elapsed_s = 10) {
    json j = good;
    edit(j);
    const std::string why = judged(spec, j, seen, elapsed_s);
    INFO("outcome: " << j.dump().substr(0, 300));
    CHECK_THAT(why, Catch::StartsWith("the agent's results are impossible: ") || Catch::Contains("the agent's results are not valid"));
    CHECK_THAT(why, Catch::Contains(expected));
  };
  SECTION("more requests than asked for") {
    CHECK_THAT(judged(spec, outcome_json(honest_outcome(spec, 13))),
               Catch::Equals("the agent's results are impossible: 11 requests finished (10 completed, 1 failed), but the load asked for 10"));
    refused([](json& j) { j["stats"]["completed"] = 1000000; }, "1000001 requests finished");
    refused([](json& j) { j["stats"]["warmup"] = 3; }, "3 warm-up requests finished, but the load asked for 2");
    refused([](json& j) { j["abandoned"] = 1; }, "13 requests issued (finished, warm-up and abandoned), more than the load's 12");
    // uint64 sums that would wrap
    refused([](json& j) { j["stats"]["failed"] = std::numeric_limits<std::uint64_t>::max(); }, "but the load asked for 10");
  }
  SECTION("fewer than the records it sent") {
    refused([](json&) {}, "fewer than the 11 and 2 records it sent", {11, 2});
  }
  SECTION("negative throughput: token counts below zero") {
    refused([](json& j) { j["stats"]["output_tokens"] = -5; }, "total_output_tokens is -5: a count cannot be negative");
    refused([](json& j) { j["stats"]["input_tokens"] = -1; }, "total_input_tokens is -1");
    refused([](json& j) { j["stats"]["client_input_tokens"] = std::numeric_limits<std::int64_t>::min(); }, "client_input_tokens");
    refused([](json& j) { j["input_lens"][0] = -3; }, "token counts >= 0");
  }
  SECTION("times: wall time not finite, negative or longer than the load ran; window out of order or past its end") {
    refused([](json& j) { j["wall_s"] = -1; }, "wall_s is -1, not a finite number of seconds >= 0");
    refused([](json& j) { j["wall_s"] = 1e300; }, "wall_s is 1e+300 s, but the load has run for 10 s");
    refused([](json& j) { j["wall_s"] = 100; }, "but the load has run for 10 s");
    // NaN and infinity cannot be written in JSON; an overflowing literal must not become one.
    LoadOutcome o;
    std::uint64_t dropped = 0;
    std::string error;
    std::string text = good.dump();
    const std::string wall = "\"wall_s\":" + good["wall_s"].dump();
    REQUIRE(text.find(wall) != std::string::npos);
    text.replace(text.find(wall), wall.size(), "\"wall_s\":1e999");
    const bool decoded = runara::decode_outcome(text, spec.slo, spec.max_lengths, o, dropped, error);
    CHECK_FALSE((decoded && runara::check_outcome(spec, o, dropped, {}, 10, error)));
    CHECK_FALSE(error.empty());
    o = honest_outcome(spec, 12);
    for (double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
      o.wall_s = bad;
      error.clear();
      CHECK_FALSE(runara::check_outcome(spec, o, 0, {}, 10, error));
      CHECK_THAT(error, Catch::Contains("not a finite number of seconds >= 0"));
    }
    refused([](json& j) { j["stats"]["first_sent_ns"] = -5; }, "first_sent_ns is -5: before the load's start");
    refused([](json& j) { j["stats"]["last_done_ns"] = 20'000'000'000ll; }, "last_done_ns is 20000000000");
    refused([](json& j) { j["stats"]["first_due_ns"] = j["stats"]["last_due_ns"].get<std::int64_t>() + 1; }, "out of order");
    refused([](json& j) { j["stats"]["tokens_per_second"] = json(std::vector<int>(30, 1)); }, "tokens_per_second covers 30 s");
  }
  SECTION("counters that do not add up") {
    refused([](json& j) { j["stats"]["good"] = 10; }, "do not fit the 9 completed");
    refused([](json& j) { j["stats"]["usage_counted"] = 3; }, "do not fit the 9 completed");
    refused([](json& j) { j["stats"]["errors"][2] = 2; }, "the errors by kind add up to 2, not the 1 failed");
    refused([](json& j) { j["stats"]["statuses"]["200"] = 50; }, "the HTTP statuses count");
    refused([](json& j) { j["left_out"] = 13; }, "more requests left out of requests.jsonl than finished");
  }
  SECTION("the load's shape") {
    refused([](json& j) { j["max_in_flight"] = 5; }, "max_in_flight is 5, outside 0 ... 4");
    refused([](json& j) { j["max_in_flight"] = -1; }, "max_in_flight is -1");
    refused([](json& j) { j["threads"] = 0; }, "threads is 0");
    refused([](json& j) { j["max_rss_kb"] = -2; }, "max_rss_kb is -2");
  }
}

TEST_CASE("agent protocol: an open loop bound by duration is held to its schedule's arrivals", "[agent_protocol][agent_plausibility]") {
  LoadSpec spec = http_spec();
  spec.concurrency = 0;
  spec.rate = 10;
  spec.duration_s = 2;
  spec.arrival = runara::Arrival::kConstant;
  // Due at 0, 0.1, ... 2.0 s: 21 arrivals.
  CHECK(runara::possible_requests(spec, 21));
  CHECK_FALSE(runara::possible_requests(spec, 22));
  for (const auto arrival : {runara::Arrival::kPoisson, runara::Arrival::kGamma}) {
    spec.arrival = arrival;
    spec.burstiness = 0.5;
    runara::ArrivalSchedule schedule(spec.rate, spec.arrival, spec.burstiness, spec.seed);
    std::uint64_t arrivals = 0;
    while (schedule.next_ns() <= 2'000'000'000) ++arrivals;
    INFO("arrivals " << arrivals);
    CHECK(runara::possible_requests(spec, arrivals));
    CHECK_FALSE(runara::possible_requests(spec, arrivals + 1));
    LoadOutcome o = honest_outcome(spec, arrivals + 1);
    o.max_in_flight = 1;
    std::string error;
    CHECK_FALSE(runara::check_outcome(spec, o, 0, {}, 10, error));
    CHECK_THAT(error, Catch::Contains("more than the arrivals its schedule has in 2 s at 10/s"));
  }
  // Past the walk, a bound with a wide margin: twice the mean plus the walk.
  spec.arrival = runara::Arrival::kConstant;
  spec.rate = 1e6;
  spec.duration_s = 3600;
  CHECK(runara::possible_requests(spec, runara::kScheduleWalk + 1));
  CHECK(runara::possible_requests(spec, 7'000'000'000ull));
  CHECK_FALSE(runara::possible_requests(spec, 7'300'000'000ull));
}

// ---------------------------------------------------------------- LatencyHistogram::from_state

TEST_CASE("LatencyHistogram::from_state rebuilds an equal histogram", "[agent_protocol][histogram]") {
  for (const LatencyHistogram& h : {sample_histogram(), LatencyHistogram(), LatencyHistogram(1'000'000, 2)}) {
    LatencyHistogram copy = h;
    if (h.highest_trackable_value() == 1'000'000) {
      for (int i = 0; i < 500; ++i) copy.record(i * 3000);  // some above 1,000,000: saturated
    }
    LatencyHistogram back(10, 1);  // another shape: replaced
    auto rebuilt = LatencyHistogram::from_state(copy.state());
    REQUIRE(rebuilt);
    back = std::move(rebuilt).value();
    check_same_histogram(copy, back);
    // And it goes on like the original.
    copy.record(777);
    back.record(777);
    check_same_histogram(copy, back);
    LatencyHistogram merged, merged_back;
    merged.merge(copy);
    merged_back.merge(back);
    check_same_histogram(merged, merged_back);
  }
  SECTION("a single sample, and a single saturated sample") {
    for (std::int64_t v : {std::int64_t{0}, std::int64_t{1}, std::int64_t{123456789}, 7 * LatencyHistogram::kOneHourNs}) {
      LatencyHistogram h;
      h.record(v);
      auto back = LatencyHistogram::from_state(h.state());
      REQUIRE(back);
      check_same_histogram(h, back.value());
    }
  }
}

TEST_CASE("LatencyHistogram::from_state refuses a state no histogram could have", "[agent_protocol][histogram]") {
  const LatencyHistogram::State good = sample_histogram().state();
  REQUIRE(good.buckets.size() > 3);
  {
    REQUIRE(LatencyHistogram::from_state(good));
  }
  auto with = [&](const std::function<void(LatencyHistogram::State&)>& edit) {
    LatencyHistogram::State s = good;
    edit(s);
    return s;
  };
  check_state_refused(with([](auto& s) { s.highest = 1; }), "shape");
  check_state_refused(with([](auto& s) { s.significant_figures = 0; }), "shape");
  check_state_refused(with([](auto& s) { s.significant_figures = 6; }), "shape");
  check_state_refused(with([](auto& s) { s.buckets.back().first = 33792; }), "bucket 33792 out of range");
  check_state_refused(with([](auto& s) { s.buckets.back().first = 0xFFFFFFFFu; }), "out of range");
  check_state_refused(with([](auto& s) { std::swap(s.buckets[1], s.buckets[2]); }), "out of order");
  check_state_refused(with([](auto& s) { s.buckets[2].first = s.buckets[1].first; }), "out of order");
  check_state_refused(with([](auto& s) { s.buckets[1].second = 0; }), "bucket");
  check_state_refused(with([](auto& s) { s.buckets[1].second += s.count; }), "over the count");
  check_state_refused(with([](auto& s) { s.buckets[1].second = ~std::uint64_t{0}; }), "over the count");
  check_state_refused(with([](auto& s) { s.count += 1; }), "do not add up");
  check_state_refused(with([](auto& s) { s.saturated = s.count + 1; }), "do not add up");
  check_state_refused(with([](auto& s) { s.min = -1; }), "do not add up");
  check_state_refused(with([](auto& s) { s.min = s.max + 1; }), "do not add up");
  check_state_refused(with([](auto& s) { s.min = 50'000'000; }), "min/max do not match");  // inside, not its bucket
  check_state_refused(with([](auto& s) { s.count -= s.buckets.front().second, s.buckets.erase(s.buckets.begin()); }),
                      "min/max do not match");
  check_state_refused(with([](auto& s) { s.max = 50'000'000; }), "min/max do not match");
  check_state_refused(with([](auto& s) { s.count -= s.buckets.back().second, s.buckets.pop_back(); }),
                      "min/max do not match");
  // Sums no `count` values between min and max can give (a crafted sum would overflow stddev()).
  check_state_refused(with([](auto& s) { s.sum = static_cast<__int128>(s.max) * s.count * 1001 / 1000 + 1000; }), "sums do not fit");
  check_state_refused(with([](auto& s) { s.sum = static_cast<__int128>(s.min) * s.count * 999 / 1000 - 1000; }), "sums do not fit");
  check_state_refused(with([](auto& s) { s.sum_sq = ~static_cast<unsigned __int128>(0); }), "sums do not fit");
  check_state_refused(with([](auto& s) { s.sum_sq = 0; }), "sums do not fit");
  // Empty: nothing may be left over.
  LatencyHistogram::State empty = LatencyHistogram().state();
  {
    REQUIRE(LatencyHistogram::from_state(empty));
  }
  empty.max = 5;
  check_state_refused(empty, "do not add up");
  empty.max = 0;
  empty.sum = 5;
  check_state_refused(empty, "do not add up");
  empty.sum = 0;
  empty.buckets.emplace_back(3, 1);
  check_state_refused(empty, "over the count");
}

// ---------------------------------------------------------------- request_target_of

TEST_CASE("request_target_of cuts the same target out of a URL as libcurl", "[agent_protocol]") {
  const char* const urls[] = {
      "http://10.0.0.5:8000/v1/completions?x=1#frag",
      "http://h",
      "http://h/",
      "http://h:8080",
      "http://h?x=1",
      "http://h?",
      "http://h#",
      "http://h#frag/with/slash?and=query",
      "http://h/#",
      "http://h/?",
      "http://h/?#",
      "http://h/a?b#c?d",
      "http://h/a#b/c",
      "http://h/a?x=/y?z",
      "http://h/p?a=1?b=2&c=d;e",
      "http://h/a//b/",
      "http://h/a/./b/../c",
      "http://h/a%20b?c=%2F%3F#x",
      "http://h/p%3Fnot-a-query",
      "http://h/%7Euser/%E2%82%AC",
      "http://h/\xc3\xa9t\xc3\xa9?q=\xc3\xa9",
      "http://h/?x=[1]&y={2}",
      "http://h/a:b@c",
      "http://[::1]",
      "http://[::1]/",
      "http://[::1]:8080/a/b?c=d",
      "http://[2001:db8::1]:80?q",
      "http://[::ffff:10.0.0.1]#f",
      "http://[fe80::1:2:3]:65535/v1/chat/completions",
      "HTTP://Example.COM:080/Upper/Case?Q=V",
      "http://0x7f.1/hex",
      "https://example.com/x?y",
      "http://example.com:443",
  };
  int compared = 0;
  for (const char* text : urls) {
    INFO("url: " << text);
    const auto parsed = runara::parse_target_url(text);
    if (!parsed) {
      WARN("parse_target_url refused " << text << ": " << parsed.error());
      continue;
    }
    INFO("normalised: " << parsed->url);
    CHECK(runara::request_target_of(parsed->url) == curl_target(parsed->url));
    ++compared;
  }
  CHECK(compared >= 30);
}

namespace {

// The largest outcome an honest agent sends: 100,000 lengths of 6-digit token counts, every
// bucket of all five histograms filled (counts of 8 digits), a day of tokens per second, every
// HTTP status, the error samples full.
LoadOutcome largest_honest_outcome() {
  LoadOutcome o;
  o.stats = LoadStats(kSlo);
  o.lengths = runara::RequestLengths(100000);
  std::atomic<std::uint64_t> taken{0};
  for (std::uint64_t i = 0; i < 100000; ++i) {
    RequestRecord r;
    r.index = i;
    r.intended_ns = static_cast<std::int64_t>(i) * 1'000'000;
    r.sent_ns = r.intended_ns + 1;
    r.first_token_ns = r.sent_ns + 1;
    r.done_ns = r.first_token_ns + 1;
    r.input_tokens = 100000 + static_cast<std::int32_t>(i);
    r.output_tokens = 100000 + static_cast<std::int32_t>(i);
    r.status = 200;
    o.lengths.add(r, taken);
  }
  for (LatencyHistogram* h : {&o.stats.ttft, &o.stats.tpot, &o.stats.itl, &o.stats.e2el, &o.stats.queue})
    for (std::int64_t v = 1; v < LatencyHistogram::kOneHourNs; v += std::max<std::int64_t>(1, v / 4096)) h->record_n(v, 10'000'000);
  o.stats.tokens_per_second.assign(86400, 999999);
  for (int status = 100; status < 1000; ++status) o.stats.statuses[status] = 1'000'000'000;
  for (int k = 1; k < runara::kErrorKinds; ++k)
    o.stats.error_samples[std::string(runara::error_kind_name(static_cast<ErrorKind>(k)))].assign(3, std::string(500, 'e'));
  return o;
}

}  // namespace

// Issue 25: the results line is parsed within kAgentMaxOutcomeTreeBytes (estimated before
// anything is built), so a hostile agent's 16 MiB line of small numbers cannot become a
// document of hundreds of MiB. The largest honest outcome fits with room to spare.
TEST_CASE("agent protocol: the results line's document is bounded, and the largest honest outcome fits", "[agent_protocol][hostile_buffers]") {
  const std::string honest = runara::encode_outcome(largest_honest_outcome(), 0);
  const std::size_t tree = runara::json_tree_bytes(honest);
  WARN("largest honest outcome: " << (honest.size() >> 10) << " KiB, about " << (tree >> 20) << " MiB once parsed");
  CHECK(honest.size() * 2 < runara::kAgentMaxLine);
  CHECK(tree * 2 < runara::kAgentMaxOutcomeTreeBytes);
  LoadOutcome o;
  std::uint64_t dropped = 0;
  std::string error;
  CHECK(runara::decode_outcome(honest, kSlo, 100000, o, dropped, error));
  CHECK(error == "");

  // A line as long as the protocol allows, of small numbers where lengths belong.
  std::string hostile = R"({"input_lens": [)";
  while (hostile.size() < runara::kAgentMaxLine - 16) hostile += "0,";
  hostile += "0]}";
  REQUIRE(hostile.size() <= runara::kAgentMaxLine);
  CHECK_FALSE(runara::decode_outcome(hostile, kSlo, 100000, o, dropped, error));
  CHECK_THAT(error, Catch::Matches("the agent's results would take about [0-9]+ MiB once parsed, more than the " +
                                   std::to_string(runara::kAgentMaxOutcomeTreeBytes >> 20) + " MiB allowed"));
}
