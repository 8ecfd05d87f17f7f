// Depth-limited JSON parsing (runtime/base/json_limits.*): every parse of script-, file-, client- or
// server-controlled JSON refuses deep nesting with the byte where it happened, before any
// recursive walk (dump, copy, push to Lua) could overflow the C stack.
#include <catch2/catch.hpp>

#include <string>

#include "base/json_limits.hpp"

using runara::json_too_deep_at;
using runara::kMaxJsonDepth;
using runara::parse_json_limited;

namespace {

std::string nested(int depth, char open = '[', char close = ']') {
  return std::string(depth, open) + std::string(depth, close);
}

}  // namespace

TEST_CASE("json limits: nesting up to the limit parses, one more level is refused", "[json_limits]") {
  std::string error;
  auto ok = parse_json_limited(nested(kMaxJsonDepth), error);
  REQUIRE(ok.has_value());
  CHECK(ok->is_array());

  auto deep = parse_json_limited(nested(kMaxJsonDepth + 1), error);
  CHECK_FALSE(deep.has_value());
  CHECK(error == "nested deeper than 64 levels (at byte 64)");
}

TEST_CASE("json limits: 100,000 levels are refused without building anything", "[json_limits]") {
  std::string error;
  CHECK_FALSE(parse_json_limited(nested(100000), error).has_value());
  CHECK(error.find("nested deeper than 64 levels") == 0);
  std::string objects;
  for (int i = 0; i < 100000; ++i) objects += "{\"a\":";
  CHECK_FALSE(parse_json_limited(objects + "1" + std::string(100000, '}'), error).has_value());
  CHECK(error.find("nested deeper than 64 levels (at byte ") == 0);
  // Unterminated: refused for depth before the syntax error is reached.
  CHECK(json_too_deep_at(std::string(100000, '[')) == std::size_t(64));
}

TEST_CASE("json limits: brackets inside strings do not count", "[json_limits]") {
  const std::string text = "{\"s\": \"" + std::string(1000, '[') + "\\\"[[[\", \"t\": [\"]]]]\"]}";
  std::string error;
  auto value = parse_json_limited(text, error);
  INFO(error);
  REQUIRE(value.has_value());
  CHECK((*value)["s"].get<std::string>().size() == 1004);
  CHECK(json_too_deep_at(text, 2) == std::nullopt);
  CHECK(json_too_deep_at(text, 1) == text.find(": [") + 2);
  CHECK(json_too_deep_at(text, 0) == std::size_t(0));
}

TEST_CASE("json limits: invalid JSON says so", "[json_limits]") {
  std::string error;
  CHECK_FALSE(parse_json_limited("{\"a\": }", error).has_value());
  CHECK(error.find("not valid JSON: ") == 0);
  CHECK_FALSE(parse_json_limited("", error).has_value());
  CHECK(error.find("not valid JSON: ") == 0);
}

TEST_CASE("json limits: a NUL byte is refused, not read as the end of the text", "[json_limits]") {
  std::string error;
  const std::string text("7\0" "[[[", 5);
  CHECK_FALSE(parse_json_limited(text, error).has_value());
  CHECK(error == "not valid JSON: a NUL byte at byte 1");
}

TEST_CASE("json limits: a string ends at a quote after an even run of backslashes", "[json_limits]") {
  // "a\\" ends after two backslashes; "b\\\"]" holds an escaped quote and a bracket.
  const std::string text = R"(["a\\", ["b\\\"]", []], "c"])";
  std::string error;
  auto value = parse_json_limited(text, error);
  INFO(error);
  REQUIRE(value.has_value());
  CHECK((*value)[1][0].get<std::string>() == "b\\\"]");
  CHECK(json_too_deep_at(text, 3) == std::nullopt);
  CHECK(json_too_deep_at(text, 2) == text.find("[]"));
}
