// libFuzzer target for the remote load agent's line protocol (runtime/load/agent_protocol): what
// runara reads from the agent (the hello line, request records, the outcome) and what the agent
// reads from runara (the load spec). Either side may be a broken or hostile program.
//
// Built by CMake (tests/fuzz/CMakeLists.txt): a libFuzzer binary with clang, a replay of
// seeds and mutations under GCC (ctest runs it); see tests/fuzz/README.md.
//
// One input is one line (a trailing newline dropped); its message word ("R ", "S ", "spec ")
// dropped too where it has one. It goes to parse_hello, parse_record_line, decode_outcome and
// decode_agent_spec. What it checks:
//   * nothing crashes, reads outside the input or throws; a refusal always says why;
//   * a hello line that parses, written again, parses to the same protocol and version;
//   * a record that parses re-encodes (append_record_line) to one line that parses to the same
//     record, and encodes the same again;
//   * an outcome that decodes re-encodes to JSON that decodes to the same statistics (counts,
//     extremes, percentiles, mean, stddev of every histogram; counters; lengths), and encodes
//     the same again;
//   * a spec that decodes re-encodes to a spec that decodes to the same load;
//   * a record or outcome the plausibility checks (admit_record, check_outcome) accept for a
//     load of 100 requests is possible for it: no more requests than that, token counts >= 0,
//     a finite wall time; one they refuse says why.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "load/agent_protocol.hpp"

