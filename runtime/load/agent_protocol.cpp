#include "load/agent_protocol.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "json_limits.hpp"

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
  LatencyHistogram out;
  std::string error;
  // runara's statistics use the default shape only: another one would be an allocation of up to
  // 50 MB per histogram that a hostile agent chooses.
  if (s.highest != LatencyHistogram::kOneHourNs || s.significant_figures != 3) {
    throw std::invalid_argument(std::string(name) + ": histogram shape differs from runara's (1 hour, 3 figures)");
  }
  if (!LatencyHistogram::from_state(s, out, error)) throw std::invalid_argument(std::string(name) + ": " + error);
  return out;
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
          {"errors", s.errors}, {"statuses", std::move(statuses)}, {"error_samples", s.error_samples},
          {"first_sent_ns", s.first_sent_ns}, {"last_sent_ns", s.last_sent_ns}, {"first_due_ns", s.first_due_ns},
          {"last_due_ns", s.last_due_ns}, {"last_done_ns", s.last_done_ns}, {"tokens_per_second", s.tokens_per_second}};
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
            {"record", static_cast<int>(s.record)}, {"record_sample", s.record_sample}};
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
    // The bounds the binding enforces locally, enforced again: the spec crossed a network.
    if (s.threads < 1 || s.threads > 256 || s.concurrency < 0 || s.concurrency > 100000 || !(s.rate >= 0) ||
        (s.concurrency == 0) == (s.rate == 0) || s.max_concurrency < 0 || s.url_port < 1 || s.url_port > 65535 ||
        !(s.timeout_s > 0) || !(s.burstiness > 0) || !(s.record_sample > 0 && s.record_sample <= 1) ||
        (!s.requests && !(s.duration_s > 0))) {
      throw std::invalid_argument("a number is out of range");
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
  auto parsed = parse_json_limited(text, error);
  if (!parsed) {
    error = "the agent's results are not valid: " + error;
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

}  // namespace runara
