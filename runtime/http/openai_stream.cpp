#include "http/openai_stream.hpp"
#include "base/text.hpp"

#include <cstring>
#include <limits>
#include <string>

#include "http/sse_parser.hpp"
#include "json_limits.hpp"

namespace runara {

void OpenAiStreamEvent::clear() {
  kind = OpenAiEventKind::kChunk;
  has_token = false;
  has_usage = false;
  choices = 0;
  token_choices = 0;
  text_bytes = 0;
  reasoning_bytes = 0;
  finish_reason.clear();
  prompt_tokens = completion_tokens = total_tokens = -1;
  error_kind.clear();
  error_message.clear();
  error_type.clear();
  error_code = 0;
}

namespace {

using u8 = unsigned char;

// A JSON string as it stands in the input: the bytes between the quotes.
struct Str {
  const u8* raw = nullptr;
  size_t raw_len = 0;
  uint64_t decoded_len = 0;
  bool escaped = false;
  bool present = false;
};

int hex_digit(u8 c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool hex4(const u8* p, uint32_t& cp) {
  cp = 0;
  for (int i = 0; i < 4; ++i) {
    int d = hex_digit(p[i]);
    if (d < 0) return false;
    cp = cp * 16 + static_cast<uint32_t>(d);
  }
  return true;
}

// Length of the well-formed UTF-8 sequence at p (Unicode table 3-7), 0 if ill-formed.
size_t utf8_seq(const u8* p, const u8* end) {
  u8 c = p[0];
  size_t avail = static_cast<size_t>(end - p);
  auto cont = [](u8 b) { return b >= 0x80 && b <= 0xBF; };
  if (c >= 0xC2 && c <= 0xDF) return (avail >= 2 && cont(p[1])) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (avail < 3) return 0;
    u8 lo = 0x80, hi = 0xBF;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
    return (p[1] >= lo && p[1] <= hi && cont(p[2])) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (avail < 4) return 0;
    u8 lo = 0x80, hi = 0xBF;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
    return (p[1] >= lo && p[1] <= hi && cont(p[2]) && cont(p[3])) ? 4 : 0;
  }
  return 0;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Decodes a string already validated by Scanner::string().
void decode_into(const Str& s, std::string& out) {
  if (!s.escaped) {
    out.append(reinterpret_cast<const char*>(s.raw), s.raw_len);
    return;
  }
  const u8* p = s.raw;
  const u8* end = s.raw + s.raw_len;
  while (p < end) {
    const u8* bs = static_cast<const u8*>(std::memchr(p, '\\', static_cast<size_t>(end - p)));
    if (!bs) bs = end;
    out.append(reinterpret_cast<const char*>(p), static_cast<size_t>(bs - p));
    p = bs;
    if (p >= end) break;
    u8 e = p[1];
    p += 2;
    switch (e) {
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'u': {
        uint32_t cp = 0;
        hex4(p, cp);
        p += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          uint32_t lo = 0;
          hex4(p + 2, lo);
          p += 6;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        append_utf8(out, cp);
        break;
      }
      default: out.push_back(static_cast<char>(e)); break;  // " \ /
    }
  }
}

std::string decode(const Str& s) {
  std::string out;
  decode_into(s, out);
  return out;
}

bool str_eq(const Str& s, std::string_view lit) {
  if (!s.escaped) {
    return s.raw_len == lit.size() && std::memcmp(s.raw, lit.data(), lit.size()) == 0;
  }
  return decode(s) == lit;
}

// Bytes that stand for themselves inside a JSON string: printable ASCII
// other than '"' and '\\'.
struct PlainTable {
  bool v[256] = {};
  constexpr PlainTable() {
    for (int c = 0x20; c < 0x80; ++c) v[c] = c != '"' && c != '\\';
  }
};
constexpr PlainTable kPlain;

// Content fields of one "delta" or "message" object.
struct MsgSlots {
  Str content, reasoning_content, reasoning;
};

class Scanner {
 public:
  Scanner(std::string_view text, OpenAiStreamEvent& out, std::string* text_out)
      : begin_(reinterpret_cast<const u8*>(text.data())),
        p_(begin_),
        end_(begin_ + text.size()),
        out_(out),
        text_out_(text_out),
        text_out_base_(text_out ? text_out->size() : 0) {}

  // Returns false on a syntax error or a non-object top level.
  bool run() {
    ws();
    if (p_ >= end_ || *p_ != '{') return false;
    ++p_;
    depth_ = 1;
    ws();
    if (p_ < end_ && *p_ == '}') {
      ++p_;
    } else {
      for (;;) {
        Str key;
        ws();
        if (p_ >= end_ || *p_ != '"' || !string(key)) return false;
        ws();
        if (p_ >= end_ || *p_ != ':') return false;
        ++p_;
        ws();
        if (p_ >= end_) return false;
        if (!top_member(key)) return false;
        ws();
        if (p_ >= end_) return false;
        if (*p_ == ',') {
          ++p_;
          continue;
        }
        if (*p_ == '}') {
          ++p_;
          break;
        }
        return false;
      }
    }
    ws();
    return p_ == end_;
  }

  size_t offset() const { return static_cast<size_t>(p_ - begin_); }
  // The refusal was for nesting past kMaxJsonDepth (as json_limits words it), at offset().
  bool too_deep() const { return too_deep_; }
  void rollback_text() {
    if (text_out_) text_out_->resize(text_out_base_);
  }

  // What the top level held, for the caller to assemble the result.
  bool error_present = false;
  Str err_message, err_type;
  bool err_code_set = false;
  int64_t err_code = 0;
  bool object_is_error = false;
  Str top_message, top_type;
  bool top_code_set = false;
  int64_t top_code = 0;

 private:
  void ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }

  // p_ at '"'. Validates and measures the string.
  bool string(Str& s) {
    ++p_;
    const u8* start = p_;
    uint64_t dlen = 0;
    bool escaped = false;
    for (;;) {
      const u8* run = p_;
      while (p_ < end_ && kPlain.v[*p_]) ++p_;
      dlen += static_cast<uint64_t>(p_ - run);
      if (p_ >= end_) return false;
      u8 c = *p_;
      if (c == '"') break;
      if (c == '\\') {
        escaped = true;
        if (end_ - p_ < 2) return false;
        switch (p_[1]) {
          case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
            p_ += 2;
            dlen += 1;
            break;
          case 'u': {
            uint32_t cp = 0;
            if (end_ - p_ < 6 || !hex4(p_ + 2, cp)) return false;
            p_ += 6;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
              uint32_t lo = 0;
              if (end_ - p_ < 6 || p_[0] != '\\' || p_[1] != 'u' || !hex4(p_ + 2, lo) ||
                  lo < 0xDC00 || lo > 0xDFFF)
                return false;
              p_ += 6;
              dlen += 4;
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
              return false;
            } else {
              dlen += cp < 0x80 ? 1 : cp < 0x800 ? 2 : 3;
            }
            break;
          }
          default:
            return false;
        }
        continue;
      }
      if (c < 0x20) return false;
      size_t n = utf8_seq(p_, end_);
      if (n == 0) return false;
      p_ += n;
      dlen += n;
    }
    s.raw = start;
    s.raw_len = static_cast<size_t>(p_ - start);
    s.decoded_len = dlen;
    s.escaped = escaped;
    s.present = true;
    ++p_;
    return true;
  }

