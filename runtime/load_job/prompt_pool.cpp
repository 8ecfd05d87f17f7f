// Prompt pools: synthetic prompt generation, the three prompt-file formats
// (lines, JSON Lines, ShareGPT) and the seeded per-request choice.
#include "load_job/prompt_pool.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "base/json_limits.hpp"
#include "load_job/bpe_tokenizer.hpp"
#include "load/prompt_pick.hpp"
#include "load/seeded_random.hpp"

namespace runara {

namespace {

using nlohmann::json;

// 64 of the most frequent English words, each one token (as " word") for the
// GPT-2/cl100k and Llama tokenizers, so a prompt of N words is N tokens. (A
// prompt's first word has no space before it: Llama adds one; for the GPT
// tokenizers such common words are single tokens without it too.)
// 64 = 2^6 makes a prefix word exactly 6 bits.
constexpr std::array<std::string_view, 64> kVocabulary = {
    "the",   "of",    "and",  "to",    "in",   "is",    "you",   "that",
    "it",    "he",    "was",  "for",   "on",   "are",   "as",    "with",
    "his",   "they",  "at",   "be",    "this", "have",  "from",  "or",
    "one",   "had",   "by",   "but",   "not",  "what",  "all",   "were",
    "we",    "when",  "your", "can",   "said", "there", "an",    "each",
    "which", "she",   "do",   "how",   "their", "if",   "will",  "up",
    "other", "about", "out",  "many",  "then", "them",  "these", "so",
    "some",  "her",   "would", "make", "like", "him",   "into",  "time",
};
constexpr int kPrefixWords = 4;           // 64^4 = 2^24 distinct prefixes
constexpr int kMaxInputTokens = 1 << 24;  // far beyond any context window

// Word j (< kPrefixWords) of prompt i's prefix: i's j-th base-64 digit put
// through a bijection of [0, 64) chosen by the seed and the digits below it.
// So the first k words of the first 64^k prompts are all distinct, even in
// prompts shorter than the whole prefix, yet they do not just count up.
std::uint64_t prefix_word(std::uint64_t i, int j, std::uint64_t key) {
  const std::uint64_t lower = i & ((1ull << (6 * j)) - 1);
  const std::uint64_t digit = (i >> (6 * j)) & 63;
  const std::uint64_t h = splitmix64(key ^ (lower << 8 | static_cast<std::uint64_t>(j)));
  const std::uint64_t odd = (h >> 32) | 1;  // invertible modulo 64
  return (digit * odd + h) & 63;
}

// `length` words after `start` (a shared prefix, or ""), the first kPrefixWords of them unique to
// `index` under `key`.
Prompt synthetic_prompt(int length, std::uint64_t index, std::uint64_t key, SeededRandom& rng,
                        std::string_view start = {}) {
  Prompt p;
  p.tokens = length;
  p.text.reserve(start.size() + 1 + static_cast<std::size_t>(length) * 6);
  p.text = start;
  for (int w = 0; w < length; ++w) {
    std::uint64_t word = w < kPrefixWords ? prefix_word(index, w, key) : rng.below(64);
    if (!p.text.empty()) p.text += ' ';
    p.text += kVocabulary[word];
  }
  return p;
}

int estimate_tokens(std::string_view text) {
  return static_cast<int>(std::min<std::size_t>((text.size() + 3) / 4, kMaxInputTokens));
}

// The tokenizer's count, or the estimate without one. Throws std::runtime_error when the
// tokenizer's regex gives up (from_text turns it into its error).
int count_tokens(std::string_view text, const BpeTokenizer* tokenizer) {
  if (tokenizer == nullptr) return estimate_tokens(text);
  std::string error;
  const int n = tokenizer->count(text, error);
  if (n < 0) throw std::runtime_error(error);
  return n;
}

Prompt file_prompt(std::string text, int expected_output_tokens = -1) {
  Prompt p;
  p.tokens = std::max(1, estimate_tokens(text));
  p.text = std::move(text);
  p.expected_output_tokens = expected_output_tokens;
  return p;
}

// Counts a file's prompts (and ShareGPT replies, kept aside as their text) with the tokenizer.
void recount(std::vector<Prompt>& prompts, const std::vector<std::string>& replies, const BpeTokenizer& t) {
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    prompts[i].tokens = std::max(1, count_tokens(prompts[i].text, &t));
    if (prompts[i].expected_output_tokens >= 0) prompts[i].expected_output_tokens = count_tokens(replies[i], &t);
  }
}

void add_words(Prompt& p, int n, SeededRandom& rng) {
  for (int w = 0; w < n; ++w) {
    if (!p.text.empty()) p.text += ' ';
    p.text += kVocabulary[rng.below(64)];
  }
}

// Drops up to `n` words from the end, keeping at least `keep` words.
void drop_words(Prompt& p, int n, int keep) {
  int words = p.text.empty() ? 0 : static_cast<int>(std::count(p.text.begin(), p.text.end(), ' ')) + 1;
  for (; n > 0 && words > keep; --n, --words) {
    const std::size_t space = p.text.rfind(' ');
    p.text.erase(space == std::string::npos ? 0 : space);
  }
}

// Appends the vocabulary word that makes the prompt exactly `length` tokens, if one does.
bool finish_with_word(Prompt& p, int length, const BpeTokenizer& t) {
  for (std::string_view word : kVocabulary) {
    std::string candidate = p.text + (p.text.empty() ? "" : " ") + std::string(word);
    if (count_tokens(candidate, &t) == length) {
      p.text = std::move(candidate);
      return true;
    }
  }
  return false;
}

// Makes a synthetic prompt exactly `length` of the tokenizer's tokens. For the usual byte-level
// tokenizers every vocabulary word is one token and the first count already matches; for one
// that splits words, words are added or dropped towards the length, then the last is chosen.
void fit_to_tokenizer(Prompt& p, int length, const BpeTokenizer& t, SeededRandom& rng) {
  // More tokens than a vocabulary word could take (at most 6 bytes with its space, one token a byte).
  constexpr int kLongestWord = 16;
  for (int round = 0; round < 64; ++round) {
    const int n = count_tokens(p.text, &t);
    if (n == length) return;
    if (n < length && length - n <= kLongestWord) {
      if (finish_with_word(p, length, t)) return;
      drop_words(p, 1, 0);  // no single word closes the gap: a wider one may be closed
    } else if (n < length) {
      add_words(p, std::max(1, (length - n) / (2 * kLongestWord)), rng);
    } else {
      drop_words(p, std::max(1, (n - length) / (2 * kLongestWord)), 0);
    }
  }
  throw std::runtime_error("the tokenizer splits the synthetic prompts' words so that a prompt of exactly " +
                           std::to_string(length) + " tokens could not be made; use prompts from a file instead");
}

// The start of an offending input, for error messages.
std::string excerpt(std::string_view s) {
  constexpr std::size_t kMax = 80;
  return s.size() <= kMax ? std::string(s) : std::string(s.substr(0, kMax)) + "...";
}

bool is_blank(std::string_view line) {
  return line.find_first_not_of(" \t\r\f\v") == std::string_view::npos;
}

// Calls fn(line_number, line) for each line (1-based, without its "\n" or
// "\r\n") until fn returns false.
template <typename Fn>
bool for_each_line(std::string_view text, Fn fn) {
  int number = 0;
  while (!text.empty()) {
    std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!fn(++number, line)) return false;
  }
  return true;
}

