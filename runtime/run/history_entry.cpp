#include "run/history_entry.hpp"

#include <sys/stat.h>

#include <cmath>
#include <string>

#include "base/files.hpp"
#include "base/json_limits.hpp"

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

// A results.json larger than this is not read for a listing: the row shows without figures.
constexpr off_t kMaxResultsBytes = 64 << 20;

// The results.json in the row's folder when it is this run's (its record's start is the row's).
std::optional<nlohmann::json> own_results(const HistoryEntry& row) {
  if (row.out_dir.empty()) return std::nullopt;
  const std::string path = row.out_dir + "/results.json";
  struct stat st{};
  std::string text, error;
  if (::stat(path.c_str(), &st) != 0 || st.st_size > kMaxResultsBytes || !read_file_text(path, text)) return std::nullopt;
  auto results = parse_json_limited(text, error);
  if (!results) return std::nullopt;
  const auto start = number_at(*results, {"run", "start_unix"});
  if (!start || std::fabs(*start - row.start_unix) > 1e-3) return std::nullopt;
  return results;
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

HistoryEntry as_seen_now(HistoryEntry row) {
  if (row.status != kRunning || still_running(row.process)) return row;
  row.status = kKilled;
  const auto results = own_results(row);
  if (!results) return row;
  const nlohmann::json& run = results->at("run");  // an object: own_results found its start there
  if (const auto it = run.find("status"); it != run.end() && it->is_string()) row.status = it->get<std::string>();
  if (const auto code = number_at(run, {"exit_code"}); code && std::fabs(*code) < 1e6) row.exit_code = static_cast<int>(*code);
  if (const auto end = number_at(run, {"end_unix"})) row.end_unix = *end;
  const Headline h = headline_of(*results);
  row.output_tokens_per_s = h.output_tokens_per_s;
  row.ttft_p50_ms = h.ttft_p50_ms;
  row.cost_usd = h.cost_usd;
  return row;
}

}  // namespace runara
