// Pass/fail limits on a load's results, named as in docs/http_load.md ("Thresholds"):
// `ttft_p99_ms = 500` (an upper bound on results.json's p99_ttft_ms), `failure_rate = 0.01`,
// `min_output_throughput = 1000` (a lower bound). A crossed threshold is reported in the
// results and the summary, and ends the run with exit status 4 (Exit::thresholds).
//
// Contract. Pure, any thread. parse_threshold checks a name and limit from a script (the
// binding raises its error); apply_thresholds adds `thresholds` and `thresholds_crossed` to a
// load's result JSON.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.hpp"

namespace runara {

struct Threshold {
  std::string name;   // as the script wrote it: "ttft_p99_ms"
  std::string key;    // the result key it bounds: "p99_ttft_ms"; "" for failure_rate
  bool upper = true;  // value <= limit passes; false: value >= limit passes
  double limit = 0;
};

using Thresholds = std::vector<Threshold>;

// The threshold, or what is wrong with the name or the limit (with "did you mean").
Result<Threshold> parse_threshold(const std::string& name, double limit);

// Every accepted name (for the documentation and "did you mean").
std::vector<std::string> threshold_names();

// Adds result["thresholds"] = {name: {limit, value, ok}} and result["thresholds_crossed"] =
// ["ttft_p99_ms: 612.30 > 500", ...]. A value the load could not measure (no successful
// request) fails the threshold: nothing measured is not a pass.
void apply_thresholds(const Thresholds& thresholds, nlohmann::json& result);

}  // namespace runara
