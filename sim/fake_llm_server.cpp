#include "sim/fake_llm_server.hpp"

#include <http_parser.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <uv.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <deque>
#include <mutex>
#include <optional>
#include <queue>
#include <random>
#include <thread>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/json_limits.hpp"
#include "net/arrival_time.hpp"
#include "net/precise_timer.hpp"
#include "sim/fake_llm_prefix_cache.hpp"
#include "sim/fake_llm_tokens.hpp"
#include "sim/fake_llm_wire.hpp"

namespace runara {

namespace {

using fake_llm::ResponseShape;

constexpr size_t kMaxQueuedRequests = 64;  // pipelined requests before reading pauses

struct Request {
  unsigned method = 0;
  std::string url;
  std::string body;
  bool keep_alive = true;
  bool http11 = true;
  bool too_large = false;
  uint64_t arrival_ns = 0;       // when its last byte was parsed: token due times count from here
  uint64_t wire_arrival_ns = 0;  // when it reached the machine (kernel timestamp), for sent_timings
};

// One LLM response in progress.
struct Generation {
  ResponseShape shape;
  bool stream = false;
  bool usage = false;
  bool keep_alive = true;
  bool chunked = true;
  int total = 1;             // output tokens
  int per_chunk = 1;
  int next = 0;              // next token to send
  int64_t prompt_tokens = 0;
  std::vector<uint64_t> token_hashes;  // the prompt's, for the prefix cache; let go once it ran
  const char* finish = "length";
  bool waiting = false;      // in the server's queue for a free sequence (max_num_seqs)
  uint64_t arrival_ns = 0;   // when the request was parsed: TTFT and E2E count from here
  uint64_t start_ns = 0;     // when it began to run: token due times count from here
  uint64_t wire_start_ns = 0;
  uint64_t ttft_ns = 0;
  uint64_t itl_ns = 0;
  int stall_at = -1;         // tokens >= stall_at are late by stall_ns
  uint64_t stall_ns = 0;
  int disconnect_after = -1; // close once this many tokens were sent
  int malformed_at = -1;     // a broken event goes out before this token
  bool role_sent = false;
  uint64_t first_sent_ns = 0;
  uint64_t last_sent_ns = 0;

  uint64_t due(int token) const {
    uint64_t t = start_ns + ttft_ns + static_cast<uint64_t>(token) * itl_ns;
    if (stall_at >= 0 && token >= stall_at) t += stall_ns;
    return t;
  }
};

struct Conn;

// A send that is due at due_ns (CLOCK_MONOTONIC, as uv_hrtime). Stale once the connection
// closed or re-armed: conn_id and token must still match.
struct Wake {
  uint64_t due_ns;
  Conn* conn;
  uint64_t conn_id;
  uint64_t token;
  bool operator>(const Wake& o) const { return due_ns > o.due_ns; }
};

struct WriteReq {
  uv_write_t req;
  uv_buf_t buf;
  std::string data;
  Conn* conn;
};

}  // namespace

struct FakeLlmServer::Impl {
  FakeLlmConfig cfg;
  std::string model_json;
  uv_loop_t loop;
  uv_tcp_t listener;
  uv_async_t stop_async;
  std::thread thread;
  bool running = false;
  int port = -1;
  std::unordered_set<Conn*> conns;
  uint64_t next_conn_id = 1;
  // Token sends are timed with one PreciseTimer (nanosecond deadlines) rather than uv timers,
  // whose millisecond clock would make every delay up to 1 ms late: the fake's TTFT and ITL must
  // be exact enough to check a client's measurements against them.
  std::unique_ptr<PreciseTimer> timer;
  uint64_t armed_ns = 0;  // 0: disarmed
  std::priority_queue<Wake, std::vector<Wake>, std::greater<Wake>> wakes;
  std::mt19937_64 rng;
  fake_llm::Metrics metrics;
  fake_llm::PrefixCache cache{16, 0};  // made at start() from cfg
  // Requests waiting for a free sequence (max_num_seqs), first come first served. An entry whose
  // connection has gone (or moved on) is stale: it is skipped, metrics.waiting already counts it out.
  // A request whose connection closes while it waits leaves at once (end_generation), so that
  // clients that send and hang up while every sequence is busy cannot grow the queue without end.
  std::deque<std::pair<Conn*, uint64_t>> waiting;
  std::atomic<uint64_t> waiting_entries{0};  // waiting.size(), for stats() on other threads
  mutable std::mutex timings_mu;
  FakeLlmTimings timings;
  int64_t started_at = 0;
  char read_buf[64 * 1024];

  std::atomic<uint64_t> requests_served{0}, open_connections{0}, connections_accepted{0},
      active_streams{0}, waiting_requests{0}, tokens_sent{0}, injected_errors{0}, injected_stalls{0},
      injected_disconnects{0}, injected_malformed{0}, client_aborts{0}, tokenize_requests{0}, unknown_model{0};

