// The /tokenize pre-flight of an OpenAI-API load (runtime/load_job/tokenize_check.*): its rules alone
// (which prompts, the request, what an answer must be, the verdict), the check against the
// simulated vLLM (counts that agree, a skewed count, no /tokenize), against a hostile or slow
// server (bounded, "not run" with why), the target policy and the secrets' rules it shares with
// the load (a refused target is never contacted). End to end through http_load.run:
// tests/end_to_end/test_http_load_tokenize.cpp.
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "load/spec.hpp"
#include "load_job/prompt_pool.hpp"
#include "net/target_policy.hpp"
#include "load_job/tokenize_check.hpp"
#include "loopback_fixtures.hpp"
#include "runara/memory_budget.hpp"
#include "sim/fake_llm_server.hpp"
#include "test_text.hpp"

using nlohmann::json;
using runara::LoadSpec;
using runara::PromptPool;
using runara::TargetPolicy;
using runara::test::contains;

namespace {

const std::string kKey = "sk-tokenize-secret";

// Stands in for the run's redaction: the one secret masked.
std::string redact(const std::string& text) {
  std::string out = text;
  for (std::size_t at; (at = out.find(kKey)) != std::string::npos;) out.replace(at, kKey.size(), "[masked]");
  return out;
}

std::shared_ptr<const PromptPool> pool_of(const std::string& lines) {
  std::string error;
  auto pool = PromptPool::from_text(lines, "lines", error);
  REQUIRE(pool);
  return std::make_shared<const PromptPool>(std::move(*pool));
}

// `n` prompts of `bytes` / 4 three-letter words each ("aaa aaa ...", each prompt of its own
// letter): bytes / 4 tokens for the client without a tokenizer (4 bytes a token), and for the
// simulated server (a word a token).
std::string prompt_lines(int n, std::size_t bytes) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    const std::string word(3, static_cast<char>('a' + i));
    for (std::size_t w = 0; w < bytes / 4; ++w) out += (w ? " " : "") + word;
    out += "\n";
  }
  return out;
}

std::shared_ptr<TargetPolicy> own(int port) {
  auto policy = std::make_shared<TargetPolicy>();
  policy->add_reachable("127.0.0.1", port);
  return policy;
}

LoadSpec spec_for(int port, std::shared_ptr<const TargetPolicy> policy, const std::string& endpoint = "/v1/completions") {
  LoadSpec spec;
  spec.mode = runara::LoadMode::kOpenAi;
  spec.model = "fake-model";
  spec.url = "http://127.0.0.1:" + std::to_string(port) + endpoint;
  spec.url_host = "127.0.0.1";
  spec.url_port = port;
  spec.method = "POST";
  spec.policy = std::move(policy);
  return spec;
}

// Runs one check on a loop of its own to its end; its result.
json run_check(const LoadSpec& spec, std::shared_ptr<const PromptPool> pool) {
  runara_test::TestLoop loop;
  json result;
  bool done = false;
  {
    runara::TokenizeCheck check(&loop.loop, spec, std::move(pool), redact);
    check.start([&](json r) {
      result = std::move(r);
      done = true;
    });
    REQUIRE(loop.run_until([&] { return done; }, 20));
  }
  REQUIRE(loop.close() == 0);
  INFO(result.dump());
  return result;
}

// A server whose /tokenize answers what the test says, keeping each request body.
struct TokenizeServer : runara_test::LocalServer {
  std::function<void(const std::string& body, httplib::Response& res)> answer;
  std::vector<std::string> bodies;

  TokenizeServer() {
    srv.Post("/tokenize", [this](const httplib::Request& req, httplib::Response& res) {
      {
        std::lock_guard<std::mutex> lock(mu);
        bodies.push_back(req.body);
      }
      answer(req.body, res);
    });
    start();
  }
};

// An honest answer: the prompt counted as the client counts it without a tokenizer.
void honest(const std::string& body, httplib::Response& res) {
  const std::size_t n = (json::parse(body)["prompt"].get<std::string>().size() + 3) / 4;
  res.set_content(json{{"count", n}, {"max_model_len", 4096}, {"tokens", std::vector<int>(n, 7)}}.dump(), "application/json");
}

}  // namespace

TEST_CASE("tokenize check: up to 8 prompts spread over the pool, the same each time, none too long", "[tokenize_check]") {
  CHECK(runara::tokenize_sample(*pool_of("one\ntwo\nthree\n")) == std::vector<std::size_t>{0, 1, 2});
  const PromptPool synthetic = PromptPool::synthetic(16, 0, 1000, 7);
  CHECK(runara::tokenize_sample(synthetic) == std::vector<std::size_t>{0, 125, 250, 375, 500, 625, 750, 875});
  // A prompt whose answer would list more than 65536 tokens is not asked about.
  const std::string longest = std::string(4 * 65536, 'x') + "\n", too_long = std::string(4 * 65536 + 1, 'y') + "\n";
  CHECK(runara::tokenize_sample(*pool_of(longest + too_long + "short\n")) == std::vector<std::size_t>{0, 2});
  CHECK(runara::tokenize_sample(*pool_of(too_long)).empty());
}

