// The environment an untrusted script runs in. Libraries are opened one by one (never
// luaL_openlibs: it would make `require "ffi"` work); whatever can reach the host — io, most of
// os, debug, jit, ffi, package, dofile/loadfile, getfenv/setfenv, newproxy, string.dump and
// bytecode loading — is left out; what remains is wrapped where the original could escape.
#include <cstdlib>
#include <cstring>

#include "base/token_names.hpp"
#include "script/patterns.hpp"
#include "run/state.hpp"

namespace runara {

namespace {

void open_lib(lua_State* L, lua_CFunction opener) {
  lua_pushcfunction(L, opener);
  lua_call(L, 0, 0);
}

void remove_global(lua_State* L, const char* name) {
  lua_pushnil(L);
  lua_setglobal(L, name);
}

// Scripts get os.time, os.clock, os.date and a permission-checked os.getenv; nothing else.
int os_getenv(lua_State* L) {
  const char* name = luaL_checkstring(L, 1);
  auto& rt = impl_of(L);
  if (is_cloud_token_name(name)) return luaL_error(L, "os.getenv: %s %s", name, kCloudTokenRefusal);
  if (rt.secrets_.has(name)) {
    return luaL_error(L, "os.getenv: %s is a secret; use runara.secret(\"%s\")", name, name);
  }
  if (!env_allowed(rt.permissions(), name)) {
    rt.denied(std::string("--allow-env ") + name);
    return luaL_error(L, "os.getenv: reading environment variable %s is not allowed; "
                         "grant it with --allow-env %s", name, name);
  }
  const char* value = std::getenv(name);
  if (value) {
    lua_pushstring(L, value);
  } else {
    lua_pushnil(L);
  }
  return 1;
}

void open_os(lua_State* L) {
  open_lib(L, luaopen_os);
  lua_getglobal(L, "os");
  lua_createtable(L, 0, 4);
  for (const char* name : {"time", "clock", "date"}) {
    lua_getfield(L, -2, name);
    lua_setfield(L, -2, name);
  }
  lua_pushcfunction(L, os_getenv);
  lua_setfield(L, -2, "getenv");
  lua_setglobal(L, "os");
  lua_pop(L, 1);
}

// Each nested resume keeps C frames on the one C stack; a bound keeps it far from overflowing.
constexpr int kMaxResumeNesting = 100;

struct ResumeNesting {
  explicit ResumeNesting(lua_State* L) : rt(impl_of(L)) {
    if (rt.resume_nesting_ >= kMaxResumeNesting) luaL_error(L, "coroutines nested too deeply (more than %d)", kMaxResumeNesting);
    ++rt.resume_nesting_;
  }
  ~ResumeNesting() { --rt.resume_nesting_; }
  Runtime::Impl& rt;
};

// coroutine.resume on a task's coroutine (even a finished or cancelled task's) would run it
// behind the scheduler's back.
int coroutine_resume(lua_State* L) {
  if (impl_of(L).scheduler_->was_task(L, 1)) {
    return luaL_error(L, "coroutine.resume: this coroutine is a runara task; use task:join() to wait for it");
  }
  ResumeNesting nesting(L);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

// coroutine.wrap rebuilt on the guarded resume, so it is bounded the same way.
const char* const kWrap = R"lua(
local create, resume, select, unpack, error = ...
local function pack(...) return { n = select("#", ...), ... } end
return function(f)
  local co = create(f)
  return function(...)
    local r = pack(resume(co, ...))
    if not r[1] then error(r[2], 2) end
    return unpack(r, 2, r.n)
  end
end
)lua";

void guard_coroutine_resume(lua_State* L) {
  lua_getglobal(L, "coroutine");
  lua_getfield(L, -1, "resume");
  lua_pushcclosure(L, coroutine_resume, 1);
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, "resume");
  luaL_loadbufferx(L, kWrap, std::strlen(kWrap), "=coroutine", "t");
  lua_getfield(L, -3, "create");
  lua_pushvalue(L, -3);  // the guarded resume
  lua_getglobal(L, "select");
  lua_getglobal(L, "unpack");
  lua_getglobal(L, "error");
  lua_call(L, 5, 1);
  lua_setfield(L, -3, "wrap");
  lua_pop(L, 2);
}

// Why script code must stop now ("" if it may go on): what the instruction hook would raise.
// Long C calls (the pattern matcher, collectgarbage in an at_exit function) ask it between
// pieces of their work, since the hook cannot stop them.
std::string pattern_interrupt(lua_State* L) {
  auto& rt = impl_of(L);
  if (rt.finalizing_) return rt.at_exit_over() ? Runtime::Impl::kAtExitOutOfTime : "";
  if (rt.stopping()) return rt.stop_message();
  if (rt.interrupt_) return "interrupted";
  Task* task = rt.scheduler_->current();
  if (task && rt.deadline_passed(L, task)) return "deadline exceeded";
  return {};
}

// Raises what pattern_interrupt says, if anything. The message is on the Lua stack before
// lua_error, so no C++ object is alive when it unwinds.
void raise_if_interrupted(lua_State* L) {
  bool stop = false;
  {
    const std::string message = pattern_interrupt(L);
    if (!message.empty()) {
      lua_pushlstring(L, message.data(), message.size());
      stop = true;
    }
  }
  if (stop) lua_error(L);
}

// How much a collectgarbage("step", n) in an at_exit function asks of LuaJIT in one call (KiB).
constexpr int kCollectSliceKiB = 1024;

// collectgarbage as the prelude calls it: LuaJIT's own, except inside runara.at_exit functions.
// There the collection is done in small steps with the budget looked at between them: LuaJIT's
// "collect" runs a whole cycle in one C call (most of a second for a heap of small tables near the
// 1 GiB cap, more under load), which the instruction hook cannot cut short, and a loop of them
// kept an at_exit function running for minutes past its 10 s while the run's machines stayed up. A step ends
// the cycle in progress or does about 2 KiB of its work; the stop is looked at every 64 steps.
// (One step can still do more when a large allocation just put the collector in debt: LuaJIT
// then works the debt off before returning, at most the rest of one cycle.)
int sandbox_collect(lua_State* L) {
  const char* option = luaL_optstring(L, 1, "collect");
  auto& rt = impl_of(L);
  if (!rt.finalizing_ || (std::strcmp(option, "collect") != 0 && std::strcmp(option, "step") != 0)) {
    lua_pushvalue(L, lua_upvalueindex(1));  // LuaJIT's collectgarbage
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
  }
  if (std::strcmp(option, "collect") == 0) {
    // The cycle in progress may have marked, as alive, objects dropped since: a second, whole
    // cycle frees everything unreachable now, as LuaJIT's full collection does.
    int cycles = 0;
    for (unsigned i = 0; cycles < 2; ++i) {
      if (i % 64 == 0) raise_if_interrupted(L);
      if (lua_gc(L, LUA_GCSTEP, 0) == 1) ++cycles;
    }
    lua_pushinteger(L, 0);
    return 1;
  }
  // "step", n: n KiB of work (0: one basic step), handed over in slices; true when a cycle ended.
  lua_Number left = luaL_optnumber(L, 2, 0);
  bool ended = false;
  do {
    raise_if_interrupted(L);
    const int slice = left < kCollectSliceKiB ? static_cast<int>(left < 0 ? 0 : left) : kCollectSliceKiB;
    ended = lua_gc(L, LUA_GCSTEP, slice) == 1;
    left -= kCollectSliceKiB;
  } while (!ended && left > 0);
  lua_pushboolean(L, ended);
  return 1;
}

void guard_string(lua_State* L) {
  lua_getglobal(L, "string");
  lua_pushnil(L);
  lua_setfield(L, -2, "dump");
  install_guarded_patterns(L, lua_gettop(L), pattern_interrupt);
  // Lock the shared string metatable: a script must not reroute every string method.
  lua_pushliteral(L, "");
  lua_getmetatable(L, -1);
  lua_pushliteral(L, "string");
  lua_setfield(L, -2, "__metatable");
  lua_pop(L, 3);
}

int is_lua_function(lua_State* L) {
  lua_pushboolean(L, lua_isfunction(L, 1) && !lua_iscfunction(L, 1));
  return 1;
}

int emit_print(lua_State* L) {
  std::size_t len;
  const char* text = luaL_checklstring(L, 1, &len);
  impl_of(L).print(std::string_view(text, len));
  return 0;
}

// Replacements written in Lua, given the originals they wrap. They run as script code (with
// the instruction hook active), which is what makes xpcall's handler interruptible: it runs
// after the error has unwound, never as a message handler inside the error machinery.
const char* const kPrelude = R"lua(
local real_load, real_setfenv, real_collect, emit, is_lua_function = ...
local pcall, select, type, tostring, unpack, error, concat =
      pcall, select, type, tostring, unpack, error, table.concat

function load(chunk, chunkname, mode, env)
  if mode ~= nil and mode ~= "t" then
    return nil, "only text chunks can be loaded (mode \"t\"): binary chunks are not allowed in scripts"
  end
  if type(chunk) ~= "string" and type(chunk) ~= "function" then
    error("bad argument #1 to 'load' (string or function expected, got " .. type(chunk) .. ")", 2)
  end
  if env ~= nil and type(env) ~= "table" then
    error("bad argument #4 to 'load' (table expected, got " .. type(env) .. ")", 2)
  end
  if type(chunk) == "function" then
    -- Read the pieces here, in Lua: an error raised inside a reader that the parser calls
    -- from C would leave LuaJIT's instruction hook switched off for good.
    local parts, reader = {}, chunk
    while true do
      local ok, piece = pcall(reader)
      if not ok then return nil, piece end
      if piece == nil or piece == "" then break end
      if type(piece) ~= "string" then return nil, "reader function must return a string" end
      parts[#parts + 1] = piece
    end
    chunk = concat(parts)
  end
  local fn, err = real_load(chunk, chunkname, "t")
  if fn and env ~= nil then real_setfenv(fn, env) end
  return fn, err
end

-- table.insert at a far-away position and table.sort of a huge table without a comparator
-- run long loops inside C where the instruction hook cannot stop them.
local real_insert, real_sort = table.insert, table.sort
function table.insert(t, ...)
  if select("#", ...) == 2 then
    local pos = ...
    if type(pos) ~= "number" then
      error("bad argument #2 to 'insert' (number expected, got " .. type(pos) .. ")", 2)
    end
    if type(t) == "table" and (pos < 1 or pos > #t + 1) then
      error("bad argument #2 to 'insert' (position out of bounds)", 2)
    end
  end
  return real_insert(t, ...)
end
-- A C function as the comparator runs with no instruction in between: table.sort(t, string.rep)
-- over 10^5 "1000000"s builds a 7 MB string per comparison for hours, and nothing could stop
-- it, not even the watchdog (nor an at_exit function's budget). Called from a Lua function
-- instead, every comparison passes the hook.
local function less(a, b) return a < b end
function table.sort(t, comp)
  if type(comp) == "function" and not is_lua_function(comp) then
    local c = comp
    comp = function(a, b) return c(a, b) end
  end
  return real_sort(t, comp or less)
end

function loadstring(s, chunkname)
  if type(s) ~= "string" then
    error("bad argument #1 to 'loadstring' (string expected, got " .. type(s) .. ")", 2)
  end
  return real_load(s, chunkname, "t")
end

local function pack(...) return { n = select("#", ...), ... } end

function xpcall(f, handler, ...)
  local r = pack(pcall(f, ...))
  if r[1] then return unpack(r, 1, r.n) end
  local ok, handled = pcall(handler, r[2])
  return false, handled
end

function print(...)
  local parts = {}
  for i = 1, select("#", ...) do parts[i] = tostring((select(i, ...))) end
  emit(concat(parts, "\t") .. "\n")
end

function collectgarbage(opt, arg)
  opt = opt or "collect"
  if opt == "collect" or opt == "count" or opt == "step" then return real_collect(opt, arg) end
  error("collectgarbage(\"" .. tostring(opt) .. "\") is not available to scripts; " ..
        "use \"collect\", \"count\" or \"step\"", 2)
end
)lua";

void run_prelude(lua_State* L) {
  if (luaL_loadbufferx(L, kPrelude, std::strlen(kPrelude), "=runara.sandbox", "t") != 0) {
    lua_error(L);
  }
  lua_getglobal(L, "load");
  lua_getglobal(L, "setfenv");
  lua_getglobal(L, "collectgarbage");
  lua_pushcclosure(L, sandbox_collect, 1);
  lua_pushcfunction(L, emit_print);
  lua_pushcfunction(L, is_lua_function);
  lua_call(L, 5, 0);
}

}  // namespace

void open_sandbox(lua_State* L, Runtime::Impl& rt) {
  (void)rt;
  open_lib(L, luaopen_base);  // LuaJIT's base library also brings `coroutine`
  open_lib(L, luaopen_string);
  open_lib(L, luaopen_table);
  open_lib(L, luaopen_math);
  open_lib(L, luaopen_bit);
  open_os(L);
  run_prelude(L);
  for (const char* name : {"dofile", "loadfile", "getfenv", "setfenv", "newproxy", "gcinfo", "module",
                           "require", "package", "io", "debug", "jit", "ffi"}) {
    remove_global(L, name);
  }
  guard_string(L);
  guard_coroutine_resume(L);
  Secrets::register_metatable(L);
}

}  // namespace runara
