#include "load/report.hpp"

#include "load/client_limit.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace runara {

namespace {

using nlohmann::json;

double ms(std::int64_t ns) { return static_cast<double>(ns) / 1e6; }

// mean_/median_/std_/min_/max_/pNN_ keys of one metric, in milliseconds (0 when empty, as vLLM).
// vLLM names a percentile by its number as Python prints it: p99, p99.9, p25.5.
std::string percentile_word(double q) {
  char text[32];
  std::snprintf(text, sizeof text, "p%g", q);
  return text;
}

void add_metric(json& out, const char* name, const LatencyHistogram& h, const std::vector<double>& extra) {
  const std::string suffix = std::string("_") + name + "_ms";
  out["mean" + suffix] = h.mean() / 1e6;
  out["median" + suffix] = ms(h.percentile(50));
  out["std" + suffix] = h.stddev() / 1e6;
  out["min" + suffix] = ms(h.min());
  out["max" + suffix] = ms(h.max());
  for (const auto& [word, q] : {std::pair{"p50", 50.0}, {"p90", 90.0}, {"p95", 95.0}, {"p99", 99.0}, {"p99.9", 99.9}}) {
    out[std::string(word) + suffix] = ms(h.percentile(q));
  }
  for (double q : extra) out[percentile_word(q) + suffix] = ms(h.percentile(q));
  out[std::string("count_") + name] = h.count();
}

std::string backend(const LoadSpec& spec) {
  if (spec.mode == LoadMode::kHttp) return "http";
  return spec.endpoint == "chat" ? "openai-chat" : "openai";
}

std::string tokens_source(const LoadStats& s) {
  if (s.usage_counted && s.chunk_counted) return "mixed";
  if (s.usage_counted) return "usage";
  if (s.chunk_counted) return "chunks";
  return "none";
}

// Sends per second over the measured requests' actual send times, and over their intended ones.
// Only an open loop has a schedule to keep: a closed loop sends whenever a reply comes back, so
// both are null there (its rate is request_throughput).
void add_rates(json& out, const LoadSpec& spec, const LoadStats& s) {
  const std::uint64_t n = s.completed + s.failed;
  const auto rate = [n](std::int64_t a, std::int64_t b) { return n > 1 && b > a ? static_cast<double>(n - 1) / ms(b - a) * 1e3 : 0.0; };
  out["achieved_send_rate"] = spec.open_loop() ? json(rate(s.first_sent_ns, s.last_sent_ns)) : json(nullptr);
  out["scheduled_send_rate"] = spec.open_loop() ? json(rate(s.first_due_ns, s.last_due_ns)) : json(nullptr);
}

// vLLM's own names for the wait before the send, under its conditions: `client_queue_time` with
// --max-concurrency, `e2el_including_client_queue` (E2EL from the schedule) when the rate is also
// finite. runara's queue_* and *_from_schedule_* carry the same figures in every load.
void add_vllm_client_queue(json& out, const LoadSpec& spec, const LoadStats& s) {
  if (!spec.open_loop() || spec.max_concurrency <= 0) return;
  add_metric(out, "client_queue_time", s.queue, spec.percentiles);
  add_metric(out, "e2el_including_client_queue", s.e2el_from_schedule, spec.percentiles);
}

// Both counts of input tokens, and which one total_input_tokens (and so the throughputs) used:
// the server's usage.prompt_tokens for each request that reported it, else the client's.
void add_input_counts(json& out, const LoadStats& s) {
  out["input_tokens_client"] = s.client_input_tokens;
  out["input_tokens_server"] = s.server_input_counted ? json(s.server_input_tokens) : json(nullptr);
  const char* source = s.server_input_counted == 0 ? "client" : s.server_input_counted == s.completed ? "server" : "mixed";
  out["input_tokens_source"] = s.completed ? source : "none";
}

// Are client and server counting the same tokens? (vLLM's client realigns its prompts since a
// tokenizer mismatch inflated them 5×.) Every measured request the server reported
// usage.prompt_tokens for is compared with the client's own count of its prompt: a difference
// over 1 % means the prompts were not the length asked (give the model's tokenizer.json).
// The job adds `tokenize` to it: the server's /tokenize asked first (load_job/tokenize_check.hpp).
void add_token_check(json& out, const LoadSpec& spec, const LoadStats& s) {
  constexpr double kTolerancePct = 1;
  json check = {{"source", "usage.prompt_tokens"}, {"tolerance_pct", kTolerancePct}};
  if (spec.mode != LoadMode::kOpenAi || s.completed == 0) {
    check["status"] = "not run: no successful LLM request";
  } else if (s.server_input_counted < s.completed) {
    check["status"] = s.server_input_counted == 0 ? "not run: the server reported no usage.prompt_tokens"
                                                  : "not run: the server reported usage.prompt_tokens for only some requests";
  } else if (s.client_input_tokens <= 0) {
    check["status"] = "not run: the client does not know its prompts' token counts (a fixed prompt string)";
  } else {
    const double pct = 100.0 * static_cast<double>(s.server_input_tokens - s.client_input_tokens) / static_cast<double>(s.client_input_tokens);
    const bool ok = std::abs(pct) <= kTolerancePct;
    check["status"] = ok ? "ok" : "differ";
    check["requests"] = s.server_input_counted;
    check["client_tokens"] = s.client_input_tokens;
    check["server_tokens"] = s.server_input_tokens;
    check["difference_pct"] = pct;
    check["ok"] = ok;
  }
  out["token_count_check"] = std::move(check);
}

// Whether the client, not the server, set the pace (load/client_limit.hpp).
void add_client_limit(json& out, const LoadSpec& spec, const LoadOutcome& o) {
  ClientLoad load;
  load.open_loop = spec.open_loop();
  load.bounded = spec.max_concurrency > 0;
  load.threads = o.threads > 0 ? o.threads : spec.threads;
  load.wall_s = o.wall_s;
  load.cpu_s = o.stats.client_cpu_s;
  load.achieved_rate = out["achieved_send_rate"].is_number() ? out["achieved_send_rate"].get<double>() : 0;
  load.scheduled_rate = out["scheduled_send_rate"].is_number() ? out["scheduled_send_rate"].get<double>() : 0;
  load.p99_queue_ms = out["p99_queue_ms"].get<double>();
  load.requests = o.stats.completed + o.stats.failed;
  const ClientLimit limit = judge_client_limit(load);
  out["client_cpu_s"] = o.stats.client_cpu_s;
  out["client_cpu_utilization"] = limit.cpu_utilization;
  out["client_limited"] = !limit.reason.empty();
  out["client_limit"] = limit.reason.empty() ? json(nullptr) : json(limit.reason);
  out["schedule_kept"] = spec.open_loop() ? json(kept_schedule(load)) : json(nullptr);
}

double unix_now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

json errors_json(const LoadStats& s) {
  json kinds = json::object();
  for (int i = 1; i < kErrorKinds; ++i) {
    if (s.errors[static_cast<std::size_t>(i)]) kinds[std::string(error_kind_name(static_cast<ErrorKind>(i)))] = s.errors[static_cast<std::size_t>(i)];
  }
  return kinds;
}

}  // namespace

