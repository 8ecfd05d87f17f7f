#include "script/values.hpp"

#include <cmath>
#include <cctype>
#include <functional>
#include <set>

#include "guards/secrets.hpp"

namespace runara {

namespace {

std::string number_text(lua_Number n) {
  if (std::isfinite(n) && n == std::floor(n) && std::fabs(n) < 1e15) {
    return std::to_string(static_cast<long long>(n));
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.14g", n);
  return buf;
}

// What one JSON node costs outside the Lua heap (the node, its slot in the parent container),
// so that a table sharing one subtable many times is charged for every copy it expands to.
constexpr std::size_t kNodeBytes = 2 * sizeof(nlohmann::json);
constexpr std::size_t kKeyBytes = 64;  // an object member's map node
constexpr int kMaxDepth = 100;
constexpr unsigned kStopCheckEvery = 4096;  // values between two looks at the stop flag

struct JsonWriter {
  lua_State* L;
  std::size_t max_bytes;
  const std::function<bool()>& stop;
  std::size_t bytes = 0;
  unsigned values = 0;
  std::set<const void*> open;  // tables on the current path: a repeat is a cycle

  void count(const std::string& path, std::size_t n) {
    bytes += n + kNodeBytes;
    if (bytes > max_bytes) {
      luaL_error(L, "%s is too large: writing it would exceed the memory limit (--max-memory)", path.c_str());
    }
    // A DAG of shared tables expands exponentially: the watchdog must be able to end it.
    if (stop && ++values % kStopCheckEvery == 0 && stop()) {
      luaL_error(L, "%s: not written, the run is stopping", path.c_str());
    }
  }

  [[noreturn]] void fail(const std::string& path, const std::string& why) {
    luaL_error(L, "%s is not plain data: %s", path.c_str(), why.c_str());
    std::abort();  // luaL_error does not return
  }

  // Returns the array length n when the keys are exactly 1..n, or -1.
  long array_length(int index) {
    long count = 0, max = 0;
    lua_pushnil(L);
    while (lua_next(L, index)) {
      lua_pop(L, 1);
      if (lua_type(L, -1) != LUA_TNUMBER) { lua_pop(L, 1); return -1; }
      lua_Number k = lua_tonumber(L, -1);
      if (k < 1 || k != std::floor(k)) { lua_pop(L, 1); return -1; }
      max = std::max(max, static_cast<long>(k));
      ++count;
    }
    return count == max ? max : -1;
  }

  nlohmann::json table(int index, const std::string& path) {
    const void* id = lua_topointer(L, index);
    if (!open.insert(id).second) fail(path, "it contains itself (a cycle)");
    if (open.size() > kMaxDepth) fail(path, "nested deeper than " + std::to_string(kMaxDepth) + " levels");
    nlohmann::json out;
    long n = array_length(index);
    if (n == 0 && is_json_array(L, index)) {
      out = nlohmann::json::array();  // what runara.json.decode made of []
    } else if (n == 0) {
      out = nlohmann::json::object();  // {} is the more common meaning of an empty table
    } else if (n > 0) {
      out = nlohmann::json::array();
      for (long i = 1; i <= n; ++i) {
        lua_rawgeti(L, index, static_cast<int>(i));
        out.push_back(value(lua_gettop(L), path + "[" + std::to_string(i) + "]"));
        lua_pop(L, 1);
      }
    } else {
      out = nlohmann::json::object();
      lua_pushnil(L);
      while (lua_next(L, index)) {
        if (lua_type(L, -2) != LUA_TSTRING) {
          fail(path, std::string("it has a key of type ") + luaL_typename(L, -2) +
                         " (only string keys or a 1..n list can be written)");
        }
        std::size_t key_len = 0;
        const char* key_data = lua_tolstring(L, -2, &key_len);
        std::string key(key_data, key_len);
        count(path, key_len + kKeyBytes);
        out[key] = value(lua_gettop(L), path + "." + key);
        lua_pop(L, 1);
      }
    }
    open.erase(id);
    return out;
  }

  nlohmann::json value(int index, const std::string& path) {
    count(path, lua_type(L, index) == LUA_TSTRING ? lua_objlen(L, index) : 0);
    switch (lua_type(L, index)) {
      case LUA_TNIL: return nullptr;
      case LUA_TBOOLEAN: return static_cast<bool>(lua_toboolean(L, index));
      case LUA_TNUMBER: {
        lua_Number n = lua_tonumber(L, index);
        if (!std::isfinite(n)) return nullptr;  // JSON has no inf/nan
        if (n == std::floor(n) && std::fabs(n) < 9e15) return static_cast<long long>(n);
        return n;
      }
      case LUA_TSTRING: {
        std::size_t len;
        const char* s = lua_tolstring(L, index, &len);
        return std::string(s, len);
      }
      case LUA_TTABLE: return table(index, path);
      case LUA_TLIGHTUSERDATA:
        if (lua_touserdata(L, index) == nullptr) return nullptr;  // runara.json.null
        fail(path, "it is a userdata");
      case LUA_TUSERDATA:
        if (const char* name = Secrets::handle_name(L, index)) {
          return "<secret " + std::string(name) + ">";
        }
        [[fallthrough]];
      default: fail(path, std::string("it is a ") + luaL_typename(L, index));
    }
  }
};

}  // namespace

std::string describe_value(lua_State* L, int index) {
  switch (lua_type(L, index)) {
    case LUA_TSTRING: {
      std::size_t len;
      const char* s = lua_tolstring(L, index, &len);
      return std::string(s, len);
    }
    case LUA_TNUMBER: return number_text(lua_tonumber(L, index));
    case LUA_TNIL: return "nil";
    case LUA_TBOOLEAN: return lua_toboolean(L, index) ? "true" : "false";
    case LUA_TTABLE: {
      index = index < 0 ? lua_gettop(L) + index + 1 : index;
      for (const char* field : {"message", "msg", "error"}) {
        lua_pushstring(L, field);
        lua_rawget(L, index);
        if (lua_type(L, -1) == LUA_TSTRING) {
          std::string text = lua_tostring(L, -1);
          lua_pop(L, 1);
          return text;
        }
        lua_pop(L, 1);
      }
      return "(error object: a table without a string 'message' field)";
    }
    case LUA_TUSERDATA:
      if (const char* name = Secrets::handle_name(L, index)) return "<secret " + std::string(name) + ">";
      return "(error object of type userdata)";
    default: return std::string("(error object of type ") + luaL_typename(L, index) + ")";
  }
}

nlohmann::json to_json(lua_State* L, int index, const char* what, std::size_t max_bytes,
                       const std::function<bool()>& stop) {
  index = index < 0 ? lua_gettop(L) + index + 1 : index;
  luaL_checkstack(L, 2 * kMaxDepth + 20, "nested too deeply");
  JsonWriter writer{L, max_bytes, stop};
  return writer.value(index, what);
}

namespace {

void push_json_at(lua_State* L, const nlohmann::json& value, int depth) {
  // Callers parse with json_limits (64 levels); this guards the C stack against any other.
  if (depth > kMaxDepth) luaL_error(L, "JSON nested deeper than %d levels", kMaxDepth);
  luaL_checkstack(L, 4, "JSON nested too deeply");
  switch (value.type()) {
    case nlohmann::json::value_t::null: lua_pushnil(L); break;
    case nlohmann::json::value_t::boolean: lua_pushboolean(L, value.get<bool>()); break;
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float: lua_pushnumber(L, value.get<double>()); break;
    case nlohmann::json::value_t::string: {
      const auto& s = value.get_ref<const std::string&>();
      lua_pushlstring(L, s.data(), s.size());
      break;
    }
    case nlohmann::json::value_t::array: {
      lua_createtable(L, static_cast<int>(value.size()), 0);
      int i = 1;
      for (const auto& item : value) {
        push_json_at(L, item, depth + 1);
        lua_rawseti(L, -2, i++);
      }
      break;
    }
    case nlohmann::json::value_t::object: {
      lua_createtable(L, 0, static_cast<int>(value.size()));
      for (const auto& [key, item] : value.items()) {
        lua_pushlstring(L, key.data(), key.size());
        push_json_at(L, item, depth + 1);
        lua_rawset(L, -3);
      }
      break;
    }
    default: lua_pushnil(L); break;
  }
}

}  // namespace

void push_json(lua_State* L, const nlohmann::json& value) { push_json_at(L, value, 0); }

namespace {
const char kJsonArrayKey = 0;  // its address keys the array mark's metatable in the registry
}  // namespace

void mark_json_array(lua_State* L) {
  lua_pushlightuserdata(L, const_cast<char*>(&kJsonArrayKey));
  lua_rawget(L, LUA_REGISTRYINDEX);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "array");
    lua_setfield(L, -2, "__jsontype");
    lua_pushlightuserdata(L, const_cast<char*>(&kJsonArrayKey));
    lua_pushvalue(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
  }
  lua_setmetatable(L, -2);
}

bool is_json_array(lua_State* L, int index) {
  index = index < 0 ? lua_gettop(L) + index + 1 : index;
  if (!lua_getmetatable(L, index)) return false;
  lua_pushlightuserdata(L, const_cast<char*>(&kJsonArrayKey));
  lua_rawget(L, LUA_REGISTRYINDEX);
  const bool marked = lua_rawequal(L, -1, -2) != 0;
  lua_pop(L, 2);
  return marked;
}

}  // namespace runara
