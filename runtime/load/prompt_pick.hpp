// Which prompt request number `request_index` of a load uses: a seeded uniform choice among
// `count` prompts that depends only on (seed, request_index), not on the thread or the order of
// calls. Header-only, so the remote load agent (agent/) picks exactly as a local load does
// without linking the prompt pool's tokenizer.
#pragma once

#include <cstddef>
#include <cstdint>

#include "load/seeded_random.hpp"

namespace runara {

// Keeps the pick's hashes unrelated to PromptPool::synthetic()'s draws under the same seed.
inline constexpr std::uint64_t kPickStream = 0x7069636b5f707070ull;

inline std::size_t pick_prompt(std::uint64_t request_index, std::uint64_t seed, std::size_t count) {
  // Both mixes are bijections, so distinct indices never collide before the reduction to
  // [0, count) by multiply-high.
  const std::uint64_t h = splitmix64(splitmix64(seed ^ kPickStream) ^ request_index);
  return static_cast<std::size_t>((static_cast<unsigned __int128>(h) * count) >> 64);
}

}  // namespace runara
