// Judging one response of a load from its bytes: the status, the body as it arrives (an SSE
// stream of OpenAI events, a whole JSON reply, or plain bytes), and the verdict once the
// transport says the response is complete. It fills the request's record (first token, chunks,
// tokens, error kind) and keeps the gaps between token events; it knows nothing of sockets,
// libcurl, threads or statistics, so a test can feed it recorded bytes split any way.
//
// Contract: single-threaded (the worker's); `on_token` runs inside body() for each event that
// carries a token, with the bytes' arrival time. A judge is reused request after request:
// reset() before each. What it keeps is bounded, whatever the server sends: error replies and
// non-streamed bodies up to kMaxKeptBody; one SSE event up to SseParser::kMaxEventBytes (1 MiB);
// one gap per token event, at most kMaxTokenEvents of them, charged to the run's memory budget
// (when given) as the list grows; with keep_text(), the reply's generated text, charged likewise
// (save_detailed's generated_texts). Past a bound the verdict is known before the response ends:
// body() returns false (the transport should stop reading) and the request fails with a
// message naming the bound, whatever the transport then reports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "http/openai_stream.hpp"
#include "load/spec.hpp"
#include "load/request_record.hpp"
#include "runara/memory_budget.hpp"

namespace runara {

class SseParser;
struct SseEvent;

class ResponseJudge {
 public:
  static constexpr std::size_t kMaxKeptBody = 64 * 1024;
  // Token events of one streamed response; each keeps an 8-byte gap until the response ends.
  // Far above any real reply (a 128k-token reply of one token per event has 131,072).
  static constexpr std::size_t kMaxTokenEvents = std::size_t{1} << 20;
  // Gaps kept between requests without being charged (a 512-token reply's); a longer list is
  // freed when the next request starts. None are reserved before a reply needs them: 4 KiB
  // reserved per open stream doubled http_load's memory per stream (issue 43).
  static constexpr std::size_t kFreeGaps = 512;
  // The gap list's first capacity (128 bytes), doubled as a reply's token events need.
  static constexpr std::size_t kFirstGaps = 16;
  // Text capacity kept between requests (with keep_text); a longer one is freed at reset().
  static constexpr std::size_t kFreeText = 4096;

  // `mode`, `stream`: the load's (openai or plain http; an openai response streamed as SSE).
  // `memory`: the run's budget, charged for the gap list beyond kFreeGaps (null: not charged).
  ResponseJudge(LoadMode mode, bool stream, RequestRecord& record, std::function<void(std::int64_t)> on_token,
                std::shared_ptr<MemoryBudget> memory = nullptr);
  ~ResponseJudge();
  ResponseJudge(const ResponseJudge&) = delete;
  ResponseJudge& operator=(const ResponseJudge&) = delete;

  void reset();
  // Keep the reply's generated text (openai mode), for text(): off unless asked.
  void keep_text(bool keep) { keep_text_ = keep; }
  bool status_known() const { return status_known_; }
  void status(int status);
  // Body bytes that arrived at `arrived_ns` (ns since the load started). False once the
  // response crossed a bound (its verdict is known): read no more of it.
  bool body(const char* data, std::size_t len, std::int64_t arrived_ns);
  // The transport delivered the whole response: "" when it succeeded, else why it did not
  // (the record's error kind set).
  std::string conclude();
  // The transport failed (`kind`, its `message`): records it and returns the message.
  std::string transport_failed(ErrorKind kind, std::string message);

  const std::vector<std::int64_t>& gaps() const { return gaps_; }  // between token events, ns
  std::int64_t usage_prompt() const { return usage_prompt_; }       // the server's count, -1 if none
  const std::string& text() const { return text_; }                 // with keep_text: what the reply generated

 private:
  void on_event(const SseEvent& e);
  void add_gap(std::int64_t gap);
  std::string charge_text();
  void stop(ErrorKind kind, std::string message);
  std::string conclude_whole_reply();
  void count_tokens();
  std::string fail(ErrorKind kind, std::string message);
  std::string http_error_text();

  const LoadMode mode_;
  const bool stream_;
  RequestRecord& rec_;
  std::function<void(std::int64_t)> on_token_;
  std::unique_ptr<SseParser> parser_;  // openai streams only
  OpenAiStreamEvent event_;            // scratch, reused
  std::vector<std::int64_t> gaps_;
  std::int64_t last_token_ns_ = -1;
  std::int64_t now_ = 0;               // arrival time of the bytes being parsed
  bool status_known_ = false, http_error_ = false, done_seen_ = false;
  ErrorKind event_error_ = ErrorKind::kNone;
  std::string message_;                // the first error event's message
  std::int64_t usage_prompt_ = -1, usage_completion_ = -1;
  std::string reply_;                  // error body or non-streamed reply (capped)
  std::shared_ptr<MemoryBudget> memory_;
  MemoryReservation gap_memory_;       // the gap list's capacity beyond kFreeGaps, from memory_
  bool keep_text_ = false;
  std::string text_;                   // with keep_text_: the generated text so far
  MemoryReservation text_memory_;      // text_'s capacity, from memory_
  ErrorKind stop_kind_ = ErrorKind::kNone;  // a bound crossed: the verdict, whatever follows
  std::string stop_message_;
};

}  // namespace runara
