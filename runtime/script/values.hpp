// Reading script values from C++ without ever running the script's code: raw access only,
// no metamethods (a script's __tostring or __index must not hang or crash the runtime).
#pragma once

#include <functional>
#include <string>

#include <lua.hpp>
#include <nlohmann/json.hpp>

namespace runara {

// A one-line description of any value, e.g. for error objects: strings and numbers as they are,
// tables as "table: { message = ... }" when they carry a string `message`/`msg` field.
std::string describe_value(lua_State* L, int index);

// Converts plain data (nil, booleans, numbers, strings, tables) to JSON. Tables with keys 1..n
// become arrays, and so does an empty table marked as an array (mark_json_array: what
// runara.json.decode gives for `[]`); runara.json.null (a NULL light userdata) becomes null. Raises a Lua error naming the path of anything that is not plain data
// (functions, cycles, non-string keys) — `what` names the value in that message. The JSON is
// built outside the Lua heap, so it is capped at `max_bytes` (shared strings would otherwise
// multiply a small heap into a large document), counting every node and key it builds. Nested
// deeper than 100 levels is refused. `stop`, when given, is asked every few thousand values
// and ends the conversion with an error (the watchdog cannot interrupt C++ otherwise).
nlohmann::json to_json(lua_State* L, int index, const char* what, std::size_t max_bytes,
                       const std::function<bool()>& stop = {});

void push_json(lua_State* L, const nlohmann::json& value);

// The mark runara.json.decode sets on the tables it makes of JSON arrays: one shared metatable,
// { __jsontype = "array" } (dkjson's convention), so that a script can tell `[]` from `{}` and
// encoding gives back what was decoded. Sets it on the table at the top of the stack.
void mark_json_array(lua_State* L);
// Whether the table at `index` carries that mark (raw: no metamethod runs).
bool is_json_array(lua_State* L, int index);

}  // namespace runara
