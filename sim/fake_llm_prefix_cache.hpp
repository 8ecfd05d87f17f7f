// The fake LLM server's automatic prefix cache (internal to sim), modelled on vLLM's: a prompt is
// cut into blocks of `block_tokens` tokens; a full block is keyed by the hash of its tokens chained
// to the key of the block before it, so a key names the whole prompt up to the block's end. A
// request's cached prefix is its longest run of leading full blocks already held; as in vLLM V1
// the last token is always computed, so a prompt held whole counts one block less. Every full
// block of the prompt is then held (those found are touched), and past `capacity_blocks` the
// least recently used blocks are evicted.
//
// Counters as vLLM's /metrics names them: queries = prompt tokens looked up, hits = tokens found.
// Not thread-safe: the server's loop thread owns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <unordered_map>
#include <vector>

namespace runara::fake_llm {

class PrefixCache {
 public:
  // capacity_blocks 0: no cache (admit finds nothing and holds nothing).
  PrefixCache(int block_tokens, std::size_t capacity_blocks);

  // Looks the prompt (one hash per token) up and holds its full blocks; returns its cached tokens.
  std::size_t admit(const std::vector<std::uint64_t>& token_hashes);

  std::uint64_t queries() const { return queries_; }
  std::uint64_t hits() const { return hits_; }
  std::size_t blocks_held() const { return lru_.size(); }
  double usage() const;  // blocks held / capacity, 0 without a cache
  bool enabled() const { return capacity_ > 0; }

 private:
  void hold(std::uint64_t key);

  std::size_t block_tokens_;
  std::size_t capacity_;
  std::list<std::uint64_t> lru_;  // most recently used first
  std::unordered_map<std::uint64_t, std::list<std::uint64_t>::iterator> where_;
  std::uint64_t queries_ = 0;
  std::uint64_t hits_ = 0;
};

}  // namespace runara::fake_llm