std::string_view detect_format(std::string_view text) {
  std::size_t first = text.find_first_not_of(" \t\r\n\f\v");
  if (first == std::string_view::npos) return "lines";
  if (text[first] == '[') return "sharegpt";
  return text[first] == '{' || text[first] == '"' ? "jsonl" : "lines";
}

bool parse_lines(std::string_view text, std::vector<Prompt>& out) {
  return for_each_line(text, [&](int, std::string_view line) {
    if (!is_blank(line)) out.push_back(file_prompt(std::string(line)));
    return true;
  });
}

bool parse_jsonl(std::string_view text, std::vector<Prompt>& out, std::string& error) {
  return for_each_line(text, [&](int number, std::string_view line) {
    if (is_blank(line)) return true;
    std::string why;
    json value = parse_json_limited(line, why).value_or(json(json::value_t::discarded));
    if (is_json_too_deep(why)) {
      error = "line " + std::to_string(number) + ": " + why;
      return false;
    }
    const json* prompt = &value;
    if (value.is_object()) {
      auto it = value.find("prompt");
      if (it == value.end() || !it->is_string()) it = value.find("text");
      prompt = it == value.end() ? nullptr : &*it;
    }
    if (prompt == nullptr || !prompt->is_string()) {
      error = "line " + std::to_string(number) + ": " +
              (value.is_discarded() ? "not valid JSON; " : "") +
              "expected a JSON object with a \"prompt\" or \"text\" string (or a JSON string), "
              "got: " + excerpt(line);
      return false;
    }
    if (!prompt->get_ref<const std::string&>().empty())
      out.push_back(file_prompt(prompt->get<std::string>()));
    return true;
  });
}

