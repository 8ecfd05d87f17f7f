// SSE parser: WHATWG event-stream interpretation, split-invariance on the
// recorded vLLM streams in tests/fixtures/sse/.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "test_fixtures.hpp"
#include "http/sse_parser.hpp"

using runara::SseEvent;
using runara::SseParser;

using runara::test::sse_fixture;

namespace {

const std::vector<std::string> kFixtures = {
    "vllm-0.9-completions-stream-qwen3-4b-no-usage.sse",
    "vllm-0.5-chat-stream-qwen-no-usage-PARTIAL.sse",
    "vllm-tt-fork-completions-include-usage-every-chunk-PARTIAL.sse",
};

struct Parsed {
  std::vector<SseEvent> events;
  bool pending = false;
};

// Feeds the pieces of s cut at the given positions, then finishes.
Parsed parse(std::string_view s, const std::vector<size_t>& cuts = {}, bool lenient = false) {
  Parsed out;
  SseParser p([&](const SseEvent& e) { out.events.push_back(e); });
  size_t at = 0;
  for (size_t c : cuts) {
    p.feed(s.substr(at, c - at));
    at = c;
  }
  p.feed(s.substr(at));
  out.pending = p.finish(lenient);
  return out;
}

std::vector<std::string> datas(const Parsed& p) {
  std::vector<std::string> d;
  for (const auto& e : p.events) d.push_back(e.data);
  return d;
}

}  // namespace

TEST_CASE("SSE: recorded vLLM streams give the same events split at every byte", "[sse]") {
  for (const std::string& name : kFixtures) {
    INFO(name);
    std::string s = sse_fixture(name);
    Parsed whole = parse(s, {}, true);
    REQUIRE(!whole.events.empty());
    for (size_t cut = 0; cut <= s.size(); ++cut) {
      Parsed split = parse(s, {cut}, true);
      REQUIRE(split.events == whole.events);
      REQUIRE(split.pending == whole.pending);
    }
    // One byte at a time.
    std::vector<size_t> every(s.size());
    for (size_t i = 0; i < s.size(); ++i) every[i] = i;
    REQUIRE(parse(s, every, true).events == whole.events);
    // Random multi-way splits.
    std::mt19937 rng(7);
    for (int trial = 0; trial < 200; ++trial) {
      std::vector<size_t> cuts;
      for (int k = 0; k < 6; ++k) cuts.push_back(rng() % (s.size() + 1));
      std::sort(cuts.begin(), cuts.end());
      REQUIRE(parse(s, cuts, true).events == whole.events);
    }
  }
}

TEST_CASE("SSE: the recorded streams parse to the expected events", "[sse]") {
  // The completions stream: 7 chunks, then [DONE] -- whose closing blank line
  // was lost in the recording, so the spec-strict finish() discards it.
  std::string s = sse_fixture("vllm-0.9-completions-stream-qwen3-4b-no-usage.sse");
  Parsed strict = parse(s);
  REQUIRE(strict.events.size() == 7);
  CHECK(strict.pending);
  for (const auto& e : strict.events) {
    CHECK(e.type == "message");
    CHECK(e.id.empty());
    CHECK(e.data.rfind("{\"id\":\"cmpl-9d0ab69d6c9a4321857d6e0b9acaba7e\"", 0) == 0);
  }
  Parsed lenient = parse(s, {}, true);
  REQUIRE(lenient.events.size() == 8);
  CHECK(lenient.events.back().data == "[DONE]");
  // With the blank line restored nothing is pending.
  Parsed restored = parse(s + "\n");
  CHECK(restored.events.size() == 8);
  CHECK_FALSE(restored.pending);

  Parsed chat = parse(sse_fixture("vllm-0.5-chat-stream-qwen-no-usage-PARTIAL.sse"), {}, true);
  REQUIRE(chat.events.size() == 6);
  CHECK(chat.events[0].data.find("\"delta\":{\"role\":\"assistant\"}") != std::string::npos);

  Parsed tt = parse(sse_fixture("vllm-tt-fork-completions-include-usage-every-chunk-PARTIAL.sse"),
                    {}, true);
  REQUIRE(tt.events.size() == 1);
}

