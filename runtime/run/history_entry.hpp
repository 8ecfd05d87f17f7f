// What the run history keeps of a run's results.json: its headline figures; and how a row reads
// now, for a run that may have ended without writing its row's end.
//
// Contract. headline_of is a pure function on a results.json document (any shape: an older or a
// hand-written one gives absent figures, never an error). as_seen_now reads /proc and the row's
// results.json, nothing else, and writes nothing. Any thread; never throws.
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

#include "run/history.hpp"

namespace runara {

struct Headline {
  std::optional<double> output_tokens_per_s;  // output tok/s of the headline load
  std::optional<double> ttft_p50_ms;          // the single-request TTFT, else the headline load's median
  std::optional<double> cost_usd;             // run.total_cost_usd: what the run's machines cost
};

// The headline load is the report's (benchmarks.efficiency: the highest concurrency measured),
// else the load with the highest output throughput among benchmarks.loads, else among the
// http_load results a script recorded with runara.result.
Headline headline_of(const nlohmann::json& results);

// The row as it stands now. A "running" row whose process is gone (base/process_identity.hpp:
// a recycled pid is not the run) ended without a record (SIGKILL, a crash, the machine lost, a
// third Ctrl-C): its status reads kKilled and the rest is what was known as it ran. If its folder
// holds this run's results.json anyway (it was killed after writing it, before its row's end),
// the run record in it gives the status, exit code and end, and its headline the figures. A
// results.json is this run's when its run.start_unix is the row's: an --out folder reused from
// an earlier run holds that run's, which is left alone.
HistoryEntry as_seen_now(HistoryEntry row);

}  // namespace runara
