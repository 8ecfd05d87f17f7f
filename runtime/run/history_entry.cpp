#include "run/history_entry.hpp"

#include <cmath>
#include <string>

namespace runara {

namespace {

std::optional<double> number_at(const nlohmann::json& j, std::initializer_list<const char*> path) {
  const nlohmann::json* at = &j;
  for (const char* key : path) {
    if (!at->is_object()) return std::nullopt;
    const auto it = at->find(key);
    if (it == at->end()) return std::nullopt;
    at = &*it;
  }
  if (!at->is_number()) return std::nullopt;
  const double v = at->get<double>();
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

// The load (an object with output_throughput) of the highest output throughput among `loads`' values.
const nlohmann::json* best_load(const nlohmann::json& loads) {
  const nlohmann::json* best = nullptr;
  double top = -1;
  if (!loads.is_object()) return nullptr;
  for (const auto& [name, load] : loads.items()) {
    const auto v = number_at(load, {"output_throughput"});
    if (v && *v > top) top = *v, best = &load;
  }
  return best;
}

}  // namespace

Headline headline_of(const nlohmann::json& results) {
  Headline h;
  h.cost_usd = number_at(results, {"run", "total_cost_usd"});
  h.output_tokens_per_s = number_at(results, {"benchmarks", "efficiency", "output_tokens_per_s"});
  h.ttft_p50_ms = number_at(results, {"benchmarks", "latency", "time_to_first_token_ms"});
  if (h.output_tokens_per_s && h.ttft_p50_ms) return h;
  const nlohmann::json* load = nullptr;
  if (results.is_object() && results.contains("benchmarks") && results["benchmarks"].is_object() &&
      results["benchmarks"].contains("loads"))
    load = best_load(results["benchmarks"]["loads"]);
  if (!load) load = best_load(results);  // http_load results a script kept under names of its own
  if (!load) return h;
  if (!h.output_tokens_per_s) h.output_tokens_per_s = number_at(*load, {"output_throughput"});
  if (!h.ttft_p50_ms) h.ttft_p50_ms = number_at(*load, {"median_ttft_ms"});
  return h;
}

}  // namespace runara
