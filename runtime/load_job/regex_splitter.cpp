// PCRE2 behind RegexSplitter: compile (with JIT where the machine has it) and the match loop.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "load_job/regex_splitter.hpp"

#include <pcre2.h>

#include <new>

namespace runara {

namespace {

// A hostile pattern (nested quantifiers) can backtrack for hours on one prompt. Real tokenizer
// patterns need a few dozen steps a piece; ten million per match is far beyond that.
constexpr uint32_t kMatchLimit = 10'000'000;

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  pcre2_get_error_message(code, buffer, sizeof buffer);
  return reinterpret_cast<const char*>(buffer);
}

}  // namespace

struct RegexSplitter::Code {
  pcre2_code* code = nullptr;
  pcre2_match_context* context = nullptr;
  ~Code() {
    pcre2_match_context_free(context);
    pcre2_code_free(code);
  }
};

Result<RegexSplitter> RegexSplitter::compile(std::string_view pattern, bool literal) {
  int code = 0;
  PCRE2_SIZE offset = 0;
  const uint32_t options = PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF | (literal ? PCRE2_LITERAL : 0);
  auto compiled = std::make_shared<Code>();
  compiled->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), options,
                                 &code, &offset, nullptr);
  if (compiled->code == nullptr) {
    return Error{"regex " + std::string(pattern.substr(0, 120)) + ": " + pcre2_message(code) + " (at character " +
                 std::to_string(offset) + ")"};
  }
  pcre2_jit_compile(compiled->code, PCRE2_JIT_COMPLETE);  // slower interpretation when JIT is missing
  compiled->context = pcre2_match_context_create(nullptr);
  if (compiled->context == nullptr) throw std::bad_alloc();
  pcre2_set_match_limit(compiled->context, kMatchLimit);
  return RegexSplitter(std::move(compiled));
}

bool RegexSplitter::split(std::string_view text, std::vector<std::string_view>& pieces, std::string& error) const {
  pcre2_match_data* data = pcre2_match_data_create_from_pattern(code_->code, nullptr);
  if (data == nullptr) throw std::bad_alloc();
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  std::size_t done = 0, from = 0;
  bool ok = true;
  while (from <= text.size()) {
    const int rc = pcre2_match(code_->code, subject, text.size(), from, 0, data, code_->context);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      error = rc == PCRE2_ERROR_MATCHLIMIT ? "the pre-tokenizer's regex gave up (match limit) at byte " + std::to_string(from)
                                           : "the pre-tokenizer's regex failed at byte " + std::to_string(from) + ": " + pcre2_message(rc);
      ok = false;
      break;
    }
    const PCRE2_SIZE* span = pcre2_get_ovector_pointer(data);
    const std::size_t start = span[0], end = span[1];
    if (start > done) pieces.push_back(text.substr(done, start - done));
    if (end > start) {
      pieces.push_back(text.substr(start, end - start));
      done = from = end;
      continue;
    }
    // An empty match: step over one character (a whole UTF-8 sequence) and look again.
    done = start;
    from = start + 1;
    while (from < text.size() && (static_cast<unsigned char>(text[from]) & 0xC0) == 0x80) ++from;
  }
  pcre2_match_data_free(data);
  if (ok && done < text.size()) pieces.push_back(text.substr(done));
  return ok;
}

}  // namespace runara