  static bool digit(u8 c) { return c >= '0' && c <= '9'; }

  // p_ at '-' or a digit. is_int: an integer that fits in int64.
  bool number(bool& is_int, int64_t& value) {
    bool neg = false;
    if (*p_ == '-') {
      neg = true;
      ++p_;
    }
    if (p_ >= end_) return false;
    const u8* digits = p_;
    if (*p_ == '0') {
      ++p_;
    } else if (*p_ >= '1' && *p_ <= '9') {
      while (p_ < end_ && digit(*p_)) ++p_;
    } else {
      return false;
    }
    const u8* digits_end = p_;
    bool integral = true;
    if (p_ < end_ && *p_ == '.') {
      integral = false;
      ++p_;
      if (p_ >= end_ || !digit(*p_)) return false;
      while (p_ < end_ && digit(*p_)) ++p_;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      integral = false;
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (p_ >= end_ || !digit(*p_)) return false;
      while (p_ < end_ && digit(*p_)) ++p_;
    }
    is_int = false;
    if (!integral) return true;
    uint64_t mag = 0;
    for (const u8* d = digits; d < digits_end; ++d) {
      uint64_t v = static_cast<uint64_t>(*d - '0');
      if (mag > (std::numeric_limits<uint64_t>::max() - v) / 10) return true;  // too big
      mag = mag * 10 + v;
    }
    constexpr uint64_t kMaxPos = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    if (!neg) {
      if (mag > kMaxPos) return true;
      value = static_cast<int64_t>(mag);
    } else {
      if (mag > kMaxPos + 1) return true;
      value = mag == kMaxPos + 1 ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(mag);
    }
    is_int = true;
    return true;
  }

