#include "load/load_worker.hpp"

#include <curl/curl.h>
#include <netdb.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <uv.h>

#include <cstring>
#include <deque>

#include "http/openai_stream.hpp"
#include "http/sse_parser.hpp"
#include "load/http1_connection.hpp"
#include "load/seeded_random.hpp"
#include "net/curl_multi_uv.hpp"
#include "net/precise_timer.hpp"

namespace runara {

namespace {

constexpr std::size_t kMaxKeptBody = 64 * 1024;  // error bodies and non-streamed replies
constexpr int kMaxSendsPerTurn = 1000;           // an open loop yields to I/O between bursts
constexpr std::uint64_t kBatchMs = 100;          // a partly filled batch of records goes to the writer

// Closed loop: a slot whose connection failed waits before it tries again, doubling from
// kFirstBackoffMs to kMaxBackoffMs while the failures go on (docs/http_load.md), so a dead or
// still-booting target costs a few attempts per slot and second instead of a spin.
constexpr std::uint64_t kFirstBackoffMs = 10;
constexpr std::uint64_t kMaxBackoffMs = 1000;

// One request slot, reused request after request (keeping its connection): a native HTTP/1.1
// connection for plain http://, a libcurl easy handle for https:// and HTTP/2.
struct Stream final : Http1Connection::Handler {
  LoadWorker::Impl* worker = nullptr;
  CURL* easy = nullptr;
  std::unique_ptr<Http1Connection> conn;
  std::string head;                // native: request line and headers of the request in flight
  std::unique_ptr<SseParser> parser;
  RequestRecord rec;
  std::vector<std::int64_t> gaps;  // between token events, ns
  std::int64_t last_token_ns = -1;
  std::int64_t now = 0;            // arrival time of the bytes being parsed
  bool status_known = false, http_error = false, done_seen = false, busy = false;
  ErrorKind event_error = ErrorKind::kNone;
  std::string message;             // the first error event's message
  std::int64_t usage_prompt = -1, usage_completion = -1;
  std::string body;                // templated request body
  std::string reply;               // error body or non-streamed reply (capped)
  std::string refusal;             // why the target policy refused the connection
  char errbuf[CURL_ERROR_SIZE] = {};
  uv_timer_t* backoff = nullptr;   // closed loop: waits out a connect failure (created on first use)
  int connect_failures = 0;        // in a row, on this slot

  void on_status(int status) override;
  void on_body(const char* data, std::size_t len, std::int64_t arrived_ns) override;
  void on_complete(ErrorKind error, const std::string& message) override;

  void reset() {
    rec = RequestRecord{};
    gaps.clear();
    last_token_ns = -1;
    status_known = http_error = done_seen = false;
    event_error = ErrorKind::kNone;
    message.clear();
    usage_prompt = usage_completion = -1;
    reply.clear();
    refusal.clear();
    errbuf[0] = 0;
    if (parser) parser->reset();
  }
};

struct Due {
  std::uint64_t index;
  std::int64_t intended_ns;
};

std::string expand_template(const std::string& text, std::uint64_t index, std::uint64_t seed) {
  std::string out;
  out.reserve(text.size() + 16);
  std::size_t at = 0;
  while (true) {
    const std::size_t open = text.find("{{", at);
    if (open == std::string::npos) break;
    out.append(text, at, open - at);
    if (text.compare(open, 9, "{{index}}") == 0) {
      out += std::to_string(index);
      at = open + 9;
    } else if (text.compare(open, 10, "{{random}}") == 0) {
      out += std::to_string(splitmix64(seed + index * 0x9E3779B97F4A7C15ull));
      at = open + 10;
    } else {
      out += "{{";
      at = open + 2;
    }
  }
  out.append(text, at, std::string::npos);
  return out;
}

ErrorKind kind_of(CURLcode code) {
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT: return ErrorKind::kTimeout;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION: return ErrorKind::kConnect;
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM: return ErrorKind::kReset;
    default: return ErrorKind::kOther;
  }
}

}  // namespace

struct LoadWorker::Impl {
  Impl(LoadShared& s, int n, std::function<void()> f) : shared(s), spec(s.spec), slots(n), finished(std::move(f)) {}

  LoadShared& shared;
  const LoadSpec& spec;
  const int slots;
  std::function<void()> finished;

