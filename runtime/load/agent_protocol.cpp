#include "load/agent_protocol.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/json_limits.hpp"
#include "load/arrival_schedule.hpp"

namespace runara {

using nlohmann::json;

namespace {

// ---- numbers and strings, checked ----

// A JSON number as T; refused when it is not one of T's kind or does not fit (nlohmann's get<>
// would quietly cut 2^32 + 1 to 1, -1 to 2^64 - 1, 2.5 to 2, and read true as 1).
template <typename T>
T number(const json& v, std::string_view name) {
  if constexpr (std::is_floating_point_v<T>) {
    if (v.is_number()) return v.get<T>();
  } else if (v.is_number_unsigned()) {
    if (const auto n = v.get<std::uint64_t>(); std::in_range<T>(n)) return static_cast<T>(n);
  } else if (v.is_number_integer()) {
    if (const auto n = v.get<std::int64_t>(); std::in_range<T>(n)) return static_cast<T>(n);
  }
  throw std::invalid_argument(std::string(name) + (std::is_floating_point_v<T> ? " must be a number" : " must be an integer in range"));
}

template <typename T>
T number_at(const json& j, const char* key) {
  return number<T>(j.at(key), key);
}

template <typename T>
std::vector<T> numbers(const json& v, std::string_view name) {
  if (!v.is_array()) throw std::invalid_argument(std::string(name) + " must be an array");
  std::vector<T> out;
  out.reserve(v.size());
  for (const json& n : v) out.push_back(number<T>(n, name));
  return out;
}

// A script's strings (an http body, a header) may hold any bytes, JSON strings only UTF-8 (a
// dump would replace the rest with U+FFFD): such a string travels as {"hex": "..."}.
json text(const std::string& s) {
  try {
    (void)json(s).dump();
    return s;
  } catch (const json::type_error&) {
  }
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * s.size());
  for (unsigned char c : s) {
    hex += kDigits[c >> 4];
    hex += kDigits[c & 15];
  }
  return {{"hex", std::move(hex)}};
}

json texts(const std::vector<std::string>& list) {
  json out = json::array();
  for (const auto& s : list) out.push_back(text(s));
  return out;
}

std::string text_from(const json& v, std::string_view name) {
  if (v.is_string()) return v.get<std::string>();
  const json* hex = v.is_object() && v.size() == 1 && v.contains("hex") && v["hex"].is_string() ? &v["hex"] : nullptr;
  const std::string* digits = hex ? hex->get_ptr<const std::string*>() : nullptr;
  if (!digits || digits->size() % 2) throw std::invalid_argument(std::string(name) + " must be a string");
  std::string out(digits->size() / 2, '\0');
  for (std::size_t i = 0; i < out.size(); ++i) {
    unsigned byte = 0;
    const char* at = digits->data() + 2 * i;
    const auto [end, ec] = std::from_chars(at, at + 2, byte, 16);
    if (ec != std::errc() || end != at + 2) throw std::invalid_argument(std::string(name) + " must be a string");
    out[i] = static_cast<char>(byte);
  }
  return out;
}

std::string text_at(const json& j, const char* key) { return text_from(j.at(key), key); }

std::vector<std::string> texts_at(const json& j, const char* key) {
  const json& v = j.at(key);
  if (!v.is_array()) throw std::invalid_argument(std::string(key) + " must be an array");
  std::vector<std::string> out;
  out.reserve(v.size());
  for (const json& s : v) out.push_back(text_from(s, key));
  return out;
}

// ---- histograms: 128-bit sums travel as [high, low] 64-bit halves ----

json u128(unsigned __int128 v) { return json::array({static_cast<std::uint64_t>(v >> 64), static_cast<std::uint64_t>(v)}); }

unsigned __int128 u128_from(const json& j) {
  if (!j.is_array() || j.size() != 2) throw std::invalid_argument("a 128-bit value must be [high, low]");
  return (static_cast<unsigned __int128>(number<std::uint64_t>(j[0], "a 128-bit value")) << 64) |
         number<std::uint64_t>(j[1], "a 128-bit value");
}

json histogram_json(const LatencyHistogram& h) {
  const LatencyHistogram::State s = h.state();
  json buckets = json::array();
  for (const auto& [slot, samples] : s.buckets) {
    buckets.push_back(slot);
    buckets.push_back(samples);
  }
  return {{"highest", s.highest}, {"figures", s.significant_figures}, {"count", s.count}, {"saturated", s.saturated},
          {"min", s.min}, {"max", s.max}, {"sum", u128(static_cast<unsigned __int128>(s.sum))},
          {"sum_sq", u128(s.sum_sq)}, {"buckets", std::move(buckets)}};
}

LatencyHistogram histogram_from(const json& j, const char* name) {
  LatencyHistogram::State s;
  s.highest = number_at<std::int64_t>(j, "highest");
  s.significant_figures = number_at<int>(j, "figures");
  s.count = number_at<std::uint64_t>(j, "count");
  s.saturated = number_at<std::uint64_t>(j, "saturated");
  s.min = number_at<std::int64_t>(j, "min");
  s.max = number_at<std::int64_t>(j, "max");
  s.sum = static_cast<__int128>(u128_from(j.at("sum")));
  s.sum_sq = u128_from(j.at("sum_sq"));
  const json& b = j.at("buckets");
  if (!b.is_array() || b.size() % 2) throw std::invalid_argument(std::string(name) + ": buckets must be [slot, count, ...]");
  for (std::size_t i = 0; i < b.size(); i += 2) s.buckets.emplace_back(number<std::uint32_t>(b[i], name), number<std::uint64_t>(b[i + 1], name));
  // runara's statistics use the default shape only: another one would be an allocation of up to
  // 50 MB per histogram that a hostile agent chooses.
  if (s.highest != LatencyHistogram::kOneHourNs || s.significant_figures != 3) {
    throw std::invalid_argument(std::string(name) + ": histogram shape differs from runara's (1 hour, 3 figures)");
  }
  auto rebuilt = LatencyHistogram::from_state(s);
  if (!rebuilt) throw std::invalid_argument(std::string(name) + ": " + rebuilt.error());
  return std::move(rebuilt).value();
}

// ---- statistics ----

json stats_json(const LoadStats& s) {
  json statuses = json::object();
  for (const auto& [status, n] : s.statuses) statuses[std::to_string(status)] = n;
  return {{"completed", s.completed}, {"failed", s.failed}, {"warmup", s.warmup}, {"good", s.good},
          {"input_tokens", s.input_tokens}, {"output_tokens", s.output_tokens},
          {"client_input_tokens", s.client_input_tokens}, {"server_input_tokens", s.server_input_tokens},
          {"server_input_counted", s.server_input_counted}, {"usage_counted", s.usage_counted},
          {"chunk_counted", s.chunk_counted}, {"ttft", histogram_json(s.ttft)}, {"tpot", histogram_json(s.tpot)},
          {"itl", histogram_json(s.itl)}, {"e2el", histogram_json(s.e2el)}, {"queue", histogram_json(s.queue)},
          {"ttft_from_schedule", histogram_json(s.ttft_from_schedule)}, {"e2el_from_schedule", histogram_json(s.e2el_from_schedule)},
          {"errors", s.errors}, {"statuses", std::move(statuses)}, {"error_samples", s.error_samples},
          {"first_sent_ns", s.first_sent_ns}, {"last_sent_ns", s.last_sent_ns}, {"first_due_ns", s.first_due_ns},
          {"last_due_ns", s.last_due_ns}, {"last_done_ns", s.last_done_ns}, {"tokens_per_second", s.tokens_per_second},
          {"client_cpu_s", s.client_cpu_s}};
}

bool known_kind(const std::string& name) {
  for (int i = 0; i < kErrorKinds; ++i) {
    if (error_kind_name(static_cast<ErrorKind>(i)) == name) return true;
  }
  return false;
}

LoadStats stats_from(const json& j, const Slo& slo) {
  LoadStats s(slo);
  s.completed = number_at<std::uint64_t>(j, "completed");
  s.failed = number_at<std::uint64_t>(j, "failed");
  s.warmup = number_at<std::uint64_t>(j, "warmup");
  s.good = number_at<std::uint64_t>(j, "good");
  s.input_tokens = number_at<std::int64_t>(j, "input_tokens");
  s.output_tokens = number_at<std::int64_t>(j, "output_tokens");
  s.client_input_tokens = number_at<std::int64_t>(j, "client_input_tokens");
  s.server_input_tokens = number_at<std::int64_t>(j, "server_input_tokens");
  s.server_input_counted = number_at<std::uint64_t>(j, "server_input_counted");
  s.usage_counted = number_at<std::uint64_t>(j, "usage_counted");
  s.chunk_counted = number_at<std::uint64_t>(j, "chunk_counted");
  s.ttft = histogram_from(j.at("ttft"), "ttft");
  s.tpot = histogram_from(j.at("tpot"), "tpot");
  s.itl = histogram_from(j.at("itl"), "itl");
  s.e2el = histogram_from(j.at("e2el"), "e2el");
  s.queue = histogram_from(j.at("queue"), "queue");
  s.ttft_from_schedule = histogram_from(j.at("ttft_from_schedule"), "ttft_from_schedule");
  s.e2el_from_schedule = histogram_from(j.at("e2el_from_schedule"), "e2el_from_schedule");
  const auto errors = numbers<std::uint64_t>(j.at("errors"), "errors");
  if (errors.size() != s.errors.size()) throw std::invalid_argument("errors must have one count per kind");
  std::copy(errors.begin(), errors.end(), s.errors.begin());
  for (const auto& [key, n] : j.at("statuses").items()) {
    int status = 0;
    const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), status);
    if (ec != std::errc() || end != key.data() + key.size() || status < 0 || status > 999) {
      throw std::invalid_argument("statuses: '" + key + "' is not an HTTP status");
    }
    s.statuses[status] = number<std::uint64_t>(n, "statuses");
  }
  for (const auto& [kind, samples] : j.at("error_samples").items()) {
    if (!known_kind(kind)) throw std::invalid_argument("error_samples: unknown kind '" + kind + "'");
    auto list = samples.get<std::vector<std::string>>();
    if (list.size() > LoadStats::kSamplesPerKind) list.resize(LoadStats::kSamplesPerKind);
    s.error_samples[kind] = std::move(list);
  }
  s.first_sent_ns = number_at<std::int64_t>(j, "first_sent_ns");
  s.last_sent_ns = number_at<std::int64_t>(j, "last_sent_ns");
  s.first_due_ns = number_at<std::int64_t>(j, "first_due_ns");
  s.last_due_ns = number_at<std::int64_t>(j, "last_due_ns");
  s.last_done_ns = number_at<std::int64_t>(j, "last_done_ns");
  s.tokens_per_second = numbers<std::uint32_t>(j.at("tokens_per_second"), "tokens_per_second");
  s.client_cpu_s = number_at<double>(j, "client_cpu_s");
  if (!(s.client_cpu_s >= 0) || s.client_cpu_s > 1e9) throw std::invalid_argument("client_cpu_s out of range");
  return s;
}

