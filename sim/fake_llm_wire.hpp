// Wire formats of the fake LLM server (internal to sim): vLLM-shaped
// JSON bodies, SSE events, HTTP framing and the Prometheus /metrics text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace runara::fake_llm {

std::string json_escape(std::string_view s);

// The text of output token i: a word from a small fixed vocabulary.
std::string_view token_text(int i);

// What every chunk of one response shares.
struct ResponseShape {
  bool chat = false;
  std::string id;          // "cmpl-..." or "chatcmpl-..."
  int64_t created = 0;     // unix seconds
  std::string model_json;  // the model name, already JSON-escaped
};

// SSE events, each "data: {...}\n\n". finish_reason nullptr means null.
std::string completion_chunk_event(const ResponseShape& r, std::string_view text,
                                   const char* finish_reason);
std::string chat_role_event(const ResponseShape& r);
std::string chat_content_event(const ResponseShape& r, std::string_view text,
                               const char* finish_reason);
std::string usage_event(const ResponseShape& r, int64_t prompt_tokens, int64_t completion_tokens);
std::string malformed_event(const ResponseShape& r);
inline constexpr std::string_view kDoneEvent = "data: [DONE]\n\n";

// Non-streaming bodies.
std::string completion_body(const ResponseShape& r, std::string_view text,
                            const char* finish_reason, int64_t prompt_tokens,
                            int64_t completion_tokens);
// vLLM's ErrorResponse before 0.10.1 (PR #22099 nested it under "error"):
// {"object":"error","message":M,"type":T,"param":null,"code":C}
std::string error_body(std::string_view message, std::string_view type, int code);
std::string models_body(std::string_view model, int64_t created, int max_model_len);
// vLLM's TokenizeResponse: `count` made-up token ids.
std::string tokenize_body(int64_t count, int max_model_len);

// HTTP framing.
std::string http_date();  // RFC 7231 IMF-fixdate for now (cached per second)
const char* status_text(int status);
// Status line and headers, ending with the blank line. content_length < 0
// means chunked transfer encoding (or, when !chunked_ok, no framing: the body
// ends when the connection closes).
std::string response_head(int status, std::string_view content_type, int64_t content_length,
                          bool keep_alive, bool chunked_ok = true);
void append_http_chunk(std::string& out, std::string_view data);
inline constexpr std::string_view kLastChunk = "0\r\n\r\n";

// Counters behind /metrics.
struct Metrics {
  uint64_t prompt_tokens = 0;
  uint64_t generation_tokens = 0;
  uint64_t success_stop = 0;
  uint64_t success_length = 0;
  uint64_t running = 0;
  uint64_t waiting = 0;  // requests waiting for a free sequence (max_num_seqs)
  bool prefix_cache = false;          // the prefix cache's counters are shown only with one
  uint64_t prefix_cache_queries = 0;  // prompt tokens looked up
  uint64_t prefix_cache_hits = 0;     // of those, found cached
  double kv_cache_usage = 0;          // blocks held / capacity
  // Histograms of seconds, vLLM's bucket bounds.
  struct Hist {
    std::vector<double> bounds;
    std::vector<uint64_t> counts;  // per bound, not cumulative; last is +Inf
    uint64_t count = 0;
    double sum = 0;
    explicit Hist(std::vector<double> b) : bounds(std::move(b)), counts(bounds.size() + 1, 0) {}
    void observe(double v);
  };
  Hist ttft{{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
             7.5, 10.0}};
  Hist e2e{{1.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0}};
  Hist itl{{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5}};
};
std::string metrics_text(const Metrics& m, std::string_view model);

}  // namespace runara::fake_llm
