// The byte-level BPE tokenizer (runtime/load_job/bpe_tokenizer) and its pre-tokenizer regexes
// (runtime/load_job/regex_splitter) against independent references: GPT-2's vocabulary encoding
// llama.cpp's tokenizer test texts exactly as Hugging Face's tokenizers library did (the ids in
// tests/fixtures/tokenizers/gpt2/hf-encode.out), and the Llama 3 / Qwen2 split patterns cutting
// texts where Python's `regex` module cut them. Plus what a tokenizer.json may not do.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_paths.hpp"
#include "load_job/bpe_tokenizer.hpp"
#include "load_job/prompt_pool.hpp"
#include "load_job/regex_splitter.hpp"

using runara::BpeTokenizer;
using runara::RegexSplitter;

namespace {

const std::string kDir = std::string(RUNARA_SOURCE_DIR) + "/tests/fixtures/tokenizers/";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const BpeTokenizer& gpt2() {
  static const BpeTokenizer t = [] {
    auto made = BpeTokenizer::from_json(slurp(kDir + "gpt2/tokenizer.json"));
    INFO(made.error());
    REQUIRE(made);
    return std::move(made).value();
  }();
  return t;
}

std::vector<int> encode(const BpeTokenizer& t, std::string_view text) {
  std::vector<int> ids;
  std::string error;
  REQUIRE(t.encode(text, ids, error));
  return ids;
}

std::string load_error(const nlohmann::json& doc) {
  auto t = BpeTokenizer::from_json(doc.dump());
  CHECK_FALSE(t);
  return t.error();
}

// A minimal byte-level tokenizer.json: GPT-2's 256 byte tokens, no merges, no added tokens.
nlohmann::json tiny_tokenizer() {
  nlohmann::json doc = nlohmann::json::parse(slurp(kDir + "gpt2/tokenizer.json"));
  nlohmann::json vocab = nlohmann::json::object();
  for (const auto& [token, id] : doc["model"]["vocab"].items())
    if (id.get<int>() < 256) vocab[token] = id;  // GPT-2's first 256 ids are its byte tokens
  doc["model"]["vocab"] = vocab;
  doc["model"]["merges"] = nlohmann::json::array();
  doc["added_tokens"] = nlohmann::json::array();
  return doc;
}

}  // namespace

TEST_CASE("tokenizer: GPT-2 encodes llama.cpp's test texts exactly as Hugging Face did", "[tokenizer]") {
  const std::string inp = slurp(kDir + "gpt2/hf-encode.inp"), out = slurp(kDir + "gpt2/hf-encode.out");
  std::vector<std::string> texts;
  const std::string sep = "\n__ggml_vocab_test__\n";
  for (std::size_t at = 0, next; (next = inp.find(sep, at)) != std::string::npos; at = next + sep.size())
    texts.push_back(inp.substr(at, next - at));
  std::istringstream lines(out);
  std::size_t checked = 0;
  for (std::string line; std::getline(lines, line) && checked < texts.size(); ++checked) {
    std::vector<int> want;
    std::istringstream ids(line);
    for (int id; ids >> id;) want.push_back(id);
    INFO("text #" << checked << ": \"" << texts[checked] << "\"");
    CHECK(encode(gpt2(), texts[checked]) == want);
  }
  CHECK(checked == 46);
  CHECK(gpt2().vocab_size() == 50257);
}

TEST_CASE("tokenizer: well-known GPT-2 encodings and the added <|endoftext|>", "[tokenizer]") {
  CHECK(encode(gpt2(), "Hello world") == std::vector<int>{15496, 995});
  CHECK(encode(gpt2(), "a<|endoftext|>b") == std::vector<int>{64, 50256, 65});
  CHECK(encode(gpt2(), "").empty());
  std::string error;
  CHECK(gpt2().count(" the of and to in", error) == 5);
}

