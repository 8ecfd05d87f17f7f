#include "sim/fake_llm_tokens.hpp"

#include <algorithm>

namespace runara::fake_llm {

namespace {

constexpr int64_t kWordBytes = 8;    // a letter run this long is still one token
constexpr int64_t kNumberDigits = 3;  // digits per token
constexpr int64_t kTemplateTokens = 4;  // a chat message's role and template tokens

enum class Kind { kSpace, kLetter, kDigit, kMark };

Kind kind_of(unsigned char c) {
  if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') return Kind::kSpace;
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80) return Kind::kLetter;  // UTF-8 as letters
  if (c >= '0' && c <= '9') return Kind::kDigit;
  return Kind::kMark;
}

int64_t ceil_div(int64_t n, int64_t d) { return (n + d - 1) / d; }

}  // namespace

int64_t count_text_tokens(std::string_view text) {
  int64_t tokens = 0;
  size_t i = 0;
  while (i < text.size()) {
    const Kind k = kind_of(static_cast<unsigned char>(text[i]));
    size_t j = i + 1;
    if (k != Kind::kMark) {
      while (j < text.size() && kind_of(static_cast<unsigned char>(text[j])) == k) ++j;
    }
    const auto n = static_cast<int64_t>(j - i);
    if (k == Kind::kLetter) tokens += ceil_div(n, kWordBytes);
    else if (k == Kind::kDigit) tokens += ceil_div(n, kNumberDigits);
    else if (k == Kind::kMark) tokens += 1;
    else if (!(n == 1 && text[i] == ' ' && j < text.size())) tokens += 1;  // one space before a word is free
    i = j;
  }
  return tokens;
}

int64_t count_prompt_tokens(const nlohmann::json& j, bool chat) {
  int64_t tokens = 0;
  auto add = [&](const nlohmann::json& v) {
    if (v.is_string()) {
      tokens += count_text_tokens(v.get_ref<const std::string&>());
    } else if (v.is_array()) {
      for (const auto& e : v) {
        if (e.is_number_integer()) {
          ++tokens;  // a pre-tokenized prompt
        } else if (e.is_string()) {
          tokens += count_text_tokens(e.get_ref<const std::string&>());
        } else if (e.is_object()) {
          auto t = e.find("text");  // chat content parts
          if (t != e.end() && t->is_string()) tokens += count_text_tokens(t->get_ref<const std::string&>());
        }
      }
    }
  };
  if (chat) {
    auto m = j.find("messages");
    if (m != j.end() && m->is_array()) {
      for (const auto& msg : *m) {
        tokens += kTemplateTokens;
        if (msg.is_object()) {
          auto ct = msg.find("content");
          if (ct != msg.end()) add(*ct);
        }
      }
    }
  } else {
    auto p = j.find("prompt");
    if (p != j.end()) add(*p);
  }
  return std::max<int64_t>(tokens, 1);
}

}  // namespace runara::fake_llm
