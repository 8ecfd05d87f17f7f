// OpenAI / vLLM stream interpretation: recorded streams, usage and error
// chunks, malformed JSON, and agreement of the fast scanner with the
// nlohmann::json reference on mutated inputs.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "test_fixtures.hpp"
#include "http/openai_stream.hpp"
#include "openai_stream_reference.hpp"
#include "http/sse_parser.hpp"

using namespace runara;

using runara::test::sse_fixture;

namespace {

std::vector<SseEvent> events_of(const std::string& stream) {
  std::vector<SseEvent> out;
  SseParser p([&](const SseEvent& e) { out.push_back(e); });
  p.feed(stream);
  p.finish(true);  // the recordings lost their final blank line
  return out;
}

OpenAiStreamEvent interpret(std::string_view data, std::string* text = nullptr) {
  OpenAiStreamEvent ev;
  interpret_openai_event(data, ev, text);
  return ev;
}

// Field-by-field agreement with the reference (malformed: kind only).
void check_same_as_reference(std::string_view json) {
  OpenAiStreamEvent fast, ref;
  std::string ft = "x", rt = "x";
  interpret_openai_json(json, fast, &ft);
  interpret_openai_json_reference(json, ref, &rt);
  if (ref.error_kind == kMalformedSse && ref.error_message.find("number overflow") != std::string::npos)
    return;  // a number beyond double range: valid JSON for the fast path
  INFO("input: " << json);
  INFO("reference message: " << ref.error_message);
  REQUIRE(int(fast.kind) == int(ref.kind));
  REQUIRE(fast.error_kind == ref.error_kind);
  if (fast.error_kind == kMalformedSse) return;
  REQUIRE(fast.has_token == ref.has_token);
  REQUIRE(fast.has_usage == ref.has_usage);
  REQUIRE(fast.choices == ref.choices);
  REQUIRE(fast.token_choices == ref.token_choices);
  REQUIRE(fast.text_bytes == ref.text_bytes);
  REQUIRE(fast.reasoning_bytes == ref.reasoning_bytes);
  REQUIRE(fast.finish_reason == ref.finish_reason);
  REQUIRE(fast.prompt_tokens == ref.prompt_tokens);
  REQUIRE(fast.completion_tokens == ref.completion_tokens);
  REQUIRE(fast.total_tokens == ref.total_tokens);
  REQUIRE(fast.error_message == ref.error_message);
  REQUIRE(fast.error_type == ref.error_type);
  REQUIRE(fast.error_code == ref.error_code);
  REQUIRE(ft == rt);
}

}  // namespace

TEST_CASE("OpenAI stream: recorded vLLM completions stream", "[sse]") {
  auto events = events_of(sse_fixture("vllm-0.9-completions-stream-qwen3-4b-no-usage.sse"));
  REQUIRE(events.size() == 8);
  OpenAiStreamSummary sum;
  std::string text;
  for (const auto& e : events) {
    OpenAiStreamEvent ev;
    interpret_openai_event(e, ev, &text);
    sum.add(ev);
    check_same_as_reference(e.data == "[DONE]" ? "{}" : e.data);
  }
  CHECK(sum.events == 8);
  CHECK(sum.token_events == 7);
  CHECK(sum.done);
  CHECK_FALSE(sum.error);
  CHECK(text == " city in the state of California,");
  CHECK(sum.text_bytes == text.size());
  CHECK(sum.finish_reason == "length");
  CHECK(sum.prompt_tokens == -1);  // "usage": null on every chunk

  OpenAiStreamEvent first = interpret(events[0].data);
  CHECK(first.kind == OpenAiEventKind::kChunk);
  CHECK(first.has_token);
  CHECK_FALSE(first.has_usage);
  CHECK(first.choices == 1);
  CHECK(first.finish_reason.empty());
  CHECK(interpret(events.back().data).kind == OpenAiEventKind::kDone);
}

