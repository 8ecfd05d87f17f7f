#include "json_limits.hpp"

#include <cstring>

namespace runara {

std::optional<std::size_t> json_too_deep_at(std::string_view text, int max_depth) {
  int depth = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      // Jump to the closing quote: the first one after an even run of backslashes (memchr
      // keeps this pass a small fraction of the parse on large prompts files).
      for (;;) {
        const void* q = std::memchr(text.data() + i + 1, '"', text.size() - i - 1);
        if (q == nullptr) return std::nullopt;  // unterminated: the parser refuses it
        i = static_cast<std::size_t>(static_cast<const char*>(q) - text.data());
        std::size_t backslashes = 0;
        while (text[i - 1 - backslashes] == '\\') ++backslashes;  // stops at the opening quote
        if (backslashes % 2 == 0) break;
      }
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

std::string json_too_deep_message(std::size_t at, int max_depth) {
  return "nested deeper than " + std::to_string(max_depth) + " levels (at byte " + std::to_string(at) + ")";
}

std::optional<nlohmann::json> parse_json_limited(std::string_view text, std::string& error,
                                                 int max_depth) {
  if (auto at = json_too_deep_at(text, max_depth)) {
    error = json_too_deep_message(*at, max_depth);
    return std::nullopt;
  }
  // nlohmann stops at a NUL byte and accepts what came before: text after it would go unseen.
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    error = "not valid JSON: a NUL byte at byte " + std::to_string(nul);
    return std::nullopt;
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    error = std::string("not valid JSON: ") + e.what();
  } catch (const std::bad_alloc&) {
    error = "not enough memory to parse the JSON text";
  }
  return std::nullopt;
}

}  // namespace runara
