// Prompt pool: synthetic prompt lengths, words and prefixes; the lines, JSON
// Lines and ShareGPT formats, auto-detection and error messages; the seeded
// per-request choice (deterministic, uniform, thread-independent).
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "load_job/prompt_pool.hpp"

using runara::PromptPool;

namespace {

std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

std::string first_words(const std::string& text, int n) {
  auto words = words_of(text);
  std::string out;
  for (int i = 0; i < n && i < static_cast<int>(words.size()); ++i) out += words[i] + " ";
  return out;
}

PromptPool parse_ok(std::string_view text, std::string_view format) {
  std::string error;
  auto pool = PromptPool::from_text(text, format, error);
  INFO("error: " << error);
  REQUIRE(pool.has_value());
  return std::move(*pool);
}

std::string parse_error(std::string_view text, std::string_view format) {
  std::string error;
  auto pool = PromptPool::from_text(text, format, error);
  CHECK_FALSE(pool.has_value());
  return error;
}

std::vector<std::string> texts(const PromptPool& pool) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < pool.size(); ++i) out.push_back(pool.at(i).text);
  return out;
}

// A small ShareGPT dump: a normal conversation, one opening with the model,
// one too short to use, one without a reply after the human turn.
constexpr std::string_view kShareGpt = R"([
  {"id": "a", "conversations": [
    {"from": "human", "value": "What is the capital of France?"},
    {"from": "gpt", "value": "The capital of France is Paris."},
    {"from": "human", "value": "And of Italy?"},
    {"from": "gpt", "value": "Rome."}]},
  {"id": "b", "conversations": [
    {"from": "gpt", "value": "Hello! How can I help?"},
    {"from": "human", "value": "Write a haiku about rain."},
    {"from": "gpt", "value": "Soft rain on the roof"}]},
  {"id": "c", "conversations": [{"from": "human", "value": "Lonely question"}]},
  {"id": "d", "conversations": [
    {"from": "human", "value": "First"}, {"from": "human", "value": "Second"}]}
])";

}  // namespace

TEST_CASE("Prompt pool: synthetic lengths stay in range and average the target", "[prompt_pool]") {
  auto pool = PromptPool::synthetic(200, 0.25, 2000, 7);  // lengths in [150, 250]
  REQUIRE(pool.size() == 2000);
  std::set<std::string_view> vocabulary(runara::synthetic_vocabulary().begin(),
                                        runara::synthetic_vocabulary().end());
  double sum = 0;
  int lo = 1 << 30, hi = 0;
  for (std::size_t i = 0; i < pool.size(); ++i) {
    const auto& p = pool.at(i);
    auto words = words_of(p.text);
    CHECK(static_cast<int>(words.size()) == p.tokens);  // one word, one token
    for (const auto& w : words) CHECK(vocabulary.count(w) == 1);
    CHECK(p.expected_output_tokens == -1);
    lo = std::min(lo, p.tokens);
    hi = std::max(hi, p.tokens);
    sum += p.tokens;
  }
  CHECK(lo >= 150);
  CHECK(lo <= 153);  // the whole range is used
  CHECK(hi <= 250);
  CHECK(hi >= 247);
  CHECK(sum / 2000 == Approx(200).epsilon(0.01));
}

TEST_CASE("Prompt pool: synthetic edge lengths", "[prompt_pool]") {
  for (const auto& p : texts(PromptPool::synthetic(64, 0.0, 50, 1)))
    CHECK(words_of(p).size() == 64);
  // round(1 * 0.1) = 0 is raised to the minimum of one token.
  auto tiny = PromptPool::synthetic(1, 0.9, 500, 2);
  std::set<int> lengths;
  for (std::size_t i = 0; i < tiny.size(); ++i) lengths.insert(tiny.at(i).tokens);
  CHECK(lengths == std::set<int>{1, 2});
  CHECK_THROWS_AS(PromptPool::synthetic(0, 0.1, 10, 1), std::invalid_argument);
  CHECK_THROWS_AS(PromptPool::synthetic(10, 1.0, 10, 1), std::invalid_argument);
  CHECK_THROWS_AS(PromptPool::synthetic(10, -0.1, 10, 1), std::invalid_argument);
  CHECK_THROWS_AS(PromptPool::synthetic(10, 0.1, 0, 1), std::invalid_argument);
}