json load_result_json(const LoadSpec& spec, const LoadOutcome& o, const std::string& date) {
  const LoadStats& s = o.stats;
  const double window_s = s.first_sent_ns >= 0 && s.last_done_ns > s.first_sent_ns ? ms(s.last_done_ns - s.first_sent_ns) / 1e3 : 0;
  const auto per_s = [window_s](double v) { return window_s > 0 ? v / window_s : 0.0; };
  json out = {
      {"date", date},
      {"backend", backend(spec)},
      {"endpoint_type", backend(spec)},
      {"label", spec.name},
      {"model_id", spec.model},
      {"tokenizer_id", spec.tokenizer_id.empty() ? spec.model : spec.tokenizer_id},
      {"num_prompts", s.completed + s.failed},
      {"request_rate", spec.open_loop() ? json(spec.rate) : json("inf")},
      {"burstiness", spec.burstiness},
      {"ramp_up_strategy", spec.ramp == Ramp::kNone ? json(nullptr) : json(ramp_name(spec.ramp))},
      {"ramp_up_start_rps", spec.ramp == Ramp::kNone ? json(nullptr) : json(spec.ramp_start)},
      {"ramp_up_end_rps", spec.ramp == Ramp::kNone ? json(nullptr) : json(spec.ramp_end)},
      {"max_concurrency", spec.open_loop() ? (spec.max_concurrency ? json(spec.max_concurrency) : json(nullptr)) : json(spec.concurrency)},
      {"duration", window_s},
      {"completed", s.completed},
      {"failed", s.failed},
      {"total_input_tokens", s.input_tokens},
      {"total_output_tokens", s.output_tokens},
      {"request_throughput", per_s(static_cast<double>(s.completed))},
      {"request_goodput", s.slo.any() ? json(per_s(static_cast<double>(s.good))) : json(nullptr)},
      {"output_throughput", per_s(static_cast<double>(s.output_tokens))},
      {"total_token_throughput", per_s(static_cast<double>(s.input_tokens + s.output_tokens))},
      {"max_output_tokens_per_s", s.tokens_per_second.empty() ? 0 : *std::max_element(s.tokens_per_second.begin(), s.tokens_per_second.end())},
      {"max_concurrent_requests", o.max_in_flight},
  };
  add_metric(out, "ttft", s.ttft, spec.percentiles);
  add_metric(out, "tpot", s.tpot, spec.percentiles);
  add_metric(out, "itl", s.itl, spec.percentiles);
  add_metric(out, "e2el", s.e2el, spec.percentiles);
  add_metric(out, "queue", s.queue, spec.percentiles);
  add_metric(out, "ttft_from_schedule", s.ttft_from_schedule, spec.percentiles);
  add_metric(out, "e2el_from_schedule", s.e2el_from_schedule, spec.percentiles);
  add_vllm_client_queue(out, spec, s);
  add_rates(out, spec, s);
  o.lengths.to_json(out);  // vLLM's input_lens / output_lens (request_lengths.hpp)
  if (spec.save_detailed) o.details.to_json(out);  // vLLM's --save-detailed arrays (request_details.hpp)
  add_input_counts(out, s);
  add_client_limit(out, spec, o);
  add_token_check(out, spec, s);
  // vLLM's keys that runara has no use for but readers of its files may expect.
  out["best_of"] = 1;
  out["request_goodput:"] = out["request_goodput"];  // vLLM 0.6's spelling, colon included
  // The report is made as the load ends: its start is that instant less the load's wall time.
  const double end_unix = unix_now_s();
  out["benchmark_start_time_unix"] = end_unix - o.wall_s;
  out["benchmark_end_time_unix"] = end_unix;
  out["mode"] = spec.mode == LoadMode::kHttp ? "http" : "openai";
  out["url"] = spec.url;
  out["load_model"] = spec.open_loop() ? "open" : "closed";
  if (spec.open_loop()) out["arrival"] = spec.arrival == Arrival::kConstant ? "constant" : spec.arrival == Arrival::kPoisson ? "poisson" : "gamma";
  out["threads"] = o.threads;
  // Where the load generator ran: "local" (runara's own machine) or the machine the remote agent
  // ran on, with the round trip from runara to it (what a local run's TTFT would have carried).
  out["load_host"] = o.load_host.empty() ? "local" : o.load_host;
  out["controller_rtt_ms"] = o.controller_rtt_ms >= 0 ? json(o.controller_rtt_ms) : json(nullptr);
  out["agent_max_rss_kb"] = o.agent_max_rss_kb >= 0 ? json(o.agent_max_rss_kb) : json(nullptr);
  out["wall_time_s"] = o.wall_s;
  out["warmup_requests"] = s.warmup;
  out["abandoned"] = o.abandoned;
  out["interrupted"] = o.interrupted;
  if (!o.error.empty()) out["stopped_early"] = o.error;
  out["request_lines_left_out"] = o.left_out;  // finished, but beyond max_request_lines or the memory limit
  out["output_tokens_source"] = tokens_source(s);
  out["good_requests"] = s.good;
  const auto objective = [](double v) { return v > 0 ? json(v) : json(nullptr); };  // not set: null
  if (s.slo.any()) out["slo"] = {{"ttft_ms", objective(s.slo.ttft_ms)}, {"tpot_ms", objective(s.slo.tpot_ms)}, {"e2el_ms", objective(s.slo.e2el_ms)}};
  out["errors_by_kind"] = errors_json(s);
  json statuses = json::object();
  for (const auto& [status, n] : s.statuses) statuses[std::to_string(status)] = n;
  out["http_statuses"] = statuses;
  out["error_samples"] = s.error_samples;
  if (spec.echo) out["options"] = *spec.echo;
  return out;
}

