#include "http/sse_parser.hpp"

#include <cstring>
#include <utility>

namespace runara {

namespace {
constexpr unsigned char kBom[3] = {0xEF, 0xBB, 0xBF};
}

SseParser::SseParser(Callback on_event, size_t max_event_bytes)
    : on_event_(std::move(on_event)), max_event_bytes_(max_event_bytes) {}

// The event being read is too large: what it held is dropped (its memory given back) and the
// rest of the stream ignored.
void SseParser::overflow() {
  overflowed_ = true;
  std::string().swap(line_);
  std::string().swap(event_.data);
  std::string().swap(type_);
}

void SseParser::reset() {
  event_ = SseEvent{};
  type_.clear();
  line_.clear();
  retry_.reset();
  events_ = 0;
  bom_matched_ = 0;
  bom_done_ = false;
  skip_lf_ = false;
  overflowed_ = false;
}

void SseParser::feed(std::string_view bytes) {
  if (overflowed_) return;
  const char* p = bytes.data();
  size_t n = bytes.size();
  if (!bom_done_) {
    while (n > 0 && bom_matched_ < 3 &&
           static_cast<unsigned char>(*p) == kBom[bom_matched_]) {
      ++bom_matched_;
      ++p;
      --n;
    }
    if (bom_matched_ == 3) {
      bom_done_ = true;  // a whole BOM: dropped
    } else if (n > 0) {
      // Mismatch: the bytes matched so far were stream content after all.
      bom_done_ = true;
      if (bom_matched_ > 0) process(reinterpret_cast<const char*>(kBom), bom_matched_);
    } else {
      return;  // still a BOM prefix; decide on the next feed
    }
  }
  process(p, n);
}

void SseParser::process(const char* p, size_t n) {
  if (n == 0) return;
  if (skip_lf_) {
    skip_lf_ = false;
    if (*p == '\n') {
      ++p;
      --n;
    }
  }
  const char* end = p + n;
  while (p < end) {
    size_t rest = static_cast<size_t>(end - p);
    // The line ends at the first CR or LF. vLLM and most servers use LF only,
    // so look for LF first and then for a CR before it.
    const char* lf = static_cast<const char*>(std::memchr(p, '\n', rest));
    size_t span = lf ? static_cast<size_t>(lf - p) : rest;
    const char* cr = static_cast<const char*>(std::memchr(p, '\r', span));
    const char* eol = cr ? cr : lf;
    // The event so far, the line carried over and this line's bytes: past the limit, the event
    // is dropped before anything grows.
    const size_t line_bytes = eol ? static_cast<size_t>(eol - p) : rest;
    if (line_.size() + line_bytes + event_.data.size() > max_event_bytes_) return overflow();
    if (!eol) {
      line_.append(p, rest);
      return;
    }
    if (line_.empty()) {
      process_line(std::string_view(p, static_cast<size_t>(eol - p)));
    } else {
      line_.append(p, static_cast<size_t>(eol - p));
      process_line(line_);
      line_.clear();
    }
    if (overflowed_) return;
    p = eol + 1;
    if (*eol == '\r') {
      if (p < end) {
        if (*p == '\n') ++p;
      } else {
        skip_lf_ = true;  // the LF of a CRLF may start the next feed
      }
    }
  }
}

void SseParser::process_line(std::string_view line) {
  if (line.empty()) {
    dispatch();
    return;
  }
  if (line[0] == ':') return;  // comment
  std::string_view field = line, value;
  size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (event_.data.size() + value.size() + 1 > max_event_bytes_) return overflow();
    event_.data.append(value);
    event_.data.push_back('\n');
  } else if (field == "event") {
    type_.assign(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) event_.id.assign(value);
  } else if (field == "retry") {
    if (value.empty()) return;
    uint64_t v = 0;
    for (char c : value) {
      if (c < '0' || c > '9') return;
      uint64_t d = static_cast<uint64_t>(c - '0');
      if (v > (UINT64_MAX - d) / 10) return;  // out of range: ignored
      v = v * 10 + d;
    }
    retry_ = v;
  }
  // Any other field is ignored.
}

void SseParser::dispatch() {
  if (event_.data.empty()) {
    type_.clear();
    return;
  }
  event_.data.pop_back();  // the "\n" appended after the last data line
  if (type_.empty()) {
    event_.type.assign("message");
  } else {
    event_.type.swap(type_);
  }
  ++events_;
  if (on_event_) on_event_(event_);
  event_.data.clear();
  event_.type.clear();
  type_.clear();
}

bool SseParser::finish(bool dispatch_pending) {
  bool pending = !line_.empty() || !event_.data.empty() || !type_.empty() ||
                 (!bom_done_ && bom_matched_ > 0) || overflowed_;
  if (dispatch_pending && !overflowed_) {
    if (!bom_done_ && bom_matched_ > 0) {
      bom_done_ = true;
      line_.append(reinterpret_cast<const char*>(kBom), bom_matched_);
    }
    if (!line_.empty()) {
      std::string line = std::move(line_);
      line_.clear();
      process_line(line);
    }
    dispatch();
  }
  line_.clear();
  event_.data.clear();
  event_.type.clear();
  type_.clear();
  bom_matched_ = 0;
  bom_done_ = false;
  skip_lf_ = false;
  overflowed_ = false;
  return pending;
}

}  // namespace runara
