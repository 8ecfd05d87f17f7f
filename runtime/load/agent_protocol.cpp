#include "load/agent_protocol.hpp"

#include <charconv>
#include <limits>

#include "json_limits.hpp"

namespace runara {

using nlohmann::json;

namespace {

// ---- histograms: 128-bit sums travel as [high, low] 64-bit halves ----

json u128(unsigned __int128 v) { return json::array({static_cast<std::uint64_t>(v >> 64), static_cast<std::uint64_t>(v)}); }

unsigned __int128 u128_from(const json& j) {
  if (!j.is_array() || j.size() != 2) throw std::invalid_argument("a 128-bit value must be [high, low]");
  return (static_cast<unsigned __int128>(j[0].get<std::uint64_t>()) << 64) | j[1].get<std::uint64_t>();
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
  s.highest = j.at("highest").get<std::int64_t>();
  s.significant_figures = j.at("figures").get<int>();
  s.count = j.at("count").get<std::uint64_t>();
  s.saturated = j.at("saturated").get<std::uint64_t>();
  s.min = j.at("min").get<std::int64_t>();
  s.max = j.at("max").get<std::int64_t>();
  s.sum = static_cast<__int128>(u128_from(j.at("sum")));
  s.sum_sq = u128_from(j.at("sum_sq"));
  const json& b = j.at("buckets");
  if (!b.is_array() || b.size() % 2) throw std::invalid_argument(std::string(name) + ": buckets must be [slot, count, ...]");
  for (std::size_t i = 0; i < b.size(); i += 2) s.buckets.emplace_back(b[i].get<std::uint32_t>(), b[i + 1].get<std::uint64_t>());
  LatencyHistogram out;
  std::string error;
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
  s.completed = j.at("completed").get<std::uint64_t>();
  s.failed = j.at("failed").get<std::uint64_t>();
  s.warmup = j.at("warmup").get<std::uint64_t>();
  s.good = j.at("good").get<std::uint64_t>();
  s.input_tokens = j.at("input_tokens").get<std::int64_t>();
  s.output_tokens = j.at("output_tokens").get<std::int64_t>();
  s.client_input_tokens = j.at("client_input_tokens").get<std::int64_t>();
  s.server_input_tokens = j.at("server_input_tokens").get<std::int64_t>();
  s.server_input_counted = j.at("server_input_counted").get<std::uint64_t>();
  s.usage_counted = j.at("usage_counted").get<std::uint64_t>();
  s.chunk_counted = j.at("chunk_counted").get<std::uint64_t>();
  s.ttft = histogram_from(j.at("ttft"), "ttft");
  s.tpot = histogram_from(j.at("tpot"), "tpot");
  s.itl = histogram_from(j.at("itl"), "itl");
  s.e2el = histogram_from(j.at("e2el"), "e2el");
  s.queue = histogram_from(j.at("queue"), "queue");
  s.errors = j.at("errors").get<std::array<std::uint64_t, kErrorKinds>>();
  for (const auto& [key, n] : j.at("statuses").items()) {
    int status = 0;
    const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), status);
    if (ec != std::errc() || end != key.data() + key.size() || status < 0 || status > 999) {
      throw std::invalid_argument("statuses: '" + key + "' is not an HTTP status");
    }
    s.statuses[status] = n.get<std::uint64_t>();
  }
  for (const auto& [kind, samples] : j.at("error_samples").items()) {
    if (!known_kind(kind)) throw std::invalid_argument("error_samples: unknown kind '" + kind + "'");
    auto list = samples.get<std::vector<std::string>>();
    if (list.size() > LoadStats::kSamplesPerKind) list.resize(LoadStats::kSamplesPerKind);
    s.error_samples[kind] = std::move(list);
  }
  s.first_sent_ns = j.at("first_sent_ns").get<std::int64_t>();
  s.last_sent_ns = j.at("last_sent_ns").get<std::int64_t>();
  s.first_due_ns = j.at("first_due_ns").get<std::int64_t>();
  s.last_due_ns = j.at("last_due_ns").get<std::int64_t>();
  s.last_done_ns = j.at("last_done_ns").get<std::int64_t>();
  s.tokens_per_second = j.at("tokens_per_second").get<std::vector<std::uint32_t>>();
  return s;
}

