// The fake LLM server's prefix cache alone: block-aligned hits, the chained keys, LRU eviction,
// the counters; and the client's rules for reading them (load_job/prefix_cache_scrape.hpp).
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "load_job/prefix_cache_scrape.hpp"
#include "sim/fake_llm_prefix_cache.hpp"

using runara::fake_llm::PrefixCache;

namespace {

// `n` token hashes: `shared` of them 1, 2, 3, ... and the rest unique to `tag`.
std::vector<std::uint64_t> prompt(std::size_t n, std::size_t shared, std::uint64_t tag) {
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(i < shared ? i + 1 : (tag << 32) + i);
  return out;
}

}  // namespace

TEST_CASE("Fake LLM prefix cache: the leading full blocks already held are hits", "[fake_llm][prefix_cache]") {
  PrefixCache cache(16, 1000);
  CHECK(cache.admit(prompt(100, 40, 1)) == 0);   // nothing held yet
  CHECK(cache.admit(prompt(100, 40, 2)) == 32);  // 40 shared tokens: 2 full blocks
  CHECK(cache.admit(prompt(100, 0, 3)) == 0);    // another start: the chain differs from block 0
  CHECK(cache.queries() == 300);
  CHECK(cache.hits() == 32);
  // The same prompt again: all 6 full blocks, as vLLM's lookup finds them.
  CHECK(cache.admit(prompt(100, 40, 2)) == 96);
  // A prompt held whole (a multiple of the block) gives back its last block: the last token is computed.
  CHECK(cache.admit(prompt(64, 64, 9)) == 32);  // tokens 1..32 were held: 2 blocks
  CHECK(cache.admit(prompt(64, 64, 9)) == 48);  // all 4 held now: 3 count
}

TEST_CASE("Fake LLM prefix cache: the least recently used blocks are evicted", "[fake_llm][prefix_cache]") {
  PrefixCache cache(16, 4);  // room for four blocks
  cache.admit(prompt(32, 32, 0));         // A: blocks a1 a2
  cache.admit(prompt(32, 0, 1));          // B: b1 b2 (full now)
  CHECK(cache.blocks_held() == 4);
  CHECK(cache.usage() == 1.0);
  CHECK(cache.admit(prompt(40, 32, 2)) == 32);  // A's two blocks again: touched, B is now the oldest
  cache.admit(prompt(32, 0, 3));          // C: evicts B's two blocks, A stays
  CHECK(cache.blocks_held() == 4);
  CHECK(cache.admit(prompt(40, 32, 4)) == 32);  // A still there
  CHECK(cache.admit(prompt(40, 0, 1)) == 0);    // B's blocks were evicted
  PrefixCache none(16, 0);
  CHECK(none.admit(prompt(64, 64, 0)) == 0);
  CHECK(none.queries() == 0);
  CHECK_FALSE(none.enabled());
}

TEST_CASE("Prefix cache scrape: vLLM's counters summed over engines, the change over a load", "[prefix_cache]") {
  const auto c = runara::prefix_cache_counters(
      "# HELP vllm:prefix_cache_queries_total Prefix cache queries.\n"
      "# TYPE vllm:prefix_cache_queries_total counter\n"
      "vllm:prefix_cache_queries_total{engine=\"0\",model_name=\"m\"} 1000.0\n"
      "vllm:prefix_cache_queries_total{engine=\"1\",model_name=\"m\"} 500\n"
      "vllm:prefix_cache_hits_total{engine=\"0\",model_name=\"m\"} 250.0\n"
      "vllm:prefix_cache_queries_created{engine=\"0\"} 1.7e9\n");
  REQUIRE(c);
  CHECK(c->queries == 1500);
  CHECK(c->hits == 250);
  CHECK_FALSE(runara::prefix_cache_counters("vllm:num_requests_running 1\n"));
  const auto fields = runara::prefix_cache_fields(runara::PrefixCacheCounters{1500, 250}, runara::PrefixCacheCounters{2500, 1000});
  CHECK(fields["prefix_cache_hit_rate"].get<double>() == Approx(0.75));
  CHECK(fields["prefix_cache_queried_tokens"].get<double>() == 1000);
  CHECK(runara::prefix_cache_fields(std::nullopt, runara::PrefixCacheCounters{})["prefix_cache_hit_rate"].is_null());
  CHECK(runara::prefix_cache_fields(runara::PrefixCacheCounters{5, 1}, runara::PrefixCacheCounters{0, 0})["prefix_cache_hit_rate"].is_null());
  CHECK(runara::metrics_url("http://h:8000/v1/completions") == "http://h:8000/metrics");
  CHECK(runara::metrics_url("http://h:8000/proxy/v1/chat/completions?x=1") == "http://h:8000/proxy/metrics?x=1");
  CHECK(runara::metrics_url("http://h:8000/health").empty());
}