namespace {

// A requests.jsonl line is built in a stack buffer and appended to the file's text once: a long
// load writes millions of them on a thread that shares the cores with the workers (and with the
// server, on one machine), so each step below avoids printf (about 11,000 instructions a line
// for its exact decimal expansion) and string appends (a length check and copy each).
class LineBuffer {
 public:
  template <std::size_t N>
  void text(const char (&literal)[N]) {
    std::memcpy(end_, literal, N - 1);
    end_ += N - 1;
  }
  void text(std::string_view v) {
    std::memcpy(end_, v.data(), v.size());
    end_ += v.size();
  }
  template <class Int>
  void integer(Int value) {
    end_ = std::to_chars(end_, end_ + 24, value).ptr;
  }
  // "%.3f" of a double.
  void ms(double value) { end_ = std::to_chars(end_, end_ + 64, value, std::chars_format::fixed, 3).ptr; }
  // ns / 1e6 as "%.3f" prints it, in integers (to_chars on a double costs about 120 ns; this a
  // fifth). Exactly half a microsecond is the one case where the double's own rounding decides,
  // so it takes the double's path and the digits stay the same.
  void ns_as_ms(std::int64_t ns) {
    const std::int64_t below_us = ns % 1000;
    if (ns < 0 || below_us == 500) return ms(static_cast<double>(ns) / 1e6);
    const std::int64_t us = ns / 1000 + (below_us > 500 ? 1 : 0);
    integer(us / 1000);
    const auto frac = static_cast<int>(us % 1000);
    *end_++ = '.';
    *end_++ = static_cast<char>('0' + frac / 100);
    *end_++ = static_cast<char>('0' + frac / 10 % 10);
    *end_++ = static_cast<char>('0' + frac % 10);
  }
  // A time between two instants, or -1 ms when the later one is missing (the record's sentinel).
  void span_ms(std::int64_t from_ns, std::int64_t to_ns) {
    if (to_ns < 0) text("-1.000");
    else ns_as_ms(to_ns - from_ns);
  }
  void append_to(std::string& out) const { out.append(buf_, static_cast<std::size_t>(end_ - buf_)); }

