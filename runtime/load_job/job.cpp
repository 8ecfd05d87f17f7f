#include "load_job/job.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "load/engine.hpp"
#include "load/report.hpp"
#include "load/request_log.hpp"
#include "load/result_metadata.hpp"
#include "load_job/bpe_tokenizer.hpp"
#include "load_job/prompt_pool.hpp"
#include "load_job/sharegpt_pairs.hpp"
#include "load_job/sweep_files.hpp"
#include "load_job/off_loop.hpp"
#include "load_job/prefix_cache_scrape.hpp"
#include "load_job/tokenize_check.hpp"
#include "base/checked_read.hpp"
#include "base/run_output.hpp"

namespace runara {

namespace {

std::string vllm_date() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%d-%H%M%S", &tm);
  return text;
}

// The one-line reason a point where nothing succeeded is an error.
std::string first_sample(const LoadStats& s) {
  for (const auto& [kind, messages] : s.error_samples) {
    if (!messages.empty()) return messages.front();
  }
  return {};
}

// What a pool's prompts hold, with their strings' spare capacity and bookkeeping.
std::size_t pool_bytes(const PromptPool& pool) {
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < pool.size(); ++i) bytes += sizeof(Prompt) + pool.at(i).text.capacity();
  return bytes;
}

// `sample` is what the server sent (it may echo a secret) and comes redacted; the rest is the
// script's own text, which must not be (a masked name would tell which guess was a secret).
std::string nothing_succeeded(const LoadStats& s, const std::string& sample, const std::string& dir) {
  std::string kinds;
  for (const auto& [kind, messages] : s.error_samples) kinds += (kinds.empty() ? "" : ", ") + kind;
  return "every request failed (" + std::to_string(s.failed) + " of " + std::to_string(s.failed) + "; " + kinds +
         "): " + sample + " — results written to " + dir;
}

}  // namespace

std::shared_ptr<const int> make_out_fd(int fd) {
  return std::shared_ptr<const int>(new int(fd), [](const int* p) {
    if (*p >= 0) ::close(*p);
    delete p;
  });
}

struct LoadJob::Impl : std::enable_shared_from_this<LoadJob::Impl> {
  ~Impl() { end(); }

  // The job's threads are all joined: gives them back to the run's count (once).
  void end() {
    if (!plan.on_end) return;
    auto on_end = std::move(plan.on_end);
    plan.on_end = nullptr;
    on_end();
  }

  uv_loop_t* loop = nullptr;
  LoadPlan plan;
  Hooks hooks;
  Done done;
  std::shared_ptr<const PromptPool> pool;
  std::shared_ptr<std::vector<std::string>> bodies;
  std::shared_ptr<std::vector<std::int32_t>> tokens;
  std::string error;
  std::size_t point = 0;
  std::vector<nlohmann::json> results;
  std::shared_ptr<LoadSpec> spec;
  std::unique_ptr<LoadRunner> engine;
  bool aborted = false;
  nlohmann::json sweep_rows = nlohmann::json::array();  // a sweep's table so far (redacted)
  bool writing = false;  // between point_done and point_written: the thread pool owns the files
  std::atomic<bool> stop_preparing{false};  // abort(): the thread pool's work ends early
  MemoryReservation held;  // the prompt pool and its request bodies
  std::unique_ptr<TokenizeCheck> tokenize;  // vLLM's /tokenize, asked before the first point
  ShareGptPairs sharegpt;  // a ShareGPT file's pairs kept and dropped
  nlohmann::json tokenized;  // its token_count_check.tokenize, in every point's results (redacted where server text)
  // The server's prefix-cache counters around each point (load_job/prefix_cache_scrape.hpp).
  std::unique_ptr<PrefixCacheScrape> scrape;
  std::optional<PrefixCacheCounters> cache_before;
  nlohmann::json cache_fields;  // the point's prefix_cache_* fields; null until its second scrape

