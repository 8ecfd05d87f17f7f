// One http_load.run call's plan, made from the script's options once the binding has read them
// into plain values: the sweep expanded into its points (one per concurrency or rate), each
// point's worker threads (given, or sized to its load and this machine's cores), its folder name
// ("<name>", or "<name>-c<C>" / "<name>-r<R>" in a sweep), the request URL and headers of the
// mode, and `echo`, the options a result was measured with. What the binding still checks is
// only what it reads (types, ranges of single values); what depends on several options, on the
// sweep or on the limits below is checked here.
//
// Contract: pure (no I/O, no Lua), any thread. Errors are complete sentences that follow the
// Lua function's name ("option 'name' names a folder: ...").
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "load/spec.hpp"
#include "load_job/job.hpp"
#include "load_job/target_url.hpp"

namespace runara {

// Bounds on what one run's loads may hold (docs/http_load.md, "Limits"). Memory beyond these is
// accounted to --max-memory as the loads run.
constexpr std::size_t kMaxHeaderBytes = 64 * 1024;  // servers refuse far less (nginx: 8 KiB lines)
constexpr std::size_t kMaxSweepPoints = 1000;

// http_load.run's options, as read from the script.
struct LoadOptions {
  TargetUrl url;                      // parsed (load_job/target_url.hpp)
  LoadSpec base;                      // what every point shares, as read (url, headers and echo are set here)
  std::vector<std::string> headers;   // "Name: value", the api_key's Authorization among them
  PromptSource prompts;               // openai mode
  OpenAiParams openai;                // openai mode
  std::vector<double> concurrency;    // closed loop: one point each (none given and no rate: 1)
  std::vector<double> rates;          // open loop: one point each
  std::optional<std::string> name;    // the output folder; nullopt: "http_load-<load_number>"
  int load_number = 1;                // this load's place among the run's loads
  int threads = 0;                    // 0: sized per point (LoadSpec::auto_threads)
  int cores = 1;                      // usable cores here, for auto-sized threads
  std::vector<std::string> summary_metrics;  // shown in the summary; echoed
};

// The plan's points, URL, headers and echo (out_fd, out_dir, runner and on_end are the caller's).
Result<LoadPlan> make_load_plan(LoadOptions options);

// Where the plan writes: the run's output folder and a descriptor of it (job.hpp, make_out_fd);
// a sweep's own folder, <out_dir>/<name>, for sweep.json and sweep.csv.
void place_load_plan(LoadPlan& plan, std::string out_dir, std::shared_ptr<const int> out_fd);

// The folders the plan writes below the output folder: each point's, and a sweep's own.
std::vector<std::string> load_folders(const LoadPlan& plan);

// A point's folder: `name` for a single load; "<name>-c<C>" or "<name>-r<R>" in a sweep.
std::string point_name(const std::string& name, bool sweep, const LoadSpec& point);

// The options a result was measured with (headers left out: they may hold keys); options not set
// are null, not 0.
nlohmann::json load_echo(const LoadPlan& plan, const LoadSpec& base, const std::vector<std::string>& summary_metrics);

}  // namespace runara
