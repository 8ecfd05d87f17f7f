// Fake vLLM server driven by libcurl: wire format against the recorded vLLM
// streams, token counts, usage, timing (loose bounds), keep-alive, error
// injection, concurrency, the side endpoints.
#include <catch2/catch.hpp>

#include <curl/curl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "loopback_socket.hpp"
#include "test_fixtures.hpp"
#include "http/openai_stream.hpp"
#include "http/sse_parser.hpp"
#include "sim/fake_llm_server.hpp"
#include "sim/fake_llm_tokens.hpp"

using namespace runara;
using Clock = std::chrono::steady_clock;

using runara::test::connect_loopback;
using runara::test::sse_fixture;

namespace {

struct CurlInit {
  CurlInit() { curl_global_init(CURL_GLOBAL_DEFAULT); }
};

struct Result {
  CURLcode rc = CURLE_OK;
  long status = 0;
  std::string body;
  std::string content_type;
  long new_connections = 0;
  std::vector<SseEvent> events;
  std::vector<double> event_ms;  // arrival of each event since the request began
  std::vector<OpenAiStreamEvent> parsed;
  OpenAiStreamSummary summary;
  // Token-carrying event arrival times.
  std::vector<double> token_ms() const {
    std::vector<double> out;
    for (size_t i = 0; i < parsed.size(); ++i)
      if (parsed[i].has_token) out.push_back(event_ms[i]);
    return out;
  }
};

struct Transfer {
  Result res;
  Clock::time_point t0;
  SseParser parser;
  Transfer()
      : parser([this](const SseEvent& e) {
          res.events.push_back(e);
          res.event_ms.push_back(
              std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
          OpenAiStreamEvent ev;
          interpret_openai_event(e, ev);
          res.summary.add(ev);
          res.parsed.push_back(std::move(ev));
        }) {}
};

size_t on_data(char* p, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  t->res.body.append(p, size * n);
  t->parser.feed(p, size * n);
  return size * n;
}

// Sets up h for one request; body empty means GET.
void setup(CURL* h, Transfer& t, const std::string& url, const std::string& body,
           curl_slist* headers) {
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 10000L);
  if (!body.empty()) {
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
    curl_easy_setopt(h, CURLOPT_COPYPOSTFIELDS, body.c_str());
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  } else {
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  }
}

void collect(CURL* h, Transfer& t, CURLcode rc) {
  t.res.rc = rc;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &t.res.status);
  char* ct = nullptr;
  curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct);
  if (ct) t.res.content_type = ct;
  curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &t.res.new_connections);
  t.parser.finish();
}

class Client {
 public:
  explicit Client(int port) : base_("http://127.0.0.1:" + std::to_string(port)) {
    static CurlInit init;
    h_ = curl_easy_init();
    headers_ = curl_slist_append(nullptr, "Content-Type: application/json");
  }
  ~Client() {
    curl_slist_free_all(headers_);
    curl_easy_cleanup(h_);
  }
  Result request(const std::string& path, const std::string& body = "") {
    Transfer t;
    setup(h_, t, base_ + path, body, headers_);
    t.t0 = Clock::now();
    CURLcode rc = curl_easy_perform(h_);
    collect(h_, t, rc);
    return std::move(t.res);
  }
  const std::string& base() const { return base_; }
  curl_slist* headers() const { return headers_; }

 private:
  std::string base_;
  CURL* h_;
  curl_slist* headers_;
};

// Key order of an object, recursively for the first element of "choices".
std::vector<std::string> key_paths(const std::string& json) {
  auto j = nlohmann::ordered_json::parse(json);
  std::vector<std::string> out;
  for (auto& [k, v] : j.items()) {
    out.push_back(k);
    if (k == "choices" && v.is_array() && !v.empty()) {
      for (auto& [ck, cv] : v[0].items()) {
        out.push_back("choices." + ck);
        if (ck == "delta") {
          for (auto& [dk, dv] : cv.items()) out.push_back("choices.delta." + dk);
        }
      }
    }
  }
  return out;
}

std::vector<std::string> fixture_events(const std::string& name) {
  std::vector<std::string> out;
  SseParser p([&](const SseEvent& e) { out.push_back(e.data); });
  p.feed(sse_fixture(name));
  p.finish(true);
  return out;
}

void wait_until(const std::function<bool()>& cond, int ms = 2000) {
  auto until = Clock::now() + std::chrono::milliseconds(ms);
  while (!cond() && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(2));
}

}  // namespace

