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


// Calls piece(text of one token) for each token of `text` by the rule in the header.
template <typename Fn>
void each_text_token(std::string_view text, Fn&& piece) {
  size_t i = 0;
  while (i < text.size()) {
    const Kind k = kind_of(static_cast<unsigned char>(text[i]));
    size_t j = i + 1;
    if (k != Kind::kMark) {
      while (j < text.size() && kind_of(static_cast<unsigned char>(text[j])) == k) ++j;
    }
    const std::string_view run = text.substr(i, j - i);
    if (k == Kind::kLetter || k == Kind::kDigit) {
      const size_t step = k == Kind::kLetter ? kWordBytes : kNumberDigits;
      for (size_t at = 0; at < run.size(); at += step) piece(run.substr(at, step));
    } else if (k == Kind::kMark) {
      piece(run);
    } else if (!(run.size() == 1 && text[i] == ' ' && j < text.size())) {  // one space before a word is free
      piece(run);
    }
    i = j;
  }
}

// Calls piece(text) for each token of a request's prompt, as count_prompt_tokens counts them.
template <typename Fn>
void each_prompt_token(const nlohmann::json& j, bool chat, Fn&& piece) {
  auto add = [&](const nlohmann::json& v) {
    if (v.is_string()) {
      each_text_token(v.get_ref<const std::string&>(), piece);
    } else if (v.is_array()) {
      for (const auto& e : v) {
        if (e.is_number_integer()) {
          piece("\x01" + std::to_string(e.get<int64_t>()));  // a pre-tokenized prompt: one id a token
        } else if (e.is_string()) {
          each_text_token(e.get_ref<const std::string&>(), piece);
        } else if (e.is_object()) {
          auto t = e.find("text");  // chat content parts
          if (t != e.end() && t->is_string()) each_text_token(t->get_ref<const std::string&>(), piece);
        }
      }
    }
  };
  if (chat) {
    auto m = j.find("messages");
    if (m != j.end() && m->is_array()) {
      for (const auto& msg : *m) {
        std::string role = "\x02";
        if (msg.is_object() && msg.contains("role") && msg["role"].is_string()) role += msg["role"].get<std::string>();
        for (int64_t t = 0; t < kTemplateTokens; ++t) piece(role + static_cast<char>('0' + t));
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
}

// FNV-1a: stable across runs and machines, so a block's hash is the same every time.
uint64_t fnv1a(std::string_view s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace

int64_t count_text_tokens(std::string_view text) {
  int64_t tokens = 0;
  each_text_token(text, [&](std::string_view) { ++tokens; });
  return tokens;
}

int64_t count_prompt_tokens(const nlohmann::json& j, bool chat) {
  int64_t tokens = 0;
  each_prompt_token(j, chat, [&](std::string_view) { ++tokens; });
  return std::max<int64_t>(tokens, 1);
}

std::vector<uint64_t> prompt_token_hashes(const nlohmann::json& j, bool chat) {
  std::vector<uint64_t> out;
  each_prompt_token(j, chat, [&](std::string_view piece) { out.push_back(fnv1a(piece)); });
  return out;
}

}  // namespace runara::fake_llm