bool is_human(const json& turn) {
  const auto& from = turn["from"].get_ref<const std::string&>();
  return from == "human" || from == "user";
}

// One ShareGPT conversation: the first human turn is the prompt, the turn
// after it (when not another human or system turn) the recorded reply.
bool parse_conversation(const json& entry, std::size_t index, std::vector<Prompt>& out,
                        std::vector<std::string>& replies, std::string& error) {
  const std::string where = "conversation at index " + std::to_string(index);
  const json* turns =
      entry.is_object() && entry.contains("conversations") ? &entry["conversations"] : nullptr;
  if (turns == nullptr || !turns->is_array()) {
    error = where + ": expected an object with a \"conversations\" array, got: " +
            excerpt(entry.dump());
    return false;
  }
  for (std::size_t t = 0; t < turns->size(); ++t) {
    const json& turn = (*turns)[t];
    if (!turn.is_object() || !turn.contains("from") || !turn["from"].is_string() ||
        !turn.contains("value") || !turn["value"].is_string()) {
      error = where + ", turn " + std::to_string(t) +
              ": expected {\"from\": string, \"value\": string}, got: " + excerpt(turn.dump());
      return false;
    }
  }
  if (turns->size() < 2) return true;  // vLLM skips these too
  auto human = std::find_if(turns->begin(), turns->end(), is_human);
  if (human == turns->end() || (*human)["value"].get_ref<const std::string&>().empty()) return true;
  int reply_tokens = -1;
  auto reply = std::next(human);
  std::string reply_text;
  if (reply != turns->end() && !is_human(*reply) && (*reply)["from"] != "system") {
    reply_text = (*reply)["value"].get<std::string>();
    reply_tokens = estimate_tokens(reply_text);
  }
  out.push_back(file_prompt((*human)["value"].get<std::string>(), reply_tokens));
  replies.push_back(std::move(reply_text));
  return true;
}

bool parse_sharegpt(std::string_view text, std::vector<Prompt>& out, std::vector<std::string>& replies,
                    std::string& error) {
  json doc;
  if (auto parsed = parse_json_limited(text, error)) {
    doc = std::move(*parsed);
  } else {
    error = "ShareGPT: " + error;
    return false;
  }
  if (!doc.is_array()) {
    error = "ShareGPT: expected a JSON array of conversations, got: " + excerpt(doc.dump());
    return false;
  }
  for (std::size_t i = 0; i < doc.size(); ++i)
    if (!parse_conversation(doc[i], i, out, replies, error)) return false;
  return true;
}

}  // namespace

std::span<const std::string_view> synthetic_vocabulary() { return kVocabulary; }

// What is wrong with synthetic()'s arguments, or "": one place, so that each check is a line.
namespace {
int shortest_length(int input_tokens, double range_ratio) {
  return std::max(1, static_cast<int>(std::lround(input_tokens * (1 - range_ratio))));
}

std::string synthetic_problem(int input_tokens, double range_ratio, std::size_t count, SharedPrefixes shared) {
  if (input_tokens < 1 || input_tokens > kMaxInputTokens) return "input_tokens must be in [1, 2^24]";
  if (!(range_ratio >= 0 && range_ratio < 1)) return "range_ratio must be in [0, 1)";
  if (count == 0) return "count must be >= 1";
  if (shared.tokens < 0 || shared.count < 1) return "prefix_tokens must be >= 0 and prefixes >= 1";
  if (const int shortest = shortest_length(input_tokens, range_ratio); shared.tokens > 0 && shared.tokens >= shortest) {
    return "prefix_tokens (" + std::to_string(shared.tokens) + ") must be below the shortest prompt's length (" +
           std::to_string(shortest) + " tokens), leaving each request a suffix of its own";
  }
  return "";
}
}  // namespace

