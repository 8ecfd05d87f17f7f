// A fake OpenAI-compatible (vLLM-like) streaming LLM server for exercising
// load generators without a GPU.
//
// Event driven: one libuv loop on one thread of its own, http-parser for
// requests, HTTP/1.1 keep-alive (and pipelining), no thread per connection.
// Thousands of concurrent streams fit on one core.
//
// Endpoints:
//   POST /v1/completions, POST /v1/chat/completions
//        "stream" (default false), "stream_options": {"include_usage"},
//        "max_tokens" (chat also "max_completion_tokens"), "ignore_eos";
//        the prompt / messages only size the reported prompt_tokens. A "model" other than
//        config.model is refused as vLLM refuses it: 404 {"object":"error","message":"The model
//        `X` does not exist.","type":"NotFoundError","param":null,"code":404} (/tokenize too).
//        Errors take the flat ErrorResponse of vLLM before 0.10.1 (0.6.4 is what the simulated
//        `vllm` reports); a client reads both shapes.
//   POST /tokenize (vLLM's, at the root): {"model", "prompt"} or {"model", "messages"} ->
//        {"count", "max_model_len", "tokens", "token_strs": null}, counted as usage's
//        prompt_tokens is (times 1 + tokenize_skew_pct / 100); with tokenize off, 404
//        {"detail":"Not Found"} as a vLLM without the route.
//   GET  /v1/models, GET /health, GET /metrics (Prometheus text, vLLM V1 names)
//   GET/HEAD of any other path: config.static_body when serve_static is set
//        (generic HTTP benchmarking), else 404.
//
// The wire format follows recorded vLLM streams: "data: {json}\n\n" events,
// one per HTTP chunk (Transfer-Encoding: chunked), completions chunks with
// "usage":null, chat streams opening with a {"role":"assistant"} delta, the
// final content chunk carrying finish_reason, an optional usage chunk with
// "choices":[], then "data: [DONE]\n\n".
//
// Timing: token i (0-based) of a request is due at
//   start + ttft_ms + prefill_ms_per_token * (prompt tokens not in the prefix cache) + i * itl_ms (+ stall_ms once a stall has begun)
// where start is when the request's last byte was parsed, or, when max_num_seqs requests were
// already running then, when one of them ended and this one (first in line) took its place:
// vLLM's scheduler runs at most --max-num-seqs sequences and the rest wait, so TTFT (counted
// from arrival, in /metrics as by the client) grows with the queue. Every due time is
// computed from arrival, never from the previous send, so late wake-ups do not
// accumulate; sends wake on a timerfd with nanosecond deadlines, so nothing is
// sent early, and late only by the scheduler's wake-up delay. A chunk of
// tokens_per_chunk tokens is sent when its last token is due. The chat role
// chunk goes out together with the first content chunk, as vLLM does; the
// response headers go out at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace runara {

struct FakeLlmConfig {
  std::string host = "127.0.0.1";  // IPv4 or IPv6 literal to bind
  std::string model = "fake-model";

  double ttft_ms = 0;              // time to the first token
  double itl_ms = 0;               // time between tokens
  // A batching GPU's behaviour, for the simulated cloud: a request's ITL is itl_ms plus this
  // much per stream already running when it arrives, and its TTFT grows by prefill_ms_per_token
  // per prompt token. 0 (the default) keeps every request's timing fixed.
  double itl_per_stream_ms = 0;
  double prefill_ms_per_token = 0;
  // vLLM's automatic prefix caching (sim/fake_llm_prefix_cache.hpp): blocks of block_size tokens,
  // at most prefix_cache_blocks of them held (LRU), 0: no cache. Prefill (prefill_ms_per_token)
  // is paid only for the prompt tokens not found; /metrics counts vllm:prefix_cache_queries_total
  // and _hits_total (tokens) and vllm:kv_cache_usage_perc (blocks held / capacity).
  int block_size = 16;
  std::size_t prefix_cache_blocks = 65536;
  int output_tokens = 16;          // fixed output length...
  int output_tokens_min = 0;       // ...or uniform in [min, max] when
  int output_tokens_max = 0;       //    output_tokens_max > 0
  // /v1/completions without max_tokens is capped at this many tokens, as in
  // vLLM and OpenAI (16); 0 turns the cap off. Chat has no default cap.
  int completions_default_max_tokens = 16;
  int tokens_per_chunk = 1;        // tokens per streamed chunk (>= 1)

