// A Hugging Face tokenizer.json of the byte-level BPE kind (GPT-2, Llama 3, Qwen2 without its
// NFC normalizer, Mistral Nemo, DeepSeek, …), so prompts can have exact lengths in the model's
// own tokens and counts agree with vLLM's client, which uses that file.
//
// What is read: added_tokens (matched in the text first, as Hugging Face does), the
// pre_tokenizer (ByteLevel, Split with a regex or string in the "Isolated" behaviour,
// or a Sequence of them) and the BPE model (vocab, merges in either of their two spellings,
// ignore_merges). Anything else that would change the tokens (a normalizer, byte_fallback,
// subword prefixes, other pre-tokenizers or models) is refused by name, never approximated.
// The post-processor is not applied: counts are of the text's own tokens, without the BOS a
// server may add (vLLM's "random" dataset counts the same way).
//
// Contract: built from the file's text (the caller reads and budgets it). Immutable after
// loading except a small cache of recent pieces, so use one tokenizer from one thread at a time.
// No Lua, no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "load_job/regex_splitter.hpp"

namespace runara {

class BpeTokenizer {
 public:
  // Or what in the file is wrong or unsupported (named by its JSON path).
  static Result<BpeTokenizer> from_json(std::string_view text);

  // The token ids of `text`; false with `error` set when the pre-tokenizer's regex gave up.
  bool encode(std::string_view text, std::vector<int>& ids, std::string& error) const;
  // How many tokens `text` is; -1 with `error` set as for encode.
  int count(std::string_view text, std::string& error) const;

  std::size_t vocab_size() const { return vocab_.size(); }

  struct Step {  // one pre-tokenizer step of the pipeline, in order
    std::optional<RegexSplitter> split;  // a Split, or ByteLevel's GPT-2 regex
    bool prefix_space = false;           // ByteLevel add_prefix_space
  };

 private:
  static std::optional<BpeTokenizer> load(std::string_view text, std::string& error);
  BpeTokenizer() = default;
  void encode_piece(std::string_view piece, std::vector<int>& ids) const;
  bool encode_plain(std::string_view text, std::vector<int>& ids, std::string& error) const;

  std::vector<Step> steps_;
  std::unordered_map<std::string, int> vocab_;          // byte-level spelling -> id
  std::unordered_map<std::uint64_t, std::pair<int, int>> merges_;  // (left, right) -> (rank, merged id)
  int byte_ids_[256] = {};                              // each byte's own token
  bool ignore_merges_ = false;                          // a whole piece in the vocab is one token
  std::vector<std::pair<std::string, int>> added_;      // added tokens, longest first
  bool added_starts_[256] = {};                         // first bytes of added tokens
  mutable std::unordered_map<std::string, std::vector<int>> cache_;
};

}  // namespace runara