TEST_CASE("Prompt pool: synthetic vocabulary is 64 distinct lowercase words", "[prompt_pool]") {
  auto vocabulary = runara::synthetic_vocabulary();
  CHECK(vocabulary.size() == 64);
  CHECK(std::set<std::string_view>(vocabulary.begin(), vocabulary.end()).size() == 64);
  for (auto w : vocabulary)
    CHECK(std::all_of(w.begin(), w.end(), [](char c) { return c >= 'a' && c <= 'z'; }));
}

TEST_CASE("Prompt pool: every synthetic prompt starts with its own prefix", "[prompt_pool]") {
  auto pool = PromptPool::synthetic(16, 0.0, 5000, 11);
  std::set<std::string> prefixes, openers;
  for (const auto& t : texts(pool)) {
    prefixes.insert(first_words(t, 4));
    openers.insert(first_words(t, 1));
  }
  CHECK(prefixes.size() == 5000);
  // Prompts differ from their very first token on, not only deep inside.
  CHECK(openers.size() == 64);
  // Guaranteed, not just likely: all 64^2 two-word prompts, none repeated
  // (random prefixes would collide about 2,000 times).
  auto two_words = texts(PromptPool::synthetic(2, 0.0, 64 * 64, 12));
  CHECK(std::set<std::string>(two_words.begin(), two_words.end()).size() == 64 * 64);
}

TEST_CASE("Prompt pool: synthetic prompts are deterministic for a seed", "[prompt_pool]") {
  auto a = texts(PromptPool::synthetic(100, 0.5, 300, 42));
  auto b = texts(PromptPool::synthetic(100, 0.5, 300, 42));
  auto c = texts(PromptPool::synthetic(100, 0.5, 300, 43));
  CHECK(a == b);
  int same = 0;
  for (std::size_t i = 0; i < a.size(); ++i) same += a[i] == c[i];
  CHECK(same == 0);
}

TEST_CASE("Prompt pool: lines format", "[prompt_pool]") {
  auto pool = parse_ok("first prompt\n\n   \nsecond prompt\r\nthird", "lines");
  REQUIRE(pool.size() == 3);
  CHECK(pool.at(0).text == "first prompt");
  CHECK(pool.at(1).text == "second prompt");
  CHECK(pool.at(2).text == "third");
  CHECK(pool.at(0).tokens == 3);  // 12 bytes / 4
  CHECK(pool.at(2).tokens == 2);  // 5 bytes / 4, rounded up
  CHECK(pool.at(0).expected_output_tokens == -1);
}

TEST_CASE("Prompt pool: JSON Lines format", "[prompt_pool]") {
  auto pool = parse_ok(
      "{\"prompt\": \"a\"}\n"
      "{\"text\": \"hello world\", \"id\": 3}\n"
      "\n"
      "\"a plain JSON string\"\n"
      "{\"prompt\": \"preferred\", \"text\": \"not this\"}\n"
      "{\"prompt\": 5, \"text\": \"text when prompt is no string\"}\n"
      "{\"prompt\": \"\"}\n",
      "jsonl");
  CHECK(texts(pool) == std::vector<std::string>{"a", "hello world", "a plain JSON string",
                                                "preferred", "text when prompt is no string"});
  CHECK(pool.at(0).tokens == 1);  // never below one
  CHECK(pool.at(1).tokens == 3);
}

TEST_CASE("Prompt pool: ShareGPT format", "[prompt_pool]") {
  auto pool = parse_ok(kShareGpt, "sharegpt");
  REQUIRE(pool.size() == 3);
  CHECK(pool.at(0).text == "What is the capital of France?");
  CHECK(pool.at(0).tokens == 8);                  // 30 bytes
  CHECK(pool.at(0).expected_output_tokens == 8);  // 31 bytes
  CHECK(pool.at(1).text == "Write a haiku about rain.");
  CHECK(pool.at(1).tokens == 7);                  // 25 bytes
  CHECK(pool.at(1).expected_output_tokens == 6);  // 21 bytes
  CHECK(pool.at(2).text == "First");
  CHECK(pool.at(2).expected_output_tokens == -1);  // followed by another human turn
}