TEST_CASE("Fake LLM: streamed completion matches vLLM's wire format", "[fake_llm]") {
  FakeLlmConfig cfg;
  cfg.model = "Qwen/Qwen3-4B";
  cfg.output_tokens = 100;
  FakeLlmServer server(cfg);
  int port = server.start();
  REQUIRE(port > 0);
  Client client(port);
  Result r = client.request(
      "/v1/completions",
      R"({"model":"Qwen/Qwen3-4B","prompt":"San Francisco is a","max_tokens":7,"stream":true,"stream_options":{"include_usage":true}})");
  REQUIRE(r.rc == CURLE_OK);
  CHECK(r.status == 200);
  CHECK(r.content_type == "text/event-stream; charset=utf-8");
  // Every event is "data: ...\n\n", nothing else on the wire.
  REQUIRE(r.body.size() > 2);
  CHECK(r.body.rfind("data: [DONE]\n\n") == r.body.size() - 14);
  size_t pos = 0, count = 0;
  while (pos < r.body.size()) {
    CHECK(r.body.compare(pos, 6, "data: ") == 0);
    size_t end = r.body.find("\n\n", pos);
    REQUIRE(end != std::string::npos);
    CHECK(r.body.find('\n', pos) == end);
    pos = end + 2;
    ++count;
  }
  REQUIRE(r.events.size() == count);
  REQUIRE(count == 7 + 1 + 1);  // 7 tokens, the usage chunk, [DONE]
  CHECK(r.summary.token_events == 7);
  CHECK(r.summary.done);
  CHECK_FALSE(r.summary.error);
  CHECK(r.summary.completion_tokens == 7);
  CHECK(r.summary.prompt_tokens == 5);  // 18 bytes of prompt, ~4 bytes a token
  CHECK(r.summary.finish_reason == "length");

  // Same keys in the same order as the recorded vLLM 0.9 stream.
  auto recorded = fixture_events("vllm-0.9-completions-stream-qwen3-4b-no-usage.sse");
  CHECK(key_paths(r.events[0].data) == key_paths(recorded[0]));
  CHECK(key_paths(r.events[6].data) == key_paths(recorded[6]));
  auto first = nlohmann::json::parse(r.events[0].data);
  CHECK(first["id"].get<std::string>().rfind("cmpl-", 0) == 0);
  CHECK(first["id"].get<std::string>().size() == recorded[0].find("\",\"object") - 7);
  CHECK(first["object"] == "text_completion");
  CHECK(first["model"] == "Qwen/Qwen3-4B");
  CHECK(first["usage"].is_null());
  CHECK(first["choices"][0]["finish_reason"].is_null());
  auto last = nlohmann::json::parse(r.events[6].data);
  CHECK(last["choices"][0]["finish_reason"] == "length");
  CHECK(last["id"] == first["id"]);
  // The usage chunk: empty choices, vLLM's key order.
  CHECK(r.events[7].data.find(R"("choices":[],"usage":{"prompt_tokens":5,"total_tokens":12,"completion_tokens":7}})") !=
        std::string::npos);
  CHECK(r.parsed[7].has_usage);
  CHECK_FALSE(r.parsed[7].has_token);
}

TEST_CASE("Fake LLM: streamed chat completion matches vLLM's wire format", "[fake_llm]") {
  FakeLlmConfig cfg;
  cfg.output_tokens = 5;
  FakeLlmServer server(cfg);
  Client client(server.start());
  Result r = client.request("/v1/chat/completions",
                            R"({"model":"fake-model","messages":[{"role":"user","content":"hello there"}],"stream":true})");
  REQUIRE(r.rc == CURLE_OK);
  REQUIRE(r.events.size() == 1 + 5 + 1);  // role chunk, 5 tokens, [DONE]; no usage asked
  CHECK_FALSE(r.parsed[0].has_token);
  CHECK(r.summary.token_events == 5);
  CHECK(r.summary.done);
  CHECK(r.summary.completion_tokens == -1);
  CHECK(r.summary.finish_reason == "stop");  // no max_tokens: the model "stopped"
  auto recorded = fixture_events("vllm-0.5-chat-stream-qwen-no-usage-PARTIAL.sse");
  CHECK(key_paths(r.events[0].data) == key_paths(recorded[0]));
  CHECK(key_paths(r.events[1].data) == key_paths(recorded[1]));
  for (size_t i = 0; i + 1 < r.events.size(); ++i) {
    auto j = nlohmann::json::parse(r.events[i].data);
    CHECK(j["object"] == "chat.completion.chunk");
    CHECK(j["id"].get<std::string>().rfind("chatcmpl-", 0) == 0);
    CHECK_FALSE(j.contains("usage"));
  }
  // include_usage adds the usage chunk.
  r = client.request("/v1/chat/completions",
                     R"({"messages":[{"role":"user","content":"hi"}],"stream":true,"max_tokens":3,"stream_options":{"include_usage":true}})");
  REQUIRE(r.events.size() == 1 + 3 + 1 + 1);
  CHECK(r.summary.completion_tokens == 3);
  CHECK(r.summary.prompt_tokens == 5);
  CHECK(r.summary.finish_reason == "length");
  CHECK(r.parsed[4].choices == 0);
}