TEST_CASE("tokenize check: the request is vLLM's prompt form, without special tokens", "[tokenize_check]") {
  CHECK(runara::tokenize_body("meta-llama/Llama-3.3-70B-Instruct", "Say \"hi\"\n") ==
        R"({"model":"meta-llama/Llama-3.3-70B-Instruct","prompt":"Say \"hi\"\n","add_special_tokens":false})");
  CHECK(runara::tokenize_answer_limit(0) == 65536);
  CHECK(runara::tokenize_answer_limit(1000) == 65536 + 64000);
}

TEST_CASE("tokenize check: an answer's count, and each answer that counts nothing says why", "[tokenize_check]") {
  std::string why;
  const auto count = [&](long status, const std::string& body, std::size_t max_tree = 0) {
    why.clear();
    return runara::tokenize_answer_count(status, body, max_tree, why);
  };
  CHECK(count(200, R"({"count":3,"max_model_len":4096,"tokens":[101,102,103],"token_strs":null})") == 3);
  CHECK(count(200, R"({"count":0,"max_model_len":4096,"tokens":[]})") == 0);
  CHECK(count(200, R"({"count":5})") == 5);  // `tokens` is checked only when it is there
  CHECK(why.empty());

  CHECK_FALSE(count(200, R"({"count":3,"tokens":[1,2]})"));
  CHECK(why == "the answer of /tokenize says \"count\": 3 but its \"tokens\" is not a list of that many");
  for (const std::string body : {R"({"count":-1})", R"({"count":"3"})", R"({"count":2.5})", R"([3])", R"({"tokens":[1]})",
                                 R"({"count":2000000000000})"}) {
    INFO(body);
    CHECK_FALSE(count(200, body));
    CHECK(why == "the answer of /tokenize has no whole-number \"count\" (vLLM's is {\"count\", \"max_model_len\", \"tokens\"})");
  }
  CHECK_FALSE(count(200, R"({"count": 3, "tokens": [1, 2,)"));
  CHECK(why.rfind("the answer of /tokenize is not valid JSON: ", 0) == 0);
  CHECK_FALSE(count(200, std::string(100, '[') + std::string(100, ']')));
  CHECK(why == "the answer of /tokenize is nested deeper than 64 levels (at byte 64)");
  CHECK_FALSE(count(200, R"({"count":4,"tokens":[0,0,0,0]})", 100));
  CHECK(why.rfind("the answer of /tokenize would take about 1 MiB once parsed, more than the 1 MiB allowed", 0) == 0);

  // FastAPI's answer to a route it does not have, or has for another method only.
  CHECK_FALSE(count(404, R"({"detail":"Not Found"})"));
  CHECK(why == "the server does not offer POST /tokenize (HTTP 404)");
  CHECK_FALSE(count(405, R"({"detail":"Method Not Allowed"})"));
  CHECK(why == "the server does not offer POST /tokenize (HTTP 405)");
  CHECK_FALSE(count(404, "<html>nothing here</html>"));
  CHECK(why == "the server does not offer POST /tokenize (HTTP 404)");
  // vLLM's own errors carry a message, quoted (printable, at most 200 bytes).
  CHECK_FALSE(count(404, R"({"error":{"message":"The model `x` does not exist.","type":"NotFoundError","param":null,"code":404}})"));
  CHECK(why == "the server does not serve that model (HTTP 404: The model `x` does not exist.); its GET /v1/models lists the ones it serves");
  CHECK_FALSE(count(400, R"({"object":"error","message":"bad\u001b[31m request","code":400})"));
  CHECK(why == "/tokenize answered HTTP 400: bad?[31m request");
  CHECK_FALSE(count(500, "Internal Server Error"));
  CHECK(why == "/tokenize answered HTTP 500");
}

TEST_CASE("tokenize check: within 1 % the counts agree, beyond they differ", "[tokenize_check]") {
  const json agree = runara::tokenize_verdict(8, 1000, 1010);
  CHECK(agree["status"] == "ok");
  CHECK(agree["ok"] == true);
  CHECK(agree["prompts"] == 8);
  CHECK(agree["client_tokens"] == 1000);
  CHECK(agree["server_tokens"] == 1010);
  CHECK(agree["difference_pct"].get<double>() == Approx(1.0));
  CHECK(agree["tolerance_pct"] == 1.0);
  const json more = runara::tokenize_verdict(8, 1000, 1011);
  CHECK(more["status"] == "differ");
  CHECK(more["ok"] == false);
  const json fewer = runara::tokenize_verdict(2, 1000, 800);
  CHECK(fewer["status"] == "differ");
  CHECK(fewer["difference_pct"].get<double>() == Approx(-20.0));
  CHECK(runara::tokenize_not_run("why not") == json{{"status", "not run"}, {"why", "why not"}});
}

TEST_CASE("tokenize check: loads it cannot check say so", "[tokenize_check]") {
  const auto pool = pool_of("one\n");
  LoadSpec spec = spec_for(8000, nullptr);
  CHECK(runara::tokenize_unavailable(spec, pool.get(), false).empty());
  CHECK(runara::tokenize_unavailable(spec, pool.get(), true) ==
        "the load ran on the machine itself (`on`): /tokenize is asked only by a load sent from here");
  CHECK(runara::tokenize_unavailable(spec, nullptr, false) == "the load has no prompts");
  spec.url = "http://127.0.0.1:8000/generate";
  CHECK(runara::tokenize_unavailable(spec, pool.get(), false) ==
        "the URL's path does not end in /v1/completions or /v1/chat/completions: where the server's /tokenize is cannot be told");
  spec.mode = runara::LoadMode::kHttp;
  CHECK(runara::tokenize_unavailable(spec, nullptr, false) == "not an OpenAI-API load");
}

TEST_CASE("tokenize check against the simulated vLLM: counts that agree, a skewed count, no /tokenize", "[tokenize_check]") {
  const auto pool = pool_of(prompt_lines(12, 400));  // 100 tokens each, as the client and the fake count
  runara::FakeLlmConfig config;
  std::string endpoint = "/v1/completions";
  SECTION("the same count") {}
  SECTION("a chat load asks in the prompt form too: the template's tokens are not the tokenizer's") { endpoint = "/v1/chat/completions"; }
  runara::FakeLlmServer server(config);
  const int port = server.start(0);
  REQUIRE(port > 0);
  const json r = run_check(spec_for(port, own(port), endpoint), pool);
  CHECK(r["status"] == "ok");
  CHECK(r["ok"] == true);
  CHECK(r["prompts"] == 8);
  CHECK(r["client_tokens"] == 800);
  CHECK(r["server_tokens"] == 800);
  CHECK(r["difference_pct"] == 0.0);
  CHECK(r["url"] == "http://127.0.0.1:" + std::to_string(port) + "/tokenize");
  CHECK(server.stats().tokenize_requests == 8);
  CHECK(server.stats().requests_served == 0);  // a load's own count is left alone
}

TEST_CASE("tokenize check: a server counting over 1 % apart differs; one without /tokenize did not run", "[tokenize_check]") {
  const auto pool = pool_of(prompt_lines(12, 400));
  runara::FakeLlmConfig config;
  SECTION("5 % more: differ") {
    config.tokenize_skew_pct = 5;
    runara::FakeLlmServer server(config);
    const int port = server.start(0);
    const json r = run_check(spec_for(port, own(port)), pool);
    CHECK(r["status"] == "differ");
    CHECK(r["ok"] == false);
    CHECK(r["server_tokens"] == 840);
    CHECK(r["difference_pct"].get<double>() == Approx(5.0));
  }
  SECTION("exactly 1 % more: still within") {
    config.tokenize_skew_pct = 1;
    runara::FakeLlmServer server(config);
    const int port = server.start(0);
    const json r = run_check(spec_for(port, own(port)), pool);
    CHECK(r["status"] == "ok");
    CHECK(r["server_tokens"] == 808);
  }
  SECTION("no /tokenize (404, as vLLM without the route)") {
    config.tokenize = false;
    runara::FakeLlmServer server(config);
    const int port = server.start(0);
    const json r = run_check(spec_for(port, own(port)), pool);
    CHECK(r == json{{"status", "not run"}, {"why", "the server does not offer POST /tokenize (HTTP 404)"},
                    {"url", "http://127.0.0.1:" + std::to_string(port) + "/tokenize"}});
    CHECK(server.stats().tokenize_requests == 8);
  }
}

TEST_CASE("tokenize check: the exact request with the load's headers, only where the load's rules let it go", "[tokenize_check]") {
  TokenizeServer server;
  server.answer = honest;
  const std::string p = std::to_string(server.port);
  LoadSpec spec = spec_for(server.port, nullptr);
  spec.headers = std::make_shared<const std::vector<std::string>>(
      std::vector<std::string>{"Authorization: Bearer " + kKey, "X-Trace: 7"});
  SECTION("the run's own endpoint: asked, the key along (a secret may go to the run's own)") {
    auto policy = own(server.port);
    policy->bind_secret("K", {}, /*plain_http=*/true);
    spec.policy = policy;
    const json r = run_check(spec, pool_of("one two three\n"));
    CHECK(r["status"] == "ok");
    CHECK(r["server_tokens"] == 4);
    CHECK(server.requests() == std::vector<std::string>{"POST /tokenize"});
    std::lock_guard<std::mutex> lock(server.mu);
    REQUIRE(server.bodies.size() == 1);
    CHECK(server.bodies[0] == R"({"model":"fake-model","prompt":"one two three","add_special_tokens":false})");
    CHECK(server.auth == std::vector<std::string>{"Bearer " + kKey});
  }
  SECTION("granted, but the load's secret is not bound to it: refused before connecting") {
    auto policy = std::make_shared<TargetPolicy>();
    policy->add_grant("127.0.0.1:" + p);
    policy->bind_secret("K", {}, /*plain_http=*/true);
    spec.policy = policy;
    const json r = run_check(spec, pool_of("one two three\n"));
    CHECK(r["status"] == "not run");
    CHECK(contains(r["why"].get<std::string>(), "refusing to send secret K to 127.0.0.1:" + p));
    CHECK(server.requests().empty());
  }
  SECTION("neither the run's nor granted: refused before connecting") {
    spec.policy = std::make_shared<TargetPolicy>();
    const json r = run_check(spec, pool_of("one\ntwo\nthree\n"));
    CHECK(r["status"] == "not run");
    CHECK(contains(r["why"].get<std::string>(), "refusing to connect to 127.0.0.1:" + p + " (loopback)"));
    CHECK(server.requests().empty());
  }
}

TEST_CASE("tokenize check: a huge, malformed, echoing or slow answer is bounded and the check did not run", "[tokenize_check]") {
  TokenizeServer server;
  LoadSpec spec = spec_for(server.port, own(server.port));
  const auto pool = pool_of("one two three\n");  // 4 tokens: an answer of up to 64 KiB + 256 bytes
  std::string why;
  SECTION("larger than its limit: cut off as it arrives") {
    server.answer = [](const std::string&, httplib::Response& res) { res.set_content(std::string(10 << 20, ' ') + "{}", "application/json"); };
    why = run_check(spec, pool)["why"];
    CHECK(why == "/tokenize: response body larger than 65792 bytes");
  }
  SECTION("within its limit, but a document far larger once parsed: refused before it is built") {
    server.answer = [](const std::string&, httplib::Response& res) {
      res.set_content(json{{"count", 30000}, {"tokens", std::vector<int>(30000, 0)}}.dump(), "application/json");
    };
    why = run_check(spec, pool)["why"];
    CHECK(why.rfind("the answer of /tokenize would take about ", 0) == 0);
  }
  SECTION("malformed") {
    server.answer = [](const std::string&, httplib::Response& res) { res.set_content(R"({"count": 4, "tokens": [1, 2,)", "application/json"); };
    why = run_check(spec, pool)["why"];
    CHECK(why.rfind("the answer of /tokenize is not valid JSON: ", 0) == 0);
  }
  SECTION("an error that echoes the key: masked") {
    server.answer = [](const std::string&, httplib::Response& res) {
      res.status = 401;
      res.set_content(R"({"error":{"message":"bad key )" + kKey + R"(","type":"Unauthorized","code":401}})", "application/json");
    };
    why = run_check(spec, pool)["why"];
    CHECK(why == "/tokenize answered HTTP 401: bad key [masked]");
  }
  SECTION("no answer within the load's own, shorter timeout") {
    spec.timeout_s = 0.3;
    server.answer = [&server](const std::string& body, httplib::Response& res) {
      server.slow(5);
      honest(body, res);
    };
    const auto t0 = std::chrono::steady_clock::now();
    why = run_check(spec, pool)["why"];
    CHECK(why.rfind("/tokenize: no answer within 0.3 s (", 0) == 0);
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(3));
    server.release = true;
  }
  SECTION("the run's memory limit has no room for the answers: not asked") {
    spec.memory = std::make_shared<runara::MemoryBudget>(64 * 1024);
    server.answer = honest;
    why = run_check(spec, pool)["why"];
    CHECK(why.rfind("the /tokenize check (its requests and their answers) needs about 1 MiB", 0) == 0);
    CHECK(contains(why, "(raise it with --max-memory)"));
    CHECK(server.requests().empty());
    CHECK(spec.memory->reserved() == 0);
  }
  CHECK_FALSE(contains(why, kKey));
}