TEST_CASE("SSE: LF, CRLF and CR line ends are equivalent, also split mid-CRLF", "[sse]") {
  const std::string lf =
      "data: one\n\n"
      ": a comment\n"
      "event: update\n"
      "id: 42\n"
      "data: two\n"
      "data: lines\n\n"
      "retry: 1500\n"
      "data:three\n\n";
  auto with = [&](const std::string& eol) {
    std::string out;
    for (char c : lf) {
      if (c == '\n') {
        out += eol;
      } else {
        out.push_back(c);
      }
    }
    return out;
  };
  Parsed base = parse(lf);
  REQUIRE(base.events.size() == 3);
  CHECK(base.events[0] == SseEvent{"message", "one", ""});
  CHECK(base.events[1] == SseEvent{"update", "two\nlines", "42"});
  CHECK(base.events[2] == SseEvent{"message", "three", "42"});
  CHECK_FALSE(base.pending);
  for (const std::string& eol : {std::string("\r\n"), std::string("\r")}) {
    std::string s = with(eol);
    INFO("eol size " << eol.size());
    for (size_t a = 0; a <= s.size(); ++a) {
      for (size_t b = a; b <= s.size(); b += 3) {
        REQUIRE(parse(s, {a, b}).events == base.events);
      }
    }
  }
  // Mixed line ends in one stream.
  CHECK(parse("data: a\r\ndata: b\rdata: c\n\r\n").events ==
        std::vector<SseEvent>{{"message", "a\nb\nc", ""}});
  // A CR ending one feed, then an LF starting the next, is one line end...
  CHECK(datas(parse("data: x\r\n\r\n", {8})) == std::vector<std::string>{"x"});
  // ...while CR then CR is two (a blank line).
  CHECK(datas(parse("data: x\r\rdata: y\n\n", {8})) == std::vector<std::string>{"x", "y"});
}

TEST_CASE("SSE: field rules", "[sse]") {
  SECTION("comments are ignored, also between data lines") {
    CHECK(datas(parse(":hi\ndata: a\n: keep-alive\ndata: b\n\n:\n\n")) ==
          std::vector<std::string>{"a\nb"});
  }
  SECTION("only one space after the colon is removed") {
    CHECK(datas(parse("data:a\n\ndata: b\n\ndata:  c\n\n")) ==
          std::vector<std::string>{"a", "b", " c"});
  }
  SECTION("a field without a colon has an empty value") {
    CHECK(datas(parse("data\n\n")) == std::vector<std::string>{""});
    CHECK(datas(parse("data\ndata\n\n")) == std::vector<std::string>{"\n"});
  }
  SECTION("an event without data is not dispatched and its type is dropped") {
    Parsed p = parse("event: ping\n\ndata: x\n\n");
    REQUIRE(p.events.size() == 1);
    CHECK(p.events[0].type == "message");
  }
  SECTION("unknown fields are ignored; data keeps colons") {
    CHECK(datas(parse("foo: bar\ndata: {\"a\":1}\n\n")) == std::vector<std::string>{"{\"a\":1}"});
  }
  SECTION("id persists, an id with NUL is ignored, an empty id resets") {
    std::string s = std::string("id: 1\ndata: a\n\ndata: b\n\nid: 2") + '\0' + "x\ndata: c\n\nid\ndata: d\n\n";
    Parsed p = parse(s);
    REQUIRE(p.events.size() == 4);
    CHECK(p.events[0].id == "1");
    CHECK(p.events[1].id == "1");
    CHECK(p.events[2].id == "1");
    CHECK(p.events[3].id == "");
  }
  SECTION("retry takes only ASCII digits") {
    SseParser p(nullptr);
    p.feed("retry: 3000\n");
    CHECK(p.retry_ms() == 3000u);
    p.feed("retry: 12a\nretry: -5\nretry:\n");
    CHECK(p.retry_ms() == 3000u);
    p.feed("retry:7\n");
    CHECK(p.retry_ms() == 7u);
  }
  SECTION("a leading BOM is dropped, also when split; only the first one") {
    std::string bom = "\xEF\xBB\xBF";
    std::string s = bom + "data: a\n\n";
    for (size_t cut = 0; cut <= 4; ++cut) CHECK(datas(parse(s, {cut})) == std::vector<std::string>{"a"});
    CHECK(datas(parse(s, {1, 2})) == std::vector<std::string>{"a"});
    // A second BOM makes the field name unknown.
    CHECK(datas(parse(bom + bom + "data: a\n\ndata: b\n\n")) == std::vector<std::string>{"b"});
    // A BOM prefix that is not a BOM is content.
    CHECK(datas(parse("\xEF\xBB" "data: x\n\n")).empty());
    CHECK(datas(parse("\xEF" "\n" "data: x\n\n", {1})) == std::vector<std::string>{"x"});
  }
  SECTION("finish reports an event cut short") {
    CHECK_FALSE(parse("data: a\n\n").pending);
    CHECK(parse("data: a\n").pending);
    CHECK(parse("data: a").pending);
    Parsed lenient = parse("data: a\ndata: b", {}, true);
    CHECK(datas(lenient) == std::vector<std::string>{"a\nb"});
  }
  SECTION("the parser is reusable after finish") {
    std::vector<std::string> got;
    SseParser p([&](const SseEvent& e) { got.push_back(e.data); });
    p.feed("data: a\n\ndata: cut");
    CHECK(p.finish());
    p.feed("\xEF\xBB\xBF" "data: b\n\n");
    CHECK_FALSE(p.finish());
    CHECK(got == std::vector<std::string>{"a", "b"});
    CHECK(p.events_dispatched() == 2);
  }
}