TEST_CASE("Fake LLM: non-streaming responses, output lengths, usage modes", "[fake_llm]") {
  FakeLlmConfig cfg;
  cfg.output_tokens = 40;
  cfg.prompt_tokens = 11;
  FakeLlmServer server(cfg);
  Client client(server.start());
  auto body_event = [](const Result& r) {
    OpenAiStreamEvent ev;
    interpret_openai_json(r.body, ev);
    return ev;
  };
  Result r = client.request("/v1/completions", R"({"prompt":"x","max_tokens":12})");
  CHECK(r.status == 200);
  CHECK(r.content_type == "application/json");
  OpenAiStreamEvent ev = body_event(r);
  CHECK(ev.has_token);
  CHECK(ev.completion_tokens == 12);
  CHECK(ev.prompt_tokens == 11);
  CHECK(ev.finish_reason == "length");
  // /v1/completions without max_tokens stops at 16, as vLLM does.
  ev = body_event(client.request("/v1/completions", R"({"prompt":"x"})"));
  CHECK(ev.completion_tokens == 16);
  // Chat has no default cap: the configured length, finished by "EOS".
  r = client.request("/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}]})");
  ev = body_event(r);
  CHECK(ev.completion_tokens == 40);
  CHECK(ev.finish_reason == "stop");
  CHECK(nlohmann::json::parse(r.body)["choices"][0]["message"]["role"] == "assistant");
  // max_completion_tokens, and ignore_eos running to the cap.
  ev = body_event(client.request("/v1/chat/completions",
                                 R"({"messages":[],"max_completion_tokens":50,"ignore_eos":true})"));
  CHECK(ev.completion_tokens == 50);
  CHECK(ev.finish_reason == "length");
  ev = body_event(client.request("/v1/chat/completions", R"({"messages":[],"max_tokens":50})"));
  CHECK(ev.completion_tokens == 40);
  // Bad requests get vLLM error bodies.
  r = client.request("/v1/completions", R"({"prompt":"x","max_tokens":0})");
  CHECK(r.status == 400);
  ev = body_event(r);
  CHECK(ev.kind == OpenAiEventKind::kError);
  CHECK(ev.error_type == "BadRequestError");
  CHECK(ev.error_code == 400);
  CHECK(client.request("/v1/completions", "{not json").status == 400);

  server.stop();
  cfg.output_tokens_min = 3;
  cfg.output_tokens_max = 6;
  cfg.tokens_per_chunk = 2;
  cfg.usage = FakeLlmConfig::Usage::kAlways;
  REQUIRE(server.set_config(cfg));
  Client c2(server.start());
  for (int i = 0; i < 10; ++i) {
    r = c2.request("/v1/completions", R"({"prompt":"x","max_tokens":100,"stream":true})");
    int64_t n = r.summary.completion_tokens;
    CHECK(n >= 3);
    CHECK(n <= 6);
    CHECK(r.summary.token_events == static_cast<uint64_t>((n + 1) / 2));  // 2 tokens a chunk
    CHECK(r.summary.finish_reason == "stop");
  }
}

