#include "load/worker.hpp"

#include <sys/prctl.h>
#include <uv.h>

#include <ctime>
#include <deque>

#include "load/transport.hpp"
#include "load/prompt_pick.hpp"
#include "load/response_judge.hpp"
#include "load/seeded_random.hpp"
#include "net/precise_timer.hpp"

namespace runara {

namespace {

constexpr int kMaxSendsPerTurn = 1000;           // an open loop yields to I/O between bursts
constexpr std::uint64_t kBatchMs = 100;          // a partly filled batch of records goes to the writer

// Closed loop: a slot whose connection failed waits before it tries again, doubling from
// kFirstBackoffMs to kMaxBackoffMs while the failures go on (docs/http_load.md), so a dead or
// still-booting target costs a few attempts per slot and second instead of a spin.
constexpr std::uint64_t kFirstBackoffMs = 10;
constexpr std::uint64_t kMaxBackoffMs = 1000;

// One request slot, reused request after request (keeping its connection).
struct Stream final : SlotEvents {
  Stream(LoadWorker::Impl* w, const LoadSpec& spec)
      : worker(w), judge(spec.mode, spec.stream, rec, [this](std::int64_t now) { token_at(now); }, spec.memory) {
    judge.keep_text(spec.save_detailed && spec.mode == LoadMode::kOpenAi);
  }

  LoadWorker::Impl* worker;
  RequestRecord rec;
  ResponseJudge judge;
  std::unique_ptr<SlotConnection> conn;
  std::string body;                // templated request body
  bool busy = false;
  uv_timer_t* backoff = nullptr;   // closed loop: waits out a connect failure (created on first use)
  int connect_failures = 0;        // in a row, on this slot

  void on_status(int status) override { judge.status(status); }
  bool on_body(const char* data, std::size_t len, std::int64_t arrived_ns) override;
  void on_complete(ErrorKind error, const std::string& message) override;
  void token_at(std::int64_t now);

  void reset() {
    rec = RequestRecord{};
    judge.reset();
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
  std::unique_ptr<LoadTransport> transport;
  std::vector<std::unique_ptr<Stream>> streams;
  std::vector<Stream*> idle;
  std::deque<Due> waiting;  // open loop: due, but every slot is busy
  bool have_next = false;   // open loop: a claimed request waits for its time
  Due next{};
  bool claims_over = false, stopped = false, closing = false;
  std::size_t in_flight = 0;
  std::uint64_t abandoned = 0;

  LoadStats stats{spec.slo};
  RequestLengths lengths{spec.max_lengths};
  RequestDetails details{spec.save_detailed ? spec.max_lengths : 0, spec.memory};  // save_detailed only
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

  static double thread_cpu_s() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
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
    const double cpu_start = thread_cpu_s();
    guarded([this] { setup(); });
    uv_run(&loop, UV_RUN_DEFAULT);
    stats.client_cpu_s += thread_cpu_s() - cpu_start;
    guarded([this] { hand_over(); });  // the last records, before the engine hears this worker is done
    streams.clear();  // slots before their transport
    transport.reset();
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
    transport = make_load_transport(&loop, shared);
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

  // What one slot holds, roughly: its buffers (error replies are kept up to kMaxKeptBody), its
  // connection, and its copy of a templated body.
  std::size_t stream_bytes() const {
    std::size_t bytes = 16 * 1024 + ResponseJudge::kMaxKeptBody + transport->slot_bytes();
    if (spec.templated) bytes += spec.bodies->front().size() + 32;
    return bytes;
  }

  // A new slot, or null (and the load failing) when the run's memory budget has no room for it.
  Stream* new_stream() {
    if (spec.memory && !held.grow(stream_bytes())) {
      end_load(spec.memory->refusal(stream_bytes(), "another request slot of " + spec.name));
      return nullptr;
    }
    auto s = std::make_unique<Stream>(this, spec);
    s->conn = transport->open(*s);
    streams.push_back(std::move(s));
    return streams.back().get();
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
    if (spec.body_tokens) {  // openai mode: one body per prompt
      s.rec.prompt = static_cast<std::uint32_t>(pick_prompt(due.index, spec.seed, spec.bodies->size()));
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
    s.rec.sent_ns = shared.now();
    s.conn->send(*body, has_body);
  }

  // ---- receiving ----

  void token_arrived(const Stream& s, std::int64_t now) {
    if (!s.rec.warmup) stats.add_tokens_at(now, 1);
  }

  // ---- finishing a request ----

  // The transport is done with the request (`error`: how it failed, if it did): judge the
  // response, record it, and put the slot back to work.
  void request_done(Stream& stream, ErrorKind error, const std::string& transport_message) {
    Stream* s = &stream;
    s->busy = false;
    --in_flight;
    shared.finished_one();
    if (s->rec.done_ns < 0) s->rec.done_ns = shared.now();
    const std::string message =
        error == ErrorKind::kNone ? s->judge.conclude() : s->judge.transport_failed(error, transport_message);
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

  void record(Stream& s, const std::string& message) {
    stats.add(s.rec, s.judge.gaps(), message);
    lengths.add(s.rec, shared.lengths_taken);
    if (spec.save_detailed) details.add(s.rec, s.judge.gaps(), s.judge.text(), message, shared.details_taken);
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
    if (s.rec.first_token_ns >= 0) progress.ttft.record(s.rec.first_token_ns - s.rec.sent_ns);  // vLLM's TTFT, as the summary's
    for (std::int64_t gap : s.judge.gaps()) progress.itl.record(gap);
  }

  void count_input_both_ways(const Stream& s) {
    if (!s.rec.ok() || s.rec.warmup) return;
    if (spec.body_tokens && s.rec.prompt < spec.body_tokens->size()) {
      stats.client_input_tokens += std::max((*spec.body_tokens)[s.rec.prompt], 0);
    }
    if (s.judge.usage_prompt() >= 0) {
      stats.server_input_tokens += s.judge.usage_prompt();
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
      s->conn->abort();
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
      s->conn.reset();  // open keep-alive connections would keep the loop running (slots before their transport)
      if (!s->backoff) continue;
      uv_close(reinterpret_cast<uv_handle_t*>(s->backoff), [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
      s->backoff = nullptr;
    }
    if (transport) transport->close();
    if (send_timer) send_timer->close();
    std::lock_guard lock(async_mutex);
    async_open = false;
    uv_close(reinterpret_cast<uv_handle_t*>(&stop_async), nullptr);
  }
};

// A transport's callbacks: any exception ends the load, not the process (guarded).
bool Stream::on_body(const char* data, std::size_t len, std::int64_t arrived_ns) {
  bool more = true;
  worker->guarded([&] { more = judge.body(data, len, arrived_ns); });
  return more;
}
void Stream::on_complete(ErrorKind error, const std::string& message) {
  worker->guarded([&] {
    if (busy) worker->request_done(*this, error, message);
  });
}
void Stream::token_at(std::int64_t now) { worker->token_arrived(*this, now); }

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
RequestDetails& LoadWorker::details() { return impl_->details; }
std::uint64_t LoadWorker::left_out() const { return impl_->left_out; }
MemoryReservation& LoadWorker::held() { return impl_->held; }
std::uint64_t LoadWorker::abandoned() const { return impl_->abandoned; }

void LoadWorker::read_progress(const std::function<void(const WorkerProgress&)>& reader) {
  std::lock_guard lock(impl_->progress_mutex);
  reader(impl_->progress);
}

}  // namespace runara
