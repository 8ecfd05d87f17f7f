// Interpretation of OpenAI-compatible (vLLM) streaming responses from
// /v1/completions and /v1/chat/completions: one SSE event's data at a time, or
// a whole JSON body (non-streaming responses, HTTP error bodies).
//
// Recognised:
//   * "data: [DONE]"                                   -> kDone
//   * token chunks: choices[].text, or choices[].delta / choices[].message
//     with "content", "reasoning_content" or "reasoning" -- a choice carries
//     a token when any of these is a non-empty string
//   * the usage chunk: "usage": {"prompt_tokens", "completion_tokens",
//     "total_tokens"} (usage may also ride on token chunks)
//   * errors: {"error": {...}} / {"error": "text"} / {"object": "error", ...}
//     -> kError, error_kind "server_error"
//   * anything that is not a JSON object (invalid JSON, an empty event, a
//     JSON array...) -> kError, error_kind "malformed_sse"
//   * a server's event nested deeper than kMaxJsonDepth (64, json_limits.hpp)
//     -> kError, error_kind "malformed_sse", "nested deeper than 64 levels
//     (at byte B)": both paths refuse it, so a hostile server cannot make
//     either walk (or grow a skip stack) without bound
//
// The fast path does not build a JSON tree: a single pass validates the whole
// text with the full JSON grammar (RFC 8259, UTF-8 checked, surrogate pairs
// checked) and picks the few fields above by position, with "last duplicate
// key wins" like nlohmann::json. The tests and the fuzzer compare it with an oracle doing
// the same on an nlohmann::json tree (tests/support/openai_stream_reference.hpp).
// The one deliberate difference: numbers too large for a double (1e400) are
// valid JSON here, nlohmann rejects them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace runara {

struct SseEvent;

enum class OpenAiEventKind : uint8_t { kChunk, kDone, kError };

inline constexpr std::string_view kMalformedSse = "malformed_sse";
inline constexpr std::string_view kServerError = "server_error";

struct OpenAiStreamEvent {
  OpenAiEventKind kind = OpenAiEventKind::kChunk;
  bool has_token = false;        // at least one choice carried non-empty content
  bool has_usage = false;        // "usage" was an object
  uint32_t choices = 0;          // elements in "choices" (when it is an array)
  uint32_t token_choices = 0;    // choices that carried content
  uint64_t text_bytes = 0;       // decoded UTF-8 bytes of all content, reasoning included
  uint64_t reasoning_bytes = 0;  // the part of text_bytes from reasoning_content/reasoning
  std::string finish_reason;     // last non-null string finish_reason among choices, or ""
  int64_t prompt_tokens = -1;    // from usage, -1 when absent or not an integer
  int64_t completion_tokens = -1;
  int64_t total_tokens = -1;
  // kError only:
  std::string error_kind;        // kMalformedSse or kServerError
  std::string error_message;     // the server's message, or where the JSON broke
  std::string error_type;        // the server's "type" (e.g. "BadRequestError"), or ""
  int64_t error_code = 0;        // the server's integer "code", or 0

  void clear();
  bool is_error() const { return kind == OpenAiEventKind::kError; }
};

// Interprets the data of one SSE event. When text_out is given, the decoded
// content of the chunk is appended to it (per choice: text, reasoning_content,
// reasoning, content; delta before message). Returns out.kind.
OpenAiEventKind interpret_openai_event(std::string_view data, OpenAiStreamEvent& out,
                                       std::string* text_out = nullptr);
// Same, honouring the SSE event type: an "error" event is always kError.
OpenAiEventKind interpret_openai_event(const SseEvent& event, OpenAiStreamEvent& out,
                                       std::string* text_out = nullptr);

// Interprets a whole JSON body (no [DONE] check). Same fields as above.
OpenAiEventKind interpret_openai_json(std::string_view json, OpenAiStreamEvent& out,
                                      std::string* text_out = nullptr);

// Sums up the events of one streamed response.
struct OpenAiStreamSummary {
  uint64_t events = 0;           // events interpreted
  uint64_t token_events = 0;     // events with has_token
  uint64_t text_bytes = 0;
  uint64_t reasoning_bytes = 0;
  int64_t prompt_tokens = -1;    // from the last usage seen
  int64_t completion_tokens = -1;
  bool done = false;             // [DONE] seen
  bool error = false;            // an error event seen (the first one is kept below)
  std::string error_kind, error_message;
  std::string finish_reason;     // last one seen

  void add(const OpenAiStreamEvent& ev);
};

}  // namespace runara