RequestLengths lengths_from(const json& in, const json& out, std::size_t max) {
  RequestLengths lengths(max);
  if (in.is_null() || out.is_null()) {
    lengths.overflow();
    return lengths;
  }
  const auto inputs = numbers<std::int32_t>(in, "input_lens");
  const auto outputs = numbers<std::int32_t>(out, "output_lens");
  if (inputs.size() != outputs.size()) throw std::invalid_argument("input_lens and output_lens differ in length");
  const auto negative = [](std::int32_t n) { return n < 0; };
  if (std::any_of(inputs.begin(), inputs.end(), negative) || std::any_of(outputs.begin(), outputs.end(), negative)) {
    throw std::invalid_argument("input_lens and output_lens must hold token counts >= 0");
  }
  std::atomic<std::uint64_t> taken{0};
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    RequestRecord r;  // in request order: the arrays are
    r.index = i;
    r.input_tokens = inputs[i];
    r.output_tokens = outputs[i];
    lengths.add(r, taken);
  }
  return lengths;
}

template <typename T>
bool read_int(std::string_view& fields, T& out) {
  while (!fields.empty() && fields.front() == ' ') fields.remove_prefix(1);
  const auto [end, ec] = std::from_chars(fields.data(), fields.data() + fields.size(), out);
  if (ec != std::errc() || end == fields.data()) return false;
  fields.remove_prefix(static_cast<std::size_t>(end - fields.data()));
  return fields.empty() || fields.front() == ' ';
}

}  // namespace