TEST_CASE("Fake LLM: client-side TTFT and ITL follow the configuration", "[fake_llm]") {
  FakeLlmConfig cfg;
  cfg.ttft_ms = 60;
  cfg.itl_ms = 15;
  FakeLlmServer server(cfg);
  Client client(server.start());
  Result r = client.request("/v1/completions", R"({"prompt":"x","max_tokens":10,"stream":true})");
  REQUIRE(r.rc == CURLE_OK);
  auto t = r.token_ms();
  REQUIRE(t.size() == 10);
  // Tokens are never early: token i is due at ttft + i * itl after arrival.
  CHECK(t[0] >= 60.0);
  CHECK(t[0] < 60.0 + 400.0);
  double mean_itl = (t.back() - t.front()) / 9.0;
  CHECK(mean_itl >= 10.0);
  CHECK(mean_itl < 50.0);
  CHECK(t.back() >= 60.0 + 9 * 15.0);
  CHECK(t.back() < 60.0 + 9 * 15.0 + 400.0);  // no accumulated drift
  // The server's own view lands in /metrics.
  Result m = client.request("/metrics");
  CHECK(m.body.find("vllm:time_to_first_token_seconds_count{engine=\"0\",model_name=\"fake-model\"} 1.0") !=
        std::string::npos);
}

TEST_CASE("Fake LLM: keep-alive reuses one connection", "[fake_llm]") {
  FakeLlmServer server;
  Client client(server.start());
  Result a = client.request("/v1/completions", R"({"prompt":"x","max_tokens":3,"stream":true})");
  Result b = client.request("/v1/completions", R"({"prompt":"x","max_tokens":3})");
  Result c = client.request("/health");
  Result d = client.request("/v1/chat/completions", R"({"messages":[],"max_tokens":2,"stream":true})");
  CHECK(a.new_connections == 1);
  CHECK(b.new_connections == 0);
  CHECK(c.new_connections == 0);
  CHECK(d.new_connections == 0);
  CHECK(a.summary.done);
  CHECK(d.summary.done);
  FakeLlmStats st = server.stats();
  CHECK(st.connections_accepted == 1);
  CHECK(st.requests_served == 4);
  CHECK(st.open_connections == 1);
  CHECK(st.tokens_sent == 3 + 3 + 2);
}

TEST_CASE("Fake LLM: pipelined requests are answered in order", "[fake_llm]") {
  FakeLlmServer server;
  int port = server.start();
  const int fd = connect_loopback(port);
  REQUIRE(fd >= 0);
  std::string body = R"({"prompt":"x","max_tokens":2,"stream":true})";
  std::string reqs = "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
                     std::to_string(body.size()) + "\r\n\r\n" + body +
                     "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
                     "GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  REQUIRE(::write(fd, reqs.data(), reqs.size()) == static_cast<ssize_t>(reqs.size()));
  std::string got;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  size_t s1 = got.find("HTTP/1.1 200 OK");
  size_t done = got.find("data: [DONE]\n\n\r\n0\r\n\r\n");
  size_t s2 = got.find("HTTP/1.1 200 OK", s1 + 1);
  size_t s3 = got.find("HTTP/1.1 200 OK", s2 + 1);
  CHECK(s1 == 0);
  CHECK(done != std::string::npos);
  CHECK(s2 > done);
  CHECK(s3 > s2);
  CHECK(got.find("\"object\":\"list\"") > s3);
  CHECK(got.find("connection: close") > s3);
}