  uv_loop_t loop{};
  uv_async_t stop_async{};
  std::unique_ptr<PreciseTimer> send_timer;  // open loop: wakes the sender for the next due request
  std::unique_ptr<CurlMultiUv> curl;
  CURLSH* share = nullptr;
  curl_slist* headers = nullptr;
  std::vector<std::unique_ptr<Stream>> streams;
  std::vector<Stream*> idle;
  std::deque<Due> waiting;  // open loop: due, but every slot is busy
  bool have_next = false;   // open loop: a claimed request waits for its time
  Due next{};
  bool claims_over = false, stopped = false, closing = false;
  std::size_t in_flight = 0;
  std::uint64_t abandoned = 0;
  OpenAiStreamEvent event;  // scratch, reused

  // Native HTTP/1.1 (plain http:// without http2): where to connect and what to send.
  bool native = false;
  sockaddr_storage address{};
  ErrorKind unreachable = ErrorKind::kNone;  // why no request can be sent, if so
  std::string unreachable_message;
  std::string head_prefix;                   // request line + fixed headers
  std::string head_without_body;             // the whole head of a GET/HEAD
  std::vector<char> read_buffer = std::vector<char>(256 * 1024);

  LoadStats stats{spec.slo};
  RequestLengths lengths{spec.max_lengths};
  RequestLog::Batch batch;     // finished requests on their way to requests.jsonl
  uv_timer_t batch_timer{};    // hands a partly filled batch over every kBatchMs
  bool batch_timer_open = false;
  std::uint64_t left_out = 0;
  MemoryReservation held;      // the streams, from spec.memory
  std::mutex progress_mutex;
  WorkerProgress progress;
  std::mutex async_mutex;  // guards stop_async against a stop() racing the close
  bool async_open = false;

  // ---- setup ----

  // Any exception on this thread (std::bad_alloc included) ends the load with an error instead
  // of the process: the thread stops its requests and finishes like a stopped worker.
  template <class F>
  void guarded(F&& work) noexcept {
    try {
      work();
    } catch (const std::bad_alloc&) {
      broke("out of memory");
    } catch (const std::exception& e) {
      broke(e.what());
    }
  }

  void broke(const std::string& why) { end_load("a load worker thread failed: " + why); }

  // Ends the whole load with `error`; this worker stops on its next loop turn.
  void end_load(const std::string& error) {
    shared.fail(error);
    std::lock_guard lock(async_mutex);
    if (async_open) uv_async_send(&stop_async);
  }

  void run() {
    if (spec.memory) held = MemoryReservation(spec.memory, 0);
    guarded([this] { setup(); });
    uv_run(&loop, UV_RUN_DEFAULT);
    guarded([this] { hand_over(); });  // the last records, before the engine hears this worker is done
    for (auto& s : streams) {
      if (s->easy) curl_easy_cleanup(s->easy);
    }
    streams.clear();
    curl.reset();
    curl_share_cleanup(share);
    curl_slist_free_all(headers);
    uv_loop_close(&loop);
    finished();
  }

  void setup() {
    uv_loop_init(&loop);
    uv_async_init(&loop, &stop_async, [](uv_async_t* a) { static_cast<Impl*>(a->data)->on_stop(); });
    stop_async.data = this;
    {
      std::lock_guard lock(async_mutex);
      async_open = true;
    }
    if (shared.stopping.load()) stopped = true;  // stop() came before the loop could hear it
    if (shared.request_log) start_batches();
    if (spec.open_loop()) {
      send_timer = std::make_unique<PreciseTimer>(&loop, [](void* self) {
        auto* me = static_cast<Impl*>(self);
        me->guarded([me] { me->schedule_next(); });
      }, this);
      prctl(PR_SET_TIMERSLACK, 1UL);  // this thread's wake-ups on time to the microsecond, not 50 us late
    }
    curl = std::make_unique<CurlMultiUv>(&loop, [this](CURL* e, CURLcode c) { guarded([&] { on_done(e, c); }); });
    if (spec.http2) curl_multi_setopt(curl->multi(), CURLMOPT_MAX_CONCURRENT_STREAMS, 1000L);
    share = curl_share_init();
    curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    for (const auto& h : spec.header_lines()) headers = curl_slist_append(headers, h.c_str());
    headers = curl_slist_append(headers, "Expect:");
    native = spec.url.rfind("http://", 0) == 0 && !spec.http2;
    if (native) prepare_native();
    if (spec.open_loop()) {
      schedule_next();
    } else {
      for (int i = 0; i < slots; ++i) {
        Stream* s = new_stream();
        if (!s) break;
        launch_closed(s);
      }
    }
    maybe_finish();
  }