namespace {

using runara::LatencyHistogram;
using runara::LoadOutcome;
using runara::LoadSpec;
using runara::RequestRecord;

void fail(const char* what, std::string_view input) {
  std::fprintf(stderr, "fuzz_agent_protocol: %s for input '%.*s'\n", what, static_cast<int>(std::min<std::size_t>(input.size(), 400)),
               input.data());
  std::abort();
}

bool same(const RequestRecord& a, const RequestRecord& b) {
  return a.index == b.index && a.intended_ns == b.intended_ns && a.sent_ns == b.sent_ns &&
         a.first_token_ns == b.first_token_ns && a.done_ns == b.done_ns && a.input_tokens == b.input_tokens &&
         a.output_tokens == b.output_tokens && a.chunks == b.chunks && a.prompt == b.prompt && a.status == b.status &&
         a.error == b.error && a.tokens_from_usage == b.tokens_from_usage && a.warmup == b.warmup;
}

bool same(const LatencyHistogram& a, const LatencyHistogram& b) {
  if (a.count() != b.count() || a.saturated() != b.saturated() || a.min() != b.min() || a.max() != b.max() ||
      a.highest_trackable_value() != b.highest_trackable_value() || a.significant_figures() != b.significant_figures()) {
    return false;
  }
  // mean() and stddev() of equal sums are equal bit for bit (NaN never: the sums are integers).
  if (a.mean() != b.mean() || a.stddev() != b.stddev()) return false;
  for (double q : {0.0, 1.0, 50.0, 90.0, 99.0, 99.9, 100.0}) {
    const std::int64_t p = a.percentile(q);
    if (p != b.percentile(q)) return false;
    if (a.count() && (p < a.min() || p > a.max())) return false;  // a percentile lies within the extremes
  }
  return true;
}

nlohmann::json lengths(const LoadOutcome& o) {
  nlohmann::json j = nlohmann::json::object();
  o.lengths.to_json(j);
  return j;
}

bool same(const LoadOutcome& a, const LoadOutcome& b) {
  const auto& x = a.stats;
  const auto& y = b.stats;
  return x.completed == y.completed && x.failed == y.failed && x.warmup == y.warmup && x.good == y.good &&
         x.input_tokens == y.input_tokens && x.output_tokens == y.output_tokens &&
         x.server_input_counted == y.server_input_counted && same(x.ttft, y.ttft) && same(x.tpot, y.tpot) &&
         same(x.itl, y.itl) && same(x.e2el, y.e2el) && same(x.queue, y.queue) && x.errors == y.errors &&
         x.statuses == y.statuses && x.error_samples == y.error_samples && x.last_done_ns == y.last_done_ns &&
         x.tokens_per_second == y.tokens_per_second && lengths(a) == lengths(b) && a.wall_s == b.wall_s &&
         a.threads == b.threads && a.error == b.error && a.left_out == b.left_out && a.interrupted == b.interrupted &&
         a.agent_max_rss_kb == b.agent_max_rss_kb;
}

bool same(const LoadSpec& a, const LoadSpec& b) {
  return a.mode == b.mode && a.name == b.name && a.url == b.url && a.url_host == b.url_host && a.url_port == b.url_port &&
         a.method == b.method && a.header_lines() == b.header_lines() && *a.bodies == *b.bodies &&
         bool(a.body_tokens) == bool(b.body_tokens) && (!a.body_tokens || *a.body_tokens == *b.body_tokens) &&
         a.seed == b.seed && a.concurrency == b.concurrency && a.rate == b.rate && a.arrival == b.arrival &&
         a.requests == b.requests && a.duration_s == b.duration_s && a.threads == b.threads &&
         a.timeout_s == b.timeout_s && a.max_lengths == b.max_lengths && a.record == b.record &&
         a.record_sample == b.record_sample && a.slo.e2el_ms == b.slo.e2el_ms;
}

void check_hello(std::string_view line) {
  int protocol = 0;
  std::string version;
  if (!runara::parse_hello(line, protocol, version)) return;
  const std::string again = "runara-agent " + std::to_string(protocol) + " " + version;
  int protocol2 = 0;
  std::string version2;
  if (!runara::parse_hello(again, protocol2, version2) || protocol2 != protocol || version2 != version) {
    fail("a hello line written again parses differently", line);
  }
}

// The load the plausibility checks hold records and outcomes to: 100 requests after 5 warm-up
// ones, 8 at a time, seen by runara for 60 s.
const LoadSpec& hundred_requests() {
  static const LoadSpec spec = [] {
    LoadSpec s;
    s.concurrency = 8;
    s.requests = 100;
    s.warmup_requests = 5;
    return s;
  }();
  return spec;
}
constexpr double kElapsedS = 60;

void check_record(std::string_view fields) {
  RequestRecord r;
  std::string error;
  if (!runara::parse_record_line(fields, r, error)) {
    if (error.empty()) fail("a refused record says nothing", fields);
    return;
  }
  runara::RecordTally tally;
  if (runara::admit_record(hundred_requests(), r, kElapsedS, tally, error)) {
    if (r.index >= 105 || r.intended_ns < 0 || r.sent_ns < 0 || tally.measured + tally.warmup != 1) fail("an impossible record is admitted", fields);
  } else if (error.empty()) {
    fail("a record refused as impossible says nothing", fields);
  }
  std::string line;
  runara::append_record_line(line, r);
  if (!line.starts_with("R ") || !line.ends_with("\n") || line.find('\n') != line.size() - 1) {
    fail("a record re-encodes to something other than one R line", fields);
  }
  RequestRecord back;
  if (!runara::parse_record_line(std::string_view(line).substr(2, line.size() - 3), back, error) || !same(r, back)) {
    fail("a re-encoded record does not parse to the same record", fields);
  }
  std::string line2;
  runara::append_record_line(line2, back);
  if (line2 != line) fail("a record encodes differently the second time", fields);
}

void check_outcome(std::string_view json) {
  const runara::Slo slo{100, 10, 1000};
  LoadOutcome o;
  std::uint64_t dropped = 0;
  std::string error;
  if (!runara::decode_outcome(json, slo, 1000, o, dropped, error)) {
    if (error.empty()) fail("a refused outcome says nothing", json);
    return;
  }
  const std::string again = runara::encode_outcome(o, dropped);
  LoadOutcome back;
  std::uint64_t dropped2 = 0;
  if (!runara::decode_outcome(again, slo, 1000, back, dropped2, error)) fail(("a re-encoded outcome is refused: " + error).c_str(), json);
  if (dropped2 != dropped || !same(o, back)) fail("a re-encoded outcome decodes to other statistics", json);
  if (runara::encode_outcome(back, dropped2) != again) fail("an outcome encodes differently the second time", json);
  std::string why;
  if (runara::check_outcome(hundred_requests(), o, dropped, {}, kElapsedS, why)) {
    const auto& st = o.stats;
    if (st.completed + st.failed > 100 || st.warmup > 5 || st.input_tokens < 0 || st.output_tokens < 0 || !std::isfinite(o.wall_s) ||
        o.wall_s < 0 || o.max_in_flight > 8) {
      fail("an impossible outcome passes the plausibility checks", json);
    }
  } else if (why.empty()) {
    fail("an outcome refused as impossible says nothing", json);
  }
  // What runara does with one: merge it into a run's totals.
  runara::LoadStats total(slo);
  total.merge(o.stats);
  total.merge(back.stats);
  if (total.e2el.count() != 2 * o.stats.e2el.count() || (o.stats.e2el.count() && total.e2el.max() != o.stats.e2el.max())) {
    fail("a decoded outcome merges wrongly", json);
  }
}

void check_spec(std::string_view json) {
  LoadSpec s;
  double deadline = 0;
  std::size_t memory = 0;
  std::string error;
  if (!runara::decode_agent_spec(json, s, deadline, memory, error)) {
    if (error.empty()) fail("a refused spec says nothing", json);
    return;
  }
  if (!s.bodies || s.bodies->empty() || s.threads < 1 || s.threads > 256) fail("a spec out of bounds is accepted", json);
  const std::string again = runara::encode_agent_spec(s, deadline, memory);
  LoadSpec back;
  double deadline2 = 0;
  std::size_t memory2 = 0;
  if (!runara::decode_agent_spec(again, back, deadline2, memory2, error)) fail(("a re-encoded spec is refused: " + error).c_str(), json);
  if (deadline2 != deadline || memory2 != memory || !same(s, back)) fail("a re-encoded spec decodes to another load", json);
  if (runara::encode_agent_spec(back, deadline2, memory2) != again) fail("a spec encodes differently the second time", json);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view line(reinterpret_cast<const char*>(data), size);
  if (line.ends_with('\n')) line.remove_suffix(1);
  check_hello(line);
  std::string_view body = line;
  for (std::string_view word : {"R ", "S ", "spec "}) {
    if (body.starts_with(word)) {
      body.remove_prefix(word.size());
      break;
    }
  }
  try {
    check_record(body);
    check_outcome(body);
    check_spec(body);
  } catch (const std::exception& e) {
    fail(("an exception escaped: " + std::string(e.what())).c_str(), line);
  }
  return 0;
}