  double uniform() { return std::uniform_real_distribution<double>(0.0, 1.0)(rng); }
  int uniform_int(int lo, int hi) {
    if (hi <= lo) return lo;
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  }
  std::string make_id(const char* prefix) {
    static const char hex[] = "0123456789abcdef";
    std::string id = prefix;
    uint64_t a = rng(), b = rng();
    for (int i = 0; i < 16; ++i) id.push_back(hex[(a >> (i * 4)) & 15]);
    for (int i = 0; i < 16; ++i) id.push_back(hex[(b >> (i * 4)) & 15]);
    return id;
  }
};

namespace {

using Impl = FakeLlmServer::Impl;

struct Conn {
  Impl* srv = nullptr;
  uv_tcp_t tcp;
  uint64_t id = 0;
  uint64_t wake_token = 0;  // bumped to cancel a pending Wake
  http_parser parser;
  // The request being parsed.
  std::string url, body, hdr_field, hdr_value;
  bool in_value = false;
  bool expect_continue = false;
  bool too_large = false;
  // Parsed requests waiting for their turn.
  std::deque<Request> queue;
  std::optional<Generation> gen;
  bool busy = false;       // a response is in progress
  bool closing = false;
  bool draining = false;   // closing once queued writes are out
  bool reading = false;
  int open_handles = 0;
  int64_t arrived_ns = -1;  // kernel arrival time of the request being read; -1: unknown
};

void close_conn(Conn* c);
void process_queue(Conn* c);
void pump(Conn* c);

void on_handle_closed(uv_handle_t* h) {
  Conn* c = static_cast<Conn*>(h->data);
  if (--c->open_handles > 0) return;
  c->srv->conns.erase(c);
  c->srv->open_connections.fetch_sub(1, std::memory_order_relaxed);
  delete c;
}

void admit_waiting(Impl* s);

// The response in progress is over (sent, or its connection closed): its sequence, if it held
// one, goes to the first request waiting.
void end_generation(Conn* c) {
  if (!c->gen) return;
  Impl* s = c->srv;
  const bool was_waiting = c->gen->waiting;
  c->gen.reset();
  s->active_streams.fetch_sub(1, std::memory_order_relaxed);
  if (was_waiting) {
    if (s->metrics.waiting > 0) --s->metrics.waiting;
    s->waiting_requests.fetch_sub(1, std::memory_order_relaxed);
    const auto mine = [c](const std::pair<Conn*, uint64_t>& e) { return e.first == c && e.second == c->id; };
    s->waiting.erase(std::remove_if(s->waiting.begin(), s->waiting.end(), mine), s->waiting.end());
    s->waiting_entries.store(s->waiting.size(), std::memory_order_relaxed);
    return;
  }
  if (s->metrics.running > 0) --s->metrics.running;
  admit_waiting(s);
}

void close_conn(Conn* c) {
  if (c->closing) return;
  c->closing = true;
  end_generation(c);
  ++c->wake_token;
  uv_close(reinterpret_cast<uv_handle_t*>(&c->tcp), on_handle_closed);
}

void on_write(uv_write_t* req, int status) {
  WriteReq* w = static_cast<WriteReq*>(req->data);
  Conn* c = w->conn;
  delete w;
  if (status < 0 && status != UV_ECANCELED) close_conn(c);
}

void write_out(Conn* c, std::string data) {
  if (c->closing || data.empty()) return;
  auto* stream = reinterpret_cast<uv_stream_t*>(&c->tcp);
  if (uv_stream_get_write_queue_size(stream) == 0) {
    uv_buf_t b = uv_buf_init(data.data(), static_cast<unsigned>(data.size()));
    int r = uv_try_write(stream, &b, 1);
    if (r == static_cast<int>(data.size())) return;
    if (r > 0) {
      data.erase(0, static_cast<size_t>(r));
    } else if (r != UV_EAGAIN) {
      close_conn(c);
      return;
    }
  }
  auto* w = new WriteReq;
  w->data = std::move(data);
  w->buf = uv_buf_init(w->data.data(), static_cast<unsigned>(w->data.size()));
  w->req.data = w;
  w->conn = c;
  if (uv_write(&w->req, stream, &w->buf, 1, on_write) != 0) {
    delete w;
    close_conn(c);
  }
}

void on_shutdown(uv_shutdown_t* req, int) {
  Conn* c = static_cast<Conn*>(req->data);
  delete req;
  close_conn(c);
}

// Closes after everything queued so far has been written.
void drain_and_close(Conn* c) {
  if (c->closing || c->draining) return;
  c->draining = true;
  uv_read_stop(reinterpret_cast<uv_stream_t*>(&c->tcp));
  auto* req = new uv_shutdown_t;
  req->data = c;
  if (uv_shutdown(req, reinterpret_cast<uv_stream_t*>(&c->tcp), on_shutdown) != 0) {
    delete req;
    close_conn(c);
  }
}

// Sends the last bytes of the current response and moves on. The counters
// change before the bytes leave, so a client that has its response sees them.
// What a response counts as: one of the load's requests, a /tokenize answer (counted apart), or a
// /metrics scrape (http_load reads it around each load; counted nowhere).
enum class Tally { kServed, kTokenize, kScrape };

void finish_response(Conn* c, bool keep_alive, std::string last_bytes, Tally tally = Tally::kServed) {
  c->busy = false;
  end_generation(c);
  if (tally != Tally::kScrape) {
    (tally == Tally::kTokenize ? c->srv->tokenize_requests : c->srv->requests_served).fetch_add(1, std::memory_order_relaxed);
  }
  write_out(c, std::move(last_bytes));
  if (!keep_alive) {
    drain_and_close(c);
    return;
  }
  process_queue(c);
}

void simple_response(Conn* c, const Request& r, int status, std::string_view content_type,
                     const std::string& body, Tally tally = Tally::kServed) {
  bool head_only = r.method == HTTP_HEAD;
  std::string out = fake_llm::response_head(status, content_type,
                                            static_cast<int64_t>(body.size()), r.keep_alive);
  if (!head_only) out += body;
  finish_response(c, r.keep_alive, std::move(out), tally);
}

void error_response(Conn* c, const Request& r, int status, std::string_view message,
                    std::string_view type) {
  simple_response(c, r, status, "application/json",
                  fake_llm::error_body(message, type, status));
}

void set_timer(Impl* s, uint64_t due_ns) {
  s->timer->start_at(due_ns);
  s->armed_ns = due_ns;
}

void arm_timer(Conn* c, uint64_t due_ns) {
  if (c->closing) return;
  Impl* s = c->srv;
  s->wakes.push({due_ns, c, c->id, ++c->wake_token});
  if (s->armed_ns == 0 || due_ns < s->armed_ns) set_timer(s, due_ns);
}

// A request starts to run now: its prefill (TTFT) and its token gaps count from here; the ITL
// grows with the streams already running (cfg.itl_per_stream_ms).
void begin_running(Conn* c, uint64_t now) {
  Impl* s = c->srv;
  const FakeLlmConfig& cfg = s->cfg;
  Generation& g = *c->gen;
  const double running = static_cast<double>(s->metrics.running);
  // Prefill pays only for the tokens the prefix cache does not hold, as vLLM's does.
  const auto cached = static_cast<int64_t>(s->cache.admit(g.token_hashes));
  g.token_hashes = {};
  s->metrics.prefix_cache_queries = s->cache.queries();
  s->metrics.prefix_cache_hits = s->cache.hits();
  s->metrics.kv_cache_usage = s->cache.usage();
  const int64_t uncached = std::max<int64_t>(0, g.prompt_tokens - cached);
  const double ttft_ms = cfg.ttft_ms + cfg.prefill_ms_per_token * static_cast<double>(uncached);
  const double itl_ms = cfg.itl_ms + cfg.itl_per_stream_ms * running;
  g.ttft_ns = static_cast<uint64_t>(std::max(0.0, ttft_ms) * 1e6);
  g.itl_ns = static_cast<uint64_t>(std::max(0.0, itl_ms) * 1e6);
  g.start_ns = now;
  g.waiting = false;
  ++s->metrics.running;
}

bool has_free_sequence(const Impl* s) {
  return s->cfg.max_num_seqs <= 0 || s->metrics.running < static_cast<uint64_t>(s->cfg.max_num_seqs);
}

// Moves waiting requests into the sequences free, oldest first. Their first send is left to the
// timer (never sent from here): this runs while another response is being finished.
void admit_waiting(Impl* s) {
  while (has_free_sequence(s) && !s->waiting.empty()) {
    auto [c, id] = s->waiting.front();
    s->waiting.pop_front();
    s->waiting_entries.store(s->waiting.size(), std::memory_order_relaxed);
    if (!s->conns.count(c) || c->id != id || c->closing || !c->gen || !c->gen->waiting) continue;
    if (s->metrics.waiting > 0) --s->metrics.waiting;
    s->waiting_requests.fetch_sub(1, std::memory_order_relaxed);
    const uint64_t now = uv_hrtime();
    begin_running(c, now);
    arm_timer(c, c->gen->due(0));
  }
}

void on_timer(void* self) {
  Impl* s = static_cast<Impl*>(self);
  s->armed_ns = 0;
  const uint64_t now = uv_hrtime();
  while (!s->wakes.empty() && s->wakes.top().due_ns <= now) {
    const Wake w = s->wakes.top();
    s->wakes.pop();
    if (s->conns.count(w.conn) && w.conn->id == w.conn_id && w.conn->wake_token == w.token) pump(w.conn);
  }
  if (!s->wakes.empty() && (s->armed_ns == 0 || s->wakes.top().due_ns < s->armed_ns)) set_timer(s, s->wakes.top().due_ns);
}

std::string tokens_text(int from, int to) {
  std::string s;
  for (int i = from; i < to; ++i) s += fake_llm::token_text(i);
  return s;
}

void record_sent(Conn* c, Generation& g, int ntokens, uint64_t now) {
  Impl* s = c->srv;
  const bool first = g.first_sent_ns == 0;
  const double seconds = first ? static_cast<double>(now - g.arrival_ns) / 1e9
                               : static_cast<double>(now - g.last_sent_ns) / 1e9 / ntokens;
  if (first) {
    g.first_sent_ns = now;
    s->metrics.ttft.observe(seconds);
  } else {
    s->metrics.itl.observe(seconds);
  }
  if (s->cfg.record_timings) {
    std::lock_guard<std::mutex> lock(s->timings_mu);
    if (first) {
      s->timings.ttft_ms.push_back(static_cast<double>(now - g.wire_start_ns) / 1e6);
    } else {
      s->timings.itl_ms.push_back(seconds * 1e3);
    }
  }
  g.last_sent_ns = now;
  s->metrics.generation_tokens += static_cast<uint64_t>(ntokens);
  s->tokens_sent.fetch_add(static_cast<uint64_t>(ntokens), std::memory_order_relaxed);
}

void complete_generation(Conn* c, Generation& g, uint64_t now) {
  Impl* s = c->srv;
  s->metrics.e2e.observe(static_cast<double>(now - g.arrival_ns) / 1e9);
  if (s->cfg.record_timings && g.stream && g.total > 1) {
    std::lock_guard<std::mutex> lock(s->timings_mu);
    s->timings.tpot_ms.push_back(static_cast<double>(g.last_sent_ns - g.first_sent_ns) / 1e6 / (g.total - 1));
  }
  if (std::strcmp(g.finish, "stop") == 0) {
    ++s->metrics.success_stop;
  } else {
    ++s->metrics.success_length;
  }
}

// Sends every chunk that is due, then waits for the next one.
void pump(Conn* c) {
  if (c->closing || !c->gen || c->gen->waiting) return;
  Generation& g = *c->gen;
  uint64_t now = uv_hrtime();

  if (!g.stream) {
    if (g.due(g.total - 1) > now) {
      arm_timer(c, g.due(g.total - 1));
      return;
    }
    if (g.disconnect_after >= 0) {
      close_conn(c);
      return;
    }
    record_sent(c, g, g.total, now);
    complete_generation(c, g, now);
    std::string body = fake_llm::completion_body(g.shape, tokens_text(0, g.total), g.finish,
                                                 g.prompt_tokens, g.total);
    if (g.malformed_at >= 0) body.resize(body.size() / 2);
    bool keep_alive = g.keep_alive;
    std::string out = fake_llm::response_head(200, "application/json",
                                              static_cast<int64_t>(body.size()), keep_alive);
    out += body;
    finish_response(c, keep_alive, std::move(out));
    return;
  }

  std::string out;
  auto emit = [&](const std::string& event) {
    if (g.chunked) {
      fake_llm::append_http_chunk(out, event);
    } else {
      out += event;
    }
  };
  while (g.next < g.total) {
    int last = std::min(g.next + g.per_chunk, g.total) - 1;
    if (g.due(last) > now) break;
    if (g.malformed_at >= g.next && g.malformed_at <= last) emit(fake_llm::malformed_event(g.shape));
    std::string text = tokens_text(g.next, last + 1);
    const char* finish = last == g.total - 1 ? g.finish : nullptr;
    if (g.shape.chat) {
      if (!g.role_sent) {
        emit(fake_llm::chat_role_event(g.shape));
        g.role_sent = true;
      }
      emit(fake_llm::chat_content_event(g.shape, text, finish));
    } else {
      emit(fake_llm::completion_chunk_event(g.shape, text, finish));
    }
    record_sent(c, g, last + 1 - g.next, now);
    g.next = last + 1;
    if (g.disconnect_after >= 0 && g.next >= g.disconnect_after) {
      end_generation(c);
      write_out(c, std::move(out));
      drain_and_close(c);
      return;
    }
  }
  if (g.next < g.total) {
    write_out(c, std::move(out));
    arm_timer(c, g.due(std::min(g.next + g.per_chunk, g.total) - 1));
    return;
  }
  if (g.usage) emit(fake_llm::usage_event(g.shape, g.prompt_tokens, g.total));
  emit(std::string(fake_llm::kDoneEvent));
  complete_generation(c, g, now);
  bool keep_alive = g.keep_alive && g.chunked;
  if (g.chunked) out += fake_llm::kLastChunk;
  finish_response(c, keep_alive, std::move(out));
}

// vLLM's _check_model: a "model" other than the one served is refused 404 before anything else
// of the request is looked at (vllm/entrypoints/openai/serving_engine.py). A request without
// "model" gets the served one, as newer vLLM gives it. Returns false once it has answered.
bool model_served(Conn* c, const Request& r, const nlohmann::json& j, bool tokenize) {
  Impl* s = c->srv;
  auto m = j.find("model");
  if (m == j.end() || m->is_null() || (m->is_string() && m->get_ref<const std::string&>() == s->cfg.model)) return true;
  const std::string name = m->is_string() ? m->get<std::string>() : m->dump();
  s->unknown_model.fetch_add(1, std::memory_order_relaxed);
  simple_response(c, r, 404, "application/json",
                  fake_llm::error_body("The model `" + name + "` does not exist.", "NotFoundError", 404), tokenize ? Tally::kTokenize : Tally::kServed);
  return false;
}

void start_generation(Conn* c, const Request& r, bool chat) {
  Impl* s = c->srv;
  const FakeLlmConfig& cfg = s->cfg;
  std::string why;
  const nlohmann::json j = parse_json_limited(r.body, why).value_or(nlohmann::json());
  if (!j.is_object()) {
    const std::string message = is_json_too_deep(why) ? "The request body is " + why + "."
                                                          : "The request body is not a valid JSON object.";
    error_response(c, r, 400, message, "BadRequestError");
    return;
  }
  if (!model_served(c, r, j, false)) return;
  auto get_bool = [&](const nlohmann::json& o, const char* key, bool& out) -> bool {
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) return true;
    if (!it->is_boolean()) return false;
    out = it->get<bool>();
    return true;
  };
  bool stream = false, include_usage = false, ignore_eos = false;
  if (!get_bool(j, "stream", stream) || !get_bool(j, "ignore_eos", ignore_eos)) {
    error_response(c, r, 400, "'stream' and 'ignore_eos' must be booleans.", "BadRequestError");
    return;
  }
  if (auto so = j.find("stream_options"); so != j.end() && so->is_object()) {
    if (!get_bool(*so, "include_usage", include_usage)) {
      error_response(c, r, 400, "'include_usage' must be a boolean.", "BadRequestError");
      return;
    }
  }
  std::optional<int64_t> max_tokens;
  for (const char* key : {"max_tokens", "max_completion_tokens"}) {
    if (!chat && std::strcmp(key, "max_completion_tokens") == 0) break;
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_number_integer() || it->get<int64_t>() < 1) {
      error_response(c, r, 400, std::string(key) + " must be at least 1.", "BadRequestError");
      return;
    }
    max_tokens = it->get<int64_t>();
    break;
  }
  if (!max_tokens && !chat && cfg.completions_default_max_tokens > 0)
    max_tokens = cfg.completions_default_max_tokens;

