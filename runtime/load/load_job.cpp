#include "load/load_job.hpp"

#include <uv.h>

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "load/load_engine.hpp"
#include "load/load_report.hpp"
#include "load/prompt_pool.hpp"
#include "run_output.hpp"

namespace runara {

namespace {

// Runs `work` on libuv's thread pool, then `after` on the loop.
void off_loop(uv_loop_t* loop, std::function<void()> work, std::function<void()> after) {
  struct Job {
    uv_work_t req{};
    std::function<void()> work, after;
  };
  auto* job = new Job{{}, std::move(work), std::move(after)};
  job->req.data = job;
  uv_queue_work(
      loop, &job->req, [](uv_work_t* r) { static_cast<Job*>(r->data)->work(); },
      [](uv_work_t* r, int) {
        auto* j = static_cast<Job*>(r->data);
        j->after();
        delete j;
      });
}

std::string vllm_date() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%d-%H%M%S", &tm);
  return text;
}

// The one-line reason a point where nothing succeeded is an error.
std::string nothing_succeeded(const LoadStats& s, const std::string& dir) {
  std::string kinds, sample;
  for (const auto& [kind, messages] : s.error_samples) {
    kinds += (kinds.empty() ? "" : ", ") + kind;
    if (sample.empty() && !messages.empty()) sample = messages.front();
  }
  return "every request failed (" + std::to_string(s.failed) + " of " + std::to_string(s.failed) + "; " + kinds +
         "): " + sample + " — results written to " + dir;
}

}  // namespace

struct LoadJob::Impl : std::enable_shared_from_this<LoadJob::Impl> {
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
  std::unique_ptr<LoadEngine> engine;
  bool aborted = false;

  void prepare() {  // off the loop
    if (plan.points.front().mode == LoadMode::kHttp) return;
    const PromptSource& src = plan.prompts;
    std::optional<PromptPool> made;
    if (src.kind == PromptSource::Kind::kSynthetic) {
      made = PromptPool::synthetic(src.input_tokens, src.range_ratio, src.count, plan.points.front().seed);
    } else {
      std::string text, format = src.format, why;
      if (src.kind == PromptSource::Kind::kFixed) {
        text = nlohmann::json(src.text).dump();
        format = "jsonl";
      } else if (!read_file_text(src.path, text)) {
        error = "cannot read the prompts file " + src.path;
        return;
      }
      made = PromptPool::from_text(text, format, why);
      if (!made) {
        error = (src.kind == PromptSource::Kind::kFile ? "prompts file " + src.path + ": " : "prompt: ") + why;
        return;
      }
    }
    pool = std::make_shared<const PromptPool>(std::move(*made));
    bodies = std::make_shared<std::vector<std::string>>();
    tokens = std::make_shared<std::vector<std::int32_t>>();
    for (std::size_t i = 0; i < pool->size(); ++i) {
      bodies->push_back(openai_request_body(plan.openai, pool->at(i).text));
      tokens->push_back(pool->at(i).tokens);
    }
  }

  void start_point() {
    if (aborted) return;
    if (!error.empty() || point == plan.points.size()) return finish();
    spec = std::make_shared<LoadSpec>(plan.points[point]);
    if (pool) {
      spec->prompts = pool;
      spec->bodies = bodies;
      spec->body_tokens = tokens;
    }
    if (hooks.log) hooks.log("http_load " + spec->name + ": starting, " + describe(*spec));
    engine = std::make_unique<LoadEngine>(loop, spec, hooks.progress);
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

  // What the script gets back. Fields it chose itself (url, options, names) are not redacted:
  // a masked copy of its own text would tell it which text was a secret. Error samples come
  // from the server, which may echo a secret: those are.
  nlohmann::json summary(const LoadOutcome& outcome) const {
    nlohmann::json r = load_result_json(*spec, outcome, vllm_date());
    r["files"] = {{"results", point_dir() + "/results.json"}, {"requests", point_dir() + "/requests.jsonl"}};
    if (hooks.redact) r["error_samples"] = hooks.redact(r["error_samples"]);
    return r;
  }

  // What is written to results.json, which the script cannot read: redacted whole.
  nlohmann::json written(const nlohmann::json& summary) const { return hooks.redact ? hooks.redact(summary) : summary; }

  static std::string write_files(const std::string& dir, const nlohmann::json& result, const LoadOutcome& outcome) {
    const std::string json = result.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    if (std::string why = write_file_atomic(dir + "/results.json", json); !why.empty()) return why;
    std::string why;
    if (!write_requests_jsonl(dir + "/requests.jsonl", outcome, why)) return why;
    return {};
  }

  void point_done(std::shared_ptr<LoadOutcome> outcome) {
    auto result = std::make_shared<nlohmann::json>(summary(*outcome));
    auto file = std::make_shared<nlohmann::json>(written(*result));
    auto write_error = std::make_shared<std::string>();
    const std::string dir = point_dir();
    auto self = shared_from_this();
    off_loop(
        loop, [dir, file, outcome, write_error] { *write_error = write_files(dir, *file, *outcome); },
        [self, outcome, result, write_error, dir] {
          self->engine.reset();
          if (self->aborted) return;
          if (!write_error->empty()) self->error = *write_error;
          else if (outcome->stats.completed == 0 && outcome->stats.failed > 0) self->error = nothing_succeeded(outcome->stats, dir);
          self->results.push_back(std::move(*result));
          ++self->point;
          self->start_point();
        });
  }

  void finish() {
    if (!done) return;
    Done cb = std::move(done);
    done = nullptr;
    cb(std::move(results), error);
  }

  void abort() {
    if (aborted) return;
    aborted = true;
    if (!engine) return;
    LoadOutcome outcome = engine->abort();
    engine.reset();
    if (outcome.records.empty() && outcome.stats.completed + outcome.stats.failed == 0) return;
    const std::string why = write_files(point_dir(), written(summary(outcome)), outcome);
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
  off_loop(impl_->loop, [self] { self->prepare(); }, [self] { self->start_point(); });
}

void LoadJob::abort() {
  impl_->abort();
}

}  // namespace runara
