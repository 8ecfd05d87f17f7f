// Guarded Lua pattern matching: string.find, string.match, string.gmatch and
// string.gsub with a step counter that polls an interrupt check.
//
// This is a C++ port of the pattern-matching machinery of Lua 5.1's lstrlib.c,
// including the adjustments LuaJIT 2.1 made to it in lib_string.c (recursion
// depth limit, %g class, ASCII-only character classes, how the init argument
// is converted, detection of special characters over the whole pattern), so
// that results and error messages match the LuaJIT functions it replaces.
//
// Lua 5.1 -- Copyright (C) 1994-2012 Lua.org, PUC-Rio.
// LuaJIT  -- Copyright (C) 2005-2022 Mike Pall.
//
// Permission is hereby granted, free of charge, to any person obtaining a copy
// of this software and associated documentation files (the "Software"), to
// deal in the Software without restriction, including without limitation the
// rights to use, copy, modify, merge, publish, distribute, sublicense, and/or
// sell copies of the Software, and to permit persons to whom the Software is
// furnished to do so, subject to the following conditions:
//
// The above copyright notice and this permission notice shall be included in
// all copies or substantial portions of the Software.
//
// THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
// IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
// FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
// AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
// LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING
// FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS
// IN THE SOFTWARE.

#include "script/patterns.hpp"

#include <lua.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>