  // Error injection draws, always all four, so a seed replays the same way.
  double u_err = s->uniform(), u_stall = s->uniform(), u_disc = s->uniform(),
         u_malformed = s->uniform();
  if (u_err < cfg.error_500_fraction) {
    s->injected_errors.fetch_add(1, std::memory_order_relaxed);
    error_response(c, r, 500, "Injected failure (fake LLM server).", "InternalServerError");
    return;
  }

  int64_t length = cfg.output_tokens;
  if (cfg.output_tokens_max > 0)
    length = s->uniform_int(std::max(1, cfg.output_tokens_min), cfg.output_tokens_max);
  if (max_tokens) length = ignore_eos ? *max_tokens : std::min(length, *max_tokens);
  length = std::clamp<int64_t>(length, 1, 1 << 24);

  Generation g;
  g.shape.chat = chat;
  g.shape.id = s->make_id(chat ? "chatcmpl-" : "cmpl-");
  g.shape.created = static_cast<int64_t>(std::time(nullptr));
  g.shape.model_json = s->model_json;
  g.stream = stream;
  g.usage = cfg.usage == FakeLlmConfig::Usage::kAlways ||
            (cfg.usage == FakeLlmConfig::Usage::kRequest && include_usage);
  g.keep_alive = r.keep_alive;
  g.chunked = r.http11;
  g.total = static_cast<int>(length);
  g.per_chunk = std::max(1, cfg.tokens_per_chunk);
  g.prompt_tokens = cfg.prompt_tokens >= 0 ? cfg.prompt_tokens : fake_llm::count_prompt_tokens(j, chat);
  g.finish = (max_tokens && length == *max_tokens) ? "length" : "stop";
  g.arrival_ns = r.arrival_ns;
  g.wire_start_ns = r.wire_arrival_ns;
  if (u_stall < cfg.stall_fraction && cfg.stall_ms > 0) {
    g.stall_at = g.total > 1 ? s->uniform_int(1, g.total - 1) : 0;
    g.stall_ns = static_cast<uint64_t>(cfg.stall_ms * 1e6);
    s->injected_stalls.fetch_add(1, std::memory_order_relaxed);
  }
  if (u_disc < cfg.disconnect_fraction) {
    g.disconnect_after = g.total > 1 ? s->uniform_int(1, g.total - 1) : 1;
    s->injected_disconnects.fetch_add(1, std::memory_order_relaxed);
  }
  if (u_malformed < cfg.malformed_fraction) {
    g.malformed_at = s->uniform_int(0, g.total - 1);
    s->injected_malformed.fetch_add(1, std::memory_order_relaxed);
  }
  s->metrics.prompt_tokens += static_cast<uint64_t>(g.prompt_tokens);
  if (s->cache.enabled()) g.token_hashes = fake_llm::prompt_token_hashes(j, chat);
  s->active_streams.fetch_add(1, std::memory_order_relaxed);
  c->gen = std::move(g);
  // The headers of a stream go out at once, waiting or not, as vLLM's StreamingResponse starts
  // before the engine has scheduled the request.
  if (stream) {
    write_out(c, fake_llm::response_head(200, "text/event-stream; charset=utf-8", -1,
                                         c->gen->keep_alive && c->gen->chunked, c->gen->chunked));
  }
  // Every sequence taken (or others already in line): wait for one, first come first served.
  if (!has_free_sequence(s) || !s->waiting.empty()) {
    c->gen->waiting = true;
    ++s->metrics.waiting;
    s->waiting_requests.fetch_add(1, std::memory_order_relaxed);
    s->waiting.emplace_back(c, c->id);
    s->waiting_entries.store(s->waiting.size(), std::memory_order_relaxed);
    admit_waiting(s);  // nothing, unless a stale entry held the head of the line
    return;
  }
  begin_running(c, r.arrival_ns);
  pump(c);
}