// Issue 25: a hostile server could grow one event without limit (3.1 GB of peak RSS for a 1 GiB
// event under --max-memory 64M). One event now holds at most kMaxEventBytes (1 MiB).
TEST_CASE("SSE: one event larger than the limit is dropped, never grown", "[sse]") {
  constexpr size_t kLimit = SseParser::kMaxEventBytes;
  STATIC_REQUIRE(kLimit == size_t{1} << 20);
  SECTION("one endless data line, fed in pieces") {
    std::vector<std::string> got;
    SseParser p([&](const SseEvent& e) { got.push_back(e.data); });
    p.feed("data: ok\n\n");
    const std::string piece(64 * 1024, 'x');
    p.feed("data: ");
    size_t peak = 0;
    for (int i = 0; i < 64 && !p.overflowed(); ++i) {  // 4 MiB offered
      p.feed(piece);
      peak = std::max(peak, p.buffered_bytes());
    }
    CHECK(p.overflowed());
    CHECK(peak <= kLimit);
    CHECK(p.buffered_bytes() == 0);  // what it held is dropped
    p.feed("\n\ndata: after\n\n");   // the rest of the stream is ignored
    CHECK(got == std::vector<std::string>{"ok"});
    CHECK(p.finish());               // the stream was cut
    CHECK_FALSE(p.overflowed());
    p.feed("data: again\n\n");       // reusable afterwards
    CHECK(got == std::vector<std::string>{"ok", "again"});
  }
  SECTION("many data lines adding up past the limit, in one feed") {
    std::string s;
    while (s.size() <= kLimit + 20000) s += "data: " + std::string(1000, 'y') + "\n";
    s += "\ndata: later\n\n";
    Parsed p = parse(s);
    CHECK(p.events.empty());
    CHECK(p.pending);
  }
  SECTION("one line over the limit inside a single feed") {
    Parsed p = parse("event: " + std::string(kLimit + 1, 'e') + "\ndata: x\n\n");
    CHECK(p.events.empty());
  }
  SECTION("an event just under the limit is dispatched; a small limit can be chosen") {
    const std::string data(kLimit - 16, 'z');
    Parsed p = parse("data: " + data + "\n\n");
    REQUIRE(p.events.size() == 1);
    CHECK(p.events[0].data == data);
    std::vector<std::string> got;
    SseParser small([&](const SseEvent& e) { got.push_back(e.data); }, 16);
    small.feed("data: 0123456789\n\n");
    CHECK_FALSE(small.overflowed());
    small.feed("data: 0123456789\ndata: x\n\n");
    CHECK(small.overflowed());
    CHECK(got == std::vector<std::string>{"0123456789"});
  }
}
