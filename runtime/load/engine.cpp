#include "load/engine.hpp"

#include <uv.h>

#include <algorithm>
#include <atomic>
#include <cstdio>

#include "load/shared.hpp"
#include "load/worker.hpp"

namespace runara {

namespace {

// What a worker thread holds whatever its load: a 256 KiB read buffer, its stack, libuv and
// libcurl state, and its copies of the request's headers.
std::size_t worker_bytes(const LoadSpec& spec) {
  std::size_t headers = 0;
  for (const auto& h : spec.header_lines()) headers += h.size() + 2;
  return (512u << 10) + 3 * headers;
}

// input_lens / output_lens, kept for up to max_lengths measured requests (fewer when the load
// has a smaller `requests`).
std::size_t lengths_bytes(const LoadSpec& spec) {
  const std::uint64_t n = spec.requests ? std::min<std::uint64_t>(spec.requests, spec.max_lengths) : spec.max_lengths;
  return static_cast<std::size_t>(n) * RequestLengths::kBytesEach;
}

}  // namespace

std::vector<int> split_slots(int total, int threads) {
  std::vector<int> out(static_cast<std::size_t>(threads), 0);
  for (int i = 0; i < threads && total > 0; ++i) out[static_cast<std::size_t>(i)] = total / threads + (i < total % threads ? 1 : 0);
  return out;
}

struct LoadEngine::Impl {
  uv_loop_t* loop;
  std::shared_ptr<const LoadSpec> spec;
  Progress progress;
  Done done;
  std::unique_ptr<LoadShared> shared;
  std::vector<std::unique_ptr<LoadWorker>> workers;
  std::atomic<int> running{0};
  uv_async_t* finished_async = nullptr;  // workers -> loop: "one of us is done"
  uv_timer_t* progress_timer = nullptr;
  bool collected = false;
  MemoryReservation held;  // the workers' fixed share of the run's memory budget, and the lengths
  std::shared_ptr<RequestLog> request_log;

  void start() {
    shared = std::make_unique<LoadShared>(*spec);
    shared->request_log = request_log.get();
    if (spec->memory) {
      held = MemoryReservation(spec->memory, 0);
      const std::size_t need = worker_bytes(*spec) * static_cast<std::size_t>(spec->threads);
      if (!held.grow(need)) shared->fail(spec->memory->refusal(need, std::to_string(spec->threads) + " worker thread(s) of " + spec->name));
      // input_lens / output_lens: null, rather than a failed load, when the budget has no room.
      if (!held.grow(lengths_bytes(*spec))) shared->lengths_taken = spec->max_lengths + 1;
    }
    const int total = spec->open_loop() ? spec->max_concurrency : spec->concurrency;
    const auto slots = split_slots(total, spec->threads);
    finished_async = new uv_async_t;
    finished_async->data = this;
    uv_async_init(loop, finished_async, [](uv_async_t* a) { static_cast<Impl*>(a->data)->on_worker_finished(); });
    progress_timer = new uv_timer_t;
    progress_timer->data = this;
    uv_timer_init(loop, progress_timer);
    uv_timer_start(progress_timer, [](uv_timer_t* t) { static_cast<Impl*>(t->data)->show_progress(); }, 1000, 1000);
    for (int i = 0; i < spec->threads && !shared->stopping; ++i) {
      if (!spec->open_loop() && slots[static_cast<std::size_t>(i)] == 0) continue;  // fewer streams than threads
      workers.push_back(std::make_unique<LoadWorker>(*shared, slots[static_cast<std::size_t>(i)], [this] {
        --running;
        uv_async_send(finished_async);
      }));
    }
    running = static_cast<int>(workers.size());
    start_threads();
    if (workers.empty()) uv_async_send(finished_async);
  }

  // The system may refuse a thread (std::system_error: RLIMIT_NPROC, memory): the load then
  // ends with an error, and the workers already started are stopped.
  void start_threads() {
    for (std::size_t i = 0; i < workers.size(); ++i) {
      try {
        workers[i]->start();
      } catch (const std::exception& e) {
        shared->fail(std::string("cannot start worker thread ") + std::to_string(i + 1) + " of " +
                     std::to_string(workers.size()) + ": " + e.what());
        running -= static_cast<int>(workers.size() - i);  // those never started never finish
        workers.resize(i);
        for (auto& w : workers) w->stop();
        uv_async_send(finished_async);
        return;
      }
    }
  }

