// Which ShareGPT (prompt, reply) pairs a load sends, and each one's output length: the rules of
// vLLM's ShareGPT dataset (`vllm bench serve --dataset-name sharegpt`), so that a ShareGPT load
// here sends the requests vLLM's client would.
//
// Each conversation's reply length (in the tokenizer's tokens, else the prompt estimate) is its
// request's max_tokens unless the load fixes one (vLLM's --sharegpt-output-len; http_load's
// max_tokens). A pair is dropped when its prompt is under 4 tokens, its output length is under 4
// (not checked when the length is fixed), its prompt is over 1024 tokens, or prompt and output
// together are over 2048. A conversation without a reply has no output length of its own: it is
// kept only when the length is fixed.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "base/result.hpp"
#include "load_job/prompt_pool.hpp"

namespace runara {

// vLLM's is_valid_sequence with its defaults. `fixed_output` skips the minimum output check.
bool sharegpt_pair_valid(int prompt_tokens, int output_tokens, bool fixed_output);

struct ShareGptPairs {
  std::size_t kept = 0;
  std::size_t dropped = 0;
};

// The pairs of `pool` (read from a ShareGPT file) that a load sends, with `fixed_output_tokens`
// (>= 1) as every request's output length, or -1 for each reply's own. An Error (how many were
// dropped, and why a pair is) when none is left.
Result<PromptPool> keep_sharegpt_pairs(const PromptPool& pool, int fixed_output_tokens, ShareGptPairs& counts);

}  // namespace runara
