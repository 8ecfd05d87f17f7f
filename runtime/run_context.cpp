// The Context primitives use: logging, waiting without blocking, secrets.
#include "lua_values.hpp"
#include "run_state.hpp"

namespace runara {

namespace {

// Wraps async C functions so that a wait ended by fail() raises its error at the script line
// that called the function (level 2: the caller of the wrapper; the call is a tail call).
const char* const kAsyncShim = R"lua(
local FAIL, error = ...
local function check(first, ...)
  if first == FAIL then
    local message, with_location = ...
    error(message, with_location and 2 or 0)
  end
  return first, ...
end
return function(fn) return function(...) return check(fn(...)) end end
)lua";

std::string elapsed_stamp(double seconds) {
  char stamp[32];
  std::snprintf(stamp, sizeof stamp, "[%8.3f] ", seconds);
  return stamp;
}

}  // namespace

void Runtime::Impl::log(std::string_view line) {
  const std::string text = elapsed_stamp(monotonic_seconds() - started_at_) + redact(line);
  output_.append_log(text);
  if (events_.log) {
    events_.log(text);
  } else {
    std::fprintf(stderr, "%s\n", text.c_str());
  }
}

void Runtime::Impl::progress(std::string_view line) {
  if (events_.progress) events_.progress(redact(line));
}

void Runtime::Impl::print(std::string_view text) {
  const std::string clean = redact(text);
  if (events_.print) {
    events_.print(clean);
  } else {
    std::fwrite(clean.data(), 1, clean.size(), stdout);
    std::fflush(stdout);
  }
}

void Runtime::Impl::emit_result(const std::string& name, const nlohmann::json& value) {
  results_[name] = value;
  if (events_.result) events_.result(name, redact(value.dump()));
}

std::string Runtime::Impl::secret_value(lua_State* L, int index) {
  const char* name = Secrets::handle_name(L, index);
  if (!name) luaL_argerror(L, index, "expected a secret handle (from runara.secret)");
  const std::string* value = secrets_.value(name);
  return value ? *value : std::string();
}

WaitId Runtime::Impl::suspend(lua_State* L, std::function<void()> on_cancel) {
  if (stopping()) luaL_error(L, "%s", stop_message().c_str());
  if (interrupt_) luaL_error(L, "interrupted");
  Task* task = scheduler_->task_of(L);
  if (task && deadline_passed(L, task)) luaL_error(L, "deadline exceeded");
  return scheduler_->suspend(L, std::move(on_cancel));
}

void Runtime::Impl::resume(WaitId wait, std::function<int(lua_State*)> push) {
  scheduler_->resume(wait, std::move(push));
}

void Runtime::Impl::fail(WaitId wait, std::string message) {
  scheduler_->fail(wait, redact(message));
}

void Runtime::Impl::push_async(lua_State* L, lua_CFunction fn, int nup) {
  if (async_ref_ == LUA_NOREF) {
    luaL_loadbufferx(L, kAsyncShim, std::strlen(kAsyncShim), "=runara", "t");
    lua_pushlightuserdata(L, scheduler_->fail_marker());
    lua_getglobal(L, "error");
    lua_call(L, 2, 1);
    async_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  lua_pushcclosure(L, fn, nup);
  lua_rawgeti(L, LUA_REGISTRYINDEX, async_ref_);
  lua_insert(L, -2);
  lua_call(L, 1, 1);
}

std::string caller_location(lua_State* L, int level) {
  lua_Debug ar;
  for (int l = level; lua_getstack(L, l, &ar); ++l) {
    lua_getinfo(L, "Sl", &ar);
    if (ar.currentline > 0) return std::string(ar.short_src) + ":" + std::to_string(ar.currentline);
  }
  return "?";
}

}  // namespace runara
