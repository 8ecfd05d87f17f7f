// The URL an OpenAI-compatible load requests: the endpoint's path is set on the parsed URL, so a
// query or fragment in the script's URL stays after the path.
#include <catch2/catch.hpp>

#include <string>

#include "load_job/openai_url.hpp"
#include "load_job/target_url.hpp"

namespace {

std::string completed(const std::string& url, const std::string& endpoint) {
  const auto parsed = runara::parse_target_url(url);
  REQUIRE(parsed);
  return runara::openai_endpoint_url(*parsed, endpoint);
}

}  // namespace

TEST_CASE("openai endpoint URL: a base URL gets /v1/<endpoint>", "[http_load_url]") {
  CHECK(completed("http://127.0.0.1:8000", "completions") == "http://127.0.0.1:8000/v1/completions");
  CHECK(completed("http://127.0.0.1:8000/", "chat") == "http://127.0.0.1:8000/v1/chat/completions");
  CHECK(completed("http://127.0.0.1:8000/v1", "chat") == "http://127.0.0.1:8000/v1/chat/completions");
  CHECK(completed("http://127.0.0.1:8000/v1/", "completions") == "http://127.0.0.1:8000/v1/completions");
  CHECK(completed("http://127.0.0.1:8000/custom/path", "chat") == "http://127.0.0.1:8000/custom/path");
}

TEST_CASE("openai endpoint URL: a query or fragment stays after the path", "[http_load_url]") {
  CHECK(completed("http://127.0.0.1:8000?x=1", "completions") == "http://127.0.0.1:8000/v1/completions?x=1");
  CHECK(completed("http://127.0.0.1:8000/?x=1&y=2", "chat") == "http://127.0.0.1:8000/v1/chat/completions?x=1&y=2");
  CHECK(completed("http://127.0.0.1:8000/v1?x=1", "chat") == "http://127.0.0.1:8000/v1/chat/completions?x=1");
  CHECK(completed("http://127.0.0.1:8000/#frag", "completions") == "http://127.0.0.1:8000/v1/completions#frag");
  CHECK(completed("http://127.0.0.1:8000/v1/?x=1#frag", "completions") == "http://127.0.0.1:8000/v1/completions?x=1#frag");
}

TEST_CASE("tokenize URL: vLLM's /tokenize at the server's root, beside /v1", "[http_load_url]") {
  CHECK(runara::tokenize_url("http://127.0.0.1:8000/v1/completions") == "http://127.0.0.1:8000/tokenize");
  CHECK(runara::tokenize_url("http://127.0.0.1:8000/v1/chat/completions") == "http://127.0.0.1:8000/tokenize");
  CHECK(runara::tokenize_url("https://gw.example/llama/v1/completions?key=1") == "https://gw.example/llama/tokenize?key=1");
  CHECK(runara::tokenize_url(completed("http://[::1]:8000/v1", "chat")) == "http://[::1]:8000/tokenize");
  // A path that does not say where the root is: no guess.
  CHECK(runara::tokenize_url("http://127.0.0.1:8000/custom/path").empty());
  CHECK(runara::tokenize_url("http://127.0.0.1:8000/v1/completions/x").empty());
}