// A 400 (or 413) to /tokenize, with vLLM's error body.
void tokenize_error(Conn* c, const Request& r, int status, std::string_view message) {
  simple_response(c, r, status, "application/json", fake_llm::error_body(message, "BadRequestError", status), Tally::kTokenize);
}

// vLLM's POST /tokenize, at the server's root: a TokenizeCompletionRequest ("prompt") or a
// TokenizeChatRequest ("messages"), counted as start_generation counts usage's prompt_tokens
// (the messages with their template tokens), skewed by tokenize_skew_pct. Switched off, the
// route is missing: 404 {"detail":"Not Found"}, as FastAPI answers a path it does not have.
void handle_tokenize(Conn* c, const Request& r) {
  const FakeLlmConfig& cfg = c->srv->cfg;
  if (!cfg.tokenize) return simple_response(c, r, 404, "application/json", "{\"detail\":\"Not Found\"}", Tally::kTokenize);
  if (r.too_large) {
    Request closing = r;
    closing.keep_alive = false;
    return tokenize_error(c, closing, 413, "Request body too large.");
  }
  if (r.method != HTTP_POST) return simple_response(c, r, 405, "application/json", "{\"detail\":\"Method Not Allowed\"}", Tally::kTokenize);
  std::string why;
  const nlohmann::json j = parse_json_limited(r.body, why).value_or(nlohmann::json());
  if (!j.is_object()) {
    return tokenize_error(c, r, 400, is_json_too_deep(why) ? "The request body is " + why + "." : "The request body is not a valid JSON object.");
  }
  if (!model_served(c, r, j, true)) return;
  const bool chat = j.contains("messages");
  if (chat ? !j["messages"].is_array() : !(j.contains("prompt") && j["prompt"].is_string())) {
    return tokenize_error(c, r, 400, "Either a 'prompt' string or a 'messages' list is required.");
  }
  const int64_t counted = cfg.prompt_tokens >= 0 ? cfg.prompt_tokens : fake_llm::count_prompt_tokens(j, chat);
  const double skewed = std::round(static_cast<double>(counted) * (1 + cfg.tokenize_skew_pct / 100));
  const int64_t count = std::clamp<int64_t>(static_cast<int64_t>(skewed), 0, int64_t{1} << 24);
  simple_response(c, r, 200, "application/json", fake_llm::tokenize_body(count, cfg.max_model_len), Tally::kTokenize);
}