TEST_CASE("OpenAI stream: recorded vLLM chat stream", "[sse]") {
  auto events = events_of(sse_fixture("vllm-0.5-chat-stream-qwen-no-usage-PARTIAL.sse"));
  REQUIRE(events.size() == 6);
  OpenAiStreamEvent role = interpret(events[0].data);
  CHECK(role.kind == OpenAiEventKind::kChunk);
  CHECK_FALSE(role.has_token);  // the role-only delta carries no token
  CHECK(role.choices == 1);
  std::string text;
  OpenAiStreamSummary sum;
  for (const auto& e : events) {
    OpenAiStreamEvent ev;
    interpret_openai_event(e, ev, &text);
    sum.add(ev);
    check_same_as_reference(e.data);
  }
  CHECK(sum.token_events == 5);
  CHECK(text == "\xE6\x88\x91\xE6\x98\xAF\xE9\x98\xBF\xE9\x87\x8C\xE4\xBA\x91\xE5\xBC\x80\xE5\x8F\x91\xE7\x9A\x84\xE4\xB8\x80\xE6\xAC\xBE");  // 我是阿里云开发的一款
  CHECK(sum.text_bytes == text.size());
  CHECK_FALSE(sum.done);  // the recording is partial
}

TEST_CASE("OpenAI stream: usage chunks", "[sse]") {
  // The Tenstorrent fork sends usage on every chunk.
  auto tt = events_of(sse_fixture("vllm-tt-fork-completions-include-usage-every-chunk-PARTIAL.sse"));
  REQUIRE(tt.size() == 1);
  OpenAiStreamEvent ev = interpret(tt[0].data);
  CHECK(ev.has_token);
  CHECK(ev.has_usage);
  CHECK(ev.prompt_tokens == 5);
  CHECK(ev.completion_tokens == 1);
  CHECK(ev.total_tokens == 6);

  // vLLM's final usage chunk (stream_options.include_usage): empty choices.
  ev = interpret(R"({"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":[],)"
                 R"("usage":{"prompt_tokens":12,"total_tokens":19,"completion_tokens":7}})");
  CHECK(ev.kind == OpenAiEventKind::kChunk);
  CHECK_FALSE(ev.has_token);
  CHECK(ev.has_usage);
  CHECK(ev.choices == 0);
  CHECK(ev.prompt_tokens == 12);
  CHECK(ev.completion_tokens == 7);
  CHECK(ev.total_tokens == 19);

  // Non-integer or missing counts read as -1.
  ev = interpret(R"({"choices":[],"usage":{"prompt_tokens":1.5,"completion_tokens":"7"}})");
  CHECK(ev.has_usage);
  CHECK(ev.prompt_tokens == -1);
  CHECK(ev.completion_tokens == -1);
  CHECK(ev.total_tokens == -1);
  ev = interpret(R"({"choices":[],"usage":null})");
  CHECK_FALSE(ev.has_usage);
}

TEST_CASE("OpenAI stream: token detection", "[sse]") {
  std::string text;
  OpenAiStreamEvent ev = interpret(
      R"({"choices":[{"index":0,"delta":{"reasoning_content":"Let me think"},"finish_reason":null}]})", &text);
  CHECK(ev.has_token);
  CHECK(ev.reasoning_bytes == 12);
  CHECK(ev.text_bytes == 12);
  CHECK(text == "Let me think");

  ev = interpret(R"({"choices":[{"index":0,"delta":{"content":""},"finish_reason":null}]})");
  CHECK_FALSE(ev.has_token);
  ev = interpret(R"({"choices":[{"index":0,"delta":{"content":null},"finish_reason":"stop"}]})");
  CHECK_FALSE(ev.has_token);
  CHECK(ev.finish_reason == "stop");
  ev = interpret(R"({"choices":[{"index":0,"text":"","finish_reason":"length"}]})");
  CHECK_FALSE(ev.has_token);

  // Escapes are decoded: \n, \u00e9, a surrogate pair.
  text.clear();
  ev = interpret(R"({"choices":[{"text":"a\nb\u00e9\ud83d\ude00\"\\\/"}]})", &text);
  CHECK(ev.has_token);
  CHECK(text == "a\nb\xC3\xA9\xF0\x9F\x98\x80\"\\/");
  CHECK(ev.text_bytes == text.size());

  // Two choices (n=2), one with content.
  ev = interpret(R"({"choices":[{"index":0,"text":" a"},{"index":1,"text":""}]})");
  CHECK(ev.choices == 2);
  CHECK(ev.token_choices == 1);

  // Non-streaming bodies use "message".
  text.clear();
  ev = interpret(R"({"object":"chat.completion","choices":[{"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}})", &text);
  CHECK(ev.has_token);
  CHECK(text == "Hi");
  CHECK(ev.completion_tokens == 1);

  // Duplicate keys: the last one wins, as in nlohmann::json.
  ev = interpret(R"({"choices":[{"text":"x","text":""}]})");
  CHECK_FALSE(ev.has_token);
  ev = interpret(R"({"choices":[],"choices":[{"text":"x"}]})");
  CHECK(ev.has_token);
  // Keys with escapes are compared decoded.
  ev = interpret(R"({"choi\u0063es":[{"te\u0078t":"x"}]})");
  CHECK(ev.has_token);
  // [DONE] tolerates surrounding whitespace.
  CHECK(interpret(" [DONE]\r\n").kind == OpenAiEventKind::kDone);
}