  enum class Usage { kRequest, kAlways, kNever };
  // kRequest: a usage chunk only when stream_options.include_usage is true
  // (vLLM); kAlways / kNever override the request.
  Usage usage = Usage::kRequest;
  // Reported prompt tokens; -1: counted from the text as a byte-level BPE tokenizer counts common
  // English (fake_llm_tokens.hpp): a word one token, so runara's synthetic prompts count as asked.
  int prompt_tokens = -1;
  int max_model_len = 4096;        // reported by /v1/models and /tokenize
  // vLLM's --max-num-seqs: at most this many requests generate at once, the others wait in
  // arrival order (/metrics: vllm:num_requests_running / _waiting). 0: no limit.
  int max_num_seqs = 0;

  // POST /tokenize: served (vLLM), or answered 404 as a server without it; its count is usage's
  // prompt_tokens skewed by this many percent (rounded), to make a client's check differ.
  bool tokenize = true;
  double tokenize_skew_pct = 0;

  // Error injection: each LLM request independently draws, with these
  // probabilities, from a seeded generator:
  double error_500_fraction = 0;   // answer 500 with a vLLM error body at once
  double stall_fraction = 0;       // stop sending for stall_ms before a random token
  double stall_ms = 0;
  double disconnect_fraction = 0;  // close the connection after a random number
                                   // of tokens (>= 1, fewer than all when > 1),
                                   // without the terminating chunk
  double malformed_fraction = 0;   // send one truncated-JSON event before a
                                   // random token (non-streaming: a truncated body)
  uint64_t seed = 42;

  bool serve_static = false;       // generic mode: GET of any other path
  std::string static_body = "OK\n";
  std::string static_content_type = "text/plain; charset=utf-8";

  size_t max_request_body_bytes = 8u << 20;  // larger bodies get 413

  // Keep every TTFT and inter-chunk gap as sent (see FakeLlmServer::sent_timings); off by
  // default because the lists grow with every request.
  bool record_timings = false;

  // Bind with SO_REUSEPORT, so that several servers (one event-loop thread each) can share one
  // port and the kernel spreads the connections over them: `serve-fake-llm --threads N`.
  bool reuse_port = false;
};

// What the server actually did, measured at its own write() calls with the same monotonic clock
// a client on this machine uses: TTFT from the request's arrival to the first token
// chunk written, ITL as the gap between consecutive chunks (per token), TPOT per streamed
// request as (last chunk - first chunk) / (tokens - 1). Under CPU contention these drift from the
// configured ttft_ms/itl_ms; a client's accuracy is its distance from these.
struct FakeLlmTimings {
  std::vector<double> ttft_ms;  // one per request, in the order first tokens went out
  std::vector<double> itl_ms;   // one per chunk after the first
  std::vector<double> tpot_ms;  // one per completed streamed request of 2+ tokens
};

struct FakeLlmStats {
  // Responses completed, of any status, but those to /tokenize and /metrics: what a load sent,
  // without the token-count check it makes first (tokenize_requests) and the scrapes of /metrics
  // around it (its prefix-cache hit rate).
  uint64_t requests_served = 0;
  uint64_t tokenize_requests = 0;     // responses to /tokenize (404s included)
  uint64_t open_connections = 0;
  uint64_t connections_accepted = 0;
  uint64_t active_streams = 0;        // LLM responses in progress (running or waiting)
  uint64_t waiting_requests = 0;      // of those, waiting for a free sequence (max_num_seqs)
  uint64_t waiting_queue_entries = 0; // the queue those wait in, entries not yet skipped included
  uint64_t unknown_model = 0;         // requests refused 404 for a model not served
  uint64_t tokens_sent = 0;
  uint64_t injected_errors = 0;
  uint64_t injected_stalls = 0;
  uint64_t injected_disconnects = 0;
  uint64_t injected_malformed = 0;
  uint64_t client_aborts = 0;         // connections the client closed mid-response
};

class FakeLlmServer {
 public:
  explicit FakeLlmServer(FakeLlmConfig config = {});
  ~FakeLlmServer();  // stops
  FakeLlmServer(const FakeLlmServer&) = delete;
  FakeLlmServer& operator=(const FakeLlmServer&) = delete;

  // Binds config().host:port (0 picks a free port), starts the loop thread and
  // returns the bound port, or a negative libuv error code. A running server
  // returns its port.
  int start(int port = 0);
  // Closes the listener and every connection, joins the thread. Idempotent.
  void stop();

  bool running() const;
  int port() const;  // -1 when stopped
  FakeLlmStats stats() const;  // safe from any thread
  FakeLlmTimings sent_timings() const;  // empty unless config().record_timings; any thread
  const FakeLlmConfig& config() const;
  // Replaces the configuration; only while stopped (returns false otherwise).
  bool set_config(FakeLlmConfig config);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace runara