void handle_request(Conn* c, const Request& r) {
  Impl* s = c->srv;
  std::string_view url = r.url;
  std::string_view path = url.substr(0, url.find('?'));
  if (path == "/tokenize") return handle_tokenize(c, r);
  if (r.too_large) {
    Request closing = r;
    closing.keep_alive = false;
    error_response(c, closing, 413, "Request body too large.", "BadRequestError");
    return;
  }
  if (path == "/v1/completions" || path == "/v1/chat/completions") {
    if (r.method != HTTP_POST) {
      simple_response(c, r, 405, "application/json", "{\"detail\":\"Method Not Allowed\"}");
      return;
    }
    start_generation(c, r, path == "/v1/chat/completions");
    return;
  }
  if (r.method == HTTP_GET || r.method == HTTP_HEAD) {
    if (path == "/health") {
      simple_response(c, r, 200, "", "");
    } else if (path == "/v1/models") {
      simple_response(c, r, 200, "application/json",
                      fake_llm::models_body(s->cfg.model, s->started_at, s->cfg.max_model_len));
    } else if (path == "/metrics") {
      simple_response(c, r, 200, "text/plain; version=0.0.4; charset=utf-8",
                      fake_llm::metrics_text(s->metrics, s->cfg.model), Tally::kScrape);
    } else if (s->cfg.serve_static) {
      simple_response(c, r, 200, s->cfg.static_content_type, s->cfg.static_body);
    } else {
      simple_response(c, r, 404, "application/json", "{\"detail\":\"Not Found\"}");
    }
    return;
  }
  simple_response(c, r, 404, "application/json", "{\"detail\":\"Not Found\"}");
}

