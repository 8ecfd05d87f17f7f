// The recorded fixtures under tests/fixtures/ (SOURCES.md says where each came from), read whole.
// Header-only; needs RUNARA_SOURCE_DIR (the test target defines it).
#pragma once

#include <stdexcept>
#include <string>

#include "test_paths.hpp"
#include "test_text.hpp"

namespace runara::test {

// tests/fixtures/<relative>; throws (the test fails naming the file) when it cannot be read.
inline std::string fixture(const std::string& relative) {
  const std::string path = std::string(RUNARA_SOURCE_DIR) + "/tests/fixtures/" + relative;
  if (!std::filesystem::is_regular_file(path)) throw std::runtime_error("fixture missing: " + path);
  return read_all(path);
}

// A recorded OpenAI-compatible SSE stream (tests/fixtures/sse/).
inline std::string sse_fixture(const std::string& name) { return fixture("sse/" + name); }

}  // namespace runara::test
