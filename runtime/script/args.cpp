#include "script/args.hpp"

#include "base/did_you_mean.hpp"

#include <cstdarg>
#include <cstdlib>
#include <cstring>

#include "run/state.hpp"

namespace runara::args {

namespace {
const char* type_with_article(lua_State* L, int index) {
  switch (lua_type(L, index)) {
    case LUA_TNONE:
    case LUA_TNIL: return "nil";
    case LUA_TBOOLEAN: return "a boolean";
    case LUA_TNUMBER: return "a number";
    case LUA_TSTRING: return "a string";
    case LUA_TTABLE: return "a table";
    case LUA_TFUNCTION: return "a function";
    case LUA_TTHREAD: return "a coroutine";
    default: return "a userdata";
  }
}

void push_field(lua_State* L, int index, const char* field) {
  lua_pushstring(L, field);
  lua_rawget(L, index);
}
}  // namespace

void raise(lua_State* L, const char* format, ...) {
  va_list args;
  va_start(args, format);
  lua_pushvfstring(L, format, args);
  va_end(args);
  const std::string where = caller_location(L);
  if (where != "?") {
    lua_pushfstring(L, "%s: ", where.c_str());
    lua_insert(L, -2);
    lua_concat(L, 2);
  }
  lua_error(L);
  std::abort();
}

void fail(lua_State* L, const char* fn, int index, const char* name, const char* expected) {
  // A number of the wrong value is shown as itself ("got -1"): its type was not the problem.
  if (lua_type(L, index) == LUA_TNUMBER && std::strncmp(expected, "a number", 8) == 0) raise(L, "%s: argument #%d (%s) must be %s, got %g", fn, index, name, expected, lua_tonumber(L, index));
  raise(L, "%s: argument #%d (%s) must be %s, got %s", fn, index, name, expected, type_with_article(L, index));
}

double number(lua_State* L, int index, const char* fn, const char* name) {
  if (lua_type(L, index) != LUA_TNUMBER) fail(L, fn, index, name, "a number");
  return lua_tonumber(L, index);
}

std::string string(lua_State* L, int index, const char* fn, const char* name) {
  if (lua_type(L, index) != LUA_TSTRING) fail(L, fn, index, name, "a string");
  std::size_t len;
  const char* s = lua_tolstring(L, index, &len);
  return std::string(s, len);
}

void function(lua_State* L, int index, const char* fn, const char* name) {
  if (lua_type(L, index) != LUA_TFUNCTION) fail(L, fn, index, name, "a function");
}

void table(lua_State* L, int index, const char* fn, const char* name) {
  if (lua_type(L, index) != LUA_TTABLE) fail(L, fn, index, name, "a table");
}

std::optional<double> opt_number(lua_State* L, int index, const char* fn, const char* field) {
  push_field(L, index, field);
  std::optional<double> out;
  if (lua_type(L, -1) == LUA_TNUMBER) {
    out = lua_tonumber(L, -1);
  } else if (!lua_isnil(L, -1)) {
    raise(L, "%s: option '%s' must be a number, got %s", fn, field, type_with_article(L, -1));
  }
  lua_pop(L, 1);
  return out;
}

std::optional<std::string> opt_string(lua_State* L, int index, const char* fn, const char* field) {
  push_field(L, index, field);
  std::optional<std::string> out;
  if (lua_type(L, -1) == LUA_TSTRING) {
    out = lua_tostring(L, -1);
  } else if (!lua_isnil(L, -1)) {
    raise(L, "%s: option '%s' must be a string, got %s", fn, field, type_with_article(L, -1));
  }
  lua_pop(L, 1);
  return out;
}

std::optional<bool> opt_bool(lua_State* L, int index, const char* fn, const char* field) {
  push_field(L, index, field);
  std::optional<bool> out;
  if (lua_type(L, -1) == LUA_TBOOLEAN) {
    out = lua_toboolean(L, -1) != 0;
  } else if (!lua_isnil(L, -1)) {
    raise(L, "%s: option '%s' must be true or false, got %s", fn, field, type_with_article(L, -1));
  }
  lua_pop(L, 1);
  return out;
}

void only_fields(lua_State* L, int index, const char* fn, std::initializer_list<const char*> known) {
  lua_pushnil(L);
  while (lua_next(L, index)) {
    lua_pop(L, 1);
    bool ok = false;
    if (lua_type(L, -1) == LUA_TSTRING) {
      const char* key = lua_tostring(L, -1);
      for (const char* k : known) ok = ok || std::string(k) == key;
    }
    if (!ok) {
      std::string list;
      for (const char* k : known) list += std::string(list.empty() ? "" : ", ") + k;
      const char* shown = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : luaL_typename(L, -1);
      const std::string hint = lua_type(L, -1) == LUA_TSTRING ? did_you_mean(shown, std::vector<std::string>(known.begin(), known.end())) : "";
      raise(L, "%s: unknown option '%s'%s (known options: %s)", fn, shown, hint.c_str(), list.c_str());
    }
  }
}

}  // namespace runara::args