TEST_CASE("Prompt pool: auto-detects the format", "[prompt_pool]") {
  CHECK(parse_ok(std::string("\n  ") + std::string(kShareGpt), "").size() == 3);
  CHECK(texts(parse_ok("\n{\"prompt\": \"x\"}\n\"y\"\n", "")) ==
        std::vector<std::string>{"x", "y"});
  CHECK(texts(parse_ok("\"quoted\"", "")) == std::vector<std::string>{"quoted"});
  CHECK(texts(parse_ok("plain {\"prompt\": 1}\nsecond", "")) ==
        std::vector<std::string>{"plain {\"prompt\": 1}", "second"});
  CHECK(texts(parse_ok("\xEF\xBB\xBF{\"prompt\": \"after a BOM\"}", "")) ==
        std::vector<std::string>{"after a BOM"});
}

TEST_CASE("Prompt pool: bad input is named by line or conversation", "[prompt_pool]") {
  auto e = parse_error("{\"prompt\": \"ok\"}\n\n{\"x\":1}\n", "jsonl");
  CHECK(e.find("line 3: expected a JSON object with a \"prompt\"") == 0);
  CHECK(e.find("got: {\"x\":1}") != std::string::npos);
  e = parse_error("{\"prompt\": \"ok\"}\n{oops", "");
  CHECK(e.find("line 2: not valid JSON") == 0);
  e = parse_error("[1, 2]\n", "jsonl");
  CHECK(e.find("line 1:") == 0);

  e = parse_error(R"([{"conversations": []}, {"turns": []}])", "");
  CHECK(e.find("conversation at index 1: expected an object with a \"conversations\" array") == 0);
  e = parse_error(R"([{"conversations": [{"from": "human", "value": "q"}, {"from": "gpt"}]}])", "");
  CHECK(e.find("conversation at index 0, turn 1: expected") == 0);
  e = parse_error("[{\"conversations\": [}", "sharegpt");
  CHECK(e.find("not valid JSON") != std::string::npos);
  CHECK(e.find("line 1") != std::string::npos);
  CHECK(parse_error("{}", "sharegpt").find("expected a JSON array") != std::string::npos);

  CHECK(parse_error("", "") == "no prompts found in the lines text");
  CHECK(parse_error("\n  \n", "lines") == "no prompts found in the lines text");
  CHECK(parse_error("[]", "") == "no prompts found in the sharegpt text");
  CHECK(parse_error(R"([{"conversations": [{"from": "human", "value": "q"}]}])", "") ==
        "no prompts found in the sharegpt text");
  CHECK(parse_error("x", "csv").find("unknown prompt format \"csv\"") == 0);
}

TEST_CASE("Prompt pool: pick depends on (seed, index) only, not order or thread", "[prompt_pool]") {
  auto pool = PromptPool::synthetic(8, 0.0, 50, 3);
  constexpr std::uint64_t kN = 4000;
  std::vector<const runara::Prompt*> forward(kN), backward(kN), threaded(kN);
  for (std::uint64_t i = 0; i < kN; ++i) forward[i] = &pool.pick(i, 99);
  for (std::uint64_t i = kN; i-- > 0;) backward[i] = &pool.pick(i, 99);
  std::vector<std::thread> threads;
  for (std::uint64_t t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (std::uint64_t i = t; i < kN; i += 4) threaded[i] = &pool.pick(i, 99);
    });
  for (auto& th : threads) th.join();
  CHECK(forward == backward);
  CHECK(forward == threaded);
  int same = 0;
  for (std::uint64_t i = 0; i < kN; ++i) same += &pool.pick(i, 100) == forward[i];
  CHECK(same < 2 * static_cast<int>(kN / 50));  // another seed: agreement only by chance (~1/50)
}

