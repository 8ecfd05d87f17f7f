// libFuzzer target for the byte-level BPE tokenizer and its PCRE2 pre-tokenizer.
//
// Built by CMake (tests/fuzz/CMakeLists.txt): a libFuzzer binary with clang, a replay of
// seeds and mutations under GCC (ctest runs it); see tests/fuzz/README.md.
//
// What one input checks (any bytes: invalid UTF-8, NULs, added tokens, huge runs):
//   * GPT-2 encodes it, and the tokens' bytes (each token's characters mapped back through the
//     byte table) spell exactly the input: nothing lost, added or reordered.
//   * The Llama 3 split pattern cuts it into pieces that concatenate back to the input.
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "load_job/bpe_tokenizer.hpp"
#include "load_job/regex_splitter.hpp"

namespace {

struct Fixture {
  std::optional<runara::BpeTokenizer> gpt2;
  std::optional<runara::RegexSplitter> llama3;
  std::vector<std::string> spelled;  // token id -> the bytes it stands for

  Fixture() {
    std::ifstream in(GPT2_TOKENIZER);
    std::stringstream text;
    text << in.rdbuf();
    auto tokenizer = runara::BpeTokenizer::from_json(text.str());
    auto splitter = runara::RegexSplitter::compile(
        R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
        false);
    if (!tokenizer || !splitter) __builtin_trap();
    gpt2 = std::move(tokenizer).value();
    llama3 = std::move(splitter).value();
    std::map<int, char> to_byte;
    int next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      to_byte[printable ? b : next++] = static_cast<char>(b);
    }
    const auto doc = nlohmann::json::parse(text.str());
    spelled.resize(doc["model"]["vocab"].size());
    for (const auto& [token, id] : doc["model"]["vocab"].items()) {
      std::string bytes;
      for (std::size_t i = 0; i < token.size();) {
        const auto c = static_cast<unsigned char>(token[i]);
        const int cp = c >= 0xC0 ? (c & 0x1F) << 6 | (static_cast<unsigned char>(token[i + 1]) & 0x3F) : c;
        if (!to_byte.count(cp)) {
          bytes = token;  // <|endoftext|>
          break;
        }
        bytes += to_byte[cp];
        i += c >= 0xC0 ? 2 : 1;
      }
      spelled[id.get<std::size_t>()] = bytes;
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Fixture f;
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<int> ids;
  std::string error;
  if (!f.gpt2->encode(text, ids, error)) return 0;  // the match limit: a refusal, not a bug
  std::string back;
  for (int id : ids) back += f.spelled.at(static_cast<std::size_t>(id));
  if (back != text) __builtin_trap();
  std::vector<std::string_view> pieces;
  if (!f.llama3->split(text, pieces, error)) return 0;
  std::string joined;
  for (auto p : pieces) joined += p;
  if (joined != text) __builtin_trap();
  return 0;
}
