#include "script/pretty.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>

#include "script/values.hpp"
#include "guards/secrets.hpp"

namespace runara {

namespace {

char kDisplayableKey = 0;  // registry key of the set of metatables mark_displayable() made

constexpr int kStopCheckEvery = 64;            // entries between two looks at the stop flag

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

class Printer {
 public:
  Printer(lua_State* L, const PrettyOptions& options) : L_(L), options_(options) {}

  std::string take() {
    if (cut_) out_ += stopped_ ? " ... (stopped)" : " ... (output cut at 64 KiB)";
    return std::move(out_);
  }

  void value(int index, int depth) {
    if (cut_) return;
    index = index < 0 ? lua_gettop(L_) + index + 1 : index;
    switch (lua_type(L_, index)) {
      case LUA_TSTRING: return quoted(index);
      case LUA_TTABLE:
        if (own_display(index)) return;
        return table(index, depth);
      case LUA_TFUNCTION: case LUA_TTHREAD: case LUA_TLIGHTUSERDATA: {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%s: %p", luaL_typename(L_, index), lua_topointer(L_, index));
        return append(buf);
      }
      case LUA_TUSERDATA: {
        if (own_display(index)) return;
        const char* name = Secrets::handle_name(L_, index);
        return append(name ? "<secret " + std::string(name) + ">" : std::string("userdata"));
      }
      default: return append(describe_value(L_, index));
    }
  }

 private:
  // A value of a runtime type (mark_displayable) shown by its own C __tostring.
  bool own_display(int index) {
    const int top = lua_gettop(L_);
    bool shown = false;
    if (lua_getmetatable(L_, index)) {
      lua_pushlightuserdata(L_, &kDisplayableKey);
      lua_rawget(L_, LUA_REGISTRYINDEX);
      if (lua_istable(L_, -1)) {
        lua_pushvalue(L_, -2);
        lua_rawget(L_, -2);
        const bool marked = lua_toboolean(L_, -1);
        lua_pop(L_, 1);
        lua_pushliteral(L_, "__tostring");
        lua_rawget(L_, -3);
        if (marked && lua_iscfunction(L_, -1)) {
          lua_pushvalue(L_, index);
          if (lua_pcall(L_, 1, 1, 0) == 0 && lua_type(L_, -1) == LUA_TSTRING) {
            append(options_.redact ? options_.redact(lua_tostring(L_, -1)) : std::string(lua_tostring(L_, -1)));
            shown = true;
          }
        }
      }
    }
    lua_settop(L_, top);
    return shown;
  }

  // Appends up to the output budget; past it the rest is dropped and the walk ends.
  void append(std::string_view text) {
    if (cut_) return;
    const std::size_t room = kPrettyMaxBytes - out_.size();
    if (text.size() > room) {
      out_.append(text.substr(0, room));
      cut_ = true;
      return;
    }
    out_.append(text);
  }

  // Only what can still be shown is read (a 100 MB string costs the budget, not 100 MB).
  std::string shown_text(int index, bool& whole) {
    std::size_t len = 0;
    const char* s = lua_tolstring(L_, index, &len);
    const std::size_t take = std::min(len, kPrettyMaxBytes - out_.size() + options_.redact_margin);
    whole = take == len;
    const std::string_view raw(s, take);
    return options_.redact ? options_.redact(raw) : std::string(raw);
  }

  void quoted(int index) {
    bool whole = false;
    const std::string s = shown_text(index, whole);
    std::string text = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') text += '\\';
      if (c == '\n') { text += "\\n"; continue; }
      if (c == '\r') { text += "\\r"; continue; }
      if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) {  // ESC and the like, as Lua writes them
        char escape[8];
        std::snprintf(escape, sizeof escape, "\\%03d", static_cast<unsigned char>(c));
        text += escape;
        continue;
      }
      text += c;
      if (text.size() > kPrettyMaxBytes) break;
    }
    append(text);
    if (whole) append("\"");
    else cut_ = true;
  }

  void key(int index, int depth) {
    if (lua_type(L_, index) == LUA_TSTRING) {
      bool whole = false;
      const std::string s = shown_text(index, whole);
      if (whole && is_identifier(s)) return append(s);
    }
    append("[");
    value(index, depth);
    append("]");
  }

  bool should_stop() {
    if (options_.stop && ++entries_ % kStopCheckEvery == 0 && options_.stop()) stopped_ = cut_ = true;
    return cut_;
  }

  // Entries left in the table after the current key (on top of the stack, popped here).
  long count_rest(int index) {
    long rest = 0;
    while (lua_next(L_, index)) {
      lua_pop(L_, 1);
      ++rest;
    }
    return rest;
  }

  void table(int index, int depth) {
    if (depth > kPrettyMaxDepth) return append("{...}");
    if (!shown_.insert(lua_topointer(L_, index)).second) return append("<shared table, shown above>");
    luaL_checkstack(L_, 4, "table nested too deeply");
    const std::string indent(2 * (depth + 1), ' ');
    int count = 0;
    lua_pushnil(L_);
    while (lua_next(L_, index)) {
      if (should_stop()) return lua_pop(L_, 2);
      if (++count > kPrettyMaxWidth) {
        lua_pop(L_, 1);
        append(indent + "... (" + std::to_string(1 + count_rest(index)) + " more)\n");
        break;
      }
      append(count == 1 ? "{\n" + indent : indent);
      key(-2, depth + 1);
      append(" = ");
      value(-1, depth + 1);
      append(",\n");
      lua_pop(L_, 1);
      if (cut_) return lua_pop(L_, 1);
    }
    append(count == 0 ? "{}" : std::string(2 * depth, ' ') + "}");
  }

  lua_State* L_;
  const PrettyOptions& options_;
  std::string out_;
  std::set<const void*> shown_;
  long entries_ = 0;
  bool cut_ = false, stopped_ = false;
};

}  // namespace

void mark_displayable(lua_State* L, int metatable_index) {
  metatable_index = metatable_index < 0 ? lua_gettop(L) + metatable_index + 1 : metatable_index;
  lua_pushlightuserdata(L, &kDisplayableKey);
  lua_rawget(L, LUA_REGISTRYINDEX);
  if (!lua_istable(L, -1)) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushlightuserdata(L, &kDisplayableKey);
    lua_pushvalue(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
  }
  lua_pushvalue(L, metatable_index);
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
  lua_pop(L, 1);
}

std::string pretty_value(lua_State* L, int index, const PrettyOptions& options) {
  Printer printer(L, options);
  printer.value(index, 0);
  return printer.take();
}

}  // namespace runara
