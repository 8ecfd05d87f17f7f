// runara.json: decode and encode, over the runtime's own JSON parser (nlohmann through
// base/json_limits.hpp), so that scripts stop reading JSON with string patterns.
//
// decode is bounded like every other parse of JSON a script or a server controls: nested at
// most kMaxJsonDepth levels, and the parsed document (which lives outside the Lua heap until it
// is pushed) is reserved from the run's memory budget (--max-memory) before it is built, at the
// estimate json_tree_bytes gives. JSON null is runara.json.null (a NULL light userdata, as
// lua-cjson's cjson.null), so arrays keep their length and a key present as null is not a key
// that is missing; arrays carry the mark mark_json_array sets, so `[]` and `{}` stay apart.
// Errors are raised at the caller's line and say what was wrong and where (line, column, byte).
#include <string_view>

#include "base/json_dump_charged.hpp"
#include "base/json_limits.hpp"
#include "script/args.hpp"
#include "script/values.hpp"
#include "script/runara_binding.hpp"

namespace runara {

namespace {

// Readable indentation stops well before 8; beyond it the spaces would be most of the text.
constexpr int kMaxIndent = 8;

// "[json.exception.parse_error.101] parse error at line 1, column 4: ..." without the bracket,
// which names nlohmann's exception class, not the script's mistake.
std::string without_exception_id(std::string text) {
  if (const auto at = text.find("[json.exception."); at != std::string::npos) {
    if (const auto close = text.find("] ", at); close != std::string::npos) text.erase(at, close + 2 - at);
  }
  return text;
}

void push_decoded(lua_State* L, const nlohmann::json& value) {
  luaL_checkstack(L, 4, "JSON nested too deeply");  // depth is bounded by kMaxJsonDepth
  switch (value.type()) {
    case nlohmann::json::value_t::null: lua_pushlightuserdata(L, nullptr); break;
    case nlohmann::json::value_t::array: {
      lua_createtable(L, static_cast<int>(value.size()), 0);
      int i = 1;
      for (const auto& item : value) {
        push_decoded(L, item);
        lua_rawseti(L, -2, i++);
      }
      mark_json_array(L);
      break;
    }
    case nlohmann::json::value_t::object: {
      lua_createtable(L, 0, static_cast<int>(value.size()));
      for (const auto& [key, item] : value.items()) {
        lua_pushlstring(L, key.data(), key.size());
        push_decoded(L, item);
        lua_rawset(L, -3);
      }
      break;
    }
    default: push_json(L, value); break;  // a scalar
  }
}

// runara.json.decode(text) -> value
int decode(lua_State* L) {
  if (lua_type(L, 1) != LUA_TSTRING) args::fail(L, "runara.json.decode", 1, "text", "a string");
  std::size_t size = 0;
  const char* data = lua_tolstring(L, 1, &size);
  const std::string_view text(data, size);  // not copied: the Lua string stays on the stack
  auto& rt = impl_of(L);
  // Reserved before anything is built; the Lua heap counts the result once it is pushed.
  const std::size_t estimate = json_tree_bytes(text);
  MemoryReservation held(rt.memory_, 0);
  if (!held.grow(estimate)) {
    const std::string why = rt.memory_->refusal(estimate, "decoding " + std::to_string(text.size()) + " bytes of JSON");
    args::raise(L, "runara.json.decode: %s", why.c_str());
  }
  std::string error;
  const auto doc = parse_json_limited(text, error, kMaxJsonDepth);
  if (!doc) {
    error = without_exception_id(error);
    if (is_json_too_deep(error)) error = "the text is " + error;
    args::raise(L, "runara.json.decode: %s", error.c_str());
  }
  push_decoded(L, *doc);
  return 1;
}

// The text of the value at 1, indented by upvalue 1 (-1: none), or a raised error without a
// location (to_json's, or one for a string that is not UTF-8): encode re-raises it located.
int encode_text(lua_State* L) {
  auto& rt = impl_of(L);
  const int indent = static_cast<int>(lua_tointeger(L, lua_upvalueindex(1)));
  std::string text, error;
  // The text is charged as it grows: indentation repeats on every line, so it can be many
  // times the document's size. Held until the Lua heap has its copy.
  MemoryReservation held(rt.memory_, 0);
  {
    const nlohmann::json doc = to_json(L, 1, "value", rt.memory_left(), [&rt] { return rt.must_stop(); });
    try {
      std::size_t needed = 0;
      if (auto written = dump_json_charged(doc, indent, held, needed)) {
        text = std::move(*written);
      } else {
        error = rt.memory_->refusal(needed, "writing the JSON text");
      }
    } catch (const nlohmann::json::exception& e) {
      // JSON text is UTF-8: a string of other bytes (binary data, Latin-1) cannot be written.
      error = "a string is not UTF-8 (" + without_exception_id(e.what()) + ")";
    }
  }
  if (!error.empty()) return luaL_error(L, "%s", error.c_str());
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

// runara.json.encode(value [, { indent = N }]) -> text; keys sorted, so the text is stable.
int encode(lua_State* L) {
  if (lua_isnone(L, 1)) args::fail(L, "runara.json.encode", 1, "value", "a value (nil, boolean, number, string or table)");
  int indent = -1;
  if (!lua_isnoneornil(L, 2)) {
    args::table(L, 2, "runara.json.encode", "options");
    args::only_fields(L, 2, "runara.json.encode", {"indent"});
    if (const auto n = args::opt_number(L, 2, "runara.json.encode", "indent")) {
      if (*n < 0 || *n > kMaxIndent || *n != static_cast<int>(*n)) {
        args::raise(L, "runara.json.encode: option 'indent' must be a whole number from 0 to %d, got %g", kMaxIndent, *n);
      }
      indent = static_cast<int>(*n);
    }
  }
  lua_pushinteger(L, indent);
  lua_pushcclosure(L, encode_text, 1);
  lua_pushvalue(L, 1);
  if (const int status = lua_pcall(L, 1, 1, 0); status != 0) {
    // Out of memory, or the run stopping (not a string): passed on as they are.
    if (status == LUA_ERRMEM || lua_type(L, -1) != LUA_TSTRING) return lua_error(L);
    args::raise(L, "runara.json.encode: %s", lua_tostring(L, -1));
  }
  return 1;
}

// runara.json.is_array(t): true for the tables decode made of JSON arrays (even empty ones).
int is_array(lua_State* L) {
  lua_pushboolean(L, lua_type(L, 1) == LUA_TTABLE && is_json_array(L, 1));
  return 1;
}

}  // namespace

void open_json_api(lua_State* L, Runtime::Impl& rt) {
  (void)rt;
  lua_createtable(L, 0, 4);
  lua_pushcfunction(L, decode);
  lua_setfield(L, -2, "decode");
  lua_pushcfunction(L, encode);
  lua_setfield(L, -2, "encode");
  lua_pushcfunction(L, is_array);
  lua_setfield(L, -2, "is_array");
  lua_pushlightuserdata(L, nullptr);
  lua_setfield(L, -2, "null");
  lua_setfield(L, -2, "json");
}

}  // namespace runara
