// vLLM's ShareGPT pair rules (see the header).
#include "load_job/sharegpt_pairs.hpp"

namespace runara {

namespace {

// vLLM's defaults (vllm/benchmarks/datasets: is_valid_sequence).
constexpr int kMinTokens = 4;
constexpr int kMaxPromptTokens = 1024;
constexpr int kMaxTotalTokens = 2048;

}  // namespace

bool sharegpt_pair_valid(int prompt_tokens, int output_tokens, bool fixed_output) {
  if (prompt_tokens < kMinTokens || prompt_tokens > kMaxPromptTokens) return false;
  if (!fixed_output && output_tokens < kMinTokens) return false;
  return static_cast<long long>(prompt_tokens) + output_tokens <= kMaxTotalTokens;
}

Result<PromptPool> keep_sharegpt_pairs(const PromptPool& pool, int fixed_output_tokens, ShareGptPairs& counts) {
  const bool fixed = fixed_output_tokens > 0;
  PromptPool kept = pool.keep_if([&](const Prompt& p) {
    if (!fixed && p.expected_output_tokens < 0) return false;  // no reply: no length of its own
    return sharegpt_pair_valid(p.tokens, fixed ? fixed_output_tokens : p.expected_output_tokens, fixed);
  });
  counts = {kept.size(), pool.size() - kept.size()};
  if (kept.size() > 0) return kept;
  return Error{"none of its " + std::to_string(pool.size()) +
          " conversations is a pair vLLM's ShareGPT dataset would send (a prompt of 4 to 1024 tokens" +
          (fixed ? "" : ", a reply of at least 4") + ", " + (fixed ? "prompt + max_tokens" : "prompt + reply") +
          " at most 2048 tokens" + (fixed ? "" : "; or give max_tokens to send each prompt with that many") + ")"};
}

}  // namespace runara
