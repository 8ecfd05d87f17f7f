#include "sim/fake_llm_wire.hpp"

#include <charconv>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace runara::fake_llm {

std::string json_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(ch);
        }
    }
  }
  return out;
}

std::string_view token_text(int i) {
  static constexpr std::string_view kVocab[] = {
      " The", " city", " in", " the", " state", " of", " California", ",", " is",
      " known", " for", " its", " sunny", " weather", " and", " a", " vibrant",
      " culture", ".", " It"};
  constexpr int n = static_cast<int>(std::size(kVocab));
  return kVocab[((i % n) + n) % n];
}

namespace {

void head(std::string& out, const ResponseShape& r, const char* object) {
  out += "{\"id\":\"";
  out += r.id;
  out += "\",\"object\":\"";
  out += object;
  out += "\",\"created\":";
  out += std::to_string(r.created);
  out += ",\"model\":\"";
  out += r.model_json;
  out += "\",\"choices\":[";
}

void finish(std::string& out, const char* finish_reason) {
  out += ",\"finish_reason\":";
  if (finish_reason) {
    out += '"';
    out += finish_reason;
    out += '"';
  } else {
    out += "null";
  }
}

void usage_obj(std::string& out, int64_t prompt, int64_t completion, bool details) {
  out += "\"usage\":{\"prompt_tokens\":";
  out += std::to_string(prompt);
  out += ",\"total_tokens\":";
  out += std::to_string(prompt + completion);
  out += ",\"completion_tokens\":";
  out += std::to_string(completion);
  if (details) out += ",\"prompt_tokens_details\":null";
  out += '}';
}

}  // namespace

std::string completion_chunk_event(const ResponseShape& r, std::string_view text,
                                   const char* finish_reason) {
  std::string out = "data: ";
  out.reserve(256 + text.size());
  head(out, r, "text_completion");
  out += "{\"index\":0,\"text\":\"";
  out += text;
  out += "\",\"logprobs\":null";
  finish(out, finish_reason);
  out += ",\"stop_reason\":null}],\"usage\":null}\n\n";
  return out;
}

std::string chat_role_event(const ResponseShape& r) {
  std::string out = "data: ";
  head(out, r, "chat.completion.chunk");
  out += "{\"index\":0,\"delta\":{\"role\":\"assistant\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n";
  return out;
}

std::string chat_content_event(const ResponseShape& r, std::string_view text,
                               const char* finish_reason) {
  std::string out = "data: ";
  out.reserve(256 + text.size());
  head(out, r, "chat.completion.chunk");
  out += "{\"index\":0,\"delta\":{\"content\":\"";
  out += text;
  out += "\"},\"logprobs\":null";
  finish(out, finish_reason);
  out += "}]}\n\n";
  return out;
}

std::string usage_event(const ResponseShape& r, int64_t prompt_tokens, int64_t completion_tokens) {
  std::string out = "data: ";
  head(out, r, r.chat ? "chat.completion.chunk" : "text_completion");
  out += "],";
  usage_obj(out, prompt_tokens, completion_tokens, false);
  out += "}\n\n";
  return out;
}

std::string malformed_event(const ResponseShape& r) {
  std::string out = "data: ";
  head(out, r, r.chat ? "chat.completion.chunk" : "text_completion");
  out += r.chat ? "{\"index\":0,\"delta\":{\"content\":" : "{\"index\":0,\"text\":";
  out += "\n\n";
  return out;
}