TEST_CASE("tokenizer: a piece of a million letters is encoded in n log n, not n squared", "[tokenizer]") {
  const std::string long_word(1'000'000, 'a');
  std::string error;
  const int n = gpt2().count(long_word, error);
  INFO(error);
  CHECK(n > 0);
  CHECK(n < 1'000'000);
}

TEST_CASE("regex splitter: the Llama 3 and Qwen2 patterns cut as Python's regex module does", "[tokenizer]") {
  const auto doc = nlohmann::json::parse(slurp(kDir + "llama3-qwen2-splits.json"));
  for (const auto& [name, pattern] : doc["patterns"].items()) {
    std::string error;
    auto splitter = RegexSplitter::compile(pattern.get<std::string>(), false);
    INFO(name << ": " << splitter.error());
    REQUIRE(splitter);
    for (const auto& c : doc["cases"]) {
      std::vector<std::string_view> pieces;
      REQUIRE(splitter->split(c["text"].get_ref<const std::string&>(), pieces, error));
      std::vector<std::string> got(pieces.begin(), pieces.end());
      INFO(name << " on \"" << c["text"].get<std::string>() << "\"");
      CHECK(got == c["pieces"][name].get<std::vector<std::string>>());
    }
  }
}

TEST_CASE("regex splitter: invalid UTF-8 is split without reading past the text", "[tokenizer]") {
  std::string error;
  auto s = RegexSplitter::compile(R"(\p{L}+|\s+)", false);
  REQUIRE(s);
  std::vector<std::string_view> pieces;
  const std::string text = "ab\xff\xfe cd\xc3";
  REQUIRE(s->split(text, pieces, error));
  std::string joined;
  for (auto p : pieces) joined += p;
  CHECK(joined == text);  // every byte lands in exactly one piece
  CHECK(gpt2().count(text, error) > 0);
}

TEST_CASE("regex splitter: a catastrophic pattern stops at the match limit with a clear error", "[tokenizer]") {
  std::string error;
  auto s = RegexSplitter::compile("(a+)+$", false);
  REQUIRE(s);
  std::vector<std::string_view> pieces;
  CHECK_FALSE(s->split(std::string(40, 'a') + "!", pieces, error));
  CHECK(error.find("match limit") != std::string::npos);
  const auto unclosed = RegexSplitter::compile("(unclosed", false);
  CHECK_FALSE(unclosed);
  CHECK(unclosed.error().find("(unclosed") != std::string::npos);
}

TEST_CASE("tokenizer: a Llama 3 style pipeline (Split, then ByteLevel without its regex) merges as configured", "[tokenizer]") {
  auto doc = tiny_tokenizer();
  doc["pre_tokenizer"] = {{"type", "Sequence"}, {"pretokenizers", {
      {{"type", "Split"}, {"pattern", {{"Regex", R"(\p{N}{1,3}|\p{L}+|\s+)"}}}, {"behavior", "Isolated"}, {"invert", false}},
      {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}}}}};
  doc["model"]["vocab"]["12"] = 300;
  doc["model"]["vocab"]["123"] = 301;
  doc["model"]["vocab"]["ab"] = 302;
  doc["model"]["merges"] = {"1 2", {"12", "3"}, "a b"};  // both spellings of a merge
  auto t = BpeTokenizer::from_json(doc.dump());
  INFO(t.error());
  REQUIRE(t);
  // "1234" splits into "123" and "4" (digits in threes), "abab" stays one piece.
  CHECK(encode(*t, "1234abab") == std::vector<int>{301, 19, 302, 302});  // 19: GPT-2's "4"
}

TEST_CASE("tokenizer: ignore_merges takes a whole piece found in the vocabulary as one token", "[tokenizer]") {
  auto doc = tiny_tokenizer();
  doc["model"]["vocab"]["xyz"] = 400;  // reachable by no merge
  auto plain = BpeTokenizer::from_json(doc.dump());
  REQUIRE(plain);
  CHECK(encode(*plain, "xyz").size() == 3);
  doc["model"]["ignore_merges"] = true;
  auto whole = BpeTokenizer::from_json(doc.dump());
  REQUIRE(whole);
  CHECK(encode(*whole, "xyz") == std::vector<int>{400});
}

