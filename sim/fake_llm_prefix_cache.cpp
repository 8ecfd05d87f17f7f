// The fake LLM server's prefix cache: chained block keys and an LRU list.
#include "sim/fake_llm_prefix_cache.hpp"

#include <algorithm>

namespace runara::fake_llm {

namespace {

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 29);
}

}  // namespace

PrefixCache::PrefixCache(int block_tokens, std::size_t capacity_blocks)
    : block_tokens_(static_cast<std::size_t>(std::max(1, block_tokens))), capacity_(capacity_blocks) {}

double PrefixCache::usage() const {
  return capacity_ == 0 ? 0.0 : static_cast<double>(lru_.size()) / static_cast<double>(capacity_);
}

void PrefixCache::hold(std::uint64_t key) {
  if (auto it = where_.find(key); it != where_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second);
    return;
  }
  lru_.push_front(key);
  where_[key] = lru_.begin();
  while (lru_.size() > capacity_) {
    where_.erase(lru_.back());
    lru_.pop_back();
  }
}

std::size_t PrefixCache::admit(const std::vector<std::uint64_t>& tokens) {
  if (capacity_ == 0) return 0;
  const std::size_t blocks = tokens.size() / block_tokens_;
  std::vector<std::uint64_t> keys(blocks);
  std::uint64_t key = 0x70726566697863ull;  // "prefixc": the chain's start
  for (std::size_t b = 0; b < blocks; ++b) {
    for (std::size_t t = 0; t < block_tokens_; ++t) key = mix(key, tokens[b * block_tokens_ + t]);
    keys[b] = key;
  }
  std::size_t found = 0;
  while (found < blocks && where_.count(keys[found])) ++found;
  // vLLM V1 computes the last token whatever is cached: a prompt held whole gives back a block.
  if (found > 0 && found * block_tokens_ == tokens.size()) --found;
  const std::size_t cached = found * block_tokens_;
  queries_ += tokens.size();
  hits_ += cached;
  for (std::uint64_t k : keys) hold(k);
  return cached;
}

}  // namespace runara::fake_llm