TEST_CASE("OpenAI stream: error events and bodies", "[sse]") {
  // vLLM's current error body.
  OpenAiStreamEvent ev = interpret(
      R"({"error":{"message":"max_tokens must be at least 1, got 0.","type":"BadRequestError","param":null,"code":400}})");
  CHECK(ev.kind == OpenAiEventKind::kError);
  CHECK(ev.error_kind == kServerError);
  CHECK(ev.error_message == "max_tokens must be at least 1, got 0.");
  CHECK(ev.error_type == "BadRequestError");
  CHECK(ev.error_code == 400);
  // vLLM's older flat ErrorResponse.
  ev = interpret(R"({"object":"error","message":"The model `x` does not exist.","type":"NotFoundError","param":null,"code":404})");
  CHECK(ev.kind == OpenAiEventKind::kError);
  CHECK(ev.error_message == "The model `x` does not exist.");
  CHECK(ev.error_type == "NotFoundError");
  CHECK(ev.error_code == 404);
  // OpenAI's string codes are not integers.
  ev = interpret(R"({"error":{"message":"m","type":"invalid_request_error","code":"invalid_api_key"}})");
  CHECK(ev.error_code == 0);
  ev = interpret(R"({"error":"overloaded"})");
  CHECK(ev.kind == OpenAiEventKind::kError);
  CHECK(ev.error_message == "overloaded");
  ev = interpret(R"({"error":null,"choices":[{"text":"a"}]})");
  CHECK(ev.kind == OpenAiEventKind::kChunk);
  CHECK(ev.has_token);
  // An SSE "event: error" is an error whatever its data.
  SseEvent e{"error", "upstream went away", ""};
  interpret_openai_event(e, ev);
  CHECK(ev.kind == OpenAiEventKind::kError);
  CHECK(ev.error_kind == kServerError);
  CHECK(ev.error_message == "upstream went away");
}