void resume_reading(Conn* c);

void process_queue(Conn* c) {
  while (!c->closing && !c->draining && !c->busy && !c->queue.empty()) {
    Request r = std::move(c->queue.front());
    c->queue.pop_front();
    c->busy = true;
    handle_request(c, r);
  }
  if (!c->closing && !c->draining && c->queue.size() < kMaxQueuedRequests / 2) resume_reading(c);
}

// http-parser callbacks.
int on_message_begin(http_parser* p) {
  Conn* c = static_cast<Conn*>(p->data);
  c->url.clear();
  c->body.clear();
  c->hdr_field.clear();
  c->hdr_value.clear();
  c->in_value = false;
  c->expect_continue = false;
  c->too_large = false;
  return 0;
}

int on_url(http_parser* p, const char* at, size_t len) {
  static_cast<Conn*>(p->data)->url.append(at, len);
  return 0;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

void header_done(Conn* c) {
  if (iequals(c->hdr_field, "expect") && iequals(c->hdr_value, "100-continue"))
    c->expect_continue = true;
  c->hdr_field.clear();
  c->hdr_value.clear();
}

int on_header_field(http_parser* p, const char* at, size_t len) {
  Conn* c = static_cast<Conn*>(p->data);
  if (c->in_value) {
    header_done(c);
    c->in_value = false;
  }
  c->hdr_field.append(at, len);
  return 0;
}

int on_header_value(http_parser* p, const char* at, size_t len) {
  Conn* c = static_cast<Conn*>(p->data);
  c->in_value = true;
  c->hdr_value.append(at, len);
  return 0;
}

int on_headers_complete(http_parser* p) {
  Conn* c = static_cast<Conn*>(p->data);
  if (c->in_value) {
    header_done(c);
    c->in_value = false;
  }
  // Answer "Expect: 100-continue" unless another response is on the wire.
  if (c->expect_continue && !c->busy && c->queue.empty() && p->content_length > 0 &&
      static_cast<uint64_t>(p->content_length) <= c->srv->cfg.max_request_body_bytes) {
    write_out(c, "HTTP/1.1 100 Continue\r\n\r\n");
  }
  return 0;
}

int on_body(http_parser* p, const char* at, size_t len) {
  Conn* c = static_cast<Conn*>(p->data);
  if (c->too_large || c->body.size() + len > c->srv->cfg.max_request_body_bytes) {
    c->too_large = true;
    c->body.clear();
    return 0;
  }
  c->body.append(at, len);
  return 0;
}

int on_message_complete(http_parser* p) {
  Conn* c = static_cast<Conn*>(p->data);
  Request r;
  r.method = p->method;
  r.url = std::move(c->url);
  r.body = std::move(c->body);
  r.keep_alive = http_should_keep_alive(p) != 0;
  r.http11 = p->http_major > 1 || (p->http_major == 1 && p->http_minor >= 1);
  r.too_large = c->too_large;
  r.arrival_ns = uv_hrtime();
  r.wire_arrival_ns = c->arrived_ns >= 0 ? static_cast<uint64_t>(c->arrived_ns) : r.arrival_ns;
  c->queue.push_back(std::move(r));
  return 0;
}

const http_parser_settings kParserSettings = [] {
  http_parser_settings s;
  std::memset(&s, 0, sizeof s);
  s.on_message_begin = on_message_begin;
  s.on_url = on_url;
  s.on_header_field = on_header_field;
  s.on_header_value = on_header_value;
  s.on_headers_complete = on_headers_complete;
  s.on_body = on_body;
  s.on_message_complete = on_message_complete;
  return s;
}();

void on_alloc(uv_handle_t* h, size_t, uv_buf_t* buf) {
  Conn* c = static_cast<Conn*>(h->data);
  // An idle connection is about to read a request: note when it reached the machine, so that
  // sent_timings() can tell how long it waited for this thread (a peek costs a syscall, so only
  // while recording, and only between responses). Due times still count from parsing: counting them from arrival
  // would keep thousands of streams in lockstep, their tokens all due at the same instant.
  uv_os_fd_t fd = -1;
  const bool idle = c->srv->cfg.record_timings && !c->busy && c->queue.empty();
  c->arrived_ns = idle && uv_fileno(h, &fd) == 0 ? waiting_arrival_time_ns(fd) : -1;
  *buf = uv_buf_init(c->srv->read_buf, sizeof c->srv->read_buf);
}

void on_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
  Conn* c = static_cast<Conn*>(stream->data);
  if (nread < 0) {
    if (c->busy) c->srv->client_aborts.fetch_add(1, std::memory_order_relaxed);
    close_conn(c);
    return;
  }
  if (nread == 0 || c->closing || c->draining) return;
  size_t n = static_cast<size_t>(nread);
  size_t parsed = http_parser_execute(&c->parser, &kParserSettings, buf->base, n);
  if (HTTP_PARSER_ERRNO(&c->parser) != HPE_OK || parsed != n || c->parser.upgrade) {
    // Serve what was complete, then answer 400 and close.
    Request bad;
    bad.method = HTTP_POST;
    bad.keep_alive = false;
    bool idle = !c->busy && c->queue.empty();
    c->queue.clear();
    if (idle) {
      c->busy = true;
      error_response(c, bad, 400, "Malformed HTTP request.", "BadRequestError");
    } else {
      close_conn(c);
    }
    return;
  }
  if (c->queue.size() >= kMaxQueuedRequests && c->reading) {
    uv_read_stop(stream);
    c->reading = false;
  }
  process_queue(c);
}

