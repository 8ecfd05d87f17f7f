#include "load/response_judge.hpp"

#include <algorithm>

#include "http/sse_parser.hpp"

namespace runara {

namespace {

ErrorKind kind_of_event(const OpenAiStreamEvent& event) {
  return event.error_kind == kMalformedSse ? ErrorKind::kMalformedSse : ErrorKind::kServerError;
}

}  // namespace

ResponseJudge::ResponseJudge(LoadMode mode, bool stream, RequestRecord& record,
                             std::function<void(std::int64_t)> on_token, std::shared_ptr<MemoryBudget> memory)
    : mode_(mode), stream_(stream), rec_(record), on_token_(std::move(on_token)),
      memory_(std::move(memory)), gap_memory_(memory_, 0), text_memory_(memory_, 0) {
  if (mode_ == LoadMode::kOpenAi && stream_) {
    // No gap list reserved up front: the list grows with the reply (kFirstGaps, then doubling),
    // so an open stream holds what its replies need, not kFreeGaps' 4 KiB each.
    parser_ = std::make_unique<SseParser>([this](const SseEvent& e) { on_event(e); });
  }
}

ResponseJudge::~ResponseJudge() = default;

void ResponseJudge::reset() {
  gaps_.clear();
  if (gaps_.capacity() > kFreeGaps) {  // a long reply's list: given back, memory and budget
    std::vector<std::int64_t>().swap(gaps_);
    gap_memory_.reset();
  }
  text_.clear();
  if (text_.capacity() > kFreeText) {  // a long reply's text: given back, memory and budget
    std::string().swap(text_);
    text_memory_.reset();
  }
  stop_kind_ = ErrorKind::kNone;
  stop_message_.clear();
  last_token_ns_ = -1;
  status_known_ = http_error_ = done_seen_ = false;
  event_error_ = ErrorKind::kNone;
  message_.clear();
  usage_prompt_ = usage_completion_ = -1;
  reply_.clear();
  if (parser_) parser_->reset();
}

void ResponseJudge::status(int status) {
  rec_.status = static_cast<std::int16_t>(status);
  status_known_ = true;
  http_error_ = status < 200 || status > 299;
}

bool ResponseJudge::body(const char* data, std::size_t len, std::int64_t arrived_ns) {
  if (stop_kind_ != ErrorKind::kNone) return false;
  now_ = arrived_ns;
  rec_.done_ns = now_;
  if (mode_ == LoadMode::kHttp && rec_.first_token_ns < 0) rec_.first_token_ns = now_;
  if (http_error_ || (mode_ == LoadMode::kOpenAi && !stream_)) {
    // Kept for the error message or the verdict, up to a bound a hostile server cannot raise.
    if (reply_.size() < kMaxKeptBody) reply_.append(data, std::min(len, kMaxKeptBody - reply_.size()));
  } else if (parser_) {
    parser_->feed(data, len);
    if (parser_->overflowed() && stop_kind_ == ErrorKind::kNone) {
      stop(ErrorKind::kMalformedSse, "malformed_sse: an SSE event larger than " +
                                         std::to_string(parser_->max_event_bytes() >> 20) +
                                         " MiB (the limit on one event); the rest of the response was not read");
    }
  }
  return stop_kind_ == ErrorKind::kNone;
}

// The verdict before the response ended: what arrives after it is not read.
void ResponseJudge::stop(ErrorKind kind, std::string message) {
  stop_kind_ = kind;
  stop_message_ = std::move(message);
}

void ResponseJudge::add_gap(std::int64_t gap) {
  if (gaps_.size() + 1 >= kMaxTokenEvents) {  // this event would be one too many
    return stop(ErrorKind::kOther, "more than " + std::to_string(kMaxTokenEvents) +
                                       " token events in one response (the limit per response); the rest was not read");
  }
  if (gaps_.size() == gaps_.capacity()) {
    const std::size_t grown = std::min(kMaxTokenEvents, std::max(kFirstGaps, gaps_.capacity() * 2));
    const std::size_t charged = (std::max(grown, kFreeGaps) - kFreeGaps) * sizeof(std::int64_t);
    if (memory_ && charged > gap_memory_.bytes() && !gap_memory_.grow(charged - gap_memory_.bytes())) {
      return stop(ErrorKind::kOther, memory_->refusal(charged, "the token gaps of one response (" +
                                                                   std::to_string(grown) + " token events)"));
    }
    gaps_.reserve(grown);
  }
  gaps_.push_back(gap);
}

// The kept text's capacity, charged to the budget as it grows (as the gaps are): "" or the
// refusal.
std::string ResponseJudge::charge_text() {
  if (!memory_ || text_.capacity() <= text_memory_.bytes()) return {};
  const std::size_t more = text_.capacity() - text_memory_.bytes();
  if (text_memory_.grow(more)) return {};
  return memory_->refusal(more, "the generated text of one response (" + std::to_string(text_.size()) +
                                    " bytes so far; save_detailed)");
}

void ResponseJudge::on_event(const SseEvent& e) {
  if (stop_kind_ != ErrorKind::kNone) return;  // the rest of a feed after a bound was crossed
  interpret_openai_event(e, event_, keep_text_ ? &text_ : nullptr);
  if (keep_text_) {
    if (std::string refused = charge_text(); !refused.empty()) return stop(ErrorKind::kOther, std::move(refused));
  }
  if (event_.kind == OpenAiEventKind::kDone) {
    done_seen_ = true;
  } else if (event_.kind == OpenAiEventKind::kError) {
    if (event_error_ == ErrorKind::kNone) {
      event_error_ = kind_of_event(event_);
      message_ = std::string(event_.error_kind) + ": " + event_.error_message;
    }
  } else {
    if (event_.has_usage) {
      usage_prompt_ = event_.prompt_tokens;
      usage_completion_ = event_.completion_tokens;
    }
    if (!event_.has_token) return;
    if (last_token_ns_ < 0) {
      rec_.first_token_ns = now_;
    } else {
      add_gap(now_ - last_token_ns_);
      if (stop_kind_ != ErrorKind::kNone) return;
    }
    last_token_ns_ = now_;
    ++rec_.chunks;
    if (on_token_) on_token_(now_);
  }
}

std::string ResponseJudge::conclude() {
  if (parser_) parser_->finish(false);
  if (rec_.status < 200 || rec_.status > 299) return fail(ErrorKind::kHttpStatus, http_error_text());
  if (mode_ == LoadMode::kHttp) return {};
  if (!stream_) return conclude_whole_reply();
  if (stop_kind_ != ErrorKind::kNone) return fail(stop_kind_, stop_message_);
  if (event_error_ != ErrorKind::kNone) return fail(event_error_, message_);
  if (!done_seen_) return fail(ErrorKind::kReset, "the stream ended without \"data: [DONE]\"");
  count_tokens();
  return {};
}

std::string ResponseJudge::transport_failed(ErrorKind kind, std::string message) {
  if (parser_) parser_->finish(false);
  // A transport stopped by body() returning false reports its own error; the bound is why.
  if (stop_kind_ != ErrorKind::kNone) return fail(stop_kind_, stop_message_);
  return fail(kind, std::move(message));
}

std::string ResponseJudge::conclude_whole_reply() {
  interpret_openai_json(reply_, event_, keep_text_ ? &text_ : nullptr);
  if (keep_text_) {
    if (std::string refused = charge_text(); !refused.empty()) return fail(ErrorKind::kOther, std::move(refused));
  }
  if (event_.is_error()) return fail(kind_of_event(event_), std::string(event_.error_kind) + ": " + event_.error_message);
  rec_.first_token_ns = rec_.done_ns;  // nothing streams: the first token is the whole reply
  if (event_.has_usage) {
    usage_prompt_ = event_.prompt_tokens;
    usage_completion_ = event_.completion_tokens;
  }
  rec_.chunks = event_.has_token ? 1 : 0;
  count_tokens();
  return {};
}

void ResponseJudge::count_tokens() {
  rec_.tokens_from_usage = usage_completion_ >= 0;
  rec_.output_tokens = static_cast<std::int32_t>(rec_.tokens_from_usage ? usage_completion_ : rec_.chunks);
  if (usage_prompt_ >= 0) rec_.input_tokens = static_cast<std::int32_t>(usage_prompt_);
}

std::string ResponseJudge::fail(ErrorKind kind, std::string message) {
  rec_.error = kind;
  return message;
}

// "HTTP 503: <the server's message>", or the start of the body on one line.
std::string ResponseJudge::http_error_text() {
  std::string text = "HTTP " + std::to_string(rec_.status);
  interpret_openai_json(reply_, event_);
  if (event_.is_error() && event_.error_kind == kServerError && !event_.error_message.empty()) {
    return text + ": " + event_.error_message;
  }
  std::string body = reply_.substr(0, 200);
  for (char& c : body) {
    if (c == '\n' || c == '\r' || static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  return body.empty() ? text : text + ": " + body;
}

}  // namespace runara