TEST_CASE("OpenAI stream: malformed events are malformed_sse", "[sse]") {
  for (std::string bad : {"", "   ", "{", "{\"choices\":[{\"text\":\" a\"}]", "{\"id\":\"x\"} trailing",
                          "[1,2]", "\"text\"", "null", "nul", "{\"a\":01}", "{\"a\":1.}", "{\"a\":-}",
                          "{\"a\":\"\\x\"}", "{\"a\":\"\\ud800\"}", "{\"a\":\"\\udc00\"}",
                          "{\"a\":\"tab\there\"}", "{'a':1}", "{\"a\":1,}", "{\"a\" 1}",
                          "{\"a\":\"\xC3\"}", "{\"a\":\"\xED\xA0\x80\"}", "{\"a\":\"\xF4\x90\x80\x80\"}",
                          "{\"a\":\"\xC0\xAF\"}", "{\"a\":tru}", "data: {}"}) {
    INFO("input: " << bad);
    OpenAiStreamEvent ev = interpret(bad);
    CHECK(ev.kind == OpenAiEventKind::kError);
    CHECK(ev.error_kind == kMalformedSse);
    check_same_as_reference(bad);
  }
  std::string with_nul = std::string("{\"a\":1}") + '\0';
  CHECK(interpret(with_nul).error_kind == kMalformedSse);
  // Deep nesting is refused past the depth limit, without recursion (see the depth test below).
  std::string deep = "{\"x\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
  CHECK(interpret(deep).error_kind == kMalformedSse);
  std::string unbalanced = "{\"x\":" + std::string(100000, '[') + "}";
  CHECK(interpret(unbalanced).error_kind == kMalformedSse);
  // Numbers beyond double range are accepted (nlohmann rejects them).
  CHECK(interpret("{\"choices\":[{\"text\":\"a\"}],\"x\":1e400}").has_token);
  // The summary keeps the first error.
  OpenAiStreamSummary sum;
  sum.add(interpret("{\"choices\":[{\"text\":\"a\"}]}"));
  sum.add(interpret("{broken"));
  sum.add(interpret("{\"error\":\"later\"}"));
  CHECK(sum.error);
  CHECK(sum.error_kind == "malformed_sse");
  CHECK(sum.token_events == 1);
}

TEST_CASE("OpenAI stream: fast scanner agrees with the nlohmann reference on mutations", "[sse]") {
  std::vector<std::string> seeds;
  for (const char* name : {"vllm-0.9-completions-stream-qwen3-4b-no-usage.sse",
                           "vllm-0.5-chat-stream-qwen-no-usage-PARTIAL.sse",
                           "vllm-tt-fork-completions-include-usage-every-chunk-PARTIAL.sse"}) {
    for (const auto& e : events_of(sse_fixture(name)))
      if (e.data != "[DONE]") seeds.push_back(e.data);
  }
  seeds.push_back(R"({"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":12,"total_tokens":19,"completion_tokens":7}})");
  seeds.push_back(R"({"error":{"message":"bad \u00e9 \ud83d\ude00","type":"BadRequestError","param":null,"code":400}})");
  seeds.push_back(R"({"object":"error","message":"x","type":"T","param":null,"code":-9223372036854775808})");
  seeds.push_back(R"({"choices":[{"delta":{"reasoning":"r","reasoning_content":"rc","content":"c"},"message":{"content":"m"},"text":"t","finish_reason":"stop"}],"usage":{"prompt_tokens":9223372036854775807,"completion_tokens":9223372036854775808,"total_tokens":-0}})");
  for (const auto& s : seeds) check_same_as_reference(s);

  const std::string alphabet = "{}[]\",:\\ 0123456789.eE+-tfnulrsabcu\xC3\xA9\x80\xFF\x01\n";
  std::mt19937 rng(12345);
  for (int i = 0; i < 4000; ++i) {
    std::string s = seeds[rng() % seeds.size()];
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < edits && !s.empty(); ++k) {
      size_t pos = rng() % s.size();
      switch (rng() % 4) {
        case 0: s[pos] = alphabet[rng() % alphabet.size()]; break;
        case 1: s.erase(pos, 1 + rng() % 3); break;
        case 2: s.insert(pos, 1, alphabet[rng() % alphabet.size()]); break;
        case 3: s.resize(pos); break;
      }
    }
    check_same_as_reference(s);
  }
}