void resume_reading(Conn* c) {
  if (c->reading) return;
  if (uv_read_start(reinterpret_cast<uv_stream_t*>(&c->tcp), on_alloc, on_read) == 0)
    c->reading = true;
}

void on_connection(uv_stream_t* server, int status) {
  Impl* s = static_cast<Impl*>(server->data);
  if (status < 0) return;
  auto* c = new Conn;
  c->srv = s;
  uv_tcp_init(&s->loop, &c->tcp);
  c->tcp.data = c;
  c->id = s->next_conn_id++;
  c->open_handles = 1;
  s->conns.insert(c);
  s->open_connections.fetch_add(1, std::memory_order_relaxed);
  s->connections_accepted.fetch_add(1, std::memory_order_relaxed);
  http_parser_init(&c->parser, HTTP_REQUEST);
  c->parser.data = c;
  if (uv_accept(server, reinterpret_cast<uv_stream_t*>(&c->tcp)) != 0) {
    close_conn(c);
    return;
  }
  uv_tcp_nodelay(&c->tcp, 1);
  uv_os_fd_t fd = -1;
  if (s->cfg.record_timings && uv_fileno(reinterpret_cast<uv_handle_t*>(&c->tcp), &fd) == 0) enable_arrival_times(fd);
  resume_reading(c);
  if (!c->reading) close_conn(c);
}

void on_stop(uv_async_t* a) {
  Impl* s = static_cast<Impl*>(a->data);
  std::vector<Conn*> all(s->conns.begin(), s->conns.end());
  for (Conn* c : all) close_conn(c);
  uv_close(reinterpret_cast<uv_handle_t*>(&s->listener), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&s->stop_async), nullptr);
  s->timer->close();
}

void start_timer(Impl* s) { s->timer = std::make_unique<PreciseTimer>(&s->loop, on_timer, s); }

}  // namespace

