// ResponseJudge: a load's verdict on one response, from recorded vLLM streams (tests/fixtures/sse/)
// split at every byte boundary, vLLM's error bodies, cut streams and a hostile server's huge body.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "test_fixtures.hpp"
#include "load/response_judge.hpp"

using namespace runara;

using runara::test::sse_fixture;

namespace {

// One response fed to a judge: status, then the body in pieces of `piece` bytes, the i-th piece
// arriving at 1000 * (i + 1) ns.
struct Judged {
  RequestRecord rec;
  std::vector<std::int64_t> token_times;
  std::vector<std::int64_t> gaps;
  std::int64_t usage_prompt = -1;
  std::string message;
};

Judged judge(LoadMode mode, bool stream, int status, const std::string& body, std::size_t piece) {
  Judged out;
  ResponseJudge j(mode, stream, out.rec, [&](std::int64_t now) { out.token_times.push_back(now); });
  j.reset();
  j.status(status);
  std::int64_t now = 0;
  for (std::size_t at = 0; at < body.size(); at += piece) {
    now += 1000;
    j.body(body.data() + at, std::min(piece, body.size() - at), now);
  }
  out.message = j.conclude();
  out.gaps = j.gaps();
  out.usage_prompt = j.usage_prompt();
  return out;
}

}  // namespace

TEST_CASE("response judge: a recorded vLLM stream gives the same verdict however it is split", "[response_judge]") {
  const std::string body = sse_fixture("vllm-0.9-completions-stream-qwen3-4b-no-usage.sse") + "\n";
  for (std::size_t piece : {body.size(), std::size_t{1}, std::size_t{7}, std::size_t{300}}) {
    INFO("pieces of " << piece << " bytes");
    const Judged r = judge(LoadMode::kOpenAi, true, 200, body, piece);
    CHECK(r.message.empty());
    CHECK(r.rec.ok());
    CHECK(r.rec.chunks == 7);  // 7 token events, then [DONE]
    CHECK(r.rec.output_tokens == 7);
    CHECK_FALSE(r.rec.tokens_from_usage);  // "usage": null on every chunk
    CHECK(r.usage_prompt == -1);
    REQUIRE(r.token_times.size() == 7);
    CHECK(r.rec.first_token_ns == r.token_times.front());
    REQUIRE(r.gaps.size() == 6);
    for (std::size_t i = 0; i < r.gaps.size(); ++i) CHECK(r.gaps[i] == r.token_times[i + 1] - r.token_times[i]);
    CHECK(r.rec.done_ns == 1000 * static_cast<std::int64_t>((body.size() + piece - 1) / piece));
  }
}

TEST_CASE("response judge: the token times are when the bytes ending each event arrived", "[response_judge]") {
  const std::string body = sse_fixture("vllm-0.9-completions-stream-qwen3-4b-no-usage.sse") + "\n";
  const Judged r = judge(LoadMode::kOpenAi, true, 200, body, 1);
  // Byte-at-a-time: an event is complete at the blank line after it; byte k arrives at 1000 * (k + 1).
  std::size_t end = body.find("\n\n");
  REQUIRE(end != std::string::npos);
  CHECK(r.rec.first_token_ns == 1000 * static_cast<std::int64_t>(end + 2));
}

TEST_CASE("response judge: usage from the server wins over counted chunks", "[response_judge]") {
  // The Tenstorrent fork sends usage on every chunk; vLLM's key order kept.
  const std::string body =
      sse_fixture("vllm-tt-fork-completions-include-usage-every-chunk-PARTIAL.sse") + "\ndata: [DONE]\n\n";
  const Judged r = judge(LoadMode::kOpenAi, true, 200, body, 13);
  CHECK(r.message.empty());
  CHECK(r.rec.tokens_from_usage);
  CHECK(r.rec.output_tokens == 1);
  CHECK(r.rec.input_tokens == 5);
  CHECK(r.usage_prompt == 5);
}

TEST_CASE("response judge: a stream cut before [DONE] is a reset, keeping what arrived", "[response_judge]") {
  std::string body = sse_fixture("vllm-0.9-completions-stream-qwen3-4b-no-usage.sse");
  body = body.substr(0, body.find("data: [DONE]"));
  const Judged r = judge(LoadMode::kOpenAi, true, 200, body, 64);
  CHECK(r.rec.error == ErrorKind::kReset);
  CHECK(r.message == "the stream ended without \"data: [DONE]\"");
  CHECK(r.rec.chunks == 7);
}