  // Records travel to requests.jsonl's writer a batch at a time; a batch that fills slowly still
  // goes every kBatchMs, so the file trails the load by a fraction of a second.
  void start_batches() {
    batch = shared.request_log->first_batch();
    uv_timer_init(&loop, &batch_timer);
    batch_timer.data = this;
    batch_timer_open = true;
    uv_timer_start(&batch_timer, [](uv_timer_t* t) {
      auto* me = static_cast<Impl*>(t->data);
      me->guarded([me] { me->hand_over(); });
    }, kBatchMs, kBatchMs);
    uv_unref(reinterpret_cast<uv_handle_t*>(&batch_timer));  // never what keeps the loop running
  }

  void hand_over() {
    if (shared.request_log) left_out += shared.request_log->hand_over(batch);
  }

  // Resolves the target once for the whole load (on this worker thread, not the Lua thread) and
  // checks the address against the sandbox's target policy.
  void prepare_native() {
    CURLU* u = curl_url();
    curl_url_set(u, CURLUPART_URL, spec.url.c_str(), 0);
    char *path = nullptr, *query = nullptr;
    curl_url_get(u, CURLUPART_PATH, &path, 0);
    curl_url_get(u, CURLUPART_QUERY, &query, 0);
    std::string target = path && *path ? path : "/";
    if (query) target += std::string("?") + query;
    curl_free(path);
    curl_free(query);
    curl_url_cleanup(u);
    const std::string host_header = spec.url_host + (spec.url_port == 80 ? "" : ":" + std::to_string(spec.url_port));
    head_prefix = spec.method + " " + target + " HTTP/1.1\r\nHost: " + host_header + "\r\nUser-Agent: runara\r\nAccept: */*\r\n";
    for (const auto& h : spec.header_lines()) head_prefix += h + "\r\n";
    head_without_body = head_prefix + "\r\n";
    resolve();
  }

  void resolve() {
    std::string host = spec.url_host;
    if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const int rc = getaddrinfo(host.c_str(), std::to_string(spec.url_port).c_str(), &hints, &found);
    if (rc != 0) {
      unreachable = ErrorKind::kConnect;
      unreachable_message = "cannot resolve " + host + ": " + gai_strerror(rc);
      return;
    }
    unreachable = ErrorKind::kRefused;
    for (addrinfo* a = found; a; a = a->ai_next) {
      std::string why;
      if (spec.policy && !spec.policy->allows(a->ai_addr, spec.url_host, why)) {
        if (unreachable_message.empty()) unreachable_message = why;
        continue;
      }
      std::memcpy(&address, a->ai_addr, a->ai_addrlen);
      unreachable = ErrorKind::kNone;
      unreachable_message.clear();
      break;
    }
    freeaddrinfo(found);
  }

  // What one slot holds, roughly: its buffers (error replies are kept up to kMaxKeptBody), a
  // libcurl handle with its receive buffer, and its copy of a templated body.
  std::size_t stream_bytes() const {
    std::size_t bytes = 16 * 1024 + kMaxKeptBody;
    if (!native) bytes += 64 * 1024 + static_cast<std::size_t>(spec.buffer_bytes > 0 ? spec.buffer_bytes : 16 * 1024);
    if (spec.templated) bytes += spec.bodies->front().size() + 32;
    return bytes;
  }

  // A new slot, or null (and the load failing) when the run's memory budget has no room for it.
  Stream* new_stream() {
    if (spec.memory && !held.grow(stream_bytes())) {
      end_load(spec.memory->refusal(stream_bytes(), "another request slot of " + spec.name));
      return nullptr;
    }
    auto s = std::make_unique<Stream>();
    s->worker = this;
    if (native) {
      s->conn = std::make_unique<Http1Connection>(&loop, address, *s, read_buffer.data(), read_buffer.size(), spec.method == "HEAD");
      if (unreachable != ErrorKind::kNone) s->conn->refuse(unreachable, unreachable_message);
    } else {
      s->easy = curl_easy_init();  // configured before each request (send)
    }
    if (spec.mode == LoadMode::kOpenAi && spec.stream) {
      Stream* raw = s.get();
      s->parser = std::make_unique<SseParser>([this, raw](const SseEvent& e) { on_event(*raw, e); });
    }
    streams.push_back(std::move(s));
    return streams.back().get();
  }