namespace runara {
namespace {

using Index = std::ptrdiff_t;

constexpr int kMaxCaptures = LUA_MAXCAPTURES;
constexpr Index kCapUnfinished = -1;
constexpr Index kCapPosition = -2;
constexpr char kEsc = '%';
// Characters that make string.find use the pattern matcher.
constexpr std::string_view kSpecials = "^$*+?.([%-";

// --- Character classes ------------------------------------------------------
// ASCII only and independent of the C locale, like LuaJIT's lj_char table:
// bytes >= 0x80 belong to no class.

constexpr bool is_digit(int c) { return c >= '0' && c <= '9'; }
constexpr bool is_upper(int c) { return c >= 'A' && c <= 'Z'; }
constexpr bool is_lower(int c) { return c >= 'a' && c <= 'z'; }
constexpr bool is_alpha(int c) { return is_upper(c) || is_lower(c); }
constexpr bool is_alnum(int c) { return is_alpha(c) || is_digit(c); }
constexpr bool is_cntrl(int c) { return (c >= 0 && c < 0x20) || c == 0x7f; }
constexpr bool is_space(int c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
constexpr bool is_punct(int c) {
  return (c >= 0x21 && c <= 0x2f) || (c >= 0x3a && c <= 0x40) || (c >= 0x5b && c <= 0x60) ||
         (c >= 0x7b && c <= 0x7e);
}
constexpr bool is_xdigit(int c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
constexpr bool is_graph(int c) { return is_alnum(c) || is_punct(c); }
constexpr int to_lower(int c) { return is_upper(c) ? c + ('a' - 'A') : c; }

constexpr int uchar(char c) { return static_cast<unsigned char>(c); }

// Does `c` belong to the class named by the letter `cl` (as in %a, %A, ...)?
// Any other `cl` stands for itself.
bool match_class(int c, int cl) {
  bool res = false;
  switch (to_lower(cl)) {
    case 'a': res = is_alpha(c); break;
    case 'c': res = is_cntrl(c); break;
    case 'd': res = is_digit(c); break;
    case 'g': res = is_graph(c); break;  // LuaJIT extension (from Lua 5.2)
    case 'l': res = is_lower(c); break;
    case 'p': res = is_punct(c); break;
    case 's': res = is_space(c); break;
    case 'u': res = is_upper(c); break;
    case 'w': res = is_alnum(c); break;
    case 'x': res = is_xdigit(c); break;
    case 'z': res = (c == 0); break;
    default: return cl == c;
  }
  return is_upper(cl) ? !res : res;
}

// `p` points at the '[' of a set, `ec` at its closing ']'.
bool match_bracket_class(int c, const char* p, const char* ec) {
  bool sig = true;
  if (p[1] == '^') {
    sig = false;
    ++p;  // skip the '^'
  }
  while (++p < ec) {
    if (*p == kEsc) {
      ++p;
      if (match_class(c, uchar(*p))) return sig;
    } else if (p[1] == '-' && p + 2 < ec) {
      p += 2;
      if (uchar(p[-2]) <= c && c <= uchar(*p)) return sig;
    } else if (uchar(*p) == c) {
      return sig;
    }
  }
  return !sig;
}

// Does `c` match the single-character class [p, ep)?
bool single_match(int c, const char* p, const char* ep) {
  switch (*p) {
    case '.': return true;
    case kEsc: return match_class(c, uchar(p[1]));
    case '[': return match_bracket_class(c, p, ep - 1);
    default: return uchar(*p) == c;
  }
}

// Raises a Lua error with the caller's position, like luaL_error.
[[noreturn]] void raise_error(lua_State* L, const char* msg) {
  luaL_error(L, "%s", msg);
  std::abort();  // luaL_error does not return
}

// --- The matcher ------------------------------------------------------------

struct Capture {
  const char* init;
  Index len;  // length, or kCapUnfinished / kCapPosition
};

// State of one call of find/match/gmatch/gsub. Trivially destructible: Lua
// errors unwind through it.
class MatchState {
 public:
  MatchState(lua_State* L, const char* src, std::size_t len, PatternInterrupt check)
      : L_(L), src_init_(src), src_end_(src + len), check_(check) {}

  // Forgets the captures of a previous attempt.
  void reset() {
    level_ = 0;
    depth_ = 0;
  }

  // Matches pattern `p` (NUL-terminated) at subject position `s`; returns the
  // end of the match or nullptr.
  const char* match(const char* s, const char* p);

  void push_capture(int i, const char* s, const char* e);
  int push_captures(const char* s, const char* e);

  // Accounts `cost` units of work, polling the interrupt check when the
  // budget runs out.
  void step(Index cost) {
    budget_ -= cost;
    if (budget_ <= 0) poll();
  }

  lua_State* L() const { return L_; }
  const char* src_end() const { return src_end_; }

 private:
  void poll();
  const char* match_items(const char* s, const char* p);
  const char* class_end(const char* p);
  const char* match_balance(const char* s, const char* p);
  const char* max_expand(const char* s, const char* p, const char* ep);
  const char* min_expand(const char* s, const char* p, const char* ep);
  const char* start_capture(const char* s, const char* p, Index what);
  const char* end_capture(const char* s, const char* p);
  const char* match_capture(const char* s, int l);
  int check_capture(int l);
  int capture_to_close();

  lua_State* L_;
  const char* src_init_;
  const char* src_end_;
  PatternInterrupt check_;
  Index budget_ = kPatternStepsPerCheck;
  int level_ = 0;  // number of captures, finished or not
  int depth_ = 0;  // nesting of match()
  Capture capture_[kMaxCaptures] = {};
};

void MatchState::poll() {
  budget_ = kPatternStepsPerCheck;
  if (check_ == nullptr) return;
  bool stop = false;
  {
    std::string msg;
    try {
      msg = check_(L_);
    } catch (const std::exception& e) {
      msg = e.what();
      if (msg.empty()) msg = "pattern match interrupted";
    }
    if (!msg.empty()) {
      lua_pushlstring(L_, msg.data(), msg.size());
      stop = true;
    }
  }  // the message is on the Lua stack; nothing to destroy when unwinding
  if (stop) lua_error(L_);
}

int MatchState::check_capture(int l) {
  l -= '1';
  if (l < 0 || l >= level_ || capture_[l].len == kCapUnfinished)
    raise_error(L_, "invalid capture index");
  return l;
}

int MatchState::capture_to_close() {
  for (int level = level_ - 1; level >= 0; --level)
    if (capture_[level].len == kCapUnfinished) return level;
  raise_error(L_, "invalid pattern capture");
}

// Returns the end of the single-character class starting at `p`.
const char* MatchState::class_end(const char* p) {
  switch (*p++) {
    case kEsc:
      if (*p == '\0') raise_error(L_, "malformed pattern (ends with '%')");
      return p + 1;
    case '[':
      if (*p == '^') ++p;
      do {  // look for the closing ']'
        if (*p == '\0') raise_error(L_, "malformed pattern (missing ']')");
        if (*(p++) == kEsc && *p != '\0') ++p;  // skip escapes such as '%]'
      } while (*p != ']');
      return p + 1;
    default:
      return p;
  }
}

const char* MatchState::match_balance(const char* s, const char* p) {
  if (p[0] == '\0' || p[1] == '\0') raise_error(L_, "unbalanced pattern");
  if (*s != *p) return nullptr;  // at the end, *s is the terminating NUL
  const char open = p[0];
  const char close = p[1];
  int depth = 1;
  while (++s < src_end_) {
    step(1);
    if (*s == close) {
      if (--depth == 0) return s + 1;
    } else if (*s == open) {
      ++depth;
    }
  }
  return nullptr;  // the subject ends out of balance
}

// Work to test one subject byte against the item [p, ep).
Index item_cost(const char* p, const char* ep) { return *p == '[' ? ep - p : 1; }

const char* MatchState::max_expand(const char* s, const char* p, const char* ep) {
  const Index unit = item_cost(p, ep);
  Index i = 0;  // the longest run of the item
  while (s + i < src_end_ && single_match(uchar(s[i]), p, ep)) {
    ++i;
    step(unit);
  }
  // Try the rest of the pattern after the longest run, then shorter ones.
  for (; i >= 0; --i) {
    if (const char* res = match(s + i, ep + 1)) return res;
  }
  return nullptr;
}

const char* MatchState::min_expand(const char* s, const char* p, const char* ep) {
  const Index unit = item_cost(p, ep);
  for (;;) {
    if (const char* res = match(s, ep + 1)) return res;
    if (s < src_end_ && single_match(uchar(*s), p, ep)) {
      ++s;  // try with one more repetition
      step(unit);
    } else {
      return nullptr;
    }
  }
}

const char* MatchState::start_capture(const char* s, const char* p, Index what) {
  const int level = level_;
  if (level >= kMaxCaptures) raise_error(L_, "too many captures");
  capture_[level].init = s;
  capture_[level].len = what;
  level_ = level + 1;
  const char* res = match(s, p);
  if (res == nullptr) --level_;  // undo the capture
  return res;
}

const char* MatchState::end_capture(const char* s, const char* p) {
  const int l = capture_to_close();
  capture_[l].len = s - capture_[l].init;  // close the capture
  const char* res = match(s, p);
  if (res == nullptr) capture_[l].len = kCapUnfinished;  // undo
  return res;
}

const char* MatchState::match_capture(const char* s, int l) {
  l = check_capture(l);
  // A position capture has a negative length, which as a size_t never fits.
  const auto len = static_cast<std::size_t>(capture_[l].len);
  if (static_cast<std::size_t>(src_end_ - s) < len) return nullptr;
  step(1 + static_cast<Index>(len / 16));
  return std::memcmp(capture_[l].init, s, len) == 0 ? s + len : nullptr;
}

const char* MatchState::match(const char* s, const char* p) {
  if (++depth_ > kPatternMaxDepth) raise_error(L_, "pattern too complex");
  s = match_items(s, p);
  --depth_;
  return s;
}

// The body of match(): loops where Lua 5.1 uses `goto init` for tail calls.
const char* MatchState::match_items(const char* s, const char* p) {
  for (;;) {
    step(1);
    switch (*p) {
      case '\0':  // end of pattern: success
        return s;
      case '(':
        if (p[1] == ')') return start_capture(s, p + 2, kCapPosition);
        return start_capture(s, p + 1, kCapUnfinished);
      case ')':
        return end_capture(s, p + 1);
      case '$':
        if (p[1] == '\0') return s == src_end_ ? s : nullptr;
        break;  // a '$' elsewhere is an ordinary character
      case kEsc:
        if (p[1] == 'b') {  // balanced string
          s = match_balance(s, p + 2);
          if (s == nullptr) return nullptr;
          p += 4;
          continue;
        }
        if (p[1] == 'f') {  // frontier
          p += 2;
          if (*p != '[') raise_error(L_, "missing '[' after '%f' in pattern");
          const char* ep = class_end(p);
          step(ep - p);
          const char previous = (s == src_init_) ? '\0' : s[-1];
          // At the end of the subject *s is its terminating NUL.
          if (match_bracket_class(uchar(previous), p, ep - 1) ||
              !match_bracket_class(uchar(*s), p, ep - 1))
            return nullptr;
          p = ep;
          continue;
        }
        if (is_digit(uchar(p[1]))) {  // back reference %0-%9
          s = match_capture(s, uchar(p[1]));
          if (s == nullptr) return nullptr;
          p += 2;
          continue;
        }
        break;  // a class such as %a
      default:
        break;
    }
    // A single-character class, possibly followed by a repetition suffix.
    const char* ep = class_end(p);
    if (*p == '[') step(ep - p);
    const bool m = s < src_end_ && single_match(uchar(*s), p, ep);
    switch (*ep) {
      case '?':
        if (m) {
          if (const char* res = match(s + 1, ep + 1)) return res;
        }
        p = ep + 1;
        continue;
      case '*':
        return max_expand(s, p, ep);
      case '+':
        return m ? max_expand(s + 1, p, ep) : nullptr;
      case '-':
        return min_expand(s, p, ep);
      default:
        if (!m) return nullptr;
        ++s;
        p = ep;
        continue;
    }
  }
}

void MatchState::push_capture(int i, const char* s, const char* e) {
  if (i >= level_) {
    if (i != 0) raise_error(L_, "invalid capture index");
    lua_pushlstring(L_, s, static_cast<std::size_t>(e - s));  // the whole match
    return;
  }
  const Index l = capture_[i].len;
  if (l == kCapUnfinished) raise_error(L_, "unfinished capture");
  if (l == kCapPosition)
    lua_pushinteger(L_, capture_[i].init - src_init_ + 1);
  else
    lua_pushlstring(L_, capture_[i].init, static_cast<std::size_t>(l));
}

// Pushes the captures, or the whole match [s, e) when there are none and `s`
// is given; returns how many values were pushed.
int MatchState::push_captures(const char* s, const char* e) {
  const int nlevels = (level_ == 0 && s != nullptr) ? 1 : level_;
  luaL_checkstack(L_, nlevels, "too many captures");
  for (int i = 0; i < nlevels; ++i) push_capture(i, s, e);
  return nlevels;
}

// --- The Lua functions ------------------------------------------------------

// The check stored in upvalue `n` of the running C function.
PatternInterrupt interrupt_upvalue(lua_State* L, int n) {
  PatternInterrupt check = nullptr;
  if (const void* ud = lua_touserdata(L, lua_upvalueindex(n)))
    std::memcpy(&check, ud, sizeof check);
  return check;
}

// The init argument as LuaJIT's lj_lib_optint reads it: a plain (int32_t)
// cast of the number. Out of range (or NaN) that cast gives INT32_MIN on
// x86-64 and saturates on arm64; this reproduces both.
std::int32_t opt_int32(lua_State* L, int arg, std::int32_t def) {
  if (lua_isnoneornil(L, arg)) return def;
  const lua_Number n = luaL_checknumber(L, arg);
  if (n > -2147483649.0 && n < 2147483648.0) return static_cast<std::int32_t>(n);
#if defined(__aarch64__)
  if (n != n) return 0;
  return n > 0 ? INT32_MAX : INT32_MIN;
#else
  return INT32_MIN;
#endif
}

bool has_specials(const char* p, std::size_t lp) {
  return std::string_view(p, lp).find_first_of(kSpecials) != std::string_view::npos;
}

// First occurrence of [p, p+lp) in [s, s+ls); memmem is linear-time.
const char* plain_find(const char* s, std::size_t ls, const char* p, std::size_t lp) {
  if (lp == 0) return s;
  if (lp > ls) return nullptr;
  return static_cast<const char*>(memmem(s, ls, p, lp));
}

int str_find_aux(lua_State* L, bool find) {
  std::size_t ls = 0;
  std::size_t lp = 0;
  const char* s = luaL_checklstring(L, 1, &ls);
  const char* p = luaL_checklstring(L, 2, &lp);
  std::int64_t start = opt_int32(L, 3, 1);
  if (start < 0)
    start += static_cast<std::int64_t>(ls);
  else
    --start;
  if (start < 0) start = 0;
  std::size_t init = static_cast<std::size_t>(start);
  if (init > ls) init = ls;
  if (find && (lua_toboolean(L, 4) || !has_specials(p, lp))) {
    if (const char* q = plain_find(s + init, ls - init, p, lp)) {
      lua_pushinteger(L, q - s + 1);
      lua_pushinteger(L, q - s + static_cast<Index>(lp));
      return 2;
    }
  } else {
    MatchState ms(L, s, ls, interrupt_upvalue(L, 1));
    const bool anchor = (*p == '^');
    if (anchor) ++p;
    for (std::size_t pos = init;; ++pos) {
      ms.reset();
      const char* s1 = s + pos;
      if (const char* res = ms.match(s1, p)) {
        if (find) {
          lua_pushinteger(L, s1 - s + 1);  // start
          lua_pushinteger(L, res - s);     // end
          return ms.push_captures(nullptr, nullptr) + 2;
        }
        return ms.push_captures(s1, res);
      }
      if (anchor || pos >= ls) break;
    }
  }
  lua_pushnil(L);  // not found
  return 1;
}

int guarded_find(lua_State* L) { return str_find_aux(L, true); }
int guarded_match(lua_State* L) { return str_find_aux(L, false); }

// The gmatch iterator. Upvalues: subject, pattern, next position, check.
int gmatch_aux(lua_State* L) {
  // Anchor subject and pattern on the stack while their bytes are in use.
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_pushvalue(L, lua_upvalueindex(2));
  std::size_t ls = 0;
  const char* s = lua_tolstring(L, -2, &ls);
  const char* p = lua_tostring(L, -1);
  MatchState ms(L, s, ls, interrupt_upvalue(L, 4));
  const auto first = static_cast<std::size_t>(lua_tointeger(L, lua_upvalueindex(3)));
  for (std::size_t pos = first; pos <= ls; ++pos) {
    ms.reset();
    const char* src = s + pos;
    if (const char* e = ms.match(src, p)) {
      lua_Integer next = e - s;
      if (e == src) ++next;  // empty match: advance at least one position
      lua_pushinteger(L, next);
      lua_replace(L, lua_upvalueindex(3));
      return ms.push_captures(src, e);
    }
  }
  return 0;  // not found
}

int guarded_gmatch(lua_State* L) {
  luaL_checkstring(L, 1);
  luaL_checkstring(L, 2);
  lua_settop(L, 2);
  lua_pushinteger(L, 0);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_pushcclosure(L, gmatch_aux, 4);
  return 1;
}

void add_s(MatchState& ms, luaL_Buffer* b, const char* s, const char* e) {
  lua_State* L = ms.L();
  std::size_t l = 0;
  const char* news = lua_tolstring(L, 3, &l);
  ms.step(1 + static_cast<Index>(l / 16));
  for (std::size_t i = 0; i < l; ++i) {
    if (news[i] != kEsc) {
      luaL_addchar(b, news[i]);
      continue;
    }
    ++i;  // skip the '%'; a trailing '%' reads the terminating NUL, as in Lua 5.1
    const int c = uchar(news[i]);
    if (!is_digit(c)) {
      luaL_addchar(b, news[i]);
    } else if (c == '0') {
      luaL_addlstring(b, s, static_cast<std::size_t>(e - s));
    } else {
      ms.push_capture(c - '1', s, e);
      luaL_addvalue(b);
    }
  }
}

void add_value(MatchState& ms, luaL_Buffer* b, const char* s, const char* e) {
  lua_State* L = ms.L();
  switch (lua_type(L, 3)) {
    case LUA_TNUMBER:
    case LUA_TSTRING:
      add_s(ms, b, s, e);
      return;
    case LUA_TFUNCTION: {
      lua_pushvalue(L, 3);
      const int n = ms.push_captures(s, e);
      lua_call(L, n, 1);
      break;
    }
    case LUA_TTABLE:
      ms.push_capture(0, s, e);
      lua_gettable(L, 3);
      break;
    default:
      break;
  }
  if (!lua_toboolean(L, -1)) {  // nil or false: keep the original text
    lua_pop(L, 1);
    lua_pushlstring(L, s, static_cast<std::size_t>(e - s));
  } else if (!lua_isstring(L, -1)) {
    luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
  }
  luaL_addvalue(b);
}

// gsub callbacks may call gsub again; each level keeps a whole matcher on the C stack, so the
// nesting is capped well before the C stack could overflow. Per thread: a Lua state runs on one
// thread at a time, and RAII keeps the count right when errors unwind through it.
thread_local int gsub_nesting = 0;
constexpr int kMaxGsubNesting = 16;

struct GsubNesting {
  explicit GsubNesting(lua_State* L) {
    if (gsub_nesting >= kMaxGsubNesting) luaL_error(L, "string.gsub nested too deeply in its own callbacks");
    ++gsub_nesting;
  }
  ~GsubNesting() { --gsub_nesting; }
};

int guarded_gsub(lua_State* L) {
  GsubNesting nesting(L);
  std::size_t srcl = 0;
  const char* src = luaL_checklstring(L, 1, &srcl);
  const char* p = luaL_checkstring(L, 2);
  const int tr = lua_type(L, 3);
  const int max_s = luaL_optint(L, 4, static_cast<int>(srcl + 1));
  const bool anchor = (*p == '^');
  if (anchor) ++p;
  luaL_argcheck(L,
                tr == LUA_TNUMBER || tr == LUA_TSTRING || tr == LUA_TFUNCTION || tr == LUA_TTABLE,
                3, "string/function/table expected");
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  MatchState ms(L, src, srcl, interrupt_upvalue(L, 1));
  int n = 0;
  while (n < max_s) {
    ms.reset();
    const char* e = ms.match(src, p);
    if (e != nullptr) {
      ++n;
      add_value(ms, &b, src, e);
    }
    if (e != nullptr && e > src)  // non-empty match: skip it
      src = e;
    else if (src < ms.src_end())
      luaL_addchar(&b, *src++);
    else
      break;
    if (anchor) break;
  }
  luaL_addlstring(&b, src, static_cast<std::size_t>(ms.src_end() - src));
  luaL_pushresult(&b);
  lua_pushinteger(L, n);  // number of substitutions
  return 2;
}

struct GuardedFunction {
  const char* name;
  lua_CFunction fn;
};

constexpr GuardedFunction kGuardedFunctions[] = {
    {"find", guarded_find},
    {"match", guarded_match},
    {"gmatch", guarded_gmatch},
    {"gsub", guarded_gsub},
};

}  // namespace

void install_guarded_patterns(lua_State* L, int string_table, PatternInterrupt check) {
  if (string_table < 0 && string_table > LUA_REGISTRYINDEX)
    string_table = lua_gettop(L) + string_table + 1;
  luaL_checkstack(L, 4, "install_guarded_patterns");
  void* ud = lua_newuserdata(L, sizeof check);
  std::memcpy(ud, &check, sizeof check);
  const int check_index = lua_gettop(L);
  for (const GuardedFunction& f : kGuardedFunctions) {
    lua_pushstring(L, f.name);
    lua_pushvalue(L, check_index);
    lua_pushcclosure(L, f.fn, 1);
    lua_rawset(L, string_table);
  }
  // Lua 5.0's name for gmatch, present in builds with LUA_COMPAT_GFIND.
  lua_pushliteral(L, "gfind");
  lua_rawget(L, string_table);
  const bool has_gfind = !lua_isnil(L, -1);
  lua_pop(L, 1);
  if (has_gfind) {
    lua_pushliteral(L, "gfind");
    lua_pushvalue(L, check_index);
    lua_pushcclosure(L, guarded_gmatch, 1);
    lua_rawset(L, string_table);
  }
  lua_pop(L, 1);  // the check userdata
}

}  // namespace runara
