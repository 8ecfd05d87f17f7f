// The /tokenize pre-flight end to end: `runara` running http_load.run against the built-in
// simulated server (the check's own rules: tests/unit/test_tokenize_check.cpp).
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "child_process.hpp"
#include "test_text.hpp"

using nlohmann::json;
using runara::test::contains;

namespace {

// `n` prompts of `bytes` bytes each (bytes / 4 tokens for the client without a tokenizer, and
// for the simulated server), each of its own letter.
// Lines of `bytes` / 4 three-letter words ("aaa aaa ..."): the client's estimate without a
// tokenizer (4 bytes a token) and the simulated server's count (a word a token) agree.
std::string prompt_lines(int n, std::size_t bytes) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    const std::string word(3, static_cast<char>('a' + i));
    for (std::size_t w = 0; w < bytes / 4; ++w) out += (w ? " " : "") + word;
    out += "\n";
  }
  return out;
}

}  // namespace

// Through http_load.run against the built-in simulated server: every point's results carry the
// check, the printed summary says when the counts differ, and a server without /tokenize, or a
// plain HTTP load, says why it did not run. The usage check beside it is unchanged.
TEST_CASE("http_load asks /tokenize before the load: agree, differ in results and summary, absent says why", "[http_load][tokenize_check]") {
  const std::string dir = runara::test::temp_dir("tokenize-check");
  runara::test::write_temp_file(dir, "prompts.txt", prompt_lines(12, 400));
  const std::string script = runara::test::write_temp_file(dir, "load.lua",
      "local same = http_load.fake_server{ output_tokens = 4 }\n"
      "http_load.run{ name = 'same', url = same.url, model = same.model, max_tokens = 4, requests = 4, quiet = true,\n"
      "  prompts = { file = 'prompts.txt' } }\n"
      "local skewed = http_load.fake_server{ output_tokens = 4, tokenize_skew_pct = 5 }\n"
      "http_load.run{ name = 'skewed', url = skewed.url, model = skewed.model, max_tokens = 4, requests = 4,\n"
      "  prompts = { file = 'prompts.txt' } }\n"
      "local absent = http_load.fake_server{ output_tokens = 4, tokenize = false }\n"
      "local r = http_load.run{ name = 'absent', url = absent.url, model = absent.model, endpoint = 'chat', max_tokens = 4,\n"
      "  requests = 4, quiet = true, prompts = { file = 'prompts.txt' } }\n"
      "print(r.token_count_check.tokenize.status, r.token_count_check.tokenize.why)\n"
      "http_load.run{ name = 'plain', url = same.url .. '/health', requests = 2, quiet = true }\n"
      "print(pcall(http_load.fake_server, { tokenize_skew_pct = 2000 }))\n");
  const runara::test::ChildResult r = runara::test::run_runara({"--out", dir + "/out", script}, 60);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto check_of = [&](const std::string& name) {
    return json::parse(runara::test::read_all(dir + "/out/" + name + "/results.json"))["token_count_check"];
  };
  const json same = check_of("same");
  CHECK(same["status"] == "ok");  // the usage check, as before
  CHECK(same["tokenize"]["status"] == "ok");
  CHECK(same["tokenize"]["prompts"] == 8);
  CHECK(same["tokenize"]["difference_pct"] == 0.0);
  const json skewed = check_of("skewed");
  CHECK(skewed["status"] == "ok");  // usage is not skewed: only /tokenize counts otherwise
  CHECK(skewed["tokenize"]["status"] == "differ");
  CHECK(skewed["tokenize"]["difference_pct"].get<double>() == Approx(5.0));
  CHECK(contains(r.out, "Token count check (/tokenize):           client and server differ by +5.0 % on 8 prompts (over 1 %): "
                        "give the model's tokenizer\n"));
  CHECK(check_of("absent")["tokenize"]["why"] == "the server does not offer POST /tokenize (HTTP 404)");
  CHECK(contains(r.out, "not run\tthe server does not offer POST /tokenize (HTTP 404)\n"));
  CHECK(check_of("plain")["tokenize"] == json{{"status", "not run"}, {"why", "not an OpenAI-API load"}});
  CHECK(contains(r.out, "option 'tokenize_skew_pct' must be between -100 and 1000, got 2000"));
}