TEST_CASE("OpenAI stream: UTF-8 and escape boundaries agree with the reference", "[sse]") {
  // Every lead byte against the boundary values of the bytes that follow
  // (Unicode table 3-7), inside a JSON string.
  const unsigned char seconds[] = {0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF};
  const unsigned char tails[] = {0x80, 0xBF, 0x7F, 0xC0};
  for (int lead = 0x80; lead <= 0xFF; ++lead) {
    for (unsigned char b2 : seconds) {
      for (unsigned char b3 : tails) {
        for (unsigned char b4 : {tails[0], tails[2]}) {
          std::string s = "{\"choices\":[{\"text\":\"";
          s += static_cast<char>(lead);
          s += static_cast<char>(b2);
          s += static_cast<char>(b3);
          s += static_cast<char>(b4);
          s += "\"}]}";
          check_same_as_reference(s);
        }
      }
    }
  }
  // \u escapes around the surrogate ranges, alone and in pairs.
  const char* units[] = {"0000", "001f", "007F", "0080", "07ff", "0800", "d7ff", "D800", "dbff",
                         "dc00", "DFFF", "e000", "ffff", "zzzz", "12"};
  for (const char* a : units) {
    for (const char* b : units) {
      std::string s = std::string("{\"choices\":[{\"text\":\"x\\u") + a + "\\u" + b + "\"}]}";
      check_same_as_reference(s);
      s = std::string("{\"choices\":[{\"text\":\"\\u") + a + "y\\u" + b + "\"}]}";
      check_same_as_reference(s);
    }
  }
  // Number forms.
  for (const char* num : {"0", "-0", "01", "-", "1.", ".5", "1e", "1e+", "1E-2", "-1.5e+300", "1e400",
                          "9223372036854775807", "9223372036854775808", "-9223372036854775808",
                          "-9223372036854775809", "18446744073709551616", "00", "+1", "0x10"}) {
    check_same_as_reference(std::string("{\"choices\":[],\"usage\":{\"prompt_tokens\":") + num + "}}");
  }
}

// Not run by default: `runara_tests "[sse_bench]"`.
TEST_CASE("OpenAI stream: fast scanner vs nlohmann speed", "[.][sse_bench]") {
  std::vector<std::string> datas;
  for (const auto& e : events_of(sse_fixture("vllm-0.9-completions-stream-qwen3-4b-no-usage.sse")))
    datas.push_back(e.data);
  OpenAiStreamEvent ev;
  auto time_it = [&](auto fn) {
    auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < 20000; ++k)
      for (const auto& d : datas) fn(d);
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
           (20000.0 * datas.size());
  };
  double fast = time_it([&](const std::string& d) { interpret_openai_event(d, ev); });
  double ref = time_it([&](const std::string& d) { interpret_openai_json_reference(d, ev); });
  std::printf("fast %.0f ns/event, nlohmann reference %.0f ns/event\n", fast, ref);
  CHECK(fast < ref);
}

// A hostile server's event nested 100,000 levels deep, valid JSON otherwise: both interpreters
// refuse it as malformed with the same clear message, the fast scanner without growing its
// skip stack past the limit.
TEST_CASE("OpenAI stream: deeply nested server JSON is refused", "[openai_stream]") {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  for (const std::string& json :
       {"{\"x\": " + deep + ", \"choices\": [{\"text\": \"a\"}]}",
        "{\"choices\": [{\"delta\": {\"content\": \"a\", \"tool_calls\": " + deep + "}}]}",
        "{\"usage\": {\"prompt_tokens\": " + deep + "}}",
        "{\"error\": {\"message\": \"m\", \"details\": " + deep + "}}"}) {
    for (bool reference : {false, true}) {
      OpenAiStreamEvent ev;
      std::string text = "keep";
      if (reference) interpret_openai_json_reference(json, ev, &text);
      else interpret_openai_json(json, ev, &text);
      INFO((reference ? "reference: " : "fast: ") << json.substr(0, 60));
      CHECK(ev.kind == OpenAiEventKind::kError);
      CHECK(ev.error_kind == kMalformedSse);
      CHECK(ev.error_message.find("nested deeper than 64 levels") != std::string::npos);
      CHECK(text == "keep");
    }
  }
  // At the limit, both still agree field by field.
  const std::string at_limit = "{\"x\": " + std::string(63, '[') + std::string(63, ']') +
                               ", \"choices\": [{\"text\": \"a\"}]}";
  check_same_as_reference(at_limit);
  OpenAiStreamEvent ev;
  interpret_openai_json(at_limit, ev);
  CHECK(ev.has_token);
}