FakeLlmServer::FakeLlmServer(FakeLlmConfig config) : impl_(std::make_unique<Impl>()) {
  impl_->cfg = std::move(config);
}

FakeLlmServer::~FakeLlmServer() { stop(); }

int FakeLlmServer::start(int port) {
  Impl* s = impl_.get();
  if (s->running) return s->port;
  s->model_json = fake_llm::json_escape(s->cfg.model);
  s->rng.seed(s->cfg.seed);
  s->metrics = fake_llm::Metrics{};
  s->metrics.prefix_cache = s->cfg.prefix_cache_blocks > 0;
  s->cache = fake_llm::PrefixCache(s->cfg.block_size, s->cfg.prefix_cache_blocks);
  s->started_at = static_cast<int64_t>(std::time(nullptr));
  int r = uv_loop_init(&s->loop);
  if (r != 0) return r;
  const bool v6 = s->cfg.host.find(':') != std::string::npos;
  uv_tcp_init_ex(&s->loop, &s->listener, v6 ? AF_INET6 : AF_INET);  // the socket exists now
  s->listener.data = s;
  if (s->cfg.reuse_port) {
    uv_os_fd_t fd = -1;
    const int one = 1;
    r = uv_fileno(reinterpret_cast<uv_handle_t*>(&s->listener), &fd);
    if (r == 0 && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0) r = uv_translate_sys_error(errno);
  }
  union {
    sockaddr_in v4;
    sockaddr_in6 v6;
    sockaddr_storage any;
  } addr;
  std::memset(&addr, 0, sizeof addr);
  if (r == 0 && v6) {
    r = uv_ip6_addr(s->cfg.host.c_str(), port, &addr.v6);
  } else if (r == 0) {
    r = uv_ip4_addr(s->cfg.host.c_str(), port, &addr.v4);
  }
  if (r == 0) r = uv_tcp_bind(&s->listener, reinterpret_cast<const sockaddr*>(&addr), 0);
  if (r == 0) r = uv_listen(reinterpret_cast<uv_stream_t*>(&s->listener), 4096, on_connection);
  if (r == 0) {
    int len = sizeof addr;
    r = uv_tcp_getsockname(&s->listener, reinterpret_cast<sockaddr*>(&addr), &len);
  }
  if (r == 0) r = uv_async_init(&s->loop, &s->stop_async, on_stop);
  if (r != 0) {
    uv_close(reinterpret_cast<uv_handle_t*>(&s->listener), nullptr);
    uv_run(&s->loop, UV_RUN_DEFAULT);
    uv_loop_close(&s->loop);
    return r;
  }
  start_timer(s);
  s->stop_async.data = s;
  s->port = ntohs(addr.any.ss_family == AF_INET6 ? addr.v6.sin6_port : addr.v4.sin_port);
  s->running = true;
  s->thread = std::thread([s] {
    prctl(PR_SET_TIMERSLACK, 1UL);  // wake-ups on time to the microsecond, not 50 us late
    // libuv writes to sockets with write(), which raises SIGPIPE when the client has gone (a
    // load generator killed mid-stream). Blocked on this thread only, the write just fails with
    // EPIPE: a host that embeds the server (a test binary) need not ignore SIGPIPE for it.
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    uv_run(&s->loop, UV_RUN_DEFAULT);
  });
  return s->port;
}

void FakeLlmServer::stop() {
  Impl* s = impl_.get();
  if (!s->running) return;
  uv_async_send(&s->stop_async);
  s->thread.join();
  while (uv_loop_close(&s->loop) == UV_EBUSY) uv_run(&s->loop, UV_RUN_NOWAIT);
  s->timer.reset();
  s->armed_ns = 0;
  s->wakes = {};
  s->waiting.clear();
  s->waiting_entries.store(0, std::memory_order_relaxed);
  s->running = false;
  s->port = -1;
}

bool FakeLlmServer::running() const { return impl_->running; }
int FakeLlmServer::port() const { return impl_->port; }
const FakeLlmConfig& FakeLlmServer::config() const { return impl_->cfg; }

bool FakeLlmServer::set_config(FakeLlmConfig config) {
  if (impl_->running) return false;
  impl_->cfg = std::move(config);
  return true;
}

FakeLlmTimings FakeLlmServer::sent_timings() const {
  std::lock_guard<std::mutex> lock(impl_->timings_mu);
  return impl_->timings;
}

FakeLlmStats FakeLlmServer::stats() const {
  const Impl* s = impl_.get();
  FakeLlmStats st;
  auto ld = [](const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  st.requests_served = ld(s->requests_served);
  st.open_connections = ld(s->open_connections);
  st.connections_accepted = ld(s->connections_accepted);
  st.active_streams = ld(s->active_streams);
  st.waiting_requests = ld(s->waiting_requests);
  st.waiting_queue_entries = ld(s->waiting_entries);
  st.unknown_model = ld(s->unknown_model);
  st.tokens_sent = ld(s->tokens_sent);
  st.injected_errors = ld(s->injected_errors);
  st.injected_stalls = ld(s->injected_stalls);
  st.injected_disconnects = ld(s->injected_disconnects);
  st.injected_malformed = ld(s->injected_malformed);
  st.client_aborts = ld(s->client_aborts);
  st.tokenize_requests = ld(s->tokenize_requests);
  return st;
}

}  // namespace runara
