#include "script/traceback.hpp"

#include <cctype>

namespace runara {

namespace {

// "\trunara:11: in ..." — a chunk named "=runara" (or "=watchdog", ...): a bare word, no '.' or
// '/' as a file would have; "stdin" and "(command line)" are the user's own code.
bool runtime_frame(std::string_view line) {
  std::size_t start = line.find_first_not_of(" \t");
  if (start == std::string_view::npos) return false;
  line.remove_prefix(start);
  if (line.rfind("[C]:", 0) == 0 || line.rfind("[builtin#", 0) == 0) return true;  // C and LuaJIT fast functions
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  const std::string_view chunk = line.substr(0, colon);
  if (chunk == "stdin") return false;
  for (char c : chunk) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return colon + 1 < line.size() && std::isdigit(static_cast<unsigned char>(line[colon + 1]));
}

}  // namespace

std::string script_traceback(std::string_view traceback) {
  std::string out;
  while (!traceback.empty()) {
    const std::size_t end = traceback.find('\n');
    const std::string_view line = traceback.substr(0, end);
    if (!runtime_frame(line)) out.append(line).append("\n");
    traceback = end == std::string_view::npos ? std::string_view() : traceback.substr(end + 1);
  }
  if (!out.empty()) out.pop_back();
  return out;
}

}  // namespace runara