RequestLengths lengths_from(const json& in, const json& out, std::size_t max) {
  RequestLengths lengths(max);
  if (in.is_null() || out.is_null()) {
    lengths.overflow();
    return lengths;
  }
  const auto inputs = in.get<std::vector<std::int32_t>>();
  const auto outputs = out.get<std::vector<std::int32_t>>();
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
            {"mode", s.mode == LoadMode::kOpenAi ? "openai" : "http"}, {"name", s.name}, {"url", s.url},
            {"url_host", s.url_host}, {"url_port", s.url_port}, {"method", s.method},
            {"headers", s.header_lines()}, {"bodies", s.bodies ? *s.bodies : std::vector<std::string>{}},
            {"seed", s.seed}, {"templated", s.templated}, {"stream", s.stream}, {"concurrency", s.concurrency},
            {"rate", s.rate}, {"arrival", static_cast<int>(s.arrival)}, {"burstiness", s.burstiness},
            {"max_concurrency", s.max_concurrency}, {"requests", s.requests}, {"duration_s", s.duration_s},
            {"warmup_requests", s.warmup_requests}, {"warmup_s", s.warmup_s}, {"threads", s.threads},
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
    const int protocol = j.at("protocol").get<int>();
    if (protocol != kAgentProtocol) {
      error = "runara speaks agent protocol " + std::to_string(protocol) + ", this agent " + std::to_string(kAgentProtocol);
      return false;
    }
    deadline_s = j.at("deadline_s").get<double>();
    memory_bytes = j.at("memory_bytes").get<std::size_t>();
    const std::string mode = j.at("mode").get<std::string>();
    if (mode != "openai" && mode != "http") throw std::invalid_argument("mode must be openai or http");
    s.mode = mode == "openai" ? LoadMode::kOpenAi : LoadMode::kHttp;
    s.name = j.at("name").get<std::string>();
    s.url = j.at("url").get<std::string>();
    s.url_host = j.at("url_host").get<std::string>();
    s.url_port = j.at("url_port").get<int>();
    s.method = j.at("method").get<std::string>();
    s.headers = std::make_shared<const std::vector<std::string>>(j.at("headers").get<std::vector<std::string>>());
    auto bodies = j.at("bodies").get<std::vector<std::string>>();
    if (bodies.empty()) throw std::invalid_argument("bodies must not be empty");
    s.bodies = std::make_shared<const std::vector<std::string>>(std::move(bodies));
    if (j.contains("body_tokens")) {
      auto tokens = j["body_tokens"].get<std::vector<std::int32_t>>();
      if (tokens.size() != s.bodies->size()) throw std::invalid_argument("body_tokens must have one count per body");
      s.body_tokens = std::make_shared<const std::vector<std::int32_t>>(std::move(tokens));
    }
    s.seed = j.at("seed").get<std::uint64_t>();
    s.templated = j.at("templated").get<bool>();
    s.stream = j.at("stream").get<bool>();
    s.concurrency = j.at("concurrency").get<int>();
    s.rate = j.at("rate").get<double>();
    const int arrival = j.at("arrival").get<int>();
    if (arrival < 0 || arrival > static_cast<int>(Arrival::kGamma)) throw std::invalid_argument("arrival out of range");
    s.arrival = static_cast<Arrival>(arrival);
    s.burstiness = j.at("burstiness").get<double>();
    s.max_concurrency = j.at("max_concurrency").get<int>();
    s.requests = j.at("requests").get<std::uint64_t>();
    s.duration_s = j.at("duration_s").get<double>();
    s.warmup_requests = j.at("warmup_requests").get<std::uint64_t>();
    s.warmup_s = j.at("warmup_s").get<double>();
    s.threads = j.at("threads").get<int>();
    s.timeout_s = j.at("timeout_s").get<double>();
    const auto slo = j.at("slo").get<std::array<double, 3>>();
    s.slo = Slo{slo[0], slo[1], slo[2]};
    s.give_up_s = j.at("give_up_s").get<double>();
    s.max_request_lines = j.at("max_request_lines").get<std::uint64_t>();
    s.request_queue_bytes = j.at("request_queue_bytes").get<std::size_t>();
    s.max_lengths = j.at("max_lengths").get<std::uint64_t>();
    const int record = j.at("record").get<int>();
    if (record < 0 || record > static_cast<int>(LoadSpec::Record::kNone)) throw std::invalid_argument("record out of range");
    s.record = static_cast<LoadSpec::Record>(record);
    s.record_sample = j.at("record_sample").get<double>();
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
            {"error", o.error}, {"left_out", o.left_out}, {"records_dropped", records_dropped}};
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
    out.wall_s = j.at("wall_s").get<double>();
    out.abandoned = j.at("abandoned").get<std::uint64_t>();
    out.max_in_flight = j.at("max_in_flight").get<std::int64_t>();
    out.interrupted = j.at("interrupted").get<bool>();
    out.threads = j.at("threads").get<int>();
    out.error = j.at("error").get<std::string>();
    out.left_out = j.at("left_out").get<std::uint64_t>();
    records_dropped = j.at("records_dropped").get<std::uint64_t>();
    o = std::move(out);
  } catch (const std::exception& e) {
    error = std::string("the agent's results are not valid: ") + e.what();
    return false;
  }
  return true;
}

}  // namespace runara