TEST_CASE("tokenizer: what would change the count is refused by name", "[tokenizer]") {
  auto doc = tiny_tokenizer();
  auto with = [&](const std::string& pointer, const nlohmann::json& value) {
    auto d = doc;
    d[nlohmann::json::json_pointer(pointer)] = value;
    return load_error(d);
  };
  CHECK(with("/normalizer", {{"type", "NFC"}}).find("normalizer \"NFC\" is not supported") != std::string::npos);
  CHECK(with("/model/byte_fallback", true).find("model.byte_fallback") != std::string::npos);
  CHECK(with("/model/type", "WordPiece").find("model.type: \"WordPiece\"") != std::string::npos);
  CHECK(with("/model/dropout", 0.1).find("model.dropout") != std::string::npos);
  CHECK(with("/model/continuing_subword_prefix", "##").find("continuing_subword_prefix") != std::string::npos);
  CHECK(with("/pre_tokenizer", {{"type", "Metaspace"}}).find("pre-tokenizer \"Metaspace\" is not supported") != std::string::npos);
  CHECK(with("/pre_tokenizer", nullptr).find("no ByteLevel step") != std::string::npos);
  CHECK(with("/pre_tokenizer", {{"type", "Split"}, {"pattern", {{"Regex", "("}}}, {"behavior", "Isolated"}})
            .find("pre_tokenizer.pattern: regex (") != std::string::npos);
  CHECK(with("/pre_tokenizer", {{"type", "Split"}, {"pattern", {{"Regex", "a"}}}, {"behavior", "Removed"}})
            .find("pre_tokenizer.behavior: \"Removed\"") != std::string::npos);
  CHECK(with("/model/merges", {"a zzz"}).find("model.merges[0]") != std::string::npos);
  CHECK(with("/model/merges", {"abc"}).find("expected \"A B\"") != std::string::npos);
  auto no_byte = doc;
  no_byte["model"]["vocab"].erase("\u0100");  // byte 0's spelling
  CHECK(load_error(no_byte).find("no token for byte 0") != std::string::npos);
  CHECK(with("/model/vocab/x", -4).find("model.vocab[\"x\"]") != std::string::npos);
  CHECK(with("/added_tokens", {{{"id", 1}}}).find("added_tokens[0]") != std::string::npos);
  CHECK(load_error(nlohmann::json::array()).find("tokenizer.json") != std::string::npos);
  const auto deep = BpeTokenizer::from_json(std::string(100, '['));
  CHECK_FALSE(deep);
  CHECK(deep.error().find("nested deeper") != std::string::npos);
}

TEST_CASE("prompt pool with a tokenizer: synthetic prompts are exactly their length in its tokens", "[tokenizer]") {
  const auto pool = runara::PromptPool::synthetic(300, 0.5, 40, 7, nullptr, &gpt2());
  std::string error;
  for (std::size_t i = 0; i < pool.size(); ++i) CHECK(gpt2().count(pool.at(i).text, error) == pool.at(i).tokens);
  // A tokenizer that splits every word into bytes (no merges): words are added and dropped
  // until the count is exact, even for lengths no whole number of words would give at first.
  auto bytes_only = BpeTokenizer::from_json(tiny_tokenizer().dump());
  REQUIRE(bytes_only);
  for (int length : {2, 3, 5, 17, 1000}) {
    const auto p = runara::PromptPool::synthetic(length, 0, 3, 1, nullptr, &*bytes_only);
    for (std::size_t i = 0; i < p.size(); ++i) {
      INFO("length " << length << ": \"" << p.at(i).text << "\"");
      CHECK(p.at(i).tokens == length);
      CHECK(static_cast<int>(p.at(i).text.size()) == length);  // a byte a token
    }
  }
  // No word of the synthetic vocabulary is a single byte: a clear error, not a wrong length.
  CHECK_THROWS_WITH(runara::PromptPool::synthetic(1, 0, 1, 1, nullptr, &*bytes_only),
                    Catch::Contains("a prompt of exactly 1 tokens could not be made"));
}