 private:
  char buf_[512];  // the longest line (every field at its widest) is under 400 bytes
  char* end_ = buf_;
};

}  // namespace

void append_request_line(std::string& out, const RequestRecord& r) {
  LineBuffer line;
  line.text("{\"index\":");
  line.integer(r.index);
  if (r.warmup) line.text(",\"warmup\":true,\"intended_ms\":");
  else line.text(",\"warmup\":false,\"intended_ms\":");
  line.ns_as_ms(r.intended_ns);
  line.text(",\"sent_ms\":");
  line.ns_as_ms(r.sent_ns);
  line.text(",\"queue_ms\":");
  line.ns_as_ms(r.sent_ns - r.intended_ns);
  line.text(",\"ttft_ms\":");
  line.span_ms(r.sent_ns, r.first_token_ns);  // from the send, as results.json's ttft (queue_ms before it)
  line.text(",\"e2el_ms\":");
  line.span_ms(r.sent_ns, r.done_ns);
  line.text(",\"tpot_ms\":");
  line.ms(r.tpot_ms());
  line.text(",\"input_tokens\":");
  line.integer(r.input_tokens);
  line.text(",\"output_tokens\":");
  line.integer(r.output_tokens);
  if (r.tokens_from_usage) line.text(",\"tokens_from\":\"usage\",\"chunks\":");
  else line.text(",\"tokens_from\":\"chunks\",\"chunks\":");
  line.integer(r.chunks);
  line.text(",\"prompt\":");
  line.integer(r.prompt);
  line.text(",\"status\":");
  line.integer(r.status);
  line.text(",\"error\":\"");
  line.text(error_kind_name(r.error));
  line.text("\"}\n");
  line.append_to(out);
}

}  // namespace runara
