// One output stream of a remote command (stdout or stderr): bytes in, whole lines out to a
// callback, and a bounded tail kept in memory so a chatty command cannot grow memory without
// limit (the rest goes only to whoever the line callback hands it to).
//
// Contract: single-threaded, no I/O. A line longer than `max_line` is delivered in pieces of
// that size (still without its newline), so one endless line is bounded too. The line callback
// may not destroy this object.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace runara::ssh {

class LineOutput {
 public:
  using OnLine = std::function<void(std::string_view line)>;  // without the '\n'
  explicit LineOutput(std::size_t tail_bytes = 8u << 20, std::size_t max_line = 64u << 10)
      : tail_cap_(tail_bytes), max_line_(max_line) {}

  void set_on_line(OnLine on_line) { on_line_ = std::move(on_line); }
  void feed(std::string_view bytes);
  void finish();  // the stream ended: a last line without '\n' is delivered

  std::string tail() const;  // the last `tail_bytes` bytes received
  std::string take_tail();   // the same, moved out (at the stream's end): the tail is empty after
  std::size_t total() const { return total_; }
  bool truncated() const { return total_ > tail_cap_; }

 private:
  void keep(std::string_view bytes);

  std::size_t tail_cap_, max_line_;
  OnLine on_line_;
  std::string partial_;  // an incomplete last line
  std::string kept_;     // grows to the cap, then is a ring whose oldest byte is at next_
  std::size_t next_ = 0;
  std::size_t total_ = 0;
};

}  // namespace runara::ssh