TEST_CASE("prompt pool with a tokenizer: file prompts and ShareGPT replies are counted with it", "[tokenizer]") {
  std::string error;
  auto lines = runara::PromptPool::from_text("Hello world\nthe of and to in\n", "lines", error, &gpt2());
  REQUIRE(lines.has_value());
  CHECK(lines->at(0).tokens == 2);
  CHECK(lines->at(1).tokens == 5);
  auto chats = runara::PromptPool::from_text(
      R"([{"conversations": [{"from": "human", "value": "Hello world"}, {"from": "gpt", "value": " the of and"}]}])",
      "sharegpt", error, &gpt2());
  REQUIRE(chats.has_value());
  CHECK(chats->at(0).tokens == 2);
  CHECK(chats->at(0).expected_output_tokens == 3);
  auto longer = runara::PromptPool::from_text(
      R"([{"conversations": [{"from": "human", "value": "x"}, {"from": "gpt", "value": "Hello world Hello world Hello world"}]}])",
      "sharegpt", error, &gpt2());
  REQUIRE(longer.has_value());
  CHECK(longer->at(0).expected_output_tokens == 6);  // bytes / 4 would say 9
}

namespace {

// The bytes GPT-2's tokens stand for: each token's characters mapped back through the byte
// table (printable Latin-1 for themselves, U+0100.. for the rest, in byte order).
std::vector<std::string> gpt2_token_bytes() {
  std::map<int, unsigned char> to_byte;  // code point -> byte
  int next = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    to_byte[printable ? b : next++] = static_cast<unsigned char>(b);
  }
  const auto doc = nlohmann::json::parse(slurp(kDir + "gpt2/tokenizer.json"));
  std::vector<std::string> out(doc["model"]["vocab"].size());
  for (const auto& [token, id] : doc["model"]["vocab"].items()) {
    std::string bytes;
    for (std::size_t i = 0; i < token.size();) {
      const auto c = static_cast<unsigned char>(token[i]);
      int cp = c, len = 1;
      if (c >= 0xC0) {
        cp = (c & 0x1F) << 6 | (static_cast<unsigned char>(token[i + 1]) & 0x3F);
        len = 2;
      }
      if (!to_byte.count(cp)) {  // the added token <|endoftext|> is plain ASCII; nothing else is outside the table
        bytes = token;
        break;
      }
      bytes += static_cast<char>(to_byte[cp]);
      i += static_cast<std::size_t>(len);
    }
    out[id.get<std::size_t>()] = bytes;
  }
  return out;
}

}  // namespace

TEST_CASE("tokenizer: any bytes encode to tokens that spell those very bytes (GPT-2, 3000 random texts)", "[tokenizer]") {
  static const std::vector<std::string> spelled = gpt2_token_bytes();
  std::mt19937_64 rng(20261124);
  const std::vector<std::string> pieces = {" ", "  ", "\n", "\r\n", "\t", "the", " of", "Hello", "'s", "'LL", "123",
                                           "4567", "é", "日本", "🦙", "\xf0\x9f", "\xff", "\xc3", "<|endoftext|>", "<|",
                                           "!!", "...", "a", "Z", "\xe2\x80\x99", "\0"};
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    const int n = static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      if (rng() % 4 == 0) text += static_cast<char>(rng() % 256);
      else text += pieces[rng() % pieces.size()];
    }
    const std::vector<int> ids = encode(gpt2(), text);
    std::string back;
    for (int id : ids) back += spelled.at(static_cast<std::size_t>(id));
    INFO("round " << round);
    REQUIRE(back == text);
  }
}