PromptPool PromptPool::synthetic(int input_tokens, double range_ratio, std::size_t count,
                                 std::uint64_t seed, const std::atomic<bool>* stop,
                                 const BpeTokenizer* tokenizer, SharedPrefixes shared) {
  if (std::string problem = synthetic_problem(input_tokens, range_ratio, count, shared); !problem.empty()) {
    throw std::invalid_argument("synthetic prompts: " + problem);
  }
  const int lo = shortest_length(input_tokens, range_ratio);
  const int hi = std::max(lo, static_cast<int>(std::lround(input_tokens * (1 + range_ratio))));
  SeededRandom rng(seed);
  const std::uint64_t prefix_key = rng.next();
  // The shared prefixes have first words of their own, drawn under another key.
  std::vector<std::string> prefixes;
  if (shared.tokens > 0) {
    const std::uint64_t shared_key = rng.next();
    for (int k = 0; k < shared.count; ++k) {
      Prompt prefix = synthetic_prompt(shared.tokens, static_cast<std::uint64_t>(k), shared_key, rng);
      if (tokenizer != nullptr) fit_to_tokenizer(prefix, shared.tokens, *tokenizer, rng);
      prefixes.push_back(std::move(prefix.text));
    }
  }
  std::vector<Prompt> prompts;
  prompts.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    if (stop && stop->load(std::memory_order_relaxed)) throw std::runtime_error("stopped");
    int length = lo + static_cast<int>(rng.below(static_cast<std::uint64_t>(hi - lo) + 1));
    if (prefixes.empty()) {
      prompts.push_back(synthetic_prompt(length, i, prefix_key, rng));
    } else {
      const std::string& prefix = prefixes[i % prefixes.size()];
      prompts.push_back(synthetic_prompt(length - shared.tokens, i, prefix_key, rng, prefix));
      prompts.back().tokens = length;
    }
    if (tokenizer != nullptr) fit_to_tokenizer(prompts.back(), length, *tokenizer, rng);
    if (!prefixes.empty() && !prompts.back().text.starts_with(prefixes[i % prefixes.size()] + " ")) {
      throw std::runtime_error("the tokenizer merges the shared prefix with the words after it, so a prompt of " +
                               std::to_string(length) + " tokens could not keep its prefix whole; use prompts from a file instead");
    }
  }
  return PromptPool(std::move(prompts));
}

std::optional<PromptPool> PromptPool::from_text(std::string_view text, std::string_view format,
                                                std::string& error, const BpeTokenizer* tokenizer) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a UTF-8 BOM would break JSON
  const std::string_view chosen = format.empty() ? detect_format(text) : format;
  std::vector<Prompt> prompts;
  std::vector<std::string> replies;  // ShareGPT: each prompt's reply, for a tokenizer to count
  bool ok = false;
  if (chosen == "lines") {
    ok = parse_lines(text, prompts);
  } else if (chosen == "jsonl") {
    ok = parse_jsonl(text, prompts, error);
  } else if (chosen == "sharegpt") {
    ok = parse_sharegpt(text, prompts, replies, error);
  } else {
    error = "unknown prompt format \"" + std::string(format) +
            "\" (expected lines, jsonl, sharegpt, or empty to auto-detect)";
  }
  if (!ok) return std::nullopt;
  if (prompts.empty()) {
    error = "no prompts found in the " + std::string(chosen) + " text";
    return std::nullopt;
  }
  if (tokenizer != nullptr) {
    replies.resize(prompts.size());
    try {
      recount(prompts, replies, *tokenizer);
    } catch (const std::runtime_error& e) {
      error = e.what();
      return std::nullopt;
    }
  }
  return PromptPool(std::move(prompts), std::string(chosen));
}

PromptPool PromptPool::keep_if(const std::function<bool(const Prompt&)>& keep) const {
  std::vector<Prompt> kept;
  for (const Prompt& p : prompts_)
    if (keep(p)) kept.push_back(p);
  return PromptPool(std::move(kept), format_);
}

const Prompt& PromptPool::pick(std::uint64_t request_index, std::uint64_t seed) const {
  return prompts_[pick_prompt(request_index, seed, prompts_.size())];
}

}  // namespace runara
