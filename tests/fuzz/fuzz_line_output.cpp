// libFuzzer target for LineOutput, which cuts a remote command's output into lines and keeps
// its tail (runtime/ssh/line_output).
//
// Built by CMake (tests/fuzz/CMakeLists.txt): a libFuzzer binary with clang, a replay of
// seeds and mutations under GCC (ctest runs it); see tests/fuzz/README.md.
//
// What one input checks: its first bytes choose the tail size, the longest line and where the
// rest (the stream) is cut into chunks. Fed whole, in those chunks, and byte by byte, the stream
// gives the same lines and the same tail; the tail is the stream's last bytes; no line is longer
// than the longest allowed; the lines, rejoined with the newlines that ended them, are the stream.
#include <cstdint>
#include <string>
#include <vector>

#include "ssh/line_output.hpp"

namespace {

struct Seen {
  std::vector<std::string> lines;
  std::string tail;
};

Seen feed(std::size_t tail, std::size_t max_line, std::string_view stream, const std::vector<std::size_t>& cuts) {
  Seen seen;
  runara::ssh::LineOutput out(tail, max_line);
  out.set_on_line([&](std::string_view line) { seen.lines.emplace_back(line); });
  std::size_t at = 0;
  for (std::size_t cut : cuts) {
    if (cut <= at || cut > stream.size()) continue;
    out.feed(stream.substr(at, cut - at));
    at = cut;
  }
  out.feed(stream.substr(at));
  out.finish();
  seen.tail = out.tail();
  return seen;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const std::size_t tail = 1 + data[0] % 64, max_line = 1 + data[1] % 32, ncuts = data[2] % 8;
  if (size < 3 + ncuts) return 0;
  std::vector<std::size_t> cuts;
  for (std::size_t i = 0; i < ncuts; ++i) cuts.push_back(data[3 + i]);
  const std::string_view stream(reinterpret_cast<const char*>(data) + 3 + ncuts, size - 3 - ncuts);
  std::vector<std::size_t> bytewise;
  for (std::size_t i = 1; i < stream.size(); ++i) bytewise.push_back(i);
  const Seen whole = feed(tail, max_line, stream, {});
  const Seen chunked = feed(tail, max_line, stream, cuts);
  const Seen bytes = feed(tail, max_line, stream, bytewise);
  if (whole.lines != chunked.lines || whole.lines != bytes.lines) __builtin_trap();
  if (whole.tail != chunked.tail || whole.tail != bytes.tail) __builtin_trap();
  if (whole.tail != stream.substr(stream.size() - std::min(stream.size(), tail))) __builtin_trap();
  for (const auto& line : whole.lines)
    if (line.size() > max_line || line.find('\n') != std::string::npos) __builtin_trap();
  // Rejoined: a piece cut for length has no newline after it, a line that ended has one.
  std::string rejoined;
  std::size_t at = 0;
  for (const auto& line : whole.lines) {
    rejoined += line;
    at += line.size();
    if (at < stream.size() && stream[at] == '\n') {
      rejoined += '\n';
      ++at;
    }
  }
  if (rejoined != stream) __builtin_trap();
  return 0;
}
