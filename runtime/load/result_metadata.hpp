// A load's metadata (http_load.run's `metadata`, `runara bench --metadata`): string pairs written
// at the top level of the load's results.json, as `vllm bench serve --metadata` writes them into
// its result file, beside the figures and never among them.
//
// Contract. Pure, any thread. check_result_metadata bounds the pairs (at most 64, keys of 1 to 64
// bytes, values of at most 1024) and refuses a key runara writes itself (reserved_result_key):
// written beside it, one would overwrite a measured figure. add_result_metadata adds the pairs
// to a result, leaving any key the result already has as it is.
#pragma once

#include <cstddef>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/result.hpp"

namespace runara {

constexpr std::size_t kMaxMetadataKeys = 64;
constexpr std::size_t kMaxMetadataKeyBytes = 64;
constexpr std::size_t kMaxMetadataValueBytes = 1024;

// Whether runara writes `key` at the top level of a load's results.json: vLLM's keys and runara's
// own (report.hpp), the job's (files, token_count_check, thresholds, prefix_cache_*) and
// gpu_metrics' (energy_j, ...), and every metric's family: mean_/median_/std_/min_/max_/pN_<m>_ms
// and count_<m>, whatever the metric or percentile.
bool reserved_result_key(std::string_view key);

// `metadata`: a JSON object of strings. "" errors name the key.
Status check_result_metadata(const nlohmann::json& metadata);

// Each pair at the top level of `result`, where the result has no such key.
void add_result_metadata(nlohmann::json& result, const nlohmann::json& metadata);

}  // namespace runara
