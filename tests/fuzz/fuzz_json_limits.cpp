// libFuzzer target for the depth-limited JSON parser (runtime/base/json_limits.*).
//
// Built by CMake (tests/fuzz/CMakeLists.txt): a libFuzzer binary with clang, a replay of
// seeds and mutations under GCC (ctest runs it); see tests/fuzz/README.md.
//
// What one input checks (the first byte picks a limit from 0 to 15, the rest is the text):
//   * parse_json_limited agrees with nlohmann's own parser: it accepts exactly the texts that
//     nlohmann accepts and that nest no deeper than the limit, with an equal value; a text
//     nlohmann accepts but that nests deeper is refused as too deep, at a byte that opens a
//     container; a text nlohmann refuses is refused, and so is any text with a NUL byte
//     (nlohmann would stop reading there).
//   * json_too_deep_at alone never reads outside the text (ASan), whatever the bytes.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "base/json_limits.hpp"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "MISMATCH: %s\n", what);
  std::abort();
}

// Deepest nesting of containers, without recursion.
int depth_of(const nlohmann::json& root) {
  int deepest = 0;
  std::vector<std::pair<const nlohmann::json*, int>> todo{{&root, 0}};
  while (!todo.empty()) {
    auto [v, d] = todo.back();
    todo.pop_back();
    if (!v->is_structured()) continue;
    deepest = std::max(deepest, d + 1);
    for (const auto& item : *v) todo.emplace_back(&item, d + 1);
  }
  return deepest;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int limit = data[0] % 16;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);

  std::string error;
  const auto limited = runara::parse_json_limited(text, error, limit);
  const auto plain = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (text.find('\0') != std::string::npos) {  // nlohmann would stop there: refused instead
    if (limited) fail("accepted a text with a NUL byte");
    return 0;
  }
  if (plain.is_discarded()) {
    if (limited) fail("accepted a text nlohmann refuses");
    return 0;
  }
  if (depth_of(plain) <= limit) {
    if (!limited) fail("refused a valid text within the limit");
    if (*limited != plain) fail("value differs from nlohmann's");
    return 0;
  }
  if (limited) fail("accepted a text nested past the limit");
  if (!runara::is_json_too_deep(error)) fail("refused a deep text for another reason");
  const auto at = runara::json_too_deep_at(text, limit);
  if (!at || *at >= text.size() || (text[*at] != '[' && text[*at] != '{')) fail("bad position");
  return 0;
}
