// What the run history keeps of a run's results.json: its headline figures.
//
// Contract. Pure functions on a results.json document (any shape: an older or a hand-written one
// gives absent figures, never an error); any thread; never throws.
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

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

}  // namespace runara
