#include "load/result_metadata.hpp"

#include <algorithm>
#include <iterator>
#include <cctype>
#include <string>

namespace runara {

namespace {

// Every fixed key of a load's result: report.cpp's (vLLM's among them), load/request_*.cpp's,
// load/thresholds.cpp's, load_job/'s (job.cpp, prefix_cache_scrape.cpp) and gpu_metrics'.
// tests/unit/test_result_metadata.cpp checks report.cpp's against this list.
constexpr std::string_view kFixedKeys[] = {
    "date", "backend", "endpoint_type", "label", "model_id", "tokenizer_id", "num_prompts", "request_rate",
    "burstiness", "ramp_up_strategy", "ramp_up_start_rps", "ramp_up_end_rps", "max_concurrency", "duration",
    "completed", "failed", "total_input_tokens", "total_output_tokens", "request_throughput", "request_goodput",
    "request_goodput:", "output_throughput", "total_token_throughput", "max_output_tokens_per_s",
    "max_concurrent_requests", "achieved_send_rate", "scheduled_send_rate", "input_lens", "output_lens", "ttfts",
    "itls", "generated_texts", "errors", "detailed_left_out", "input_tokens_client", "input_tokens_server",
    "input_tokens_source", "client_cpu_s", "client_cpu_utilization", "client_limited", "client_limit",
    "schedule_kept", "token_count_check", "best_of", "benchmark_start_time_unix", "benchmark_end_time_unix",
    "mode", "url", "load_model", "arrival", "threads", "load_host", "controller_rtt_ms", "agent_max_rss_kb",
    "wall_time_s", "warmup_requests", "abandoned", "interrupted", "stopped_early", "request_lines_left_out",
    "output_tokens_source", "good_requests", "slo", "errors_by_kind", "http_statuses", "error_samples",
    "options", "files", "thresholds", "thresholds_crossed", "prefix_cache_queried_tokens",
    "prefix_cache_hit_tokens", "prefix_cache_hit_rate", "energy_j", "energy_source", "energy_note",
    "mean_power_w", "peak_vram_bytes", "output_tokens_per_joule"};

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// mean_/median_/std_/min_/max_/p<number>_<metric>_ms (report.cpp's add_metric, any percentile).
bool metric_key(std::string_view key) {
  if (!ends_with(key, "_ms")) return false;
  for (std::string_view prefix : {"mean_", "median_", "std_", "min_", "max_"}) {
    if (starts_with(key, prefix)) return true;
  }
  return key.size() > 1 && key[0] == 'p' && std::isdigit(static_cast<unsigned char>(key[1]));
}

}  // namespace

bool reserved_result_key(std::string_view key) {
  if (std::find(std::begin(kFixedKeys), std::end(kFixedKeys), key) != std::end(kFixedKeys)) return true;
  return starts_with(key, "count_") || metric_key(key);
}

Status check_result_metadata(const nlohmann::json& metadata) {
  if (!metadata.is_object()) return Error{"metadata must map names to strings, e.g. { version = \"0.9.2\" }"};
  if (metadata.size() > kMaxMetadataKeys) {
    return Error{"metadata holds " + std::to_string(metadata.size()) + " keys; at most " + std::to_string(kMaxMetadataKeys)};
  }
  for (const auto& [key, value] : metadata.items()) {
    if (key.empty() || key.size() > kMaxMetadataKeyBytes) {
      return Error{"metadata key '" + key.substr(0, kMaxMetadataKeyBytes) + (key.size() > kMaxMetadataKeyBytes ? "...'" : "'") +
                   " must be 1 to " + std::to_string(kMaxMetadataKeyBytes) + " bytes long, got " + std::to_string(key.size())};
    }
    if (!value.is_string()) return Error{"metadata key '" + key + "' must have a string value, got " + value.type_name()};
    const std::size_t bytes = value.get_ref<const std::string&>().size();
    if (bytes > kMaxMetadataValueBytes) {
      return Error{"metadata key '" + key + "' has a value of " + std::to_string(bytes) + " bytes; at most " +
                   std::to_string(kMaxMetadataValueBytes)};
    }
    if (reserved_result_key(key)) {
      return Error{"metadata key '" + key + "' is a key runara writes itself in the load's results.json (a measured figure or " +
                   "fact would be overwritten): name it otherwise, e.g. 'meta_" + key + "' (docs/http_load.md lists the reserved keys)"};
    }
  }
  return {};
}

void add_result_metadata(nlohmann::json& result, const nlohmann::json& metadata) {
  if (!metadata.is_object() || !result.is_object()) return;
  for (const auto& [key, value] : metadata.items()) {
    if (!result.contains(key)) result[key] = value;
  }
}

}  // namespace runara
