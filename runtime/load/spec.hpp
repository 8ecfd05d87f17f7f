// One load as the engine runs it: what to send, where, and how hard. The binding
// (bindings/http_load_binding.cpp) builds it from a script's options table and checks them;
// the engine trusts it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "load/arrival_schedule.hpp"
#include "load/stats.hpp"
#include "net/target_policy.hpp"
#include "load/thresholds.hpp"
#include "runara/memory_budget.hpp"

namespace runara {

enum class LoadMode { kOpenAi, kHttp };

struct LoadSpec {
  LoadMode mode = LoadMode::kHttp;
  std::string name;             // names the output folder
  std::string model;            // openai: the served model
  std::string tokenizer_id;     // openai: what counted the prompts' tokens (a tokenizer.json, else the model)
  std::string endpoint;         // openai: "completions" or "chat"
  // The script's options as given, minus headers (for the results), and its headers ("Name:
  // value"; may hold a secret, never logged). Shared, not copied, by a sweep's points: each may
  // be large (extra_body; 64 KiB of headers) and a sweep has up to 1000 points.
  std::shared_ptr<const nlohmann::json> echo;
  // The script's `metadata`: string pairs for the top level of each point's results.json
  // (load/result_metadata.hpp), already checked; null: none.
  std::shared_ptr<const nlohmann::json> metadata;
  std::string url;              // where every request goes
  std::string url_host;         // its host part (a name or a literal), for the target policy
  int url_port = 0;             // its port (80/443 when the URL has none)
  std::string method = "GET";
  std::shared_ptr<const std::vector<std::string>> headers;  // null: none
  bool http2 = false;           // h2c on http://, negotiated on https://
  std::string ca_file;          // https://: trust these PEM certificates instead of the system's

  // The request bodies: one per prompt in openai mode (request i uses bodies[prompt(i)]),
  // one template in http mode ("{{index}}" / "{{random}}" replaced per request when templated).
  std::shared_ptr<const std::vector<std::string>> bodies;
  // openai: input tokens of each body (-1 unknown); set only in openai mode, where request i
  // uses bodies[pick_prompt(i, seed, bodies.size())] (load/prompt_pick.hpp).
  std::shared_ptr<const std::vector<std::int32_t>> body_tokens;
  std::uint64_t seed = 0;                 // prompt choice and templating
  bool templated = false;
  bool stream = true;                     // openai: parse the response as SSE

  // Closed loop when concurrency > 0; open loop when rate > 0.
  int concurrency = 0;
  double rate = 0;
  Arrival arrival = Arrival::kPoisson;
  double burstiness = 1;
  int max_concurrency = 0;      // open loop: 0 = unbounded
  // Open loop: vLLM's ramp-up from ramp_start to ramp_end requests/s over the load's requests
  // (`rate` is then ramp_end, the peak the load is sized for).
  Ramp ramp = Ramp::kNone;
  double ramp_start = 0;
  double ramp_end = 0;

  std::uint64_t requests = 0;   // measured requests (after warmup); 0 = until duration
  double duration_s = 0;        // 0 = until `requests`
  std::uint64_t warmup_requests = 0;
  double warmup_s = 0;

  int threads = 1;
  bool threads_auto = false;    // `threads` not given: the remote agent recomputes it for its own cores
  double timeout_s = 600;       // per request
  long buffer_bytes = 0;        // libcurl receive buffer; 0 = libcurl's default
  Slo slo;
  // Percentiles besides p50/p90/p95/p99/p99.9 that the results carry (vLLM's --metric-percentiles),
  // each in (0, 100); at most 16.
  std::vector<double> percentiles;
  std::shared_ptr<const Thresholds> thresholds;  // null: none (load/thresholds.hpp)
  std::shared_ptr<const TargetPolicy> policy;

  // Bounds, so a dead target or a huge load cannot take the machine (docs/http_load.md):
  double give_up_s = 30;                   // stop with an error after this long of only failures
  std::uint64_t max_request_lines = 1000000;  // requests kept for requests.jsonl; the rest are counted
  std::size_t request_queue_bytes = 8u << 20;  // records waiting for requests.jsonl's writer (request_log.hpp)
  std::uint64_t max_lengths = 100000;          // input_lens/output_lens: null past this many measured requests
  // vLLM's --save-detailed: keep each measured request's ttft, itls, generated text and error for
  // results.json (request_details.hpp), up to max_lengths requests and the memory budget.
  bool save_detailed = false;
  // Which requests requests.jsonl gets (the `record` option): all, failed ones only, none, or a
  // deterministic sample of `record_sample` of them (by request number, so reruns agree).
  enum class Record { kAll, kErrors, kNone } record = Record::kAll;
  double record_sample = 1;
  std::shared_ptr<MemoryBudget> memory;    // the run's --max-memory; null: unbounded (tests)

  bool open_loop() const { return rate > 0; }
  // The open loop's schedule: the same one wherever it is built (the engine, the agent's check).
  ArrivalSchedule schedule() const {
    ArrivalSchedule out(rate, arrival, burstiness, seed);
    out.set_ramp(ramp, ramp_start, ramp_end, requests + warmup_requests);
    return out;
  }
  bool wants_record(const RequestRecord& r) const {
    if (record == Record::kNone || (record == Record::kErrors && r.ok())) return false;
    if (record_sample >= 1) return true;
    const std::uint64_t mixed = (r.index + 1) * 0x9E3779B97F4A7C15ull;  // Fibonacci hashing
    return static_cast<double>(mixed >> 11) * 0x1.0p-53 < record_sample;
  }
  // Worker threads for a load that did not name them: one per 256 streams (closed loop) or 2000
  // requests/s (open loop), at least 1, at most `cores`.
  int auto_threads(int cores) const {
    const double load = open_loop() ? rate / 2000 : concurrency / 256.0;
    const int wanted = static_cast<int>(load) + (load > static_cast<int>(load) ? 1 : 0);
    return wanted < 1 ? 1 : wanted > cores ? cores : wanted;
  }
  const std::vector<std::string>& header_lines() const {
    static const std::vector<std::string> none;
    return headers ? *headers : none;
  }
};

}  // namespace runara
