// One http_load.run call from start to results, on the run's event loop: prepares the request
// bodies (reading a prompt file off the loop), asks the server's /tokenize how it counts a few
// of the prompts (an OpenAI-API load sent from here: load_job/tokenize_check.hpp; the answer goes in
// every point's token_count_check.tokenize), runs each point of the sweep in turn with a
// LoadEngine, and writes each point's files: requests.jsonl as the point runs (a RequestLog
// opened when it starts), results.json when it ends (off the loop). Both are opened below the
// output folder's descriptor, one component at a time with O_NOFOLLOW (run_output.hpp).
//
// With `on = session` it first installs the load agent on that machine (load_job/remote_agent.hpp)
// and runs each point there. The Lua binding only reads options into a LoadOptions (the plan is
// made by load_job/plan.hpp) and turns the outcome into Lua values.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "load/engine.hpp"
#include "load/spec.hpp"
#include "base/result.hpp"
#include "load_job/openai_request.hpp"
#include "load_job/remote_agent.hpp"

typedef struct uv_loop_s uv_loop_t;

namespace runara {

// Where prompts come from (openai mode).
struct PromptSource {
  enum class Kind { kSynthetic, kFile, kFixed } kind = Kind::kSynthetic;
  int input_tokens = 1024;  // vLLM's "random" dataset default, with or without a prompts table
  double range_ratio = 0;
  std::size_t count = 1000;  // synthetic prompts in the pool
  int prefix_tokens = 0;     // synthetic: each prompt starts with one of `prefixes` shared prefixes
  int prefixes = 1;          //   of this many tokens (prompt_pool.hpp, SharedPrefixes); 0: none
  std::string path;          // kFile: a readable, already checked path
  std::string format;        // kFile: "", "lines", "jsonl", "sharegpt"
  std::string text;          // kFixed: the one prompt
  std::string tokenizer;     // a readable, already checked tokenizer.json; "" for none
};

struct LoadPlan {
  std::string name;              // the load's name (load_job/plan.hpp): its folder, or its sweep's
  std::vector<LoadSpec> points;  // one per sweep point; bodies are filled by the job
  PromptSource prompts;
  OpenAiParams openai;
  std::string out_dir;           // the run's output folder; each point writes <out>/<name>/
  // A descriptor of out_dir, closed with the plan's last copy (make_out_fd); null: the job
  // makes out_dir and opens it itself (tests).
  std::shared_ptr<const int> out_fd;
  std::string sweep_dir;         // a sweep's folder for sweep.json / sweep.csv; "" when not a sweep
  std::function<void()> on_end;  // runs on the loop when the job is gone (gives back its threads)
  // What runs each point: null for this process's LoadEngine, unless `remote` is set.
  std::function<std::unique_ptr<LoadRunner>(uv_loop_t*, std::shared_ptr<const LoadSpec>, LoadRunner::Progress)> runner;
  // `http_load.run{ on = session }`: the job installs the agent there before anything else and
  // runs each point on it (load_job/remote_agent.hpp).
  std::optional<RemoteAgent> remote;
};

// Owns `fd` (an open folder): closed when the last copy goes.
std::shared_ptr<const int> make_out_fd(int fd);

class LoadJob {
 public:
  struct Hooks {
    std::function<void(const std::string&)> progress;
    std::function<void(const std::string&)> log;
    std::function<nlohmann::json(const nlohmann::json&)> redact;
    // Something sampling beside the load (gpu_metrics): told when each point starts, and handed
    // each point's result to add its own fields to before the result is written. Optional.
    std::function<void(const std::string& point)> point_started;
    // Each point as it starts, with the URL it aims at (the run's Activity::load). Optional.
    std::function<void(const std::string& url)> load_started;
    std::function<void(const std::string& point, nlohmann::json& result)> point_ended;
    // On the loop, as each point's files are written: its result (what the script gets).
    std::function<void(const nlohmann::json& result)> point_finished;
  };
  // One JSON object per finished point, or why the job stopped early (the results written so
  // far are in their folders, which the error names).
  using Done = std::function<void(Result<std::vector<nlohmann::json>> results)>;

  LoadJob(uv_loop_t* loop, LoadPlan plan, Hooks hooks);
  ~LoadJob();
  void start(Done done);
  // The run is stopping: stops the load in flight and writes what it measured, synchronously.
  // `done` is not called.
  void abort();

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace runara
