// Tests for the guarded pattern functions (runtime/script/patterns.cpp): they must
// behave exactly like LuaJIT's string.find/match/gmatch/gsub, and a runaway
// match must stop when the interrupt check says so.
#include "script/patterns.hpp"

#include <catch2/catch.hpp>
#include <lua.hpp>

#include <chrono>
#include <sstream>
#include <string>

namespace {

constexpr const char* kCounterKey = "runara.test.pattern_checks";

// A fresh LuaJIT state with the standard libraries.
struct LuaState {
  lua_State* L = luaL_newstate();
  LuaState() { luaL_openlibs(L); }
  ~LuaState() { lua_close(L); }
  LuaState(const LuaState&) = delete;
  LuaState& operator=(const LuaState&) = delete;
};

// Counts the calls of a check in the registry of its state.
int bump_counter(lua_State* L) {
  lua_getfield(L, LUA_REGISTRYINDEX, kCounterKey);
  const int n = static_cast<int>(lua_tointeger(L, -1)) + 1;
  lua_pop(L, 1);
  lua_pushinteger(L, n);
  lua_setfield(L, LUA_REGISTRYINDEX, kCounterKey);
  return n;
}

int counter(lua_State* L) {
  lua_getfield(L, LUA_REGISTRYINDEX, kCounterKey);
  const int n = static_cast<int>(lua_tointeger(L, -1));
  lua_pop(L, 1);
  return n;
}

void reset_counter(lua_State* L) {
  lua_pushinteger(L, 0);
  lua_setfield(L, LUA_REGISTRYINDEX, kCounterKey);
}

std::string never_stop(lua_State* L) {
  bump_counter(L);
  return {};
}

std::string stop_on_third_call(lua_State* L) {
  return bump_counter(L) >= 3 ? "script exceeded its time budget" : "";
}

std::string stop_a(lua_State*) { return "stopped by check A"; }
std::string stop_b(lua_State*) { return "stopped by check B"; }

// Keeps LuaJIT's functions in the global table `orig`, then installs the
// guarded ones into `string` (which string methods also reach).
void install(lua_State* L, runara::PatternInterrupt check) {
  lua_newtable(L);
  lua_getglobal(L, "string");
  for (const char* name : {"find", "match", "gmatch", "gsub"}) {
    lua_getfield(L, -1, name);
    lua_setfield(L, -3, name);
  }
  const int top = lua_gettop(L);
  runara::install_guarded_patterns(L, -1, check);
  REQUIRE(lua_gettop(L) == top);
  lua_pop(L, 1);
  lua_setglobal(L, "orig");
}

// Runs `code` and returns its first result converted to a string, or
// "error: <message>".
std::string run(lua_State* L, const std::string& code) {
  const int top = lua_gettop(L);
  std::string out;
  if (luaL_loadbuffer(L, code.data(), code.size(), "=test") != 0 || lua_pcall(L, 0, 1, 0) != 0) {
    const char* err = lua_tostring(L, -1);
    out = std::string("error: ") + (err != nullptr ? err : "(not a string)");
  } else if (lua_isstring(L, -1)) {
    std::size_t len = 0;
    const char* s = lua_tolstring(L, -1, &len);
    out.assign(s, len);
  } else {
    out = luaL_typename(L, -1);
  }
  lua_settop(L, top);
  return out;
}

// Lua side of the comparison: calls a function of `orig` and its guarded
// counterpart in `string` the same way and records any difference in results
// or error messages. Both are called from the same line of `invoke`, so error
// positions agree too; they are also called straight from pcall.
constexpr const char* kHarness = R"lua(
local orig, unpack, select, type = orig, unpack, select, type
local function pack(...) return {n = select('#', ...), ...} end

local function ser(r)
  local out = {}
  for i = 1, r.n do
    local v = r[i]
    if type(v) == "string" then out[i] = string.format("%q", v)
    elseif type(v) == "number" then out[i] = string.format("%.17g", v)
    elseif type(v) == "boolean" or v == nil then out[i] = tostring(v)
    else out[i] = type(v) end
  end
  return r.n .. "[" .. table.concat(out, ",") .. "]"
end

local function invoke(name, f, args)
  if name == "gmatch" then
    local it = f(unpack(args, 1, args.n))
    local parts = {}
    for _ = 1, 100 do
      local r = pack(it())
      parts[#parts + 1] = ser(r)
      if r.n == 0 or r[1] == nil then break end
    end
    return table.concat(parts, ";")
  end
  return ser(pack(f(unpack(args, 1, args.n))))
end

local function direct(name, f, args)
  if name == "gmatch" then return invoke(name, f, args) end
  return ser(pack(f(unpack(args, 1, args.n))))
end

local checked, failures = 0, {}

function describe(args)
  local parts = {}
  for i = 1, args.n do
    local v = args[i]
    parts[i] = type(v) == "string" and string.format("%q", v) or tostring(v)
  end
  return table.concat(parts, ", ")
end

function compare(name, ...)
  local args = pack(...)
  for _, how in ipairs({invoke, direct}) do
    local ok1, r1 = pcall(how, name, orig[name], args)
    local ok2, r2 = pcall(how, name, string[name], args)
    checked = checked + 1
    if ok1 ~= ok2 or r1 ~= r2 then
      failures[#failures + 1] = string.format("%s(%s):\n  luajit:  %s %s\n  guarded: %s %s",
        name, describe(args), tostring(ok1), tostring(r1), tostring(ok2), tostring(r2))
    end
  end
end

-- How many comparisons ran and how many differed, then the first differences.
function report()
  local shown = {}
  for i = 1, math.min(#failures, 20) do shown[i] = failures[i] end
  return string.format("%d %d\n%s", checked, #failures, table.concat(shown, "\n"))
end
)lua";

struct Report {
  long checked = 0;
  long differ = -1;
  std::string text;
};

Report read_report(lua_State* L) {
  Report r;
  r.text = run(L, "return report()");
  std::istringstream in(r.text);
  in >> r.checked >> r.differ;
  return r;
}

// A broad table of ordinary uses and malformed patterns.
constexpr const char* kCases = R"lua(
local C = compare
-- find: init arguments, plain searches, patterns
for _, init in ipairs({-100, -12, -11, -10, -5, -1, 0, 1, 2, 5, 10, 11, 12, 13, 100,
                       2.7, -2.7, "3", " 4 ", "0x2"}) do
  C("find", "hello world", "o", init)
  C("find", "hello world", "o w", init)
  C("find", "hello world", "", init)
  C("find", "hello world", "l+", init)
  C("find", "hello world", "^h", init)
  C("find", "hello world", "d$", init)
  C("find", "hello world", "()", init)
  C("match", "hello world", ".", init)
  C("match", "hello world", "", init)
  C("match", "hello world", "(o)(.)", init)
  C("find", "", "", init)
  C("find", "", "x*", init)
end
C("find", "hello", "l", nil)
C("find", "hello", "l", nil, true)
C("find", "a.b", ".", 1, true)
C("find", "a+b", "+", 1, true)
C("find", "a+b", "a+", 1, true)
C("find", "a+b", "a+", 1, false)
C("find", "a+b", "a+", 1, nil)
C("find", "a+b", "a+", 1, 0)
C("find", "a+b", "a+", 1, "")
C("find", "a+b", "a+", -1, true)
C("find", "a+b", "", 10, true)
C("find", "abcabc", "bc", 3, true)
C("find", "abc", "abcd", 1, true)
C("find", "a\0b\0c", "\0", 1)
C("find", "a\0b\0c", "\0c")
C("find", "a\0b\0c", "b\0", 1, true)
C("find", "a\0*b", "a\0*")
C("find", "xa\0b", "a\0b")
C("find", "a\0b", "%z")
C("find", "a\0b", "[%z]")
C("find", "a\0b", "%Z+")
C("find", 12345, 34)
C("find", 12345, 3.5)
C("find", "x = 10", "(%w+)%s*=%s*(%w+)")
C("find", "hello", "()ll()")
C("find", "hello", "(l)(l)", 1)
C("find", "THE (quick) fox", "%f[%a]%a+", 5)
C("find", "hello", "h", 1, false, "extra")
-- match: captures, anchors, classes, repetitions
C("match", "hello", "()ll()")
C("match", "  trim me  ", "^%s*(.-)%s*$")
C("match", "key = value", "(%w+)%s*=%s*(%w+)")
C("match", "THE (quick) fox", "%((%a+)%)")
C("match", "f(a(b)c)d", "%b()")
C("match", "f(a(b)c", "%b()")
C("match", "[[x]]", "%b[]")
C("match", "aXbXc", "%bXX")
C("match", "THE (quick) fox", "%f[%a]%a+")
C("match", "THE (quick) fox", "%f[%l]%a+")
C("match", "hello", "%f[%z]")
C("match", "hello", "()%f[%z]")
C("match", "hello", "%f[^%z]()")
C("match", "hello", "^(h)(e)")
C("match", "hello", "l+"); C("match", "hello", "l*"); C("match", "hello", "l-")
C("match", "hello", "l-o"); C("match", "hello", "x?h"); C("match", "hello", "h?e?l?l?o?x?")
C("match", "hello$", "o%$"); C("match", "a$b", "$b"); C("match", "ab", "b$"); C("match", "ab", "a$")
C("match", "^a", "^^a"); C("match", "^a", "%^a"); C("match", "a^", "a^")
C("match", "[]", "[]]"); C("match", "a]", "[]a]+"); C("match", "a-b", "[a-]+")
C("match", "a-b", "[%-]"); C("match", "z", "[a-z]"); C("match", "Z", "[^a-z]")
C("match", "-", "[a-]"); C("match", "b", "[a-]")
C("match", "%", "[%%]"); C("match", "]", "[%]]"); C("match", "^", "[%^]"); C("match", "^", "[^^]")
C("match", "a", "[^]"); C("match", "]", "[^]]"); C("match", "x-", "[x-]+")
C("match", "hello", "(h)(e)(l)(l)(o)")
C("match", "abcabc", "(abc)%1")
C("match", "aaa", "(a*(.)%2)")
C("match", "abab", "((a)(b))%1")
C("match", "xyz", "(x)(y)%2")
C("match", "hello", "(h)()")
C("match", "hello", "()")
C("match", "hello", "(()l)")
C("match", "hello", "%a+", -2)
C("match", "one two", "(%a+) (%a+)")
C("match", "2024-01-31", "(%d+)-(%d+)-(%d+)")
C("match", "[[long]]", "%[%[(.-)%]%]")
C("match", "a.b", "a.b"); C("match", "a.b", "a%.b"); C("match", "axb", "a%.b")
C("match", "caps", ("(.)"):rep(4))
C("match", ("a"):rep(40), ("(a)"):rep(32))
C("match", "\255\128\200", "[\128-\255]+")
C("match", "\255\128\200", "%a")
C("match", "\255\128\200", "%A+")
-- every class against every byte
local all = {}
for i = 0, 255 do all[#all + 1] = string.char(i) end
all = table.concat(all)
for _, cl in ipairs({"a", "c", "d", "g", "l", "p", "s", "u", "w", "x", "z"}) do
  C("gsub", all, "%" .. cl, "")
  C("gsub", all, "%" .. cl:upper(), "")
  C("gsub", all, "[%" .. cl .. "_]", "")
  C("gsub", all, "[^%" .. cl .. "]", "")
end
for _, lit in ipairs({"%.", "%%", "%]", "%-", "%@", "%_", "%{", "%~", "%\127", "%\200", "%1"}) do
  C("gsub", all, "[" .. lit .. "]", "")
end
C("gsub", all, "[!-/]", "")
-- deep recursion is bounded at 200 levels, like LuaJIT
C("match", ("a"):rep(199), ("a?"):rep(199))
C("match", ("a"):rep(200), ("a?"):rep(200))
C("match", ("a"):rep(300), ("(a?)"):rep(300))
C("find", ("a"):rep(1000), ("a?"):rep(1000))
-- gsub: replacement strings, tables, functions, max n, anchors
C("gsub", "hello world", "o", "0")
C("gsub", "hello world", "(o)", "[%1]")
C("gsub", "hello world", "o", "%%")
C("gsub", "hello world", "o", "%0%0")
C("gsub", "hello world", "o", "%x%y")
C("gsub", "hello world", "%w+", "%0 %0", 1)
C("gsub", "hello world", "(%w+) (%w+)", "%2 %1")
C("gsub", "hello world", "(%w+)", "<%1>")
C("gsub", "hello", "", "-")
C("gsub", "", "", "-")
C("gsub", "hello", "x*", "-")
C("gsub", "hello", "l*", "-")
C("gsub", "hello", "^h", "H")
C("gsub", "hello", "^", ">")
C("gsub", "hello", "$", "<")
C("gsub", "hello", "^x*", "-")
for _, n in ipairs({-1, 0, 1, 2, 3, 1.5, 2.9, "2", 1e10}) do
  C("gsub", "hello", "l", "L", n)
  C("gsub", "hello", "", "-", n)
end
C("gsub", "abc", "%w", "%1")
C("gsub", "abc", "b", "%")
C("gsub", "abc", "b", "x%")
C("gsub", "abc", "b", 5)
C("gsub", "abc", "b", 5.5)
C("gsub", 123, 2, 9)
C("gsub", "abc", "(b)()", "%2")
C("gsub", "$name is $age", "%$(%w+)", {name = "bob", age = 42})
C("gsub", "abc", "%w", {a = "A", b = false})
C("gsub", "abc", "%w", {a = 1.5})
C("gsub", "abc", "()", {[1] = "one", [2] = "two"})
C("gsub", "abc", "%w", setmetatable({}, {__index = function(_, k) return k:upper() .. k end}))
C("gsub", "abc", "%w", function(c) return c:upper() .. "!" end)
C("gsub", "abc", "%w", function() end)
C("gsub", "abc", "%w", function() return false end)
C("gsub", "abc", "%w", function(c) return #c end)
C("gsub", "abc", "()", function(p) return p end)
C("gsub", "a=1, b=2", "(%w+)=(%w+)", function(k, v) return v .. "=" .. k end)
C("gsub", "abc", "%w", function(...) return select("#", ...) end)
C("gsub", "abc", "(%w)(%w)", function(...) return select("#", ...) end)
C("gsub", "hello world", "%f[%w]%w+", string.upper)
C("gsub", "x", "x", "a%0b%0c")
-- gmatch
C("gmatch", "one two three", "%a+")
C("gmatch", "k1=v1, k2=v2", "(%w+)=(%w+)")
C("gmatch", "abc", "")
C("gmatch", "abc", "x*")
C("gmatch", "abc", "%a*")
C("gmatch", "abc", "^a")
C("gmatch", "a^b", "^b")
C("gmatch", "hello", "()l")
C("gmatch", "hello", "()")
C("gmatch", "", "")
C("gmatch", "a,b,,c", "([^,]*)")
C("gmatch", "f(a)(b(c))", "%b()")
C("gmatch", "THE (quick) fox", "%f[%a]%a+")
C("gmatch", 12345, "%d%d")
C("gmatch", "abc", "(a")
-- malformed patterns and bad arguments
for _, name in ipairs({"find", "match", "gmatch", "gsub"}) do
  for _, p in ipairs({"%", "a%", "[a", "[a%", "[", "[^", "[%", "[]", "[^]", "(a", "(()", "a)",
                      ")", "%1", "(a)%2", "(a%1)", "%0", "(a)%0", "%f", "%fa", "%f[a", "%b", "%bx",
                      "%b(", "a\0%", ("(a)"):rep(33), "(" .. ("(a)"):rep(32) .. ")", "%g+%",
                      "(a)(b%2)"}) do
    local extra = name == "gsub" and "x" or nil
    C(name, "aaa", p, extra)
    C(name, "", p, extra)
  end
end
C("find", nil, "a"); C("find", "a", nil); C("find", "a"); C("find", "a", "a", {})
C("find", "a", "a", "x")
C("find", {}, "a"); C("find", "a", true); C("match", "a"); C("match", "a", "a", "1e")
C("gsub", "a", "a"); C("gsub", "a", "a", true); C("gsub", "a", "a", nil)
C("gsub", "a", "a", "x", {}); C("gsub", "a", "a", nil, {}); C("gsub", nil, "a", "x")
C("gsub", "a", nil, "x"); C("gsub", "abc", "b", "%2")
C("gsub", "abc", "(b)", "%2"); C("gsub", "abc", "b", "%1"); C("gsub", "abc", "b", "%9")
C("gsub", "abc", "(b", "x"); C("gsub", "abc", "(b", "%1"); C("gsub", "abc", "%w", {a = {}})
C("gsub", "abc", "%w", function() return {} end); C("gsub", "abc", "%w", function() return true end)
C("gsub", "abc", "%w", function() error("boom") end)
C("gsub", "abc", "%w", setmetatable({}, {__index = function() error("index boom") end}))
C("gmatch", nil, "a"); C("gmatch", "a"); C("gmatch", "a", {})
)lua";

// Random patterns and subjects built from pattern syntax, checked the same way.
constexpr const char* kFuzz = R"lua(
local C = compare
math.randomseed(20240531)
local R = math.random
local atoms = {"a", "b", "c", ".", "%a", "%d", "%w", "%s", "%p", "%A", "%%", "%.", "[ab]", "[^a]",
               "[a-c]", "[%d_]", "[]a]", "x", "1", " ", "(", ")", "()", "%1", "%2", "%b()", "%bab",
               "%f[%w]", "%f[%W]", "^", "$", "%", "[", "]", "%z", "\0", "%g", "%x", "(a)", "(.-)"}
local quants = {"", "", "", "*", "+", "-", "?"}
local chars = {"a", "b", "c", "(", ")", "1", " ", "x", ".", "_", "%", "\0", "\200"}
local repls = {"<%0>", "%1-%2", "%%", "x%", "", "%1", 7,
               function(...) return select("#", ...) .. ":" .. tostring((...)) end,
               {a = "A", ["1"] = false, b = 2}}
local inits = {false, 1, 2, -1, -3, 0, 5, 12, -20}
local maxns = {false, false, 0, 1, 2, -1}
local function pick(t) local v = t[R(#t)] if v == false then return nil end return v end
for _ = 1, 1200 do
  local p = {}
  for i = 1, R(1, 5) do p[i] = atoms[R(#atoms)] .. quants[R(#quants)] end
  p = table.concat(p)
  local s = {}
  for i = 1, R(0, 10) do s[i] = chars[R(#chars)] end
  s = table.concat(s)
  C("find", s, p, pick(inits), R(5) == 1)
  C("match", s, p, pick(inits))
  C("gmatch", s, p)
  C("gsub", s, p, repls[R(#repls)], pick(maxns))
end
)lua";

}  // namespace

TEST_CASE("guarded pattern functions agree with LuaJIT's", "[patterns]") {
  LuaState lua;
  install(lua.L, never_stop);
  REQUIRE(run(lua.L, kHarness) == "nil");
  SECTION("a table of ordinary uses and malformed patterns") {
    REQUIRE(run(lua.L, kCases) == "nil");
#if defined(__x86_64__) || defined(__aarch64__)
    {
      // Inits beyond int32 go through LuaJIT's (int32_t) conversion.
      REQUIRE(run(lua.L, R"lua(
        for _, init in ipairs({2^31, 2^31 - 1, -2^31, -2^31 - 1, 2^32 + 3, 2^40, -2^40,
                               0/0, 1/0, -1/0}) do
          compare("find", "abcabc", "c", init)
          compare("find", "abcabc", "c", init, true)
          compare("match", "abcabc", "c.", init)
        end)lua") == "nil");
    }
#endif
    const Report report = read_report(lua.L);
    INFO(report.text);
    CHECK(report.checked > 1000);
    CHECK(report.differ == 0);
  }
  SECTION("random patterns") {
    REQUIRE(run(lua.L, kFuzz) == "nil");
    const Report report = read_report(lua.L);
    INFO(report.text);
    CHECK(report.checked > 5000);
    CHECK(report.differ == 0);
  }
}

TEST_CASE("guarded pattern functions replace the string table's", "[patterns]") {
  LuaState lua;
  install(lua.L, nullptr);
  CHECK(run(lua.L, "return tostring(string.find ~= orig.find and string.match ~= orig.match and "
                   "string.gmatch ~= orig.gmatch and string.gsub ~= orig.gsub)") == "true");
  // Methods reach them through the string metatable.
  CHECK(run(lua.L, "return tostring(getmetatable('').__index.find == string.find)") == "true");
  CHECK(run(lua.L, "return ('x=1'):gsub('(%w)=(%w)', '%2=%1')") == "1=x");
  CHECK(run(lua.L,
            "local t = {} for k, v in ('a=1, b=2'):gmatch('(%w+)=(%w+)') do t[#t+1] = k .. v end "
            "return table.concat(t, ' ')") == "a1 b2");
  // Without a check nothing interrupts, but depth stays bounded.
  CHECK(run(lua.L, "return select(2, pcall(string.match, ('a'):rep(1000), ('a?'):rep(1000)))") ==
        "pattern too complex");
  // No gfind is added, and the other entries are left alone.
  CHECK(run(lua.L, "return tostring(string.gfind)") == "nil");
  CHECK(run(lua.L, "return string.rep('ab', 2) .. string.format('%d', 7)") == "abab7");
}

TEST_CASE("gfind, where present, is guarded too", "[patterns]") {
  LuaState lua;
  REQUIRE(run(lua.L, "string.gfind = string.gmatch") == "nil");
  install(lua.L, stop_a);
  CHECK(run(lua.L, "return tostring(string.gfind ~= orig.gmatch)") == "true");
  CHECK(run(lua.L,
            "local t = {} for w in string.gfind('a b', '%a') do t[#t+1] = w end "
            "return table.concat(t)") == "ab");
  CHECK(run(lua.L,
            "return select(2, pcall(function() "
            "  for _ in string.gfind(('a'):rep(1e4), ('a-'):rep(10) .. 'b') do end "
            "end))") == "stopped by check A");
}

TEST_CASE("pathological patterns are aborted by the interrupt check", "[patterns]") {
  LuaState lua;
  install(lua.L, stop_on_third_call);
  const char* snippets[] = {
      "return string.rep('a', 1e5):find(string.rep('a-', 30) .. 'b')",
      "return ('x'):rep(1e6):match('.-.-.-.-.-.-y')",
      "return (('x'):rep(1e5):gsub('.-.-.-.-y', 'z'))",
      "for w in ('x'):rep(1e5):gmatch('.-.-.-.-y') do end",
      "return ('('):rep(1e5):find('%b()')",
      "return ('a'):rep(1e5):find(('a'):rep(5e4) .. 'b$')",
      "return ('a'):rep(1e5):find('[' .. ('b'):rep(1e4) .. 'a]*c')",
      "return (('ab'):rep(1e4):gsub('%w', function() return ('x'):rep(1e5):find('.-.-.-y') end))",
  };
  for (const char* code : snippets) {
    INFO(code);
    reset_counter(lua.L);
    const auto started = std::chrono::steady_clock::now();
    const std::string result = run(lua.L, std::string("local ok, err = pcall(function() ") + code +
                                              " end) return tostring(ok) .. ': ' .. tostring(err)");
    const auto elapsed = std::chrono::steady_clock::now() - started;
    CHECK(result == "false: script exceeded its time budget");
    CHECK(counter(lua.L) == 3);
    CHECK(elapsed < std::chrono::milliseconds(500));
  }
  // The state stays usable after an interrupted match.
  reset_counter(lua.L);
  CHECK(run(lua.L, "return ('hello world'):match('(%w+)$')") == "world");
  CHECK(counter(lua.L) == 0);
}

TEST_CASE("the check is polled but a long legitimate match completes", "[patterns]") {
  LuaState lua;
  install(lua.L, never_stop);
  reset_counter(lua.L);
  CHECK(run(lua.L, "return tostring(string.rep('a', 150):find('a-a-b'))") == "nil");
  CHECK(counter(lua.L) > 100);
  CHECK(run(lua.L, "return tostring(orig.find(string.rep('a', 150), 'a-a-b'))") == "nil");
  reset_counter(lua.L);
  CHECK(run(lua.L, "local s = ('ab'):rep(5e4) local r, n = s:gsub('(a)(b)', '%2%1') "
                   "return tostring(r == ('ba'):rep(5e4)) .. n") == "true50000");
  CHECK(counter(lua.L) > 0);
}

TEST_CASE("each lua_State uses its own check", "[patterns]") {
  LuaState a;
  LuaState b;
  install(a.L, stop_a);
  install(b.L, stop_b);
  const std::string slow =
      "return select(2, pcall(string.find, string.rep('a', 1e4), string.rep('a-', 10) .. 'b'))";
  CHECK(run(a.L, slow) == "stopped by check A");
  CHECK(run(b.L, slow) == "stopped by check B");
  CHECK(run(a.L,
            "return select(2, pcall(function() "
            "  for _ in string.rep('a', 1e4):gmatch(string.rep('a-', 10) .. 'b') do end "
            "end))") == "stopped by check A");
}

TEST_CASE("deep patterns fail cleanly instead of overflowing the C stack", "[patterns]") {
  LuaState lua;
  install(lua.L, never_stop);
  for (const char* code : {
           "return select(2, pcall(string.match, ('a'):rep(1e5), ('a?'):rep(1e5)))",
           "return select(2, pcall(string.find, ('a'):rep(1e5), "
           "                       ('(a?)'):rep(20) .. ('a?'):rep(1e5)))",
           "return select(2, pcall(string.gsub, ('a'):rep(1e5), ('a?'):rep(1e5) .. '()', '%1'))",
           "return select(2, pcall(string.match, ('a'):rep(1e5), ('a*'):rep(1e5) .. 'b'))",
           "return select(2, pcall(string.match, ('ab'):rep(1e5), ('%f[a]a?b?'):rep(1e5)))",
       }) {
    INFO(code);
    CHECK(run(lua.L, code) == "pattern too complex");
  }
  // LuaJIT fails the same way.
  CHECK(run(lua.L, "return select(2, pcall(orig.match, ('a'):rep(1e5), ('a?'):rep(1e5)))") ==
        "pattern too complex");
  // Nested captures stop at 32, long before the depth limit.
  CHECK(run(lua.L, "return select(2, pcall(string.find, ('a'):rep(100), ('('):rep(1000)))") ==
        "too many captures");
}

TEST_CASE("malformed patterns raise Lua 5.1's messages", "[patterns]") {
  LuaState lua;
  install(lua.L, nullptr);
  const std::pair<const char*, const char*> cases[] = {
      {"string.find('a', '%')", "malformed pattern (ends with '%')"},
      {"string.find('a', '[a')", "malformed pattern (missing ']')"},
      {"string.match('a', '(a')", "unfinished capture"},
      {"string.match('a', 'a)')", "invalid pattern capture"},
      {"string.find('a', '%1')", "invalid capture index"},
      {"string.gsub('a', 'a', '%2')", "invalid capture index"},
      {"string.find('a', '%fa')", "missing '[' after '%f' in pattern"},
      {"string.find('a', '%b')", "unbalanced pattern"},
      {"string.find(('a'):rep(40), ('(a)'):rep(33))", "too many captures"},
      {"string.gsub('a', 'a', {a = {}})", "invalid replacement value (a table)"},
      {"string.gsub('a', 'a', true)", "bad argument #3 to 'gsub' (string/function/table expected)"},
  };
  for (const auto& [call, message] : cases) {
    INFO(call);
    // Called from a Lua function: the message carries the caller's position.
    CHECK(run(lua.L, std::string("local r = ") + call + " return r") ==
          std::string("error: test:1: ") + message);
  }
}
