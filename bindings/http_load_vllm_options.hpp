// Options of http_load.run named after `vllm bench serve` flags that shape a load beyond its
// rate: `ramp` (--ramp-up-strategy and its start/end rates), `percentiles`
// (--metric-percentiles) and `summary_metrics` (--percentile-metrics).
//
// Contract. Called on the Lua thread while http_load.run's options table is at index 1; raises
// a Lua error at the caller's line on a bad value; allocates nothing outside the Lua heap beyond
// the spec's few numbers.
#pragma once

#include <string>
#include <vector>

#include "load/spec.hpp"

struct lua_State;

namespace runara {

// `ramp = { strategy = "linear" | "exponential", start_rate = R0, end_rate = R1 }`: fills
// base.ramp* and returns true; false when the option is absent.
bool parse_ramp_option(lua_State* L, LoadSpec& base);

// `percentiles = { 25, 75, 99.5 }` into base.percentiles; `summary_metrics = { "ttft", "itl" }`
// returned (empty when absent).
void parse_percentiles_option(lua_State* L, LoadSpec& base);
std::vector<std::string> parse_summary_metrics_option(lua_State* L);

}  // namespace runara