std::string completion_body(const ResponseShape& r, std::string_view text,
                            const char* finish_reason, int64_t prompt_tokens,
                            int64_t completion_tokens) {
  std::string out;
  out.reserve(384 + text.size());
  head(out, r, r.chat ? "chat.completion" : "text_completion");
  if (r.chat) {
    out += "{\"index\":0,\"message\":{\"role\":\"assistant\",\"reasoning_content\":null,\"content\":\"";
    out += text;
    out += "\",\"tool_calls\":[]},\"logprobs\":null";
    finish(out, finish_reason);
    out += ",\"stop_reason\":null}],";
  } else {
    out += "{\"index\":0,\"text\":\"";
    out += text;
    out += "\",\"logprobs\":null";
    finish(out, finish_reason);
    out += ",\"stop_reason\":null,\"prompt_logprobs\":null}],";
  }
  usage_obj(out, prompt_tokens, completion_tokens, true);
  if (r.chat) out += ",\"prompt_logprobs\":null";
  out += ",\"kv_transfer_params\":null}";
  return out;
}

std::string error_body(std::string_view message, std::string_view type, int code) {
  std::string out = "{\"object\":\"error\",\"message\":\"";
  out += json_escape(message);
  out += "\",\"type\":\"";
  out += json_escape(type);
  out += "\",\"param\":null,\"code\":";
  out += std::to_string(code);
  out += "}";
  return out;
}

std::string models_body(std::string_view model, int64_t created, int max_model_len) {
  std::string m = json_escape(model);
  std::string c = std::to_string(created);
  std::string out = "{\"object\":\"list\",\"data\":[{\"id\":\"" + m +
                    "\",\"object\":\"model\",\"created\":" + c +
                    ",\"owned_by\":\"vllm\",\"root\":\"" + m +
                    "\",\"parent\":null,\"max_model_len\":" + std::to_string(max_model_len) +
                    ",\"permission\":[{\"id\":\"modelperm-fake\",\"object\":\"model_permission\","
                    "\"created\":" + c +
                    ",\"allow_create_engine\":false,\"allow_sampling\":true,\"allow_logprobs\":true,"
                    "\"allow_search_indices\":false,\"allow_view\":true,\"allow_fine_tuning\":false,"
                    "\"organization\":\"*\",\"group\":null,\"is_blocking\":false}]}]}";
  return out;
}

std::string tokenize_body(int64_t count, int max_model_len) {
  std::string out = "{\"count\":" + std::to_string(count) + ",\"max_model_len\":" + std::to_string(max_model_len) +
                    ",\"tokens\":[";
  out.reserve(out.size() + 8 * static_cast<size_t>(count) + 32);
  for (int64_t i = 0; i < count; ++i) {
    if (i) out += ',';
    out += std::to_string(1000 + i % 30000);  // ids of a 32k vocabulary, past its special tokens
  }
  out += "],\"token_strs\":null}";
  return out;
}

std::string http_date() {
  static std::mutex mu;
  static time_t cached_at = 0;
  static char cached[64] = {0};
  time_t now = std::time(nullptr);
  std::lock_guard<std::mutex> lock(mu);
  if (now != cached_at) {
    struct tm tm_utc;
    gmtime_r(&now, &tm_utc);
    std::strftime(cached, sizeof cached, "%a, %d %b %Y %H:%M:%S GMT", &tm_utc);
    cached_at = now;
  }
  return cached;
}

const char* status_text(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 413: return "Request Entity Too Large";
    case 500: return "Internal Server Error";
    default: return "Unknown";
  }
}

std::string response_head(int status, std::string_view content_type, int64_t content_length,
                          bool keep_alive, bool chunked_ok) {
  std::string out = "HTTP/1.1 ";
  out += std::to_string(status);
  out += ' ';
  out += status_text(status);
  out += "\r\ndate: ";
  out += http_date();
  out += "\r\nserver: uvicorn\r\n";
  if (!content_type.empty()) {
    out += "content-type: ";
    out += content_type;
    out += "\r\n";
  }
  if (content_length >= 0) {
    out += "content-length: ";
    out += std::to_string(content_length);
    out += "\r\n";
  } else if (chunked_ok) {
    out += "transfer-encoding: chunked\r\n";
  }
  if (!keep_alive) out += "connection: close\r\n";
  out += "\r\n";
  return out;
}

