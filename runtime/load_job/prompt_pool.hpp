// Prompts for LLM load generation: synthetic ones of a chosen length, or the
// prompts of a file (plain lines, JSON Lines or a ShareGPT dump), and a
// seeded per-request choice among them.
//
// A pool is immutable once built, so one pool serves every connection of a
// load run from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace runara {

class BpeTokenizer;

struct Prompt {
  std::string text;
  // Input length in tokens: the exact target for synthetic prompts; for file
  // prompts the tokenizer's count when there is one, else an estimate (bytes / 4
  // rounded up, >= 1).
  int tokens = 0;
  // ShareGPT: tokens of the recorded reply (counted as `tokens` is); -1 where
  // the source has no reply.
  int expected_output_tokens = -1;
};

// vLLM's prefix-repetition workload: `count` distinct prefixes of `tokens` tokens each. Prompt i
// of a pool starts with prefix i % count, then a suffix of its own (whose first words differ
// between any two prompts, as a whole synthetic prompt's do), so requests share exactly the prefix.
// tokens == 0: no shared prefix (the default: every prompt differs from its first word).
struct SharedPrefixes {
  int tokens = 0;
  int count = 1;
};

class PromptPool {
 public:
  // `count` (>= 1) distinct prompts whose length in tokens is uniform in
  // [round(input_tokens * (1 - range_ratio)), round(input_tokens * (1 + range_ratio))]
  // (vLLM's "random" dataset; input_tokens >= 1, 0 <= range_ratio < 1; the
  // length is at least 1). The text is words of synthetic_vocabulary()
  // separated by single spaces, one token per word. The first four words are
  // a seeded prefix that differs between any two prompts of the pool (up to
  // 2^24 prompts; among the first 64^k prompts, already within k words), so a
  // server's prefix cache cannot reuse one prompt's work for another.
  // Deterministic for a seed. Throws std::invalid_argument on out-of-range
  // arguments (input_tokens is at most 2^24). When `stop` turns true it gives up between
  // prompts with std::runtime_error (a big pool takes seconds; the run's deadline must hold).
  // With a `tokenizer`, lengths are in its tokens: each prompt is counted and, should the
  // tokenizer split a word, words are added or dropped until the count is exact
  // (std::runtime_error when it cannot be).
  // With `shared` prefixes (SharedPrefixes above), each prompt is one of them plus its own
  // suffix, the two together of the length drawn; shared.tokens must be below the shortest length
  // and shared.count >= 1 (std::invalid_argument otherwise). With a tokenizer, the prefix alone is
  // fitted to shared.tokens first, then the whole prompt to its length.
  static PromptPool synthetic(int input_tokens, double range_ratio, std::size_t count,
                              std::uint64_t seed, const std::atomic<bool>* stop = nullptr,
                              const BpeTokenizer* tokenizer = nullptr, SharedPrefixes shared = {});

  // The prompts of a prompt file's text. format: "lines" (one prompt per
  // non-blank line), "jsonl" (per line, a JSON object with a "prompt" or
  // "text" string, or a JSON string), "sharegpt" (a JSON array of
  // {"conversations": [{"from": "human", "value": ...}, {"from": "gpt", ...}]};
  // each conversation's first human turn is the prompt and the turn after it
  // the reply; conversations of fewer than 2 turns are skipped, like vLLM's
  // loader), or "" to auto-detect ('[' first: sharegpt; first non-blank line
  // starting with '{' or '"': jsonl; else lines). Empty prompts are skipped.
  // On bad input: nullopt, and `error` names the line (or conversation) and
  // what was expected. A text without any prompt is an error too. With a
  // `tokenizer`, prompts and replies are counted with it.
  static std::optional<PromptPool> from_text(std::string_view text, std::string_view format,
                                             std::string& error,
                                             const BpeTokenizer* tokenizer = nullptr);

  std::size_t size() const { return prompts_.size(); }
  const Prompt& at(std::size_t i) const { return prompts_.at(i); }
  // The format the prompts were read in ("lines", "jsonl", "sharegpt", the guess where none
  // was named); "" for synthetic prompts.
  const std::string& format() const { return format_; }

  // The prompts for which `keep` is true, in order (possibly none), of the same format.
  PromptPool keep_if(const std::function<bool(const Prompt&)>& keep) const;

  // The prompt of request number `request_index`: a seeded uniform choice
  // that depends only on (seed, request_index), not on the calling thread or
  // the order of calls. Stateless, so safe from any number of threads.
  const Prompt& pick(std::uint64_t request_index, std::uint64_t seed) const;

 private:
  explicit PromptPool(std::vector<Prompt> prompts, std::string format = "")
      : prompts_(std::move(prompts)), format_(std::move(format)) {}

  std::vector<Prompt> prompts_;
  std::string format_;
};

// The 64 words synthetic prompts are made of: common English words that are
// each a single token for the Llama and GPT tokenizers.
std::span<const std::string_view> synthetic_vocabulary();

}  // namespace runara