  bool literal(const char* lit, size_t n) {
    if (static_cast<size_t>(end_ - p_) < n || std::memcmp(p_, lit, n) != 0) return false;
    p_ += n;
    return true;
  }

  // Validates any JSON value at p_ (after whitespace) without recursion.
  bool skip_value() {
    std::string stack;  // '{' or '[' per open container; no allocation below depth 16
    for (;;) {
      // A value.
      ws();
      if (p_ >= end_) return false;
      u8 c = *p_;
      bool have_value = true;
      if ((c == '{' || c == '[') && !enter(stack.size())) return false;
      if (c == '{') {
        ++p_;
        ws();
        if (p_ < end_ && *p_ == '}') {
          ++p_;
        } else {
          stack.push_back('{');
          if (!member_key()) return false;
          have_value = false;
        }
      } else if (c == '[') {
        ++p_;
        ws();
        if (p_ < end_ && *p_ == ']') {
          ++p_;
        } else {
          stack.push_back('[');
          have_value = false;
        }
      } else if (c == '"') {
        Str s;
        if (!string(s)) return false;
      } else if (c == '-' || digit(c)) {
        bool is_int;
        int64_t v;
        if (!number(is_int, v)) return false;
      } else if (c == 't') {
        if (!literal("true", 4)) return false;
      } else if (c == 'f') {
        if (!literal("false", 5)) return false;
      } else if (c == 'n') {
        if (!literal("null", 4)) return false;
      } else {
        return false;
      }
      if (!have_value) continue;  // go parse the first element / member value
      // After a complete value: close containers or move to the next element.
      for (;;) {
        if (stack.empty()) return true;
        ws();
        if (p_ >= end_) return false;
        char top = stack.back();
        if (*p_ == ',') {
          ++p_;
          if (top == '{' && !member_key()) return false;
          break;  // next value
        }
        if ((top == '{' && *p_ == '}') || (top == '[' && *p_ == ']')) {
          ++p_;
          stack.pop_back();
          continue;
        }
        return false;
      }
    }
  }

  // Parses `"key" :` inside an object being skipped.
  bool member_key() {
    ws();
    Str k;
    if (p_ >= end_ || *p_ != '"' || !string(k)) return false;
    ws();
    if (p_ >= end_ || *p_ != ':') return false;
    ++p_;
    return true;
  }

  // A string member value: sets s (present) or, for any other value, clears it.
  bool string_or_other(Str& s) {
    s = Str{};
    if (*p_ == '"') return string(s);
    return skip_value();
  }

  bool int_or_other(bool& set, int64_t& v) {
    set = false;
    v = 0;
    if (*p_ == '-' || digit(*p_)) {
      bool is_int = false;
      int64_t x = 0;
      if (!number(is_int, x)) return false;
      if (is_int) {
        set = true;
        v = x;
      }
      return true;
    }
    return skip_value();
  }

  // A container opens at p_, inside depth_ known ones and `skipped` more being skipped: false
  // past kMaxJsonDepth, the limit the reference applies through json_limits.
  bool enter(size_t skipped) {
    if (depth_ + skipped + 1 > static_cast<size_t>(kMaxJsonDepth)) {
      too_deep_ = true;
      return false;
    }
    return true;
  }

  // Runs parse (which consumes a container at p_) one level deeper.
  template <class F>
  bool nested(F&& parse) {
    if (!enter(0)) return false;
    ++depth_;
    const bool ok = parse();
    --depth_;
    return ok;
  }

  // Iterates the members of an object at p_ ('{'), calling member(key) with
  // p_ at the value (after whitespace); member must consume the value.
  template <class F>
  bool object(F&& member) {
    return nested([&] { return members(member); });
  }