  // Sets every option from a reset handle, before each request: libcurl 7.88 counts "connection
  // died, retrying" over a reused handle's whole life, so a slot would fail its 6th such retry ever.
  void configure(Stream& s) {
    CURL* e = s.easy;
    curl_easy_reset(e);
    curl_easy_setopt(e, CURLOPT_URL, spec.url.c_str());
    curl_easy_setopt(e, CURLOPT_PRIVATE, &s);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &Impl::on_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &s);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, s.errbuf);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    // No proxy from http_proxy and the like: the policy judges the server, so that is where
    // the connection must go.
    curl_easy_setopt(e, CURLOPT_PROXY, "");
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(spec.timeout_s * 1000));
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(std::min(spec.timeout_s, 30.0) * 1000));
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(e, CURLOPT_SHARE, share);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, &Impl::on_open_socket);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, &s);
    if (spec.buffer_bytes > 0) curl_easy_setopt(e, CURLOPT_BUFFERSIZE, spec.buffer_bytes);
    if (!spec.ca_file.empty()) curl_easy_setopt(e, CURLOPT_CAINFO, spec.ca_file.c_str());
    if (spec.http2) {
      const bool tls = spec.url.rfind("https:", 0) == 0;
      curl_easy_setopt(e, CURLOPT_HTTP_VERSION, tls ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
      curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
    } else {
      curl_easy_setopt(e, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
    }
    if (spec.method == "GET") {
      curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    } else if (spec.method == "HEAD") {
      curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
    } else {
      if (spec.method == "POST") curl_easy_setopt(e, CURLOPT_POST, 1L);
      else curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, spec.method.c_str());
    }
  }

  // ---- issuing requests ----

  void launch_closed(Stream* s) {
    Due due{};
    if (stopped || !shared.claim(due.index, due.intended_ns)) {
      claims_over = true;
      idle.push_back(s);
      return;
    }
    send(*s, due);
  }

  // Open loop: sends whatever is due, then sleeps until the next request's time.
  void schedule_next() {
    for (int sent = 0; !stopped; ++sent) {
      if (!have_next) {
        if (!shared.claim(next.index, next.intended_ns)) {
          claims_over = true;
          maybe_finish();
          return;
        }
        have_next = true;
      }
      const std::int64_t wait_ns = next.intended_ns - shared.now();
      if (wait_ns > 0 || sent >= kMaxSendsPerTurn) {
        // At the due time, or on the next loop turn when that is past.
        send_timer->start_at(static_cast<std::uint64_t>(shared.start_ns + std::max<std::int64_t>(next.intended_ns, 0)));
        return;
      }
      have_next = false;
      dispatch(next);
    }
  }

  void dispatch(const Due& due) {
    if (slots > 0 && in_flight >= static_cast<std::size_t>(slots)) {
      waiting.push_back(due);  // queueing delay: it is sent when a slot frees up
      return;
    }
    Stream* s = idle.empty() ? new_stream() : idle.back();
    if (!s) return;  // no memory for another slot: the load is ending
    if (!idle.empty()) idle.pop_back();
    send(*s, due);
  }

  void send(Stream& s, const Due& due) {
    s.reset();
    s.rec.index = due.index;
    s.rec.intended_ns = due.intended_ns;
    s.rec.warmup = shared.is_warmup(due.index, due.intended_ns);
    const std::string* body = &spec.bodies->front();
    if (spec.prompts) {
      const Prompt& p = spec.prompts->pick(due.index, spec.seed);
      s.rec.prompt = static_cast<std::uint32_t>(&p - &spec.prompts->at(0));
      body = &(*spec.bodies)[s.rec.prompt];
      s.rec.input_tokens = (*spec.body_tokens)[s.rec.prompt];
    } else if (spec.templated) {
      s.body = expand_template(*body, due.index, spec.seed);
      body = &s.body;
    }
    const bool has_body = spec.method != "GET" && spec.method != "HEAD";
    s.busy = true;
    ++in_flight;
    shared.started_one();
    if (native) {
      if (has_body) {
        s.head.assign(head_prefix).append("Content-Length: ").append(std::to_string(body->size())).append("\r\n\r\n");
      }
      s.rec.sent_ns = shared.now();
      s.conn->send(has_body ? s.head : head_without_body, has_body ? *body : kNoBody,
                   static_cast<std::uint64_t>(spec.timeout_s * 1000));
      return;
    }
    configure(s);
    if (has_body) {
      curl_easy_setopt(s.easy, CURLOPT_POSTFIELDS, body->data());
      curl_easy_setopt(s.easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body->size()));
    }
    s.rec.sent_ns = shared.now();
    curl->add(s.easy);
  }

  inline static const std::string kNoBody;

  // ---- receiving ----

  static curl_socket_t on_open_socket(void* data, curlsocktype, curl_sockaddr* address) {
    auto* s = static_cast<Stream*>(data);
    const LoadSpec& spec = s->worker->spec;
    // The port judged is the one in the address libcurl is about to connect to, not the URL's.
    if (spec.policy && !spec.policy->allows(&address->addr, spec.url_host, s->refusal)) {
      return CURL_SOCKET_BAD;
    }
    return socket(address->family, address->socktype, address->protocol);
  }

  static size_t on_write(char* data, size_t size, size_t n, void* user) {
    auto* s = static_cast<Stream*>(user);
    if (!s->status_known) {
      long status = 0;
      curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &status);
      s->worker->note_status(*s, static_cast<int>(status));
    }
    s->worker->guarded([&] { s->worker->body_bytes(*s, data, size * n, s->worker->shared.now()); });
    return size * n;
  }

  void note_status(Stream& s, int status) {
    s.rec.status = static_cast<std::int16_t>(status);
    s.status_known = true;
    s.http_error = status < 200 || status > 299;
  }

  // Response body bytes and when they arrived (ns since the start): the kernel's receive time
  // on the native path, the time libcurl handed them over on the other.
  void body_bytes(Stream& s, const char* data, std::size_t len, std::int64_t arrived) {
    s.now = arrived;
    s.rec.done_ns = s.now;
    if (spec.mode == LoadMode::kHttp && s.rec.first_token_ns < 0) s.rec.first_token_ns = s.now;
    if (s.http_error || (spec.mode == LoadMode::kOpenAi && !spec.stream)) {
      if (s.reply.size() < kMaxKeptBody) s.reply.append(data, std::min(len, kMaxKeptBody - s.reply.size()));
    } else if (s.parser) {
      s.parser->feed(data, len);
    }
  }

  void on_event(Stream& s, const SseEvent& e) {
    interpret_openai_event(e, event);
    if (event.kind == OpenAiEventKind::kDone) {
      s.done_seen = true;
    } else if (event.kind == OpenAiEventKind::kError) {
      if (s.event_error == ErrorKind::kNone) {
        s.event_error = event.error_kind == kMalformedSse ? ErrorKind::kMalformedSse : ErrorKind::kServerError;
        s.message = std::string(event.error_kind) + ": " + event.error_message;
      }
    } else {
      if (event.has_usage) {
        s.usage_prompt = event.prompt_tokens;
        s.usage_completion = event.completion_tokens;
      }
      if (event.has_token) token_arrived(s);
    }
  }

  void token_arrived(Stream& s) {
    if (s.last_token_ns < 0) s.rec.first_token_ns = s.now;
    else s.gaps.push_back(s.now - s.last_token_ns);
    s.last_token_ns = s.now;
    ++s.rec.chunks;
    if (!s.rec.warmup) stats.add_tokens_at(s.now, 1);
  }

  // ---- finishing a request ----

  void on_done(CURL* easy, CURLcode code) {
    Stream* s = nullptr;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, reinterpret_cast<char**>(&s));
    if (!s || !s->busy) return;
    if (!s->status_known) {
      long status = 0;
      curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &status);
      s->rec.status = static_cast<std::int16_t>(status);
    }
    if (!s->refusal.empty()) return request_done(*s, ErrorKind::kRefused, s->refusal);
    if (code != CURLE_OK) {
      std::string text = curl_easy_strerror(code);
      if (s->errbuf[0] && text != s->errbuf) text += ": " + std::string(s->errbuf);
      return request_done(*s, kind_of(code), text);
    }
    request_done(*s, ErrorKind::kNone, {});
  }

  void native_done(Stream& s, ErrorKind error, const std::string& message) {
    if (s.busy) request_done(s, error, message);
  }

  // The transport is done with the request (`error`: how it failed, if it did): judge the
  // response, record it, and put the slot back to work.
  void request_done(Stream& stream, ErrorKind error, const std::string& transport_message) {
    Stream* s = &stream;
    s->busy = false;
    --in_flight;
    shared.finished_one();
    if (s->rec.done_ns < 0) s->rec.done_ns = shared.now();
    if (s->parser) s->parser->finish(false);
    const std::string message = error == ErrorKind::kNone ? conclude(*s) : fail(s->rec, error, transport_message);
    record(*s, message);
    if (!waiting.empty() && !stopped) {
      const Due due = waiting.front();
      waiting.pop_front();
      send(*s, due);
    } else if (spec.open_loop()) {
      idle.push_back(s);
    } else if (!back_off(*s, error)) {
      launch_closed(s);
    }
    maybe_finish();
  }

  // Closed loop, after a request: when it could not connect, the slot's next one waits (true).
  bool back_off(Stream& s, ErrorKind error) {
    if (error != ErrorKind::kConnect && error != ErrorKind::kRefused) {
      s.connect_failures = 0;
      return false;
    }
    if (stopped) return false;
    const int n = std::min(++s.connect_failures, 8);
    const std::uint64_t delay = std::min(kMaxBackoffMs, kFirstBackoffMs << (n - 1));
    if (!s.backoff) {
      s.backoff = new uv_timer_t;
      uv_timer_init(&loop, s.backoff);
      s.backoff->data = &s;
    }
    uv_timer_start(s.backoff, [](uv_timer_t* t) {
      auto* slot = static_cast<Stream*>(t->data);
      slot->worker->guarded([slot] {
        slot->worker->launch_closed(slot);
        slot->worker->maybe_finish();
      });
    }, delay, 0);
    return true;
  }

  // A complete response arrived: decides whether it succeeded; returns a message when not.
  std::string conclude(Stream& s) {
    RequestRecord& r = s.rec;
    if (r.status < 200 || r.status > 299) return fail(r, ErrorKind::kHttpStatus, http_error_text(s));
    if (spec.mode == LoadMode::kHttp) return {};
    if (!spec.stream) return conclude_whole_reply(s);
    if (s.event_error != ErrorKind::kNone) return fail(r, s.event_error, s.message);
    if (!s.done_seen) return fail(r, ErrorKind::kReset, "the stream ended without \"data: [DONE]\"");
    count_tokens(s);
    return {};
  }

  std::string conclude_whole_reply(Stream& s) {
    interpret_openai_json(s.reply, event);
    if (event.is_error()) {
      const ErrorKind kind = event.error_kind == kMalformedSse ? ErrorKind::kMalformedSse : ErrorKind::kServerError;
      return fail(s.rec, kind, std::string(event.error_kind) + ": " + event.error_message);
    }
    s.rec.first_token_ns = s.rec.done_ns;  // nothing streams: the first token is the whole reply
    if (event.has_usage) {
      s.usage_prompt = event.prompt_tokens;
      s.usage_completion = event.completion_tokens;
    }
    s.rec.chunks = event.has_token ? 1 : 0;
    count_tokens(s);
    return {};
  }

  void count_tokens(Stream& s) {
    s.rec.tokens_from_usage = s.usage_completion >= 0;
    s.rec.output_tokens = static_cast<std::int32_t>(s.rec.tokens_from_usage ? s.usage_completion : s.rec.chunks);
    if (s.usage_prompt >= 0) s.rec.input_tokens = static_cast<std::int32_t>(s.usage_prompt);
  }

  static std::string fail(RequestRecord& r, ErrorKind kind, std::string message) {
    r.error = kind;
    return message;
  }

  std::string http_error_text(Stream& s) {
    std::string text = "HTTP " + std::to_string(s.rec.status);
    interpret_openai_json(s.reply, event);
    if (event.is_error() && event.error_kind == kServerError && !event.error_message.empty()) {
      return text + ": " + event.error_message;
    }
    std::string body = s.reply.substr(0, 200);
    for (char& c : body) {
      if (c == '\n' || c == '\r' || static_cast<unsigned char>(c) < 0x20) c = ' ';
    }
    return body.empty() ? text : text + ": " + body;
  }

  void record(Stream& s, const std::string& message) {
    stats.add(s.rec, s.gaps, message);
    lengths.add(s.rec, shared.lengths_taken);
    count_input_both_ways(s);
    if (spec.wants_record(s.rec)) keep(s.rec);  // chosen out by `record`: neither kept nor left out
    if (s.rec.ok()) shared.succeeded_one();
    else shared.failed_one(s.rec.done_ns);
    if (s.rec.warmup) return;
    std::lock_guard lock(progress_mutex);
    if (!s.rec.ok()) {
      ++progress.failed;
      return;
    }
    ++progress.completed;
    if (s.rec.first_token_ns >= 0) progress.ttft.record(s.rec.first_token_ns - s.rec.intended_ns);
    for (std::int64_t gap : s.gaps) progress.itl.record(gap);
  }

  void count_input_both_ways(const Stream& s) {
    if (!s.rec.ok() || s.rec.warmup) return;
    if (spec.body_tokens && s.rec.prompt < spec.body_tokens->size()) {
      stats.client_input_tokens += std::max((*spec.body_tokens)[s.rec.prompt], 0);
    }
    if (s.usage_prompt >= 0) {
      stats.server_input_tokens += s.usage_prompt;
      ++stats.server_input_counted;
    }
  }

  // requests.jsonl gets this request, up to max_request_lines in the load, unless its writer has
  // no memory reserved (then it is counted as left out, as are those past the bound).
  void keep(const RequestRecord& r) {
    if (!shared.request_log || batch.capacity() == 0 || !shared.keep_record()) {
      ++left_out;
      return;
    }
    batch.push_back(r);
    if (batch.size() == RequestLog::kBatchRecords) hand_over();
  }

  // ---- stopping ----

  void on_stop() {
    if (stopped) return;
    stopped = true;
    if (send_timer) send_timer->stop();
    for (auto& s : streams) {
      if (!s->busy) continue;
      if (s->conn) s->conn->abort();
      else curl->remove(s->easy);
      s->busy = false;
      shared.finished_one();
      ++abandoned;
    }
    in_flight = 0;
    waiting.clear();
    have_next = false;
    maybe_finish();
  }

  void maybe_finish() {
    if (closing || in_flight > 0 || !waiting.empty()) return;
    if (!stopped && !(claims_over && !have_next)) return;
    closing = true;
    if (batch_timer_open) {
      batch_timer_open = false;
      uv_close(reinterpret_cast<uv_handle_t*>(&batch_timer), nullptr);
    }
    for (auto& s : streams) {
      s->conn.reset();  // open keep-alive connections would keep the loop running
      if (!s->backoff) continue;
      uv_close(reinterpret_cast<uv_handle_t*>(s->backoff), [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
      s->backoff = nullptr;
    }
    if (curl) curl->close();
    if (send_timer) send_timer->close();
    std::lock_guard lock(async_mutex);
    async_open = false;
    uv_close(reinterpret_cast<uv_handle_t*>(&stop_async), nullptr);
  }
};

void Stream::on_status(int status) { worker->note_status(*this, status); }
void Stream::on_body(const char* data, std::size_t len, std::int64_t arrived_ns) {
  worker->guarded([&] { worker->body_bytes(*this, data, len, arrived_ns - worker->shared.start_ns); });
}
void Stream::on_complete(ErrorKind error, const std::string& message) {
  worker->guarded([&] { worker->native_done(*this, error, message); });
}

LoadWorker::LoadWorker(LoadShared& shared, int slots, std::function<void()> finished)
    : impl_(std::make_unique<Impl>(shared, slots, std::move(finished))) {}

LoadWorker::~LoadWorker() {
  stop();
  join();
}

void LoadWorker::start() {
  thread_ = std::thread([this] { impl_->run(); });
}

void LoadWorker::stop() {
  std::lock_guard lock(impl_->async_mutex);
  if (impl_->async_open) uv_async_send(&impl_->stop_async);
}

void LoadWorker::join() {
  if (thread_.joinable()) thread_.join();
}

LoadStats& LoadWorker::stats() { return impl_->stats; }
RequestLengths& LoadWorker::lengths() { return impl_->lengths; }
std::uint64_t LoadWorker::left_out() const { return impl_->left_out; }
MemoryReservation& LoadWorker::held() { return impl_->held; }
std::uint64_t LoadWorker::abandoned() const { return impl_->abandoned; }

void LoadWorker::read_progress(const std::function<void(const WorkerProgress&)>& reader) {
  std::lock_guard lock(impl_->progress_mutex);
  reader(impl_->progress);
}

}  // namespace runara