void append_http_chunk(std::string& out, std::string_view data) {
  char size[24];
  auto res = std::to_chars(size, size + sizeof size, data.size(), 16);
  out.append(size, res.ptr);
  out += "\r\n";
  out += data;
  out += "\r\n";
}

void Metrics::Hist::observe(double v) {
  size_t i = 0;
  while (i < bounds.size() && v > bounds[i]) ++i;
  ++counts[i];
  ++count;
  sum += v;
}

namespace {

// Python's float repr, as prometheus_client prints values ("5.0", "0.25").
std::string py_float(double v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

void metric_head(std::string& out, const char* name, const char* help, const char* type) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

void sample(std::string& out, const char* name, const std::string& labels, double v) {
  out += name;
  out += '{';
  out += labels;
  out += "} ";
  out += py_float(v);
  out += '\n';
}

void histogram(std::string& out, const char* name, const char* help, const Metrics::Hist& h,
               const std::string& model_label) {
  metric_head(out, name, help, "histogram");
  std::string base = name;
  uint64_t cum = 0;
  for (size_t i = 0; i <= h.bounds.size(); ++i) {
    cum += h.counts[i];
    std::string le = i < h.bounds.size() ? py_float(h.bounds[i]) : "+Inf";
    sample(out, (base + "_bucket").c_str(), "engine=\"0\",le=\"" + le + "\"," + model_label,
           static_cast<double>(cum));
  }
  sample(out, (base + "_count").c_str(), "engine=\"0\"," + model_label, static_cast<double>(h.count));
  sample(out, (base + "_sum").c_str(), "engine=\"0\"," + model_label, h.sum);
}

}  // namespace

std::string metrics_text(const Metrics& m, std::string_view model) {
  // Labels are sorted by name, as prometheus_client prints them.
  std::string model_label = "model_name=\"" + json_escape(model) + "\"";
  std::string labels = "engine=\"0\"," + model_label;
  std::string out;
  metric_head(out, "vllm:num_requests_running", "Number of requests in model execution batches.", "gauge");
  sample(out, "vllm:num_requests_running", labels, static_cast<double>(m.running));
  metric_head(out, "vllm:num_requests_waiting", "Number of requests waiting to be processed.", "gauge");
  sample(out, "vllm:num_requests_waiting", labels, static_cast<double>(m.waiting));
  metric_head(out, "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", "gauge");
  sample(out, "vllm:kv_cache_usage_perc", labels, m.kv_cache_usage);
  if (m.prefix_cache) {
    metric_head(out, "vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.", "counter");
    sample(out, "vllm:prefix_cache_queries_total", labels, static_cast<double>(m.prefix_cache_queries));
    metric_head(out, "vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.", "counter");
    sample(out, "vllm:prefix_cache_hits_total", labels, static_cast<double>(m.prefix_cache_hits));
  }
  metric_head(out, "vllm:prompt_tokens_total", "Number of prefill tokens processed.", "counter");
  sample(out, "vllm:prompt_tokens_total", labels, static_cast<double>(m.prompt_tokens));
  metric_head(out, "vllm:generation_tokens_total", "Number of generation tokens processed.", "counter");
  sample(out, "vllm:generation_tokens_total", labels, static_cast<double>(m.generation_tokens));
  metric_head(out, "vllm:request_success_total", "Count of successfully processed requests.", "counter");
  sample(out, "vllm:request_success_total", "engine=\"0\",finished_reason=\"length\"," + model_label,
         static_cast<double>(m.success_length));
  sample(out, "vllm:request_success_total", "engine=\"0\",finished_reason=\"stop\"," + model_label,
         static_cast<double>(m.success_stop));
  histogram(out, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
            m.ttft, model_label);
  histogram(out, "vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
            m.itl, model_label);
  histogram(out, "vllm:e2e_request_latency_seconds",
            "Histogram of e2e request latency in seconds.", m.e2e, model_label);
  return out;
}

}  // namespace runara::fake_llm
