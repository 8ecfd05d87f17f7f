// The server's prefix-cache hit rate over one load: its /metrics read just before the load's
// first request and just after its last, and the change of vLLM's token counters
// vllm:prefix_cache_queries_total and vllm:prefix_cache_hits_total between the two (summed over
// their label sets: engines, models). What a server's cache did for this load alone, whatever ran
// before it.
//
// What is sent: `GET <server root>/metrics` (the root found as /tokenize's is, openai_url.hpp),
// with the load's headers, judged by the load's target policy, no proxy, no redirect, a short
// timeout (kScrapeTimeoutS or the load's own, when shorter) and at most
// kScrapeMaxBytes of answer, charged to the run's --max-memory while it is in flight.
// A scrape that fails (no /metrics, no such counters, a timeout) gives nullopt: the load runs
// and reports the hit rate as not measured, never an error.
//
// Contract: made, started and destroyed on the loop's thread; `done` runs there once (possibly
// from inside start() when nothing is sent), never after the scrape is destroyed, which cancels
// what is in flight. The pure functions are the rules, tested alone.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "load/spec.hpp"

typedef struct uv_loop_s uv_loop_t;

namespace runara {

inline constexpr double kScrapeTimeoutS = 2;
inline constexpr std::size_t kScrapeMaxBytes = std::size_t{4} << 20;  // vLLM's is about 100 KiB

struct PrefixCacheCounters {
  double queries = 0;  // prompt tokens looked up in the cache
  double hits = 0;     // of those, found there
};

// The counters in a Prometheus text, or nullopt when it has no vllm:prefix_cache_queries_total.
std::optional<PrefixCacheCounters> prefix_cache_counters(std::string_view prometheus_text);

// The results' fields for a load between `before` and `after`: prefix_cache_hit_rate (hits /
// queries of the change, null when either scrape failed or nothing was queried),
// prefix_cache_queried_tokens and prefix_cache_hit_tokens (null likewise).
nlohmann::json prefix_cache_fields(const std::optional<PrefixCacheCounters>& before,
                                   const std::optional<PrefixCacheCounters>& after);

// `<root>/metrics` beside a load's endpoint URL; "" when the root cannot be told.
std::string metrics_url(const std::string& endpoint_url);

class PrefixCacheScrape {
 public:
  using Done = std::function<void(std::optional<PrefixCacheCounters>)>;

  // `spec`: the load (URL, headers, policy, timeout, memory budget).
  PrefixCacheScrape(uv_loop_t* loop, const LoadSpec& spec);
  ~PrefixCacheScrape();
  PrefixCacheScrape(const PrefixCacheScrape&) = delete;
  PrefixCacheScrape& operator=(const PrefixCacheScrape&) = delete;

  void start(Done done);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace runara
