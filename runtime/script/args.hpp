// Argument checks for bindings, with messages that name the function, the argument and what
// was expected. Option tables are read with raw access: a script's metamethods never run here.
#pragma once

#include <optional>
#include <string>

#include <lua.hpp>

namespace runara::args {

// Raises "file:line: message" located at the script line that called into runara (frames of
// runara's own Lua wrappers are skipped). Use instead of luaL_error in bindings.
[[noreturn]] void raise(lua_State* L, const char* format, ...);

[[noreturn]] void fail(lua_State* L, const char* fn, int index, const char* name, const char* expected);

double number(lua_State* L, int index, const char* fn, const char* name);
std::string string(lua_State* L, int index, const char* fn, const char* name);
void function(lua_State* L, int index, const char* fn, const char* name);
void table(lua_State* L, int index, const char* fn, const char* name);

// Fields of an options table at `index` (raw access).
std::optional<double> opt_number(lua_State* L, int index, const char* fn, const char* field);
std::optional<std::string> opt_string(lua_State* L, int index, const char* fn, const char* field);
std::optional<bool> opt_bool(lua_State* L, int index, const char* fn, const char* field);
// Raises if the table has a field not in `known` (a typo should not be silently ignored).
void only_fields(lua_State* L, int index, const char* fn, std::initializer_list<const char*> known);

}  // namespace runara::args