  void prepare() {  // off the loop
    held = MemoryReservation(plan.points.front().memory, 0);
    if (!plan.out_fd && !open_out_dir()) return;
    if (!take_echoes()) return;
    if (plan.points.front().mode == LoadMode::kHttp) return;
    try {
      if (make_pool()) make_bodies();
    } catch (const std::bad_alloc&) {
      error = "out of memory while preparing the prompts";
    } catch (const std::exception& e) {
      error = std::string("preparing the prompts failed: ") + e.what();
    }
    if (!error.empty()) {
      pool.reset();
      bodies.reset();
      tokens.reset();
      held.reset();
    }
  }

  // Without the run's descriptor (a job made by a test): out_dir, made if missing.
  bool open_out_dir() {
    error = make_dirs(plan.out_dir);
    if (!error.empty()) return false;
    plan.out_fd = make_out_fd(::open(plan.out_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (*plan.out_fd < 0) error = "cannot open the output folder " + plan.out_dir + ": " + std::strerror(errno);
    return *plan.out_fd >= 0;
  }

  // Every point's result carries the options echo (extra_body may be large): a sweep's results,
  // held until the last point ends, are reserved up front, at about twice the echo's text.
  bool take_echoes() {
    const auto& echo = plan.points.front().echo;
    if (plan.points.size() < 2 || !echo) return true;
    const std::size_t bytes = 2 * echo->dump().size() * plan.points.size();
    if (take(bytes, "the options echoed in the results of " + std::to_string(plan.points.size()) + " sweep points")) return true;
    held.reset();
    return false;
  }

  // Takes `bytes` from the run's budget for `what`; false (and `error` set) when it has no room.
  bool take(std::size_t bytes, const std::string& what) {
    const auto& memory = plan.points.front().memory;
    if (!memory || held.grow(bytes)) return true;
    error = memory->refusal(bytes, what);
    return false;
  }

  // The tokenizer lives while the pool is made. Its file, parse and tables (Llama 3's 9 MB
  // file: ~128k tokens, ~280k merges) are budgeted at 16 times the file's size up front.
  bool load_tokenizer(std::optional<BpeTokenizer>& tokenizer) {
    const std::string& path = plan.prompts.tokenizer;
    if (path.empty()) return true;
    std::string text;
    std::string why = read_file_checked(path, [&](std::size_t size) {
      return take(16 * size, "the tokenizer " + path + " (" + std::to_string(size) + " bytes)") ? std::string() : error;
    }, text);
    if (why.empty()) {
      auto made = BpeTokenizer::from_json(text);
      if (made) tokenizer = std::move(made).value();
      else why = made.error();
    }
    if (!why.empty()) error = "prompts.tokenizer " + path + ": " + why;
    return why.empty();
  }

  bool make_pool() {
    const PromptSource& src = plan.prompts;
    std::optional<PromptPool> made;
    std::optional<BpeTokenizer> tokenizer;
    if (!load_tokenizer(tokenizer)) return false;
    const BpeTokenizer* counter = tokenizer ? &*tokenizer : nullptr;
    if (src.kind == PromptSource::Kind::kSynthetic) {
      // At most 6 bytes a token (the longest word and a space), and up to twice that while a
      // string grows: checked before a prompt is made.
      const double longest = std::ceil(src.input_tokens * (1 + src.range_ratio));
      const double each = 2 * 6 * longest + sizeof(Prompt);
      const double total = each * static_cast<double>(src.count);
      const std::string what = "the synthetic prompt pool (" + std::to_string(src.count) + " prompts of up to " +
                               std::to_string(static_cast<long long>(longest)) + " tokens)";
      if (!take(total > 1e18 ? static_cast<std::size_t>(1e18) : static_cast<std::size_t>(total), what)) return false;
      try {
        made = PromptPool::synthetic(src.input_tokens, src.range_ratio, src.count, plan.points.front().seed,
                                     &stop_preparing, counter, SharedPrefixes{src.prefix_tokens, src.prefixes});
      } catch (const std::runtime_error& e) {
        if (stop_preparing) throw;
        error = (src.tokenizer.empty() ? "prompts: " : "prompts.tokenizer " + src.tokenizer + ": ") + e.what();
        return false;
      }
    } else {
      std::string text, format = src.format, why;
      if (src.kind == PromptSource::Kind::kFixed) {
        text = nlohmann::json(src.text).dump();
        format = "jsonl";
      } else {
        // The file, its prompts, (JSON formats) its parsed form and (ShareGPT) the replies kept
        // for counting: about five times its size, checked with fstat before it is read.
        why = read_file_checked(src.path, [&](std::size_t size) {
          return take(5 * size, "the prompts file " + src.path + " (" + std::to_string(size) + " bytes)") ? std::string() : error;
        }, text);
        if (!why.empty()) {
          error = why;
          return false;
        }
      }
      made = PromptPool::from_text(text, format, why, counter);
      if (!made) {
        error = (src.kind == PromptSource::Kind::kFile ? "prompts file " + src.path + ": " : "prompt: ") + why;
        return false;
      }
    }
    if (made->format() == "sharegpt" && !keep_sharegpt(made)) return false;
    pool = std::make_shared<const PromptPool>(std::move(*made));
    held.shrink_to(pool_bytes(*pool));  // the file's text and parse, and the tokenizer, are gone
    return true;
  }

  // A ShareGPT file: the pairs vLLM's ShareGPT dataset would send, each with its reply's length
  // as max_tokens unless the script set max_tokens (load_job/sharegpt_pairs.hpp).
  bool keep_sharegpt(std::optional<PromptPool>& made) {
    const int fixed = plan.openai.max_tokens_given ? plan.openai.max_tokens : -1;
    auto kept = keep_sharegpt_pairs(*made, fixed, sharegpt);
    if (!kept) {
      error = "prompts file " + plan.prompts.path + ": " + kept.error();
      return false;
    }
    made = std::move(kept).value();
    return true;
  }

  // The request's max_tokens: a ShareGPT reply's length where the script left max_tokens unset.
  bool lengths_from_replies() const {
    return pool && pool->format() == "sharegpt" && !plan.openai.max_tokens_given;
  }

  bool make_bodies() {
    const std::size_t extra = plan.openai.extra_body.dump().size() + 256;  // model, options, JSON
    bodies = std::make_shared<std::vector<std::string>>();
    tokens = std::make_shared<std::vector<std::int32_t>>();
    for (std::size_t i = 0; i < pool->size(); ++i) {
      if (stop_preparing) throw std::runtime_error("stopped");
      if (!take(pool->at(i).text.size() + extra + sizeof(std::string) + sizeof(std::int32_t),
                "the request bodies of " + std::to_string(pool->size()) + " prompts")) {
        return false;
      }
      OpenAiParams params = plan.openai;
      if (lengths_from_replies()) params.max_tokens = pool->at(i).expected_output_tokens;
      bodies->push_back(openai_request_body(params, pool->at(i).text));
      tokens->push_back(pool->at(i).tokens);
    }
    return true;
  }

  // After the prompts are made, before the first point (on the loop): the server's own count of a
  // few prompts (load_job/tokenize_check.hpp). Whatever it finds, the load runs.
  void check_tokens() noexcept {
    if (aborted) return;
    if (!error.empty()) return start_point();
    try {
      const LoadSpec& first = plan.points.front();
      if (std::string why = tokenize_unavailable(first, pool.get(), plan.runner != nullptr); !why.empty()) {
        tokenized = tokenize_not_run(why);
        return start_point();
      }
      // The check is this job's and calls back only while it exists; the job is held through
      // each call (starting the first point may end the job, whose owner may then drop it).
      std::weak_ptr<Impl> weak = weak_from_this();
      tokenize = std::make_unique<TokenizeCheck>(loop, first, pool, [weak](const std::string& text) {
        const auto self = weak.lock();
        return self ? self->redacted(text) : std::string();
      });
      tokenize->start([weak](nlohmann::json result) {
        const auto self = weak.lock();
        if (!self) return;
        self->tokenized = std::move(result);
        self->start_point();
      });
    } catch (const std::exception& e) {
      tokenized = tokenize_not_run(std::string("could not ask /tokenize: ") + e.what());
      start_point();
    }
  }

  // Runs on the loop, called from libuv: an exception (std::bad_alloc, std::system_error when no
  // thread can be made) ends the job with an error instead of unwinding through C frames.
  void start_point() noexcept {
    try {
      try_start_point();
    } catch (const std::exception& e) {
      engine.reset();
      if (error.empty()) error = std::string("could not start the load: ") + e.what();
      finish();
    }
  }

  // An OpenAI-API load sent from here: the server's /metrics is read around each point.
  bool scrapes() const { return spec && spec->mode == LoadMode::kOpenAi && plan.runner == nullptr; }

  void try_start_point() {
    if (aborted) return;
    if (!error.empty() || point == plan.points.size()) return finish();
    spec = std::make_shared<LoadSpec>(plan.points[point]);
    if (pool) {
      spec->bodies = bodies;
      spec->body_tokens = tokens;
    }
    cache_before.reset();
    cache_fields = nullptr;
    if (!scrapes()) return run_point();
    std::weak_ptr<Impl> weak = weak_from_this();
    scrape = std::make_unique<PrefixCacheScrape>(loop, *spec);
    scrape->start([weak](std::optional<PrefixCacheCounters> counters) {
      const auto self = weak.lock();
      if (!self || self->aborted) return;
      self->cache_before = counters;
      try {
        self->run_point();
      } catch (const std::exception& e) {
        self->engine.reset();
        if (self->error.empty()) self->error = std::string("could not start the load: ") + e.what();
        self->finish();
      }
    });
  }

  void run_point() {
    if (hooks.log) hooks.log("http_load " + spec->name + ": starting, " + describe(*spec));
    if (hooks.load_started) hooks.load_started(spec->url);
    if (hooks.point_started) hooks.point_started(spec->name);
    auto log = open_request_log();
    if (!log) return finish();
    if (plan.runner) engine = plan.runner(loop, spec, hooks.progress);
    else engine = std::make_unique<LoadEngine>(loop, spec, hooks.progress);
    engine->write_requests_to(std::move(log));
    auto self = shared_from_this();
    engine->start([self](LoadOutcome& outcome) { self->point_done(std::make_shared<LoadOutcome>(std::move(outcome))); });
  }

  static std::string describe(const LoadSpec& s) {
    char text[160];
    const int n = s.open_loop() ? std::snprintf(text, sizeof text, "rate %g/s", s.rate)
                                : std::snprintf(text, sizeof text, "concurrency %d", s.concurrency);
    std::string out(text, static_cast<std::size_t>(std::max(n, 0)));
    if (s.requests) out += ", " + std::to_string(s.requests) + " requests";
    if (s.duration_s > 0) {
      std::snprintf(text, sizeof text, ", %g s", s.duration_s);
      out += text;
    }
    return out + ", " + std::to_string(s.threads) + " thread(s), " + s.url;
  }

  std::string point_dir() const { return plan.out_dir + "/" + spec->name; }

  // The point's requests.jsonl, made empty now and written as its requests finish (a few
  // syscalls on the loop: the folder and the file); null with `error` set when it cannot be.
  std::shared_ptr<RequestLog> open_request_log() {
    const std::string relative = spec->name + "/requests.jsonl";
    std::string why;
    const int fd = open_beneath(*plan.out_fd, relative, O_WRONLY | O_CREAT | O_TRUNC, why);
    if (fd < 0) {
      error = "cannot write the requests of " + spec->name + ": " + why;
      return nullptr;
    }
    fchmod(fd, 0644);  // as results.json: open_beneath makes files private
    return std::make_shared<RequestLog>(fd, point_dir() + "/requests.jsonl", spec->request_queue_bytes, spec->threads, spec->memory);
  }

  // What the script gets back. Fields it chose itself (url, options, names) are not redacted:
  // a masked copy of its own text would tell it which text was a secret. Error samples come
  // from the server, which may echo a secret: those are, as are save_detailed's generated_texts
  // and errors (server text too), and the /tokenize check's `why`, masked when it was made.
  nlohmann::json summary(const LoadOutcome& outcome) const {
    nlohmann::json r = load_result_json(*spec, outcome, vllm_date());
    if (cache_fields.is_object()) r.update(cache_fields);
    if (!tokenized.is_null()) r["token_count_check"]["tokenize"] = tokenized;
    if (pool && pool->format() == "sharegpt" && r.contains("options")) {
      r["options"]["prompts"]["sharegpt_pairs"] = {{"kept", sharegpt.kept}, {"dropped", sharegpt.dropped}};
      if (lengths_from_replies()) {
        r["options"]["max_tokens"] = nullptr;
        r["options"]["max_tokens_from"] = "sharegpt replies";
      }
    }
    r["files"] = {{"results", point_dir() + "/results.json"}, {"requests", point_dir() + "/requests.jsonl"}};
    if (spec->thresholds) apply_thresholds(*spec->thresholds, r);
    if (hooks.redact) {
      r["error_samples"] = hooks.redact(r["error_samples"]);
      for (const char* key : {"generated_texts", "errors"}) {
        if (r.contains(key) && !r[key].is_null()) r[key] = hooks.redact(r[key]);
      }
    }
    return r;
  }

  // What is written to results.json, which the script cannot read: redacted whole.
  nlohmann::json written(const nlohmann::json& summary) const { return hooks.redact ? hooks.redact(summary) : summary; }

  // requests.jsonl's last lines (at most its queue, RequestLog's cap), then results.json.
  static std::string write_files(int out_fd, const std::string& name, const nlohmann::json& result, const LoadOutcome& outcome) try {
    if (outcome.request_log) {
      if (std::string why = outcome.request_log->finish(); !why.empty()) return why;
    }
    const std::string json = result.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    return write_beneath(out_fd, name + "/results.json", json);  // "" or "cannot write '<name>/results.json': ..."
  } catch (const std::exception& e) {
    return "writing the results of " + name + " failed: " + e.what();
  }

  void point_done(std::shared_ptr<LoadOutcome> outcome) noexcept {
    try {
      if (scrapes()) {
        writing = true;  // abort() leaves the finished point to this: its results are written
        std::weak_ptr<Impl> weak = weak_from_this();
        scrape = std::make_unique<PrefixCacheScrape>(loop, *spec);
        return scrape->start([weak, outcome](std::optional<PrefixCacheCounters> after) {
          const auto self = weak.lock();
          if (!self) return;
          self->cache_fields = prefix_cache_fields(self->cache_before, after);
          try {
            self->write_point(outcome);
          } catch (const std::exception& e) {
            self->writing = false;
            self->engine.reset();
            if (self->error.empty()) self->error = std::string("could not write the results: ") + e.what();
            self->finish();
          }
        });
      }
      write_point(std::move(outcome));
    } catch (const std::exception& e) {
      engine.reset();
      if (error.empty()) error = std::string("could not write the results: ") + e.what();
      finish();
    }
  }

  void write_point(std::shared_ptr<LoadOutcome> outcome) {
    writing = true;
    auto result = std::make_shared<nlohmann::json>(summary(*outcome));
    if (hooks.point_ended) hooks.point_ended(spec->name, *result);
    if (spec->metadata) add_result_metadata(*result, *spec->metadata);  // last: beside every figure, over none
    auto file = std::make_shared<nlohmann::json>(written(*result));
    auto write_error = std::make_shared<std::string>();
    const std::string dir = point_dir();
    auto self = shared_from_this();
    std::shared_ptr<const nlohmann::json> sweep;
    if (!plan.sweep_dir.empty()) sweep_rows.push_back(sweep_row(*file)), sweep = std::make_shared<const nlohmann::json>(sweep_rows);
    off_loop(
        loop, [out_fd = plan.out_fd, name = spec->name, file, outcome, write_error, sweep, sweep_dir = plan.sweep_dir] {
          *write_error = write_files(*out_fd, name, *file, *outcome);
          if (sweep && write_error->empty()) *write_error = write_sweep_files(sweep_dir, *sweep);
        },
        [self, outcome, result, write_error, dir] { self->point_written(*outcome, *result, *write_error, dir); });
  }

  void point_written(const LoadOutcome& outcome, nlohmann::json& result, const std::string& write_error,
                     const std::string& dir) noexcept {
    writing = false;
    engine.reset();
    if (aborted) return end();
    try {
      if (!write_error.empty()) error = write_error;
      else if (!outcome.error.empty()) error = stopped_early(outcome, dir);
      else if (outcome.stats.completed == 0 && outcome.stats.failed > 0) error = nothing_succeeded(outcome.stats, redacted(first_sample(outcome.stats)), dir);
      if (hooks.point_finished) hooks.point_finished(result);
      results.push_back(std::move(result));
    } catch (const std::exception& e) {
      if (error.empty()) error = e.what();
    }
    ++point;
    start_point();
  }

  std::string redacted(const std::string& text) const {
    if (!hooks.redact || text.empty()) return text;
    const nlohmann::json masked = hooks.redact(nlohmann::json(text));
    return masked.is_string() ? masked.get<std::string>() : text;
  }

  std::string stopped_early(const LoadOutcome& o, const std::string& dir) const {
    const std::string sample = redacted(first_sample(o.stats));
    return o.error + (sample.empty() ? "" : ": " + sample) + " — results written to " + dir;
  }

  void finish() {
    end();
    if (!done) return;
    Done cb = std::move(done);
    done = nullptr;
    if (!error.empty()) return cb(Error{error});
    cb(std::move(results));
  }

  void abort() {
    if (aborted) return;
    aborted = true;
    stop_preparing = true;
    tokenize.reset();  // a check in flight is cancelled; no point has started
    if (!writing) scrape.reset();  // before a point: it does not start; after one, the write waits for it
    // The engine has finished and its results are being written: that write is the only one (two
    // writers would share the .tmp files; LoadEngine::abort() after its collect() returns an empty
    // outcome today, which alone kept this from writing). point_written gives back the threads.
    if (!engine || writing) return;
    LoadOutcome outcome = engine->abort();
    engine.reset();
    end();
    if (outcome.stats.completed + outcome.stats.failed + outcome.stats.warmup == 0) return;  // requests.jsonl stays empty
    const std::string why = write_files(*plan.out_fd, spec->name, written(summary(outcome)), outcome);
    if (hooks.log) hooks.log("http_load " + spec->name + ": stopped; " + (why.empty() ? "partial results in " + point_dir() : why));
  }
};

LoadJob::LoadJob(uv_loop_t* loop, LoadPlan plan, Hooks hooks) : impl_(std::make_shared<Impl>()) {
  impl_->loop = loop;
  impl_->plan = std::move(plan);
  impl_->hooks = std::move(hooks);
}

LoadJob::~LoadJob() {
  impl_->abort();
}

void LoadJob::start(Done done) {
  impl_->done = std::move(done);
  auto self = impl_;
  auto begin = [self] { off_loop(self->loop, [self] { self->prepare(); }, [self] { self->check_tokens(); }); };
  if (!self->plan.remote) return begin();
  self->plan.runner = remote_runner(*self->plan.remote);
  install_agent(self->loop, *self->plan.remote, [self, begin](Status installed) {
    if (self->aborted || !self->done) return;  // the run is stopping: no answer
    if (installed) return begin();
    // Redacted here: the binding raises the job's errors as they are.
    self->error = "cannot start the load agent: " + self->redacted(installed.error());
    self->finish();
  });
}

void LoadJob::abort() {
  impl_->abort();
}

}  // namespace runara