TEST_CASE("Fake LLM: injected failures", "[fake_llm]") {
  FakeLlmConfig cfg;
  cfg.output_tokens = 10;
  SECTION("500s with a vLLM error body") {
    cfg.error_500_fraction = 1.0;
    FakeLlmServer server(cfg);
    Client client(server.start());
    Result r = client.request("/v1/completions", R"({"prompt":"x","stream":true})");
    CHECK(r.status == 500);
    OpenAiStreamEvent ev;
    interpret_openai_json(r.body, ev);
    CHECK(ev.kind == OpenAiEventKind::kError);
    CHECK(ev.error_kind == kServerError);
    CHECK(ev.error_code == 500);
    CHECK(ev.error_type == "InternalServerError");
    // The connection survives a 500.
    CHECK(client.request("/health").new_connections == 0);
    CHECK(server.stats().injected_errors == 1);
  }
  SECTION("mid-stream disconnects") {
    cfg.disconnect_fraction = 1.0;
    cfg.itl_ms = 1;
    FakeLlmServer server(cfg);
    Client client(server.start());
    for (int i = 0; i < 3; ++i) {
      Result r = client.request("/v1/completions", R"({"prompt":"x","stream":true,"max_tokens":10})");
      CHECK(r.rc == CURLE_PARTIAL_FILE);
      CHECK(r.summary.token_events >= 1);
      CHECK(r.summary.token_events < 10);
      CHECK_FALSE(r.summary.done);
    }
    CHECK(server.stats().injected_disconnects == 3);
    wait_until([&] { return server.stats().open_connections == 0; });
    CHECK(server.stats().open_connections == 0);
  }
  SECTION("a malformed event") {
    cfg.malformed_fraction = 1.0;
    FakeLlmServer server(cfg);
    Client client(server.start());
    Result r = client.request("/v1/chat/completions", R"({"messages":[],"stream":true,"max_tokens":10})");
    REQUIRE(r.rc == CURLE_OK);
    int malformed = 0;
    for (const auto& ev : r.parsed) malformed += ev.error_kind == kMalformedSse;
    CHECK(malformed == 1);
    CHECK(r.summary.error_kind == "malformed_sse");
    CHECK(r.summary.token_events == 10);
    CHECK(r.summary.done);
  }
  SECTION("a stall") {
    cfg.stall_fraction = 1.0;
    cfg.stall_ms = 150;
    cfg.itl_ms = 1;
    FakeLlmServer server(cfg);
    Client client(server.start());
    Result r = client.request("/v1/completions", R"({"prompt":"x","stream":true,"max_tokens":10})");
    REQUIRE(r.rc == CURLE_OK);
    auto t = r.token_ms();
    REQUIRE(t.size() == 10);
    double max_gap = 0;
    for (size_t i = 1; i < t.size(); ++i) max_gap = std::max(max_gap, t[i] - t[i - 1]);
    CHECK(max_gap >= 75.0);
    CHECK(t.back() >= 150.0 + 9.0);
    CHECK(server.stats().injected_stalls == 1);
  }
}

namespace {
size_t abort_after_first_token(char* p, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  on_data(p, size, n, user);
  return t->res.summary.token_events > 0 ? 0 : size * n;  // 0 makes curl abort
}
}  // namespace

TEST_CASE("Fake LLM: a client abort ends the stream on the server", "[fake_llm]") {
  FakeLlmConfig cfg;
  cfg.itl_ms = 5;
  cfg.output_tokens = 10000;
  FakeLlmServer server(cfg);
  int port = server.start();
  static CurlInit init;
  CURL* h = curl_easy_init();
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  Transfer t;
  setup(h, t, "http://127.0.0.1:" + std::to_string(port) + "/v1/chat/completions",
        R"({"messages":[],"stream":true})", headers);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, abort_after_first_token);
  t.t0 = Clock::now();
  CURLcode rc = curl_easy_perform(h);
  curl_easy_cleanup(h);  // closes the connection
  curl_slist_free_all(headers);
  CHECK(rc == CURLE_WRITE_ERROR);
  wait_until([&] { return server.stats().open_connections == 0; });
  FakeLlmStats st = server.stats();
  CHECK(st.open_connections == 0);
  CHECK(st.active_streams == 0);
  CHECK(st.client_aborts == 1);
  CHECK(st.tokens_sent < 100);
}

TEST_CASE("Fake LLM: side endpoints and the generic static mode", "[fake_llm]") {
  FakeLlmConfig cfg;
  cfg.model = "llama-vllm-single";
  FakeLlmServer server(cfg);
  Client client(server.start());
  client.request("/v1/completions", R"({"prompt":"the cat","max_tokens":4})");
  Result h = client.request("/health");
  CHECK(h.status == 200);
  CHECK(h.body.empty());
  Result m = client.request("/v1/models");
  auto models = nlohmann::json::parse(m.body);
  CHECK(models["object"] == "list");
  CHECK(models["data"][0]["id"] == "llama-vllm-single");
  CHECK(models["data"][0]["owned_by"] == "vllm");
  Result metrics = client.request("/metrics");
  CHECK(metrics.status == 200);
  CHECK(metrics.content_type.rfind("text/plain", 0) == 0);
  for (const char* line :
       {"# TYPE vllm:num_requests_running gauge\n",
        "vllm:num_requests_running{engine=\"0\",model_name=\"llama-vllm-single\"} 0.0\n",
        "vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"llama-vllm-single\"} 0.0\n",
        "vllm:prompt_tokens_total{engine=\"0\",model_name=\"llama-vllm-single\"} 2.0\n",
        "vllm:generation_tokens_total{engine=\"0\",model_name=\"llama-vllm-single\"} 4.0\n",
        "vllm:request_success_total{engine=\"0\",finished_reason=\"length\",model_name=\"llama-vllm-single\"} 1.0\n",
        "vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"+Inf\",model_name=\"llama-vllm-single\"} 1.0\n",
        "vllm:e2e_request_latency_seconds_count{engine=\"0\",model_name=\"llama-vllm-single\"} 1.0\n"}) {
    INFO(line);
    CHECK(metrics.body.find(line) != std::string::npos);
  }
  CHECK(client.request("/nothing").status == 404);
  CHECK(client.request("/v1/completions").status == 405);

  server.stop();
  cfg.serve_static = true;
  cfg.static_body = std::string(1000, 'z');
  server.set_config(cfg);
  Client c2(server.start());
  Result s = c2.request("/anything/at/all?x=1");
  CHECK(s.status == 200);
  CHECK(s.body == cfg.static_body);
  CHECK(c2.request("/health").body.empty());
}

