// Incremental Server-Sent Events parser (WHATWG HTML "Server-sent events",
// section "Interpreting an event stream"), byte oriented.
//
// Feed the stream in arbitrary pieces with feed(); every complete event is
// handed to the callback in order. Splitting the input differently never
// changes the events produced.
//
// Handled: LF, CRLF and CR line ends (also a CRLF whose CR ends one feed and
// whose LF starts the next), one leading UTF-8 BOM (also split across feeds),
// comments (lines starting with ':'), one optional space after the colon,
// multi-line data joined with "\n", the event/id/retry fields (id values
// holding NUL are ignored, retry values that are not all ASCII digits are
// ignored), unknown fields ignored, dispatch on a blank line, events with no
// data line not dispatched, the last event id carried over between events.
//
// Bounded: one event (its data lines so far and the line being read) may hold at most
// max_event_bytes (kMaxEventBytes, 1 MiB, unless the constructor says otherwise). A stream that
// grows one event past it makes the parser drop what it held and ignore the rest of the stream
// (overflowed() turns true) instead of growing without limit: a hostile server cannot make it
// hold more than about twice the limit (the event and the last event id).
//
// Not done: UTF-8 decoding. Bytes are passed through unchanged, so invalid
// UTF-8 is not replaced with U+FFFD (line ends and ':' are ASCII and cannot
// occur inside a multi-byte UTF-8 sequence, so splitting is unaffected).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace runara {

// One dispatched event. The parser reuses it between events: copy what you
// need before the callback returns.
struct SseEvent {
  std::string type;  // the "event" field; "message" when none was given
  std::string data;  // the data lines joined with "\n" (no trailing "\n")
  std::string id;    // the last event id seen in the stream so far ("" if none)

  bool operator==(const SseEvent&) const = default;
};

class SseParser {
 public:
  using Callback = std::function<void(const SseEvent&)>;

  // Far above any real token event (vLLM's are a few hundred bytes; a whole non-streamed reply
  // of 32k tokens is about 200 KiB).
  static constexpr size_t kMaxEventBytes = size_t{1} << 20;

  explicit SseParser(Callback on_event, size_t max_event_bytes = kMaxEventBytes);

  // Parses the next piece of the stream. The callback runs inside this call,
  // once per completed event; it must not call feed() or finish() itself, nor
  // throw.
  void feed(std::string_view bytes);
  void feed(const char* bytes, size_t len) { feed(std::string_view(bytes, len)); }

  // Marks the end of the stream. By the spec an event not yet ended by a blank
  // line is discarded; pass dispatch_pending=true to dispatch it anyway
  // (a lenient mode for streams whose final blank line was lost; a pending
  // unterminated line is then processed first). Returns true when anything
  // (a partial line or an undispatched event) was pending, i.e. the stream
  // was cut in the middle of an event. The parser is reset afterwards except
  // for last_event_id() and retry_ms().
  bool finish(bool dispatch_pending = false);

  // Forgets everything, as if newly constructed (the callback and the limit are kept).
  void reset();

  // True once an event grew past max_event_bytes(): nothing more is parsed or dispatched until
  // reset() or finish() (whose return value then says the stream was cut).
  bool overflowed() const { return overflowed_; }
  size_t max_event_bytes() const { return max_event_bytes_; }
  // What the parser holds for the event being read (its pending line and data), in bytes.
  size_t buffered_bytes() const { return line_.size() + event_.data.size() + type_.size(); }

  // The reconnection time from the last valid "retry" field, if any.
  std::optional<uint64_t> retry_ms() const { return retry_; }
  const std::string& last_event_id() const { return event_.id; }
  // Events dispatched since construction or reset().
  uint64_t events_dispatched() const { return events_; }

 private:
  void process(const char* p, size_t n);
  void process_line(std::string_view line);
  void dispatch();
  void overflow();

  Callback on_event_;
  size_t max_event_bytes_;
  SseEvent event_;            // event_.data is the data buffer, event_.id the last event id
  std::string type_;          // event type buffer
  std::string line_;          // unterminated line carried between feeds
  std::optional<uint64_t> retry_;
  uint64_t events_ = 0;
  uint8_t bom_matched_ = 0;   // bytes of a leading BOM matched so far
  bool bom_done_ = false;     // true once the BOM check is over
  bool skip_lf_ = false;      // the previous feed ended with CR
  bool overflowed_ = false;   // an event grew past max_event_bytes_
};

}  // namespace runara
