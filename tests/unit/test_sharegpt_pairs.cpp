// vLLM's ShareGPT pair rules (load_job/sharegpt_pairs.hpp): the length limits, the minimum output
// check skipped for a fixed length, conversations without a reply, and what is kept in order.
#include <catch2/catch.hpp>

#include <string>

#include "load_job/prompt_pool.hpp"
#include "load_job/sharegpt_pairs.hpp"

using runara::PromptPool;
using runara::ShareGptPairs;

TEST_CASE("ShareGPT pairs: vLLM's limits on prompt and output lengths", "[prompt_pool]") {
  using runara::sharegpt_pair_valid;
  CHECK(sharegpt_pair_valid(4, 4, false));
  CHECK_FALSE(sharegpt_pair_valid(3, 100, false));     // prompt < 4
  CHECK_FALSE(sharegpt_pair_valid(3, 100, true));
  CHECK_FALSE(sharegpt_pair_valid(100, 3, false));     // output < 4
  CHECK(sharegpt_pair_valid(100, 3, true));            // ... not checked for a fixed length
  CHECK(sharegpt_pair_valid(1024, 1024, false));       // prompt <= 1024, total <= 2048
  CHECK_FALSE(sharegpt_pair_valid(1025, 4, false));    // prompt > 1024
  CHECK_FALSE(sharegpt_pair_valid(1025, 4, true));
  CHECK_FALSE(sharegpt_pair_valid(1000, 1049, false)); // total > 2048
  CHECK_FALSE(sharegpt_pair_valid(1000, 1049, true));
}

namespace {

// Prompts of 10, 3, 5 and 6 estimated tokens (bytes / 4 rounded up); replies of 20, 10, 2 and
// none. The last prompt is long: 1000 tokens, its reply 1100 (over 2048 together).
std::string conversations() {
  const std::string long_prompt(4000, 'p'), long_reply(4400, 'r');
  return R"([
    {"conversations": [{"from": "human", "value": "the rain falls softly on quiet hills wh."},
                       {"from": "gpt", "value": "softly on quiet hills while rivers carry light toward distant seas the rain fal."}]},
    {"conversations": [{"from": "human", "value": "Hi there!"}, {"from": "gpt", "value": "a reply of forty bytes, give or take it."}]},
    {"conversations": [{"from": "human", "value": "a prompt of 20 bytes"}, {"from": "gpt", "value": "Sure."}]},
    {"conversations": [{"from": "human", "value": "a question without reply"}, {"from": "human", "value": "Anyone?"}]},
    {"conversations": [{"from": "human", "value": ")" + long_prompt + R"("}, {"from": "gpt", "value": ")" + long_reply + R"("}]}
  ])";
}

PromptPool read_pool() {
  std::string error;
  auto pool = PromptPool::from_text(conversations(), "", error);
  REQUIRE(pool);
  REQUIRE(pool->format() == "sharegpt");
  REQUIRE(pool->size() == 5);
  return *pool;
}

}  // namespace

TEST_CASE("ShareGPT pairs: each reply's own length, pairs vLLM would not send dropped", "[prompt_pool]") {
  const PromptPool pool = read_pool();
  ShareGptPairs counts;
  auto kept = runara::keep_sharegpt_pairs(pool, -1, counts);
  REQUIRE(kept);
  REQUIRE(kept->size() == 1);
  CHECK(kept->at(0).tokens == 10);
  CHECK(kept->at(0).expected_output_tokens == 20);
  CHECK(kept->format() == "sharegpt");
  CHECK(counts.kept == 1);
  CHECK(counts.dropped == 4);
}

TEST_CASE("ShareGPT pairs: a fixed output length keeps short replies and replyless prompts", "[prompt_pool]") {
  const PromptPool pool = read_pool();
  ShareGptPairs counts;
  auto kept = runara::keep_sharegpt_pairs(pool, 16, counts);
  REQUIRE(kept);
  REQUIRE(kept->size() == 4);  // all but the 3-token prompt; the long one: 1000 + 16 <= 2048
  CHECK(kept->at(0).tokens == 10);
  CHECK(kept->at(1).tokens == 5);
  CHECK(kept->at(2).tokens == 6);
  CHECK(kept->at(3).tokens == 1000);
  CHECK(counts.dropped == 1);
  auto longer = runara::keep_sharegpt_pairs(pool, 1049, counts);  // the long one: 1000 + 1049 > 2048
  REQUIRE(longer);
  CHECK(longer->size() == 3);
}

TEST_CASE("ShareGPT pairs: none left is an error that says why", "[prompt_pool]") {
  std::string error;
  auto pool = PromptPool::from_text(R"([{"conversations": [{"from": "human", "value": "Hi"}, {"from": "gpt", "value": "Hello there, friend."}]}])", "sharegpt", error);
  REQUIRE(pool);
  ShareGptPairs counts;
  const auto none = runara::keep_sharegpt_pairs(*pool, -1, counts);
  CHECK_FALSE(none);
  CHECK(none.error().find("none of its 1 conversations is a pair vLLM's ShareGPT dataset would send (a prompt of 4 to 1024 tokens") == 0);
  CHECK(none.error().find("or give max_tokens") != std::string::npos);
}
