// Parsing JSON that a script or a server controls, with a nesting limit.
//
// Contract: nlohmann's parser itself is iterative, but much of what follows a parse is not
// (dump(), copies, comparisons, push_json, error excerpts): a document nested 100,000 levels
// deep overflows the C stack there. Every parse of script-, file-, client- or server-controlled
// JSON goes through parse_json_limited, which refuses such a document before it is built.
// Pure functions: no I/O, no Lua, callable from any thread. Nothing here throws; a refusal is
// reported in `error` as "nested deeper than N levels (at byte B)" or "not valid JSON: ...".
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace runara {

// Deep enough for any real API response or dataset (OpenAI, DigitalOcean and ShareGPT stay
// under 10); shallow enough that every recursive walk of the result is safe.
inline constexpr int kMaxJsonDepth = 64;

// Where the text first opens its (max_depth + 1)-th nested array or object, outside strings;
// nullopt when it stays within max_depth. Linear, allocation-free; exact for valid JSON.
std::optional<std::size_t> json_too_deep_at(std::string_view text, int max_depth = kMaxJsonDepth);

// "nested deeper than N levels (at byte B)": the one wording of a refusal for depth.
std::string json_too_deep_message(std::size_t at, int max_depth = kMaxJsonDepth);
inline bool is_json_too_deep(std::string_view error) { return error.starts_with("nested deeper than "); }

// What nlohmann's document of `text` would take, estimated from one linear pass that builds
// nothing (valid JSON assumed; an upper bound for it on 64-bit libstdc++): every value's slot,
// every container, object member and string with its heap block and the allocator's overhead.
// A text of small items costs 10 to 30 times its size once parsed.
std::size_t json_tree_bytes(std::string_view text);

// "would take about N MiB once parsed, more than the M MiB allowed": the one wording of a
// refusal for size.
std::string json_too_large_message(std::size_t estimate, std::size_t max_tree_bytes);
inline bool is_json_too_large(std::string_view error) { return error.starts_with("would take about "); }

// The parsed value, or nullopt with `error` set (too deep, or not valid JSON; a NUL byte
// anywhere is not valid JSON here, where nlohmann would quietly stop reading at it).
// `max_tree_bytes` (0: none) refuses, before anything is built, a text whose document
// json_tree_bytes estimates larger.
std::optional<nlohmann::json> parse_json_limited(std::string_view text, std::string& error,
                                                 int max_depth = kMaxJsonDepth, std::size_t max_tree_bytes = 0);

}  // namespace runara
