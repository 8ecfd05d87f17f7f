// libFuzzer target for the SSE parser and the OpenAI stream interpreter.
//
// Built by CMake (tests/fuzz/CMakeLists.txt): a libFuzzer binary with clang, a replay of
// seeds and mutations under GCC (ctest runs it); see tests/fuzz/README.md.
//
// What one input checks:
//   * The stream (the input less a few trailing bytes that choose up to 16
//     split positions) fed at once, fed in the chosen pieces, and fed one byte
//     at a time gives the same events, the same finish() result, the same last
//     event id and retry value, and the same lenient finish(true) events.
//   * For every event, and for the raw stream bytes taken as one JSON text,
//     the fast OpenAI interpreter agrees with the nlohmann::json reference on
//     every field (skipped only where nlohmann rejects a number that overflows
//     a double, which the fast path accepts on purpose).

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "http/openai_stream.hpp"
#include "openai_stream_reference.hpp"
#include "http/sse_parser.hpp"

namespace {

using runara::OpenAiStreamEvent;
using runara::SseEvent;
using runara::SseParser;

struct Run {
  std::vector<SseEvent> events;
  bool pending = false;
  std::string last_id;
  std::optional<uint64_t> retry;
  std::vector<SseEvent> lenient;  // events from a second parser finishing with dispatch_pending
};

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "MISMATCH: %s\n", what);
  std::abort();
}

template <class Feed>
Run run(const std::string& s, Feed feed) {
  Run r;
  SseParser p([&](const SseEvent& e) { r.events.push_back(e); });
  feed(p, s);
  r.last_id = p.last_event_id();
  r.retry = p.retry_ms();
  r.pending = p.finish(false);
  SseParser q([&](const SseEvent& e) { r.lenient.push_back(e); });
  feed(q, s);
  q.finish(true);
  return r;
}

bool same(const OpenAiStreamEvent& a, const OpenAiStreamEvent& b) {
  if (a.kind != b.kind || a.error_kind != b.error_kind) return false;
  if (a.error_kind == runara::kMalformedSse) return true;  // messages differ by design
  return a.has_token == b.has_token && a.has_usage == b.has_usage && a.choices == b.choices &&
         a.token_choices == b.token_choices && a.text_bytes == b.text_bytes &&
         a.reasoning_bytes == b.reasoning_bytes && a.finish_reason == b.finish_reason &&
         a.prompt_tokens == b.prompt_tokens && a.completion_tokens == b.completion_tokens &&
         a.total_tokens == b.total_tokens && a.error_message == b.error_message &&
         a.error_type == b.error_type && a.error_code == b.error_code;
}

void check_json(std::string_view text) {
  OpenAiStreamEvent fast, ref;
  std::string fast_text = "prefix", ref_text = "prefix";
  runara::interpret_openai_json(text, fast, &fast_text);
  runara::interpret_openai_json_reference(text, ref, &ref_text);
  if (ref.error_kind == runara::kMalformedSse &&
      ref.error_message.find("number overflow") != std::string::npos)
    return;
  if (!same(fast, ref)) fail("fast and reference interpretation differ");
  if (fast_text != ref_text) fail("decoded text differs");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The cut points come from the input's end (so a recorded stream as a seed stays a stream at
  // its start): its last byte says how many, the two bytes before each say where.
  size_t end = size;
  const size_t nsplit = end > 0 ? data[--end] % 17 : 0;
  std::vector<size_t> cuts;
  for (size_t i = 0; i < nsplit && end >= 2; ++i, end -= 2) cuts.push_back(data[end - 2] | (data[end - 1] << 8));
  std::string stream(reinterpret_cast<const char*>(data), end);
  for (auto& c : cuts) c = stream.empty() ? 0 : c % (stream.size() + 1);
  std::sort(cuts.begin(), cuts.end());

  Run whole = run(stream, [](SseParser& p, const std::string& s) { p.feed(s); });
  Run split = run(stream, [&](SseParser& p, const std::string& s) {
    size_t at = 0;
    for (size_t c : cuts) {
      p.feed(std::string_view(s).substr(at, c - at));
      at = c;
    }
    p.feed(std::string_view(s).substr(at));
  });
  Run bytes = run(stream, [](SseParser& p, const std::string& s) {
    for (char ch : s) p.feed(&ch, 1);
  });
  for (const Run* r : {&split, &bytes}) {
    if (r->events != whole.events) fail("events differ between feeds");
    if (r->pending != whole.pending) fail("finish() differs");
    if (r->last_id != whole.last_id || r->retry != whole.retry) fail("id/retry differ");
    if (r->lenient != whole.lenient) fail("finish(true) events differ");
  }
  // The lenient events extend the strict ones.
  if (whole.lenient.size() < whole.events.size() ||
      !std::equal(whole.events.begin(), whole.events.end(), whole.lenient.begin()))
    fail("lenient events are not a superset");

  for (const SseEvent& e : whole.lenient) {
    OpenAiStreamEvent ev;
    runara::interpret_openai_event(e, ev);
    check_json(e.data);
  }
  check_json(stream);
  return 0;
}