// vLLM's POST /tokenize (at the root, beside /v1): its answer's shape, the count usage reports
// for the same prompt (so a client's check agrees with the fake), the chat form with the
// template's tokens, a skewed count, and a server without it.
TEST_CASE("Fake LLM: /tokenize answers as vLLM's, counts as usage does, skewed or switched off", "[fake_llm]") {
  FakeLlmConfig cfg;
  cfg.max_model_len = 8192;
  FakeLlmServer server(cfg);
  Client client(server.start());
  Result t = client.request("/tokenize", R"({"model":"fake-model","prompt":"the cat","add_special_tokens":false})");
  CHECK(t.status == 200);
  CHECK(t.content_type == "application/json");
  CHECK(key_paths(t.body) == std::vector<std::string>{"count", "max_model_len", "tokens", "token_strs"});
  auto j = nlohmann::json::parse(t.body);
  CHECK(j["count"] == 2);
  CHECK(j["max_model_len"] == 8192);
  CHECK(j["tokens"].size() == 2);
  CHECK(j["token_strs"].is_null());
  // The same prompt's usage.prompt_tokens, and the chat form's (4 template tokens a message).
  OpenAiStreamEvent ev;
  interpret_openai_json(client.request("/v1/completions", R"({"prompt":"the cat","max_tokens":2})").body, ev);
  CHECK(ev.prompt_tokens == 2);
  j = nlohmann::json::parse(client.request("/tokenize", R"({"messages":[{"role":"user","content":"the cat"}]})").body);
  CHECK(j["count"] == 6);
  CHECK(client.request("/tokenize").status == 405);  // a GET: only POST is routed there
  Result bad = client.request("/tokenize", R"({"model":"fake-model"})");
  CHECK(bad.status == 400);
  CHECK(bad.body.find("Either a 'prompt' string or a 'messages' list is required.") != std::string::npos);
  CHECK(client.request("/tokenize", "{not json").status == 400);
  // /tokenize is not a load's request: counted apart.
  CHECK(server.stats().tokenize_requests == 5);
  CHECK(server.stats().requests_served == 1);

  server.stop();
  cfg.tokenize_skew_pct = 50;
  REQUIRE(server.set_config(cfg));
  Client skewed(server.start());
  CHECK(nlohmann::json::parse(skewed.request("/tokenize", R"({"prompt":"the cat"})").body)["count"] == 3);

  server.stop();
  cfg.tokenize = false;
  REQUIRE(server.set_config(cfg));
  Client without(server.start());
  Result absent = without.request("/tokenize", R"({"prompt":"12345678"})");
  CHECK(absent.status == 404);
  CHECK(absent.body == R"({"detail":"Not Found"})");
}