TEST_CASE("response judge: vLLM's error body names the failure", "[response_judge]") {
  const std::string body =
      R"({"object":"error","message":"The model `x` does not exist.","type":"NotFoundError","param":null,"code":404})";
  const Judged r = judge(LoadMode::kOpenAi, true, 404, body, 10);
  CHECK(r.rec.error == ErrorKind::kHttpStatus);
  CHECK(r.rec.status == 404);
  CHECK(r.message == "HTTP 404: The model `x` does not exist.");
  CHECK(r.token_times.empty());

  const Judged plain = judge(LoadMode::kHttp, false, 502, "<html>\r\nBad Gateway\r\n</html>", 5);
  CHECK(plain.rec.error == ErrorKind::kHttpStatus);
  CHECK(plain.message == "HTTP 502: <html>  Bad Gateway  </html>");
}

TEST_CASE("response judge: an error event or a malformed event inside a 200 stream", "[response_judge]") {
  const std::string tokens = "data: {\"choices\":[{\"text\":\"a\"}]}\n\n";
  const Judged server = judge(LoadMode::kOpenAi, true, 200,
                              tokens + "data: {\"error\":{\"message\":\"engine dead\",\"code\":500}}\n\ndata: [DONE]\n\n", 9);
  CHECK(server.rec.error == ErrorKind::kServerError);
  CHECK(server.message == "server_error: engine dead");
  CHECK(server.rec.chunks == 1);

  const Judged bad = judge(LoadMode::kOpenAi, true, 200, tokens + "data: {\"choices\":[\n\ndata: [DONE]\n\n", 9);
  CHECK(bad.rec.error == ErrorKind::kMalformedSse);
  CHECK(bad.message.rfind("malformed_sse: invalid JSON object near byte", 0) == 0);
}

TEST_CASE("response judge: a whole (non-streamed) reply is one chunk at its last byte", "[response_judge]") {
  const std::string body =
      R"({"id":"cmpl-1","object":"text_completion","choices":[{"index":0,"text":" city in the state","finish_reason":"length"}],)"
      R"("usage":{"prompt_tokens":4,"total_tokens":20,"completion_tokens":16}})";
  const Judged r = judge(LoadMode::kOpenAi, false, 200, body, 50);
  CHECK(r.message.empty());
  CHECK(r.rec.chunks == 1);
  CHECK(r.rec.output_tokens == 16);
  CHECK(r.rec.input_tokens == 4);
  CHECK(r.rec.first_token_ns == r.rec.done_ns);
  CHECK(r.token_times.empty());  // nothing streamed
}

TEST_CASE("response judge: plain HTTP succeeds on any 2xx, first byte as first token", "[response_judge]") {
  const Judged r = judge(LoadMode::kHttp, false, 204, "ok", 1);
  CHECK(r.message.empty());
  CHECK(r.rec.first_token_ns == 1000);
  CHECK(r.rec.done_ns == 2000);
}

TEST_CASE("response judge: a hostile server's huge error body is kept bounded", "[response_judge]") {
  const std::string body(8 << 20, 'x');
  RequestRecord rec;
  ResponseJudge j(LoadMode::kOpenAi, false, rec, nullptr);
  j.reset();
  j.status(500);
  for (std::size_t at = 0; at < body.size(); at += 65536) j.body(body.data() + at, 65536, 1);
  const std::string message = j.conclude();
  CHECK(rec.error == ErrorKind::kHttpStatus);
  CHECK(message.size() <= 220);  // "HTTP 500: " and the first 200 bytes
}

TEST_CASE("response judge: a transport failure, then reuse for the next request", "[response_judge]") {
  RequestRecord rec;
  int tokens = 0;
  ResponseJudge j(LoadMode::kOpenAi, true, rec, [&](std::int64_t) { ++tokens; });
  j.reset();
  j.status(200);
  j.body("data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: {\"choices\":[{\"text\":\"b\"}]}\n\ndata: {\"cho", 60, 5);
  CHECK(j.transport_failed(ErrorKind::kTimeout, "timed out after 1 s") == "timed out after 1 s");
  CHECK(rec.error == ErrorKind::kTimeout);

  rec = RequestRecord{};
  j.reset();
  CHECK(j.gaps().empty());
  j.status(200);
  const std::string next = "data: {\"choices\":[{\"text\":\"c\"}]}\n\ndata: [DONE]\n\n";
  j.body(next.data(), next.size(), 9);
  CHECK(j.conclude().empty());
  CHECK(rec.chunks == 1);  // the cut event of the last request is not carried over
  CHECK(tokens == 2);      // "a" only (60 bytes end inside "b"'s event), then "c"
}