  template <class F>
  bool members(F&& member) {
    ++p_;
    ws();
    if (p_ < end_ && *p_ == '}') {
      ++p_;
      return true;
    }
    for (;;) {
      Str key;
      ws();
      if (p_ >= end_ || *p_ != '"' || !string(key)) return false;
      ws();
      if (p_ >= end_ || *p_ != ':') return false;
      ++p_;
      ws();
      if (p_ >= end_) return false;
      if (!member(key)) return false;
      ws();
      if (p_ >= end_) return false;
      if (*p_ == ',') {
        ++p_;
        continue;
      }
      if (*p_ == '}') {
        ++p_;
        return true;
      }
      return false;
    }
  }

  bool msg(MsgSlots& m) {
    return object([&](const Str& key) {
      if (str_eq(key, "content")) return string_or_other(m.content);
      if (str_eq(key, "reasoning_content")) return string_or_other(m.reasoning_content);
      if (str_eq(key, "reasoning")) return string_or_other(m.reasoning);
      return skip_value();
    });
  }

  bool choice() {
    Str text, finish;
    MsgSlots delta, message;
    bool ok = object([&](const Str& key) {
      if (str_eq(key, "text")) return string_or_other(text);
      if (str_eq(key, "delta")) {
        delta = MsgSlots{};
        return *p_ == '{' ? msg(delta) : skip_value();
      }
      if (str_eq(key, "message")) {
        message = MsgSlots{};
        return *p_ == '{' ? msg(message) : skip_value();
      }
      if (str_eq(key, "finish_reason")) return string_or_other(finish);
      return skip_value();
    });
    if (!ok) return false;
    const Str* order[] = {&text,
                          &delta.reasoning_content, &delta.reasoning, &delta.content,
                          &message.reasoning_content, &message.reasoning, &message.content};
    bool token = false;
    for (size_t i = 0; i < std::size(order); ++i) {
      const Str& s = *order[i];
      if (!s.present) continue;
      if (s.raw_len > 0) token = true;
      out_.text_bytes += s.decoded_len;
      if (i == 1 || i == 2 || i == 4 || i == 5) out_.reasoning_bytes += s.decoded_len;
      if (text_out_) decode_into(s, *text_out_);
    }
    if (token) ++out_.token_choices;
    if (finish.present) {
      out_.finish_reason.clear();
      decode_into(finish, out_.finish_reason);
    }
    return true;
  }

  bool choices() {
    return nested([&] { return choice_list(); });
  }

  bool choice_list() {
    ++p_;  // '['
    ws();
    if (p_ < end_ && *p_ == ']') {
      ++p_;
      return true;
    }
    for (;;) {
      ws();
      if (p_ >= end_) return false;
      ++out_.choices;
      if (!(*p_ == '{' ? choice() : skip_value())) return false;
      ws();
      if (p_ >= end_) return false;
      if (*p_ == ',') {
        ++p_;
        continue;
      }
      if (*p_ == ']') {
        ++p_;
        return true;
      }
      return false;
    }
  }

  bool usage() {
    out_.has_usage = true;
    return object([&](const Str& key) {
      bool set = false;
      int64_t v = 0;
      int64_t* dst = nullptr;
      if (str_eq(key, "prompt_tokens")) dst = &out_.prompt_tokens;
      else if (str_eq(key, "completion_tokens")) dst = &out_.completion_tokens;
      else if (str_eq(key, "total_tokens")) dst = &out_.total_tokens;
      if (!dst) return skip_value();
      if (!int_or_other(set, v)) return false;
      *dst = set ? v : -1;
      return true;
    });
  }

  bool error_object() {
    return object([&](const Str& key) {
      if (str_eq(key, "message")) return string_or_other(err_message);
      if (str_eq(key, "type")) return string_or_other(err_type);
      if (str_eq(key, "code")) return int_or_other(err_code_set, err_code);
      return skip_value();
    });
  }