TEST_CASE("Fake LLM: hundreds of concurrent streams on one loop", "[fake_llm]") {
  FakeLlmConfig cfg;
  cfg.ttft_ms = 10;
  cfg.itl_ms = 3;
  FakeLlmServer server(cfg);
  int port = server.start();
  static CurlInit init;
  const int kStreams = 300;
  CURLM* multi = curl_multi_init();
  curl_multi_setopt(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, 0L);
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  std::vector<CURL*> handles(kStreams);
  std::vector<std::unique_ptr<Transfer>> transfers(kStreams);
  std::string url = "http://127.0.0.1:" + std::to_string(port) + "/v1/completions";
  std::string body = R"({"prompt":"x","max_tokens":16,"stream":true,"stream_options":{"include_usage":true}})";
  for (int i = 0; i < kStreams; ++i) {
    handles[i] = curl_easy_init();
    transfers[i] = std::make_unique<Transfer>();
    setup(handles[i], *transfers[i], url, body, headers);
    transfers[i]->t0 = Clock::now();
    curl_multi_add_handle(multi, handles[i]);
  }
  size_t peak_streams = 0;
  int running = 1;
  while (running) {
    curl_multi_perform(multi, &running);
    peak_streams = std::max<size_t>(peak_streams, server.stats().active_streams);
    if (running) curl_multi_poll(multi, nullptr, 0, 50, nullptr);
  }
  CURLMsg* msg;
  int left;
  while ((msg = curl_multi_info_read(multi, &left))) {
    for (int i = 0; i < kStreams; ++i)
      if (handles[i] == msg->easy_handle) collect(handles[i], *transfers[i], msg->data.result);
  }
  int ok = 0;
  for (int i = 0; i < kStreams; ++i) {
    const Result& r = transfers[i]->res;
    if (r.rc == CURLE_OK && r.summary.token_events == 16 && r.summary.completion_tokens == 16 &&
        r.summary.done)
      ++ok;
    curl_multi_remove_handle(multi, handles[i]);
    curl_easy_cleanup(handles[i]);
  }
  curl_multi_cleanup(multi);
  curl_slist_free_all(headers);
  CHECK(ok == kStreams);
  CHECK(peak_streams > 30);  // they really overlapped
  FakeLlmStats st = server.stats();
  CHECK(st.tokens_sent == 16u * kStreams);
  CHECK(st.active_streams == 0);
  wait_until([&] { return server.stats().open_connections == 0; });
  CHECK(server.stats().open_connections == 0);
}

TEST_CASE("Fake LLM: stop() ends live streams and the server restarts", "[fake_llm]") {
  FakeLlmConfig cfg;
  cfg.itl_ms = 50;
  cfg.output_tokens = 1000;
  FakeLlmServer server(cfg);
  int port = server.start();
  CHECK(server.start() == port);  // already running
  Result r;
  std::thread t([&] {
    Client client(port);
    r = client.request("/v1/chat/completions", R"({"messages":[],"stream":true})");
  });
  wait_until([&] { return server.stats().tokens_sent >= 2; });
  auto t0 = Clock::now();
  server.stop();
  t.join();
  CHECK(std::chrono::duration<double>(Clock::now() - t0).count() < 2.0);
  CHECK(r.rc != CURLE_OK);
  CHECK_FALSE(r.summary.done);
  CHECK(r.summary.token_events >= 2);
  CHECK_FALSE(server.running());
  server.stop();  // idempotent
  int again = server.start();
  REQUIRE(again > 0);
  CHECK(Client(again).request("/health").status == 200);
  // A taken port is reported as an error.
  FakeLlmServer other;
  CHECK(other.start(again) < 0);
}

// A hostile client: a request body nested 100,000 levels deep is refused with 400 and a clear
// message; the server keeps serving.
TEST_CASE("Fake LLM: a deeply nested request body gets 400", "[fake_llm]") {
  FakeLlmServer server(FakeLlmConfig{});
  Client client(server.start());
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  Result r = client.request("/v1/completions", "{\"prompt\": \"x\", \"extra\": " + deep + "}");
  CHECK(r.status == 400);
  CHECK(r.body.find("nested deeper than 64 levels") != std::string::npos);
  CHECK(client.request("/v1/completions", R"({"prompt":"x","max_tokens":2})").status == 200);
}

