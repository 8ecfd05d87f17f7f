// require: pure-Lua modules from the script's own folder, then from the stdlib (the stdlib alone
// under Options::stdlib_modules_only: a built-in command's code and what it requires). Names are
// dotted identifiers (no path tricks); the file must resolve, symlinks included, inside the
// folder it was found in, not in an output folder (write-only for scripts: reading redacted text
// back would be an oracle for secrets); only text chunks load. The file is read with its size
// checked against the memory budget first, and a FIFO or device is refused without blocking.
#include "base/checked_read.hpp"
#include "script/values.hpp"
#include "run/state.hpp"

namespace runara {

namespace {

// Registry key of the table of loaded modules (scripts cannot see the registry).
char kLoadedKey;

bool valid_module_name(const std::string& name) {
  if (name.empty() || name.size() > 200 || name.front() == '.' || name.back() == '.') return false;
  char previous = 0;
  for (char c : name) {
    const bool ident = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ident && c != '.') return false;
    if (c == '.' && previous == '.') return false;
    previous = c;
  }
  return true;
}

// Finds <root>/<name with dots as slashes>.lua; "" if absent or escaping the root.
std::string find_module(const std::string& root, const std::string& name) {
  std::string relative = name;
  for (char& c : relative) {
    if (c == '.') c = '/';
  }
  const std::string real_root = canonical_path(root, "");
  const std::string real = canonical_path(relative + ".lua", real_root);
  if (real_root.empty() || real.empty() || !path_within(real, real_root)) return {};
  return real;
}

int require_module(lua_State* L) {
  const std::string name = luaL_checkstring(L, 1);
  if (!valid_module_name(name)) {
    return luaL_error(L, "require: '%s' is not a module name (expected names like \"stats\" or "
                         "\"mylib.helpers\": letters, digits, '_', '-' and dots)", name.c_str());
  }
  lua_pushlightuserdata(L, &kLoadedKey);
  lua_rawget(L, LUA_REGISTRYINDEX);
  const int loaded = lua_gettop(L);
  lua_getfield(L, loaded, name.c_str());
  if (lua_toboolean(L, -1)) {
    if (lua_islightuserdata(L, -1)) return luaL_error(L, "require: module '%s' requires itself (a loop)", name.c_str());
    return 1;
  }
  lua_pop(L, 1);

  auto& rt = impl_of(L);
  // A built-in command never looks in the script's folder: there, it is the current directory,
  // whose files are whoever shared that folder's, not runara's.
  const bool stdlib_only = rt.options_.stdlib_modules_only;
  std::string path = stdlib_only ? std::string() : find_module(rt.script_dir_, name);
  if (path.empty()) path = find_module(rt.options_.stdlib_dir, name);
  if (path.empty() && stdlib_only) {
    return luaL_error(L, "require: module '%s' not found (looked for %s.lua in the runara stdlib only: built-in commands "
                         "load no module from the current folder)", name.c_str(), name.c_str());
  }
  if (path.empty()) {
    return luaL_error(L, "require: module '%s' not found (looked for %s.lua in the script's folder and the runara stdlib)",
                      name.c_str(), name.c_str());
  }
  if (rt.output_.holds(path)) {
    return luaL_error(L, "require: module '%s' is in an output folder, which scripts cannot read (runara masks "
                         "secrets in what is written there); keep modules outside results/", name.c_str());
  }
  std::string code;
  MemoryReservation held(rt.memory_, 0);
  const std::string error = read_file_checked(path, [&](std::size_t size) {
    return held.grow(size) ? std::string() : rt.memory_->refusal(size, "loading module '" + name + "'");
  }, code);
  if (!error.empty()) return luaL_error(L, "require: %s", error.c_str());
  const std::string chunk_name = "@" + path;
  if (luaL_loadbufferx(L, code.data(), code.size(), chunk_name.c_str(), "t") != 0) return lua_error(L);

  lua_pushlightuserdata(L, &kLoadedKey);  // marks "loading" to catch require loops
  lua_setfield(L, loaded, name.c_str());
  lua_pushstring(L, name.c_str());
  if (lua_pcall(L, 1, 1, 0) != 0) {
    lua_pushnil(L);
    lua_setfield(L, loaded, name.c_str());  // a later require may try again
    return lua_error(L);
  }
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    lua_pushboolean(L, 1);
  }
  lua_pushvalue(L, -1);
  lua_setfield(L, loaded, name.c_str());
  return 1;
}

}  // namespace

void open_require(lua_State* L, Runtime::Impl& rt) {
  (void)rt;
  lua_pushlightuserdata(L, &kLoadedKey);
  lua_newtable(L);
  lua_rawset(L, LUA_REGISTRYINDEX);
  lua_pushcfunction(L, require_module);
  lua_setglobal(L, "require");
}

}  // namespace runara
