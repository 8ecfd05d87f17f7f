#include "base/json_limits.hpp"

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

namespace {

// On 64-bit libstdc++: a json value is 16 bytes (a vector slot, doubled for its spare room: 32);
// an array or object is a heap-held vector (24) or map (48); an object member is a map node
// (links 32, key 32, value 16); a string value a heap-held std::string (32); every heap block
// costs the allocator 16 more; strings longer than 15 bytes hold their characters apart.
constexpr std::size_t kSlot = 32, kBlock = 16, kArray = 24 + kBlock, kObject = 48 + kBlock;
constexpr std::size_t kMember = 80 + kBlock, kString = 32 + kBlock;

std::size_t string_heap(std::size_t raw_len) { return raw_len > 15 ? raw_len + 1 + kBlock : 0; }

}  // namespace

std::size_t json_tree_bytes(std::string_view text) {
  std::size_t bytes = kSlot;  // the root
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    switch (c) {
      case '"': {
        const std::size_t open = i;
        for (;;) {  // to the closing quote, as json_too_deep_at
          const void* q = std::memchr(text.data() + i + 1, '"', text.size() - i - 1);
          if (q == nullptr) return bytes;
          i = static_cast<std::size_t>(static_cast<const char*>(q) - text.data());
          std::size_t backslashes = 0;
          while (text[i - 1 - backslashes] == '\\') ++backslashes;
          if (backslashes % 2 == 0) break;
        }
        bytes += kSlot + kString + string_heap(i - open - 1);  // a key is counted as a value too: an upper bound
        break;
      }
      case '[': bytes += kSlot + kArray; break;
      case '{': bytes += kSlot + kObject; break;
      case ':': bytes += kMember; break;
      case '-': case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': case '8': case '9':
      case 't': case 'f': case 'n':
        bytes += kSlot;
        while (i + 1 < text.size() && text[i + 1] != ',' && text[i + 1] != ']' && text[i + 1] != '}' &&
               text[i + 1] != ' ' && text[i + 1] != '\n' && text[i + 1] != '\r' && text[i + 1] != '\t') {
          ++i;
        }
        break;
      default: break;
    }
  }
  return bytes;
}

std::string json_too_large_message(std::size_t estimate, std::size_t max_tree_bytes) {
  const auto mib = [](std::size_t b) { return std::to_string(b / (1u << 20) + (b % (1u << 20) ? 1 : 0)); };
  return "would take about " + mib(estimate) + " MiB once parsed, more than the " + mib(max_tree_bytes) +
         " MiB allowed";
}

std::string json_too_deep_message(std::size_t at, int max_depth) {
  return "nested deeper than " + std::to_string(max_depth) + " levels (at byte " + std::to_string(at) + ")";
}

std::optional<nlohmann::json> parse_json_limited(std::string_view text, std::string& error,
                                                 int max_depth, std::size_t max_tree_bytes) {
  if (auto at = json_too_deep_at(text, max_depth)) {
    error = json_too_deep_message(*at, max_depth);
    return std::nullopt;
  }
  if (max_tree_bytes > 0) {
    if (const std::size_t estimate = json_tree_bytes(text); estimate > max_tree_bytes) {
      error = json_too_large_message(estimate, max_tree_bytes);
      return std::nullopt;
    }
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