// A load generator that hangs up mid-load leaves the server writing to a closed connection: on
// loopback the first write draws the peer's RST and the second fails with EPIPE, which raises
// SIGPIPE unless the writing thread blocks it. The test process keeps SIGPIPE's default action
// (death), as a host embedding the server may. To make the second write certain, the server must
// not read the client's FIN first: 70 pipelined requests fill its queue, so it stops reading.
TEST_CASE("Fake LLM: a client hanging up mid-load does not raise SIGPIPE in the host", "[fake_llm]") {
  const auto previous = signal(SIGPIPE, SIG_DFL);
  FakeLlmConfig cfg;
  cfg.itl_ms = 50;  // the quiet gap between two tokens, where the client closes
  cfg.output_tokens = 10;
  FakeLlmServer server(cfg);
  const int port = server.start();
  const std::string body = R"({"prompt":"x","stream":true})";
  std::string requests;
  for (int i = 0; i < 70; ++i)
    requests += "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
                std::to_string(body.size()) + "\r\n\r\n" + body;
  const int fd = connect_loopback(port);
  REQUIRE(fd >= 0);
  REQUIRE(::send(fd, requests.data(), requests.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(requests.size()));
  // Read up to the first stream's first token, and anything else for 10 ms: the close below then
  // leaves nothing unread (a FIN, not a RST), 40 ms before the second token is due.
  std::string got;
  char buf[4096];
  while (got.find("data: ") == std::string::npos) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    REQUIRE(n > 0);
    got.append(buf, static_cast<std::size_t>(n));
  }
  pollfd more{fd, POLLIN, 0};
  while (::poll(&more, 1, 10) > 0 && ::recv(fd, buf, sizeof buf, 0) > 0) {
  }
  ::close(fd);
  // The next tokens are written into the closed connection; the server must take the failed
  // write as the client gone and close it, and this process must still be here to see that.
  wait_until([&] { return server.stats().open_connections == 0; }, 3000);
  CHECK(server.stats().open_connections == 0);
  CHECK(server.stats().tokens_sent >= 2);  // it did write after the close
  signal(SIGPIPE, previous);
}

// Without a tokenizer the fake counts as a byte-level BPE tokenizer counts common English, so
// runara's synthetic prompts (one vocabulary word a token) count exactly as the client asked.
TEST_CASE("Fake LLM: prompt tokens counted a word a token, numbers by 3 digits, marks one each", "[fake_llm]") {
  using runara::fake_llm::count_text_tokens;
  CHECK(count_text_tokens("") == 0);
  CHECK(count_text_tokens("the of and to in") == 5);     // one space before a word is part of it
  CHECK(count_text_tokens("Hello, world!") == 4);        // Hello , world !
  CHECK(count_text_tokens("1234567") == 3);              // 123 456 7
  CHECK(count_text_tokens("internationalization") == 3); // 20 letters: one token per 8 bytes
  CHECK(count_text_tokens("a\n\nb") == 3);               // a run of newlines is a token
  CHECK(count_text_tokens("a  b") == 3);                 // so is a space more than one
  CHECK(count_text_tokens("trailing ") == 2);
  using runara::fake_llm::count_prompt_tokens;
  CHECK(count_prompt_tokens(nlohmann::json{{"prompt", "the of"}}, false) == 2);
  CHECK(count_prompt_tokens(nlohmann::json{{"prompt", {1, 2, 3}}}, false) == 3);
  CHECK(count_prompt_tokens(nlohmann::json::parse(R"({"messages":[{"role":"user","content":"the of"}]})"), true) == 6);
  CHECK(count_prompt_tokens(nlohmann::json::object(), false) == 1);
}

TEST_CASE("Fake LLM: requests that hang up while waiting for a sequence leave the queue", "[fake_llm]") {
  FakeLlmConfig cfg;
  cfg.max_num_seqs = 1;
  cfg.itl_ms = 20;
  cfg.output_tokens = 10000;  // holds the one sequence for the whole test
  FakeLlmServer server(cfg);
  const int port = server.start();
  const auto request = [](bool stream) {
    const std::string body = std::string(R"({"prompt":"x","stream":)") + (stream ? "true}" : "false}");
    return "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\n\r\n" + body;
  };
  const int busy = connect_loopback(port);
  REQUIRE(busy >= 0);
  const std::string first = request(true);
  REQUIRE(::send(busy, first.data(), first.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(first.size()));
  wait_until([&] { return server.stats().active_streams == 1; });
  REQUIRE(server.stats().active_streams == 1);
  // Each client sends, waits in line behind the busy sequence, and hangs up.
  for (int i = 0; i < 20; ++i) {
    const int fd = connect_loopback(port);
    REQUIRE(fd >= 0);
    const std::string r = request(false);
    REQUIRE(::send(fd, r.data(), r.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(r.size()));
    wait_until([&] { return server.stats().waiting_requests == 1; });
    REQUIRE(server.stats().waiting_requests == 1);
    ::close(fd);
    wait_until([&] { return server.stats().waiting_requests == 0; });
    REQUIRE(server.stats().waiting_requests == 0);
  }
  CHECK(server.stats().waiting_queue_entries == 0);  // not 20 stale entries
  ::close(busy);
  wait_until([&] { return server.stats().open_connections == 0; });
  CHECK(server.stats().open_connections == 0);
}