  void on_worker_finished() {
    if (running.load() > 0 || collected) return;
    LoadOutcome outcome = collect(false);
    if (done) {
      Done cb = std::move(done);
      cb(outcome);  // may destroy this engine: nothing after
    }
  }

  LoadOutcome collect(bool interrupted) {
    collected = true;
    LoadOutcome out;
    out.stats.slo = spec->slo;
    out.interrupted = interrupted;
    out.threads = static_cast<int>(workers.size());
    out.wall_s = static_cast<double>(shared->now()) / 1e9;
    out.held = std::move(held);
    out.lengths = RequestLengths(spec->max_lengths);
    if (shared->lengths_taken.load() > spec->max_lengths) out.lengths.overflow();  // no room reserved: null
    out.details = RequestDetails(spec->max_lengths, spec->memory);
    for (auto& w : workers) {
      w->join();
      out.stats.merge(w->stats());
      out.lengths.merge(std::move(w->lengths()));
      out.details.merge(std::move(w->details()));
      out.abandoned += w->abandoned();
      out.left_out += w->left_out();
      out.held.absorb(std::move(w->held()));
    }
    out.error = shared->error();
    out.request_log = std::move(request_log);
    out.max_in_flight = shared->max_in_flight();
    close_handles();
    return out;
  }

  void close_handles() {
    if (progress_timer) {
      uv_timer_stop(progress_timer);
      uv_close(reinterpret_cast<uv_handle_t*>(progress_timer), [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
      progress_timer = nullptr;
    }
    if (finished_async) {
      uv_close(reinterpret_cast<uv_handle_t*>(finished_async), [](uv_handle_t* h) { delete reinterpret_cast<uv_async_t*>(h); });
      finished_async = nullptr;
    }
  }

  // The target has done nothing but fail for give_up_s: end the load with an error.
  void check_health() {
    if (spec->give_up_s <= 0 || shared->stopping || !shared->only_failures_for(spec->give_up_s)) return;
    char text[160];
    std::snprintf(text, sizeof text, "every request failed for %g s (give_up_after = %g); stopped early", spec->give_up_s, spec->give_up_s);
    shared->fail(text);
    for (auto& w : workers) w->stop();
  }

  LoadOutcome abort() {
    shared->stopping = true;
    for (auto& w : workers) w->stop();
    done = nullptr;
    return collect(true);
  }

  void show_progress() {
    check_health();
    std::uint64_t completed = 0, failed = 0;
    LatencyHistogram ttft(LatencyHistogram::kOneHourNs, 2), itl(LatencyHistogram::kOneHourNs, 2);
    for (auto& w : workers) {
      w->read_progress([&](const WorkerProgress& p) {
        completed += p.completed;
        failed += p.failed;
        ttft.merge(p.ttft);
        itl.merge(p.itl);
      });
    }
    const double elapsed = static_cast<double>(shared->now()) / 1e9;
    char line[256];
    int n = std::snprintf(line, sizeof line, "%s %.0fs  %llu done  %llu failed  %.1f req/s", spec->name.c_str(), elapsed,
                          static_cast<unsigned long long>(completed), static_cast<unsigned long long>(failed),
                          elapsed > 0 ? static_cast<double>(completed) / elapsed : 0.0);
    if (spec->mode == LoadMode::kOpenAi && ttft.count() > 0 && n > 0 && n < static_cast<int>(sizeof line)) {
      std::snprintf(line + n, sizeof line - static_cast<std::size_t>(n), "  TTFT p50 %.1f ms  ITL p50 %.2f ms",
                    static_cast<double>(ttft.percentile(50)) / 1e6, static_cast<double>(itl.percentile(50)) / 1e6);
    }
    if (progress) progress(line);
  }
};

LoadEngine::LoadEngine(uv_loop_t* loop, std::shared_ptr<const LoadSpec> spec, Progress progress)
    : impl_(std::make_unique<Impl>()) {
  impl_->loop = loop;
  impl_->spec = std::move(spec);
  impl_->progress = std::move(progress);
}

LoadEngine::~LoadEngine() {
  if (impl_->shared && !impl_->collected) impl_->abort();
}

void LoadEngine::write_requests_to(std::shared_ptr<RequestLog> log) { impl_->request_log = std::move(log); }

void LoadEngine::start(Done done) {
  impl_->done = std::move(done);
  impl_->start();
}

LoadOutcome LoadEngine::abort() {
  if (!impl_->shared || impl_->collected) return LoadOutcome{};
  return impl_->abort();
}

}  // namespace runara
