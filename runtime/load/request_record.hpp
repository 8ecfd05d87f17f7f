// What one request of a load did, kept compact (one per request, for requests.jsonl and the
// per-request arrays) — latency statistics live in histograms, not here.
//
// Times are nanoseconds after the load started (monotonic clock, taken when the bytes arrived).
// `intended_ns` is when the request was due: the schedule's time in an open loop, the send time
// in a closed loop. Latencies are measured from it, so a client or server that falls behind
// shows up as latency instead of being hidden (no coordinated omission).
#pragma once

#include <cstdint>
#include <string_view>

namespace runara {

enum class ErrorKind : std::uint8_t {
  kNone,
  kHttpStatus,    // the server answered with a non-2xx status
  kTimeout,       // the per-request timeout passed
  kConnect,       // no connection (refused, unreachable, DNS)
  kReset,         // the connection broke mid-response, or the stream ended without [DONE]
  kMalformedSse,  // an event that is not valid OpenAI JSON
  kServerError,   // an error event inside a 200 stream
  kRefused,       // the target address is not one the run may reach (sandbox)
  kOther,
};
inline constexpr int kErrorKinds = 9;
std::string_view error_kind_name(ErrorKind kind);  // "http_status", "timeout", ...

struct RequestRecord {
  std::uint64_t index = 0;      // the request's number in the load (warmup included)
  std::int64_t intended_ns = 0;
  std::int64_t sent_ns = 0;     // handed to the connection
  std::int64_t first_token_ns = -1;  // first event carrying a token (openai), first body byte (http)
  std::int64_t done_ns = -1;    // last byte of the response
  std::int32_t input_tokens = -1;
  std::int32_t output_tokens = 0;
  std::uint32_t chunks = 0;     // events that carried tokens
  std::uint32_t prompt = 0;     // index of the prompt in the pool
  std::int16_t status = 0;      // HTTP status, 0 if none
  ErrorKind error = ErrorKind::kNone;
  bool tokens_from_usage = false;  // output_tokens came from the server's usage, not counted chunks
  bool warmup = false;

  bool ok() const { return error == ErrorKind::kNone; }
  double ttft_ms() const { return first_token_ns < 0 ? -1 : (first_token_ns - sent_ns) / 1e6; }
  double e2el_ms() const { return done_ns < 0 ? -1 : (done_ns - sent_ns) / 1e6; }
  double ttft_from_schedule_ms() const { return first_token_ns < 0 ? -1 : (first_token_ns - intended_ns) / 1e6; }
  double e2el_from_schedule_ms() const { return done_ns < 0 ? -1 : (done_ns - intended_ns) / 1e6; }
  double queue_ms() const { return (sent_ns - intended_ns) / 1e6; }
  // (e2el - ttft) / (tokens - 1): the vLLM / MLPerf convention; -1 when undefined.
  double tpot_ms() const {
    if (output_tokens < 2 || first_token_ns < 0 || done_ns < 0) return -1;
    return (done_ns - first_token_ns) / 1e6 / (output_tokens - 1);
  }
};

}  // namespace runara