// Issue 25: one 1 GiB event grew the SSE parser to 3.1 GB of peak RSS; endless token events grew
// the gap list by 8 bytes each (1.6 GB in 25 s) under --max-memory 64M.
TEST_CASE("response judge: one SSE event over 1 MiB fails the request and stops the read", "[response_judge]") {
  RequestRecord rec;
  ResponseJudge j(LoadMode::kOpenAi, true, rec, nullptr);
  j.reset();
  j.status(200);
  const std::string start = "data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: {\"choices\":[{\"text\":\"";
  CHECK(j.body(start.data(), start.size(), 1));
  const std::string piece(64 * 1024, 'x');
  std::size_t fed = 0;
  while (fed < (std::size_t{64} << 20) && j.body(piece.data(), piece.size(), 2)) fed += piece.size();
  CHECK(fed <= (std::size_t{1} << 20));  // stopped at the limit, not at the 64 MiB offered
  CHECK_FALSE(j.body(piece.data(), piece.size(), 3));
  const std::string message = j.transport_failed(ErrorKind::kOther, "the rest of the response was not read");
  CHECK(rec.error == ErrorKind::kMalformedSse);
  CHECK(message == "malformed_sse: an SSE event larger than 1 MiB (the limit on one event); the rest of the response was not read");
  CHECK(rec.chunks == 1);

  rec = RequestRecord{};  // the next request starts clean
  j.reset();
  j.status(200);
  const std::string next = "data: {\"choices\":[{\"text\":\"c\"}]}\n\ndata: [DONE]\n\n";
  CHECK(j.body(next.data(), next.size(), 9));
  CHECK(j.conclude().empty());
  CHECK(rec.ok());
}

namespace {

// Feeds token events until the judge stops reading (or `most` events); returns how many it took.
std::size_t feed_tokens(ResponseJudge& j, std::size_t most) {
  const std::string event = "data: {\"choices\":[{\"text\":\"t\"}]}\n\n";
  std::string chunk;
  for (int i = 0; i < 1024; ++i) chunk += event;
  std::size_t events = 0;
  std::int64_t now = 0;
  while (events < most) {
    if (!j.body(chunk.data(), chunk.size(), now += 1000)) break;
    events += 1024;
  }
  return events;
}

}  // namespace

TEST_CASE("response judge: endless token events are bounded per response", "[response_judge]") {
  SECTION("at most kMaxTokenEvents, then the request fails") {
    RequestRecord rec;
    ResponseJudge j(LoadMode::kOpenAi, true, rec, nullptr);
    j.reset();
    j.status(200);
    const std::size_t events = feed_tokens(j, 4 * ResponseJudge::kMaxTokenEvents);
    CHECK(events < ResponseJudge::kMaxTokenEvents + 1024);
    CHECK(rec.chunks == ResponseJudge::kMaxTokenEvents);
    CHECK(j.gaps().size() == ResponseJudge::kMaxTokenEvents - 1);
    CHECK(j.conclude() == "more than 1048576 token events in one response (the limit per response); the rest was not read");
    CHECK(rec.error == ErrorKind::kOther);
  }
  SECTION("the gap list is charged to the run's memory budget, and given back") {
    auto budget = std::make_shared<MemoryBudget>(std::size_t{1} << 20);
    RequestRecord rec;
    ResponseJudge j(LoadMode::kOpenAi, true, rec, nullptr, budget);
    j.reset();
    j.status(200);
    const std::size_t events = feed_tokens(j, ResponseJudge::kMaxTokenEvents);
    CHECK(events < ResponseJudge::kMaxTokenEvents / 4);
    CHECK(budget->reserved() > 0);
    CHECK(budget->reserved() <= budget->limit());
    const std::string message = j.transport_failed(ErrorKind::kOther, "the rest of the response was not read");
    CHECK(rec.error == ErrorKind::kOther);
    CHECK(message.find("the token gaps of one response (") == 0);
    CHECK(message.find("(raise it with --max-memory)") != std::string::npos);
    rec = RequestRecord{};
    j.reset();
    CHECK(budget->reserved() == 0);
    // A reply within the free allowance charges nothing.
    j.status(200);
    CHECK(feed_tokens(j, 400) == 1024);  // one chunk of 1024 events: past the free 512 gaps
    CHECK(budget->reserved() > 0);
    j.reset();
    CHECK(budget->reserved() == 0);
  }
}

// Issue 43: a judge per open stream reserved 512 gaps (4 KiB) up front, which doubled http_load's
// memory per stream; the list now grows with the reply.
TEST_CASE("response judge: the gap list is no larger than the reply needs", "[response_judge]") {
  RequestRecord rec;
  ResponseJudge j(LoadMode::kOpenAi, true, rec, nullptr);
  CHECK(j.gaps().capacity() == 0);
  j.reset();
  j.status(200);
  std::string reply;
  for (int i = 0; i < 32; ++i) reply += "data: {\"choices\":[{\"text\":\"t\"}]}\n\n";
  reply += "data: [DONE]\n\n";
  std::int64_t now = 0;
  for (std::size_t at = 0; at < reply.size(); at += 40) {
    j.body(reply.data() + at, std::min<std::size_t>(40, reply.size() - at), now += 1000);
  }
  CHECK(j.conclude().empty());
  CHECK(j.gaps().size() == 31);
  CHECK(j.gaps().capacity() <= 32);
  rec = RequestRecord{};
  j.reset();
  CHECK(j.gaps().capacity() <= 32);  // kept for the next reply of the stream, not grown
}