  bool top_member(const Str& key) {
    u8 c = *p_;
    if (str_eq(key, "choices")) {
      out_.choices = out_.token_choices = 0;
      out_.text_bytes = out_.reasoning_bytes = 0;
      out_.finish_reason.clear();
      rollback_text();
      return c == '[' ? choices() : skip_value();
    }
    if (str_eq(key, "usage")) {
      out_.has_usage = false;
      out_.prompt_tokens = out_.completion_tokens = out_.total_tokens = -1;
      return c == '{' ? usage() : skip_value();
    }
    if (str_eq(key, "error")) {
      error_present = false;
      err_message = err_type = Str{};
      err_code_set = false;
      err_code = 0;
      if (c == '{') {
        error_present = true;
        return error_object();
      }
      if (c == '"') {
        error_present = true;
        return string(err_message);
      }
      return skip_value();
    }
    if (str_eq(key, "object")) {
      Str s;
      if (!string_or_other(s)) return false;
      object_is_error = s.present && str_eq(s, "error");
      return true;
    }
    if (str_eq(key, "message")) return string_or_other(top_message);
    if (str_eq(key, "type")) return string_or_other(top_type);
    if (str_eq(key, "code")) return int_or_other(top_code_set, top_code);
    return skip_value();
  }

  const u8* begin_;
  const u8* p_;
  const u8* end_;
  OpenAiStreamEvent& out_;
  std::string* text_out_;
  size_t text_out_base_;
  size_t depth_ = 0;  // containers open around p_ outside skip_value's own stack
  bool too_deep_ = false;
};

void set_server_error(OpenAiStreamEvent& out, std::string message, std::string type, int64_t code) {
  out.clear();
  out.kind = OpenAiEventKind::kError;
  out.error_kind = kServerError;
  out.error_message = std::move(message);
  out.error_type = std::move(type);
  out.error_code = code;
}

void set_malformed(OpenAiStreamEvent& out, std::string message) {
  out.clear();
  out.kind = OpenAiEventKind::kError;
  out.error_kind = kMalformedSse;
  out.error_message = std::move(message);
}

}  // namespace

OpenAiEventKind interpret_openai_json(std::string_view json, OpenAiStreamEvent& out,
                                      std::string* text_out) {
  out.clear();
  Scanner sc(json, out, text_out);
  if (!sc.run()) {
    sc.rollback_text();
    set_malformed(out, json.empty()      ? "empty event data"
                       : sc.too_deep() ? json_too_deep_message(sc.offset())
                                       : "invalid JSON object near byte " + std::to_string(sc.offset()));
    return out.kind;
  }
  if (sc.error_present) {
    sc.rollback_text();
    set_server_error(out, decode(sc.err_message), decode(sc.err_type),
                     sc.err_code_set ? sc.err_code : 0);
  } else if (sc.object_is_error) {
    sc.rollback_text();
    set_server_error(out, decode(sc.top_message), decode(sc.top_type),
                     sc.top_code_set ? sc.top_code : 0);
  } else {
    out.has_token = out.token_choices > 0;
  }
  return out.kind;
}

OpenAiEventKind interpret_openai_event(std::string_view data, OpenAiStreamEvent& out,
                                       std::string* text_out) {
  if (data.size() >= 6 && trim(data) == "[DONE]") {
    out.clear();
    out.kind = OpenAiEventKind::kDone;
    return out.kind;
  }
  return interpret_openai_json(data, out, text_out);
}

OpenAiEventKind interpret_openai_event(const SseEvent& event, OpenAiStreamEvent& out,
                                       std::string* text_out) {
  if (event.type == "error") {
    interpret_openai_json(event.data, out, text_out);
    if (out.error_kind != kServerError) {
      set_server_error(out, event.data, "", 0);
    }
    return out.kind;
  }
  return interpret_openai_event(event.data, out, text_out);
}

void OpenAiStreamSummary::add(const OpenAiStreamEvent& ev) {
  ++events;
  switch (ev.kind) {
    case OpenAiEventKind::kDone:
      done = true;
      break;
    case OpenAiEventKind::kError:
      if (!error) {
        error = true;
        error_kind = ev.error_kind;
        error_message = ev.error_message;
      }
      break;
    case OpenAiEventKind::kChunk:
      if (ev.has_token) ++token_events;
      text_bytes += ev.text_bytes;
      reasoning_bytes += ev.reasoning_bytes;
      if (ev.has_usage) {
        prompt_tokens = ev.prompt_tokens;
        completion_tokens = ev.completion_tokens;
      }
      if (!ev.finish_reason.empty()) finish_reason = ev.finish_reason;
      break;
  }
}

}  // namespace runara
