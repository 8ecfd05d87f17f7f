// A tokenizer's pre-tokenizer regex (Hugging Face tokenizer.json's `Split` and `ByteLevel`
// patterns), run with PCRE2 in UTF + Unicode-property mode, which reads these patterns as
// Oniguruma (Hugging Face's engine) does: \p{L}, \p{N}, (?i:...), (?!\S), {1,3}.
//
// Contract: a compiled splitter is immutable; split() may be called from any thread (each call
// makes its own match data). The pattern comes from a file the user granted, so a match is
// bounded (PCRE2's match limit): split() then fails instead of running for hours. Invalid UTF-8
// in the text is matched as PCRE2_MATCH_INVALID_UTF allows, never read past. No Lua, no I/O.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace runara {

class RegexSplitter {
 public:
  // `literal`: the pattern is a plain string (tokenizer.json's {"String": ...}), not a regex.
  // On a pattern PCRE2 refuses: an error saying where and why.
  static Result<RegexSplitter> compile(std::string_view pattern, bool literal);

  // Hugging Face's "Isolated" behaviour: every match is a piece and so is every stretch between
  // two matches; empty matches make no piece. Appends to `pieces` (views into `text`); false with
  // `error` set when a match hit the limit or PCRE2 failed.
  bool split(std::string_view text, std::vector<std::string_view>& pieces, std::string& error) const;

 private:
  struct Code;
  explicit RegexSplitter(std::shared_ptr<const Code> code) : code_(std::move(code)) {}
  std::shared_ptr<const Code> code_;
};

}  // namespace runara
