// A validating, single-pass JSON scanner that builds no tree: the caller walks the document
// member by member and element by element, picks the values it wants by position, and skips the
// rest, which is still checked against the full grammar (RFC 8259, UTF-8 well-formedness,
// surrogate pairs). Nesting is bounded (`max_depth`, counted like json_limits.hpp), so a hostile
// server cannot make a walk go deep or grow the skip stack without bound.
//
// Contract: pure, no I/O, no allocation except skip_value's stack past depth 16 and what the
// caller decodes; callable from any thread. The text must outlive the scanner and every JsonStr
// taken from it. A false return means the text is not valid JSON at offset() (or too_deep()).
// Used by openai_stream.cpp (the load generator's hot path), hence templates for the walks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace runara {

// A JSON string as it stands in the input: the bytes between the quotes.
struct JsonStr {
  const unsigned char* raw = nullptr;
  std::size_t raw_len = 0;
  std::uint64_t decoded_len = 0;  // bytes once escapes are decoded
  bool escaped = false;
  bool present = false;
};

// Decoding a string JsonScan::string() validated.
void json_decode_into(const JsonStr& s, std::string& out);
std::string json_decode(const JsonStr& s);
bool json_str_eq(const JsonStr& s, std::string_view literal);

class JsonScan {
 public:
  JsonScan(std::string_view text, int max_depth)
      : begin_(reinterpret_cast<const unsigned char*>(text.data())),
        p_(begin_),
        end_(begin_ + text.size()),
        max_depth_(static_cast<std::size_t>(max_depth)) {}

  // The whole text is one object: member(key) is called with the cursor at each value (after
  // whitespace) and must consume it; nothing but whitespace may follow the object.
  template <class F>
  bool top_object(F&& member) {
    ws();
    if (p_ >= end_ || *p_ != '{') return false;
    if (!object(member)) return false;
    ws();
    return p_ == end_;
  }

  // The cursor is at '{' (or '['): walks its members (elements) one level deeper.
  template <class F>
  bool object(F&& member) {
    return nested([&] { return members(member); });
  }
  template <class F>
  bool array(F&& element) {
    return nested([&] { return elements(element); });
  }

  unsigned char peek() const { return *p_; }  // the value's first byte, inside a walk
  bool string(JsonStr& s);                    // the cursor at '"'
  bool skip_value();                          // any value, validated
  bool string_or_other(JsonStr& s);           // a string sets s, any other value clears it
  bool int_or_other(bool& set, std::int64_t& value);  // set: an integer that fits in int64

  std::size_t offset() const { return static_cast<std::size_t>(p_ - begin_); }
  bool too_deep() const { return too_deep_; }  // the refusal was for nesting, at offset()

 private:
  void ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  bool number(bool& is_int, std::int64_t& value);
  bool literal(const char* text, std::size_t n);
  bool member_key();
  bool enter(std::size_t skipped);

  template <class F>
  bool nested(F&& walk) {
    if (!enter(0)) return false;
    ++depth_;
    const bool ok = walk();
    --depth_;
    return ok;
  }

  // `"key" : value` items of an object: member(key) with the cursor at the value.
  template <class F>
  bool members(F&& member) {
    return items('}', [&] {
      JsonStr key;
      if (*p_ != '"' || !string(key)) return false;
      ws();
      if (p_ >= end_ || *p_ != ':') return false;
      ++p_;
      ws();
      return p_ < end_ && member(key);
    });
  }

  template <class F>
  bool elements(F&& element) {
    return items(']', element);
  }

  // The cursor at a container's opening byte: item() for each comma-separated item (cursor at
  // its first byte, after whitespace), up to `close`.
  template <class F>
  bool items(char close, F&& item) {
    ++p_;
    ws();
    if (p_ < end_ && *p_ == close) {
      ++p_;
      return true;
    }
    for (;;) {
      ws();
      if (p_ >= end_ || !item()) return false;
      ws();
      if (p_ >= end_) return false;
      if (*p_ == close) {
        ++p_;
        return true;
      }
      if (*p_ != ',') return false;
      ++p_;
    }
  }

  const unsigned char* begin_;
  const unsigned char* p_;
  const unsigned char* end_;
  std::size_t max_depth_;
  std::size_t depth_ = 0;  // containers open around p_, outside skip_value's own stack
  bool too_deep_ = false;
};

}  // namespace runara