TEST_CASE("Prompt pool: pick spreads requests uniformly", "[prompt_pool]") {
  auto pool = PromptPool::synthetic(8, 0.0, 20, 5);
  constexpr int kRequests = 200000;
  std::vector<int> hits(pool.size());
  for (int i = 0; i < kRequests; ++i) ++hits[&pool.pick(i, 1234) - &pool.at(0)];
  const double expected = static_cast<double>(kRequests) / pool.size();
  double chi2 = 0;
  for (int h : hits) chi2 += (h - expected) * (h - expected) / expected;
  INFO("chi-square with 19 degrees of freedom: " << chi2);
  CHECK(chi2 < 45);  // P(chi2 > 45) ~ 0.0007 for a uniform choice
}

// A hostile prompts file: 100,000 levels of nesting used to overflow the C stack (SIGSEGV) in
// the recursive dump() of the error excerpt.
TEST_CASE("Prompt pool: deeply nested JSON is refused with a clear error", "[prompt_pool]") {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  auto e = parse_error("[" + deep + "]", "sharegpt");
  CHECK(e.find("ShareGPT: nested deeper than 64 levels (at byte 64)") == 0);
  e = parse_error("[{\"conversations\": " + deep + "}]", "");
  CHECK(e.find("ShareGPT: nested deeper than 64 levels") == 0);
  e = parse_error("{\"prompt\": \"ok\"}\n{\"prompt\": " + deep + "}\n", "jsonl");
  CHECK(e.find("line 2: nested deeper than 64 levels") == 0);
}

TEST_CASE("Prompt pool: shared prefixes are shared whole and the suffixes are each their own", "[prompt_pool]") {
  constexpr int kPrefix = 48, kLength = 64, kPrefixes = 3;
  auto pool = PromptPool::synthetic(kLength, 0.0, 300, 5, nullptr, nullptr, runara::SharedPrefixes{kPrefix, kPrefixes});
  std::set<std::string> prefixes, suffix_openers;
  for (std::size_t i = 0; i < pool.size(); ++i) {
    const std::vector<std::string> words = words_of(pool.at(i).text);
    REQUIRE(words.size() == kLength);  // prefix and suffix together: the length asked, one token a word
    CHECK(pool.at(i).tokens == kLength);
    const std::string prefix = first_words(pool.at(i).text, kPrefix);
    prefixes.insert(prefix);
    // Prompt i holds prefix i % K: the same one as prompt i + K.
    if (i + kPrefixes < pool.size()) CHECK(first_words(pool.at(i + kPrefixes).text, kPrefix) == prefix);
    std::string opener;
    for (int w = kPrefix; w < kPrefix + 4; ++w) opener += words[static_cast<std::size_t>(w)] + " ";
    suffix_openers.insert(opener);
  }
  CHECK(prefixes.size() == kPrefixes);
  CHECK(suffix_openers.size() == pool.size());  // no two suffixes start alike: nothing past the prefix is shared
  // The default stays as it was: prompts differ from their first words.
  auto plain = PromptPool::synthetic(kLength, 0.0, 300, 5);
  std::set<std::string> openers;
  for (const auto& t : texts(plain)) openers.insert(first_words(t, 4));
  CHECK(openers.size() == 300);
}

TEST_CASE("Prompt pool: shared prefixes refuse a prefix as long as the prompt", "[prompt_pool]") {
  using runara::SharedPrefixes;
  CHECK_THROWS_WITH(PromptPool::synthetic(64, 0.0, 10, 1, nullptr, nullptr, SharedPrefixes{64, 2}),
                    Catch::Contains("prefix_tokens (64) must be below the shortest prompt's length (64 tokens)"));
  CHECK_THROWS_WITH(PromptPool::synthetic(100, 0.5, 10, 1, nullptr, nullptr, SharedPrefixes{60, 2}),
                    Catch::Contains("below the shortest prompt's length (50 tokens)"));
  CHECK_THROWS_AS(PromptPool::synthetic(64, 0.0, 10, 1, nullptr, nullptr, SharedPrefixes{16, 0}), std::invalid_argument);
}