// ---- the spec ----

std::string encode_agent_spec(const LoadSpec& s, double deadline_s, std::size_t memory_bytes) {
  json j = {{"protocol", kAgentProtocol}, {"deadline_s", deadline_s}, {"memory_bytes", memory_bytes},
            {"mode", s.mode == LoadMode::kOpenAi ? "openai" : "http"}, {"name", text(s.name)}, {"url", text(s.url)},
            {"url_host", text(s.url_host)}, {"url_port", s.url_port}, {"method", text(s.method)},
            {"headers", texts(s.header_lines())}, {"bodies", s.bodies ? texts(*s.bodies) : json::array()},
            {"seed", s.seed}, {"templated", s.templated}, {"stream", s.stream}, {"concurrency", s.concurrency},
            {"rate", s.rate}, {"arrival", static_cast<int>(s.arrival)}, {"burstiness", s.burstiness},
            {"max_concurrency", s.max_concurrency}, {"requests", s.requests}, {"duration_s", s.duration_s},
            {"warmup_requests", s.warmup_requests}, {"warmup_s", s.warmup_s}, {"threads", s.threads}, {"threads_auto", s.threads_auto},
            {"timeout_s", s.timeout_s}, {"slo", {s.slo.ttft_ms, s.slo.tpot_ms, s.slo.e2el_ms}},
            {"give_up_s", s.give_up_s}, {"max_request_lines", s.max_request_lines},
            {"request_queue_bytes", s.request_queue_bytes}, {"max_lengths", s.max_lengths},
            {"record", static_cast<int>(s.record)}, {"record_sample", s.record_sample},
            {"ramp", static_cast<int>(s.ramp)}, {"ramp_start", s.ramp_start}, {"ramp_end", s.ramp_end},
            {"percentiles", s.percentiles}};
  if (s.body_tokens) j["body_tokens"] = *s.body_tokens;
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

bool decode_agent_spec(std::string_view text, LoadSpec& s, double& deadline_s, std::size_t& memory_bytes,
                       std::string& error) {
  auto parsed = parse_json_limited(text, error);
  if (!parsed) {
    error = "the load spec is not valid: " + error;
    return false;
  }
  try {
    const json& j = *parsed;
    const int protocol = number_at<int>(j, "protocol");
    if (protocol != kAgentProtocol) {
      error = "runara speaks agent protocol " + std::to_string(protocol) + ", this agent " + std::to_string(kAgentProtocol);
      return false;
    }
    deadline_s = number_at<double>(j, "deadline_s");
    memory_bytes = number_at<std::size_t>(j, "memory_bytes");
    const std::string mode = j.at("mode").get<std::string>();
    if (mode != "openai" && mode != "http") throw std::invalid_argument("mode must be openai or http");
    s.mode = mode == "openai" ? LoadMode::kOpenAi : LoadMode::kHttp;
    s.name = text_at(j, "name");
    s.url = text_at(j, "url");
    s.url_host = text_at(j, "url_host");
    s.url_port = number_at<int>(j, "url_port");
    s.method = text_at(j, "method");
    s.headers = std::make_shared<const std::vector<std::string>>(texts_at(j, "headers"));
    auto bodies = texts_at(j, "bodies");
    if (bodies.empty()) throw std::invalid_argument("bodies must not be empty");
    s.bodies = std::make_shared<const std::vector<std::string>>(std::move(bodies));
    if (j.contains("body_tokens")) {
      auto tokens = numbers<std::int32_t>(j["body_tokens"], "body_tokens");
      if (tokens.size() != s.bodies->size()) throw std::invalid_argument("body_tokens must have one count per body");
      s.body_tokens = std::make_shared<const std::vector<std::int32_t>>(std::move(tokens));
    }
    s.seed = number_at<std::uint64_t>(j, "seed");
    s.templated = j.at("templated").get<bool>();
    s.stream = j.at("stream").get<bool>();
    s.concurrency = number_at<int>(j, "concurrency");
    s.rate = number_at<double>(j, "rate");
    const int arrival = number_at<int>(j, "arrival");
    if (arrival < 0 || arrival > static_cast<int>(Arrival::kGamma)) throw std::invalid_argument("arrival out of range");
    s.arrival = static_cast<Arrival>(arrival);
    s.burstiness = number_at<double>(j, "burstiness");
    s.max_concurrency = number_at<int>(j, "max_concurrency");
    s.requests = number_at<std::uint64_t>(j, "requests");
    s.duration_s = number_at<double>(j, "duration_s");
    s.warmup_requests = number_at<std::uint64_t>(j, "warmup_requests");
    s.warmup_s = number_at<double>(j, "warmup_s");
    s.threads = number_at<int>(j, "threads");
    s.threads_auto = j.at("threads_auto").get<bool>();
    s.timeout_s = number_at<double>(j, "timeout_s");
    const auto slo = numbers<double>(j.at("slo"), "slo");
    if (slo.size() != 3) throw std::invalid_argument("slo must be [ttft_ms, tpot_ms, e2el_ms]");
    s.slo = Slo{slo[0], slo[1], slo[2]};
    s.give_up_s = number_at<double>(j, "give_up_s");
    s.max_request_lines = number_at<std::uint64_t>(j, "max_request_lines");
    s.request_queue_bytes = number_at<std::size_t>(j, "request_queue_bytes");
    s.max_lengths = number_at<std::uint64_t>(j, "max_lengths");
    const int record = number_at<int>(j, "record");
    if (record < 0 || record > static_cast<int>(LoadSpec::Record::kNone)) throw std::invalid_argument("record out of range");
    s.record = static_cast<LoadSpec::Record>(record);
    s.record_sample = number_at<double>(j, "record_sample");
    const int ramp = number_at<int>(j, "ramp");
    if (ramp < 0 || ramp > static_cast<int>(Ramp::kExponential)) throw std::invalid_argument("ramp out of range");
    s.ramp = static_cast<Ramp>(ramp);
    s.ramp_start = number_at<double>(j, "ramp_start");
    s.ramp_end = number_at<double>(j, "ramp_end");
    s.percentiles = numbers<double>(j.at("percentiles"), "percentiles");
    if (s.percentiles.size() > 16) throw std::invalid_argument("at most 16 percentiles");
    for (double q : s.percentiles) {
      if (!(q > 0 && q < 100)) throw std::invalid_argument("a percentile must be in (0, 100)");
    }
    // The bounds the binding enforces locally, enforced again: the spec crossed a network.
    if (s.threads < 1 || s.threads > 256 || s.concurrency < 0 || s.concurrency > 100000 || !(s.rate >= 0) ||
        (s.concurrency == 0) == (s.rate == 0) || s.max_concurrency < 0 || s.url_port < 1 || s.url_port > 65535 ||
        !(s.timeout_s > 0) || !(s.burstiness > 0) || !(s.record_sample > 0 && s.record_sample <= 1) ||
        (!s.requests && !(s.duration_s > 0))) {
      throw std::invalid_argument("a number is out of range");
    }
    if (s.ramp != Ramp::kNone && (!(s.ramp_start > 0) || !(s.ramp_end > 0) || !s.requests)) {
      throw std::invalid_argument("a ramp needs start and end rates > 0 and a number of requests");
    }
  } catch (const std::exception& e) {
    error = std::string("the load spec is not valid: ") + e.what();
    return false;
  }
  return true;
}

// ---- agent -> runara ----

std::string hello_line(std::string_view agent_version) {
  return "runara-agent " + std::to_string(kAgentProtocol) + " " + std::string(agent_version);
}

bool parse_hello(std::string_view line, int& protocol, std::string& agent_version) {
  constexpr std::string_view kPrefix = "runara-agent ";
  if (!line.starts_with(kPrefix)) return false;
  line.remove_prefix(kPrefix.size());
  if (!read_int(line, protocol)) return false;
  agent_version = std::string(line.empty() ? line : line.substr(1));
  return true;
}

void append_record_line(std::string& out, const RequestRecord& r) {
  char line[256];
  const int flags = (r.tokens_from_usage ? 1 : 0) | (r.warmup ? 2 : 0);
  const int n = std::snprintf(line, sizeof line, "R %llu %lld %lld %lld %lld %d %d %u %u %d %d %d\n",
                              static_cast<unsigned long long>(r.index), static_cast<long long>(r.intended_ns),
                              static_cast<long long>(r.sent_ns), static_cast<long long>(r.first_token_ns),
                              static_cast<long long>(r.done_ns), r.input_tokens, r.output_tokens, r.chunks, r.prompt,
                              r.status, static_cast<int>(r.error), flags);
  out.append(line, static_cast<std::size_t>(n));
}

bool parse_record_line(std::string_view fields, RequestRecord& r, std::string& error) {
  r = RequestRecord{};
  int status = 0, kind = 0, flags = 0;
  const bool ok = read_int(fields, r.index) && read_int(fields, r.intended_ns) && read_int(fields, r.sent_ns) &&
                  read_int(fields, r.first_token_ns) && read_int(fields, r.done_ns) &&
                  read_int(fields, r.input_tokens) && read_int(fields, r.output_tokens) && read_int(fields, r.chunks) &&
                  read_int(fields, r.prompt) && read_int(fields, status) && read_int(fields, kind) &&
                  read_int(fields, flags) && fields.empty();
  if (!ok) {
    error = "a request record is not 12 integers";
    return false;
  }
  if (status < 0 || status > 999 || kind < 0 || kind >= kErrorKinds || flags < 0 || flags > 3 ||
      r.first_token_ns < -1 || r.done_ns < -1 || r.output_tokens < 0) {
    error = "a request record's status, error kind, flags or times are out of range";
    return false;
  }
  r.status = static_cast<std::int16_t>(status);
  r.error = static_cast<ErrorKind>(kind);
  r.tokens_from_usage = flags & 1;
  r.warmup = flags & 2;
  return true;
}

std::string encode_outcome(const LoadOutcome& o, std::uint64_t records_dropped) {
  json j = {{"stats", stats_json(o.stats)}, {"wall_s", o.wall_s}, {"abandoned", o.abandoned},
            {"max_in_flight", o.max_in_flight}, {"interrupted", o.interrupted}, {"threads", o.threads},
            {"error", o.error}, {"left_out", o.left_out}, {"records_dropped", records_dropped},
            {"max_rss_kb", o.agent_max_rss_kb}};
  o.lengths.to_json(j);
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

bool decode_outcome(std::string_view text, const Slo& slo, std::size_t max_lengths, LoadOutcome& o,
                    std::uint64_t& records_dropped, std::string& error) {
  auto parsed = parse_json_limited(text, error, kMaxJsonDepth, kAgentMaxOutcomeTreeBytes);
  if (!parsed) {
    error = (is_json_too_large(error) ? "the agent's results " : "the agent's results are not valid: ") + error;
    return false;
  }
  try {
    const json& j = *parsed;
    LoadOutcome out;
    out.stats = stats_from(j.at("stats"), slo);
    out.lengths = lengths_from(j.at("input_lens"), j.at("output_lens"), max_lengths);
    out.wall_s = number_at<double>(j, "wall_s");
    out.abandoned = number_at<std::uint64_t>(j, "abandoned");
    out.max_in_flight = number_at<std::int64_t>(j, "max_in_flight");
    out.interrupted = j.at("interrupted").get<bool>();
    out.threads = number_at<int>(j, "threads");
    out.error = j.at("error").get<std::string>();
    out.left_out = number_at<std::uint64_t>(j, "left_out");
    records_dropped = number_at<std::uint64_t>(j, "records_dropped");
    out.agent_max_rss_kb = number_at<long>(j, "max_rss_kb");
    o = std::move(out);
  } catch (const std::exception& e) {
    error = std::string("the agent's results are not valid: ") + e.what();
    return false;
  }
  return true;
}

// ---- plausibility ----

namespace {

// The latest time (ns after the load's start, on the agent's clock) a message can name after
// `elapsed_s` of runara's: the agent started after runara began, and the machines' clocks may
// tick at slightly different rates (by far less than the 1% allowed).
std::int64_t latest_ns(double elapsed_s) {
  const double ns = (std::max(elapsed_s, 0.0) * 1.01 + 1) * 1e9;
  return ns >= 9e18 ? std::numeric_limits<std::int64_t>::max() : static_cast<std::int64_t>(ns);
}

// No request is due after this (LoadShared::claim); none without a duration.
std::int64_t issue_until_ns(const LoadSpec& s) {
  return s.duration_s > 0 ? static_cast<std::int64_t>((s.duration_s + s.warmup_s) * 1e9) : std::numeric_limits<std::int64_t>::max();
}

// As LoadShared::is_warmup: by index, or due within warmup_s.
bool is_warmup(const LoadSpec& s, std::uint64_t index, std::int64_t intended_ns) {
  return index < s.warmup_requests || intended_ns < static_cast<std::int64_t>(s.warmup_s * 1e9);
}

std::uint64_t plus(std::uint64_t a, std::uint64_t b) {
  return a > std::numeric_limits<std::uint64_t>::max() - b ? std::numeric_limits<std::uint64_t>::max() : a + b;
}

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", s);
  return text;
}

}  // namespace

bool admit_record(const LoadSpec& spec, const RequestRecord& r, double elapsed_s, RecordTally& tally, std::string& error) {
  const auto refuse = [&](const std::string& why) {
    error = "request " + std::to_string(r.index) + " " + why;
    return false;
  };
  if (r.intended_ns < 0 || r.sent_ns < 0) return refuse("was due or sent before the load started");
  if (std::max({r.intended_ns, r.sent_ns, r.first_token_ns, r.done_ns}) > latest_ns(elapsed_s)) {
    return refuse("has a time later than the load has run (" + seconds(elapsed_s) + " s)");
  }
  if (r.intended_ns > issue_until_ns(spec)) return refuse("was due after the load's duration ended");
  if (r.warmup != is_warmup(spec, r.index, r.intended_ns)) {
    return refuse(r.warmup ? "is marked warm-up, but the load's warm-up was over" : "is not marked warm-up, but was due within the load's warm-up");
  }
  if (spec.requests && spec.warmup_s == 0 && r.index >= plus(spec.requests, spec.warmup_requests)) {
    return refuse("is past the load's " + std::to_string(plus(spec.requests, spec.warmup_requests)) + " requests");
  }
  if (r.warmup) {
    if (spec.warmup_s == 0 && tally.warmup >= spec.warmup_requests) {
      return refuse("is one warm-up record more than the load's " + std::to_string(spec.warmup_requests) + " warm-up requests");
    }
    ++tally.warmup;
  } else {
    if (spec.requests && tally.measured >= spec.requests) {
      return refuse("is one record more than the load's " + std::to_string(spec.requests) + " requests");
    }
    ++tally.measured;
  }
  return true;
}

bool possible_requests(const LoadSpec& spec, std::uint64_t claimed) {
  if (spec.requests && spec.warmup_s == 0 && claimed > plus(spec.requests, spec.warmup_requests)) return false;
  if (!spec.open_loop() || !(spec.duration_s > 0)) return true;
  const std::int64_t end = issue_until_ns(spec);
  try {
    ArrivalSchedule schedule = spec.schedule();  // the engine's, request for request
    std::uint64_t n = 0;
    for (; n < claimed && n < kScheduleWalk; ++n) {
      if (schedule.next_ns() > end) return false;
    }
    if (n == claimed) return true;
  } catch (const std::invalid_argument&) {
    return false;  // no schedule: the agent could not have run this load
  }
  const double mean = spec.rate * (spec.duration_s + spec.warmup_s);
  return static_cast<double>(claimed) <= 2 * mean + static_cast<double>(kScheduleWalk);
}

bool check_outcome(const LoadSpec& spec, const LoadOutcome& o, std::uint64_t records_dropped, const RecordTally& seen,
                   double elapsed_s, std::string& error) {
  const auto refuse = [&error](const std::string& why) {
    error = "the agent's results are impossible: " + why;
    return false;
  };
  const auto str = [](auto n) { return std::to_string(n); };
  const LoadStats& s = o.stats;
  const std::int64_t latest = latest_ns(elapsed_s);
  if (!std::isfinite(o.wall_s) || o.wall_s < 0) return refuse("wall_s is " + seconds(o.wall_s) + ", not a finite number of seconds >= 0");
  if (o.wall_s * 1e9 > static_cast<double>(latest)) {
    return refuse("wall_s is " + seconds(o.wall_s) + " s, but the load has run for " + seconds(elapsed_s) + " s");
  }
  // Counts against what was asked.
  const std::uint64_t finished = plus(s.completed, s.failed);
  if (spec.requests && finished > spec.requests) {
    return refuse(str(finished) + " requests finished (" + str(s.completed) + " completed, " + str(s.failed) +
                  " failed), but the load asked for " + str(spec.requests));
  }
  if (spec.warmup_s == 0 && s.warmup > spec.warmup_requests) {
    return refuse(str(s.warmup) + " warm-up requests finished, but the load asked for " + str(spec.warmup_requests));
  }
  const std::uint64_t issued = plus(plus(finished, s.warmup), o.abandoned);
  if (!possible_requests(spec, issued)) {
    return refuse(str(issued) + " requests issued (finished, warm-up and abandoned), more than " +
                  (spec.requests && spec.warmup_s == 0 ? "the load's " + str(plus(spec.requests, spec.warmup_requests))
                                                       : "the arrivals its schedule has in " + seconds(spec.duration_s + spec.warmup_s) +
                                                             " s at " + seconds(spec.rate) + "/s"));
  }
  if (finished < seen.measured || s.warmup < seen.warmup) {
    return refuse(str(finished) + " requests and " + str(s.warmup) + " warm-up requests finished, fewer than the " +
                  str(seen.measured) + " and " + str(seen.warmup) + " records it sent");
  }
  // Counters that must add up.
  std::uint64_t errors = 0, statuses = 0;
  for (std::uint64_t n : s.errors) errors = plus(errors, n);
  for (const auto& [status, n] : s.statuses) statuses = plus(statuses, n);
  if (errors != s.failed) return refuse("the errors by kind add up to " + str(errors) + ", not the " + str(s.failed) + " failed");
  if (statuses > plus(finished, s.warmup)) return refuse("the HTTP statuses count " + str(statuses) + " responses, more than the requests");
  if (s.good > s.completed || s.server_input_counted > s.completed || plus(s.usage_counted, s.chunk_counted) != s.completed) {
    return refuse("good, server_input_counted, usage_counted and chunk_counted do not fit the " + str(s.completed) + " completed");
  }
  const std::pair<const char*, const LatencyHistogram*> histograms[] = {
      {"ttft", &s.ttft}, {"tpot", &s.tpot}, {"e2el", &s.e2el}, {"queue", &s.queue},
      {"ttft_from_schedule", &s.ttft_from_schedule}, {"e2el_from_schedule", &s.e2el_from_schedule}};
  for (const auto& [name, h] : histograms) {
    if (h->count() > s.completed) {
      return refuse(std::string(name) + " has " + str(h->count()) + " samples, more than the " + str(s.completed) + " completed");
    }
  }
  const std::pair<const char*, std::int64_t> tokens[] = {{"total_input_tokens", s.input_tokens},
                                                         {"total_output_tokens", s.output_tokens},
                                                         {"client_input_tokens", s.client_input_tokens},
                                                         {"server_input_tokens", s.server_input_tokens}};
  for (const auto& [name, n] : tokens) {
    if (n < 0) return refuse(std::string(name) + " is " + str(n) + ": a count cannot be negative");
  }
  const std::uint64_t ended = plus(finished, s.warmup);
  if (o.left_out > ended || records_dropped > ended) return refuse("more requests left out of requests.jsonl than finished");
  if (o.lengths.complete() && o.lengths.size() > finished) return refuse("input_lens has more entries than requests finished");
  // Times: after the start, in order, within what runara saw of the load.
  const std::pair<const char*, std::int64_t> times[] = {{"first_sent_ns", s.first_sent_ns}, {"last_sent_ns", s.last_sent_ns},
                                                        {"first_due_ns", s.first_due_ns},   {"last_due_ns", s.last_due_ns},
                                                        {"last_done_ns", s.last_done_ns}};
  for (const auto& [name, t] : times) {
    if (t < -1 || t > latest) {
      return refuse(std::string(name) + " is " + str(t) + ": before the load's start or after " + seconds(elapsed_s) + " s");
    }
  }
  if (s.first_sent_ns > s.last_sent_ns || s.first_due_ns > s.last_due_ns || s.last_due_ns > issue_until_ns(spec)) {
    return refuse("the first and last send or due times are out of order, or past the load's duration");
  }
  if (static_cast<double>(s.tokens_per_second.size()) > std::max(elapsed_s, 0.0) * 1.01 + 2) {
    return refuse("tokens_per_second covers " + str(s.tokens_per_second.size()) + " s, but the load has run for " + seconds(elapsed_s) + " s");
  }
  // The load's own shape.
  const std::uint64_t cap = spec.open_loop() ? (spec.max_concurrency ? static_cast<std::uint64_t>(spec.max_concurrency) : issued)
                                             : static_cast<std::uint64_t>(spec.concurrency);
  if (o.max_in_flight < 0 || static_cast<std::uint64_t>(o.max_in_flight) > cap) {
    return refuse("max_in_flight is " + str(o.max_in_flight) + ", outside 0 ... " + str(cap));
  }
  if (o.threads < 1 || o.threads > 256) return refuse("threads is " + str(o.threads) + ", outside 1 ... 256");
  if (o.agent_max_rss_kb < -1) return refuse("max_rss_kb is " + str(o.agent_max_rss_kb));
  return true;
}

}  // namespace runara
