// Evaluating REPL input: expressions print their values, statements run, incomplete input asks
// for more lines. Each input runs as a task, so it may wait (runara.sleep, join, ...).
#include <algorithm>
#include <cstring>

#include "script/pretty.hpp"
#include "script/values.hpp"
#include "run/state.hpp"

namespace runara {

namespace {

bool is_incomplete(const std::string& message) {
  const std::string eof = "<eof>";
  return message.size() >= eof.size() + 1 &&
         message.find("'<eof>'") != std::string::npos && message.rfind("'<eof>'") + 7 == message.size();
}

}  // namespace

EvalResult Runtime::Impl::eval(std::string_view code) {
  if (stopping()) return {EvalResult::Kind::stopped, stop_message()};
  const std::string as_expression = "return " + std::string(code);
  if (luaL_loadbufferx(L_, as_expression.data(), as_expression.size(), "=stdin", "t") != 0) {
    // "1 +" is an unfinished expression (its error is at <eof>), though as a statement it is
    // merely wrong: either one being unfinished asks for another line.
    const bool expression_incomplete = is_incomplete(describe_value(L_, -1));
    lua_pop(L_, 1);
    if (luaL_loadbufferx(L_, code.data(), code.size(), "=stdin", "t") != 0) {
      std::string message = describe_value(L_, -1);
      lua_pop(L_, 1);
      if (is_incomplete(message) || expression_incomplete) return {EvalResult::Kind::incomplete, {}};
      return {EvalResult::Kind::error, redact(message)};
    }
  }
  Task* task = spawn_main("stdin");
  if (!task) return stopping() ? EvalResult{EvalResult::Kind::stopped, stop_message()} : EvalResult{EvalResult::Kind::error, "not enough memory"};
  const std::uint64_t id = task->id;
  unwound_ = false;  // script code is about to run
  Outcome out = run_main(id);
  if (stopping()) return {EvalResult::Kind::stopped, stop_message()};
  if (out.exit != Exit::ok) {
    EvalResult result{EvalResult::Kind::error, out.message};
    return result;
  }
  EvalResult result;
  task = scheduler_->find(id);
  if (task && task->results_ref != LUA_NOREF) {
    // Printing pushes values and strings outside a protected call (lua_heap.hpp).
    const int top = lua_gettop(L_);
    const std::string error = heap_.unprotected([&] {
      lua_rawgeti(L_, LUA_REGISTRYINDEX, task->results_ref);
      lua_getfield(L_, -1, "n");
      const int n = static_cast<int>(lua_tointeger(L_, -1));
      lua_pop(L_, 1);
      // The watchdog cannot interrupt C++: the printer asks whether the run is stopping.
      const PrettyOptions options{[this] { return stopping(); },
                                  [this](std::string_view s) { return redact(s); },
                                  std::max<std::size_t>(4096, secrets_.longest())};
      for (int i = 1; i <= n; ++i) {
        lua_rawgeti(L_, -1, i);
        result.text += (i > 1 ? "\t" : "") + pretty_value(L_, -1, options);
        lua_pop(L_, 1);
      }
    });
    lua_settop(L_, top);
    if (!error.empty()) result = EvalResult{EvalResult::Kind::error, error};
    result.text = redact(result.text);
  }
  if (task) scheduler_->forget(task);
  if (stopping()) return {EvalResult::Kind::stopped, stop_message()};
  return result;
}

}  // namespace runara

namespace runara {

// "runara.sl" -> {"runara.sleep"}; walks globals and fields with raw access only.
std::vector<std::string> Runtime::Impl::complete(std::string_view text) {
  std::vector<std::string> out;
  if (!L_) return out;
  const std::string prefix(text);
  const std::size_t cut = prefix.find_last_of(".:");
  const std::string base = cut == std::string::npos ? "" : prefix.substr(0, cut + 1);
  const std::string partial = cut == std::string::npos ? prefix : prefix.substr(cut + 1);
  const int top = lua_gettop(L_);
  // Names are pushed outside a protected call (lua_heap.hpp): at the cap, no completion.
  const std::string error = heap_.unprotected([&] {
    lua_pushvalue(L_, LUA_GLOBALSINDEX);
    std::size_t start = 0;
    while (cut != std::string::npos && start <= cut) {
      const std::size_t end = prefix.find_first_of(".:", start);
      lua_pushlstring(L_, prefix.data() + start, end - start);
      lua_rawget(L_, -2);
      if (lua_type(L_, -1) == LUA_TUSERDATA && lua_getmetatable(L_, -1)) {
        lua_pushliteral(L_, "__index");  // methods of handles (task:join) live in the metatable
        lua_rawget(L_, -2);
      }
      if (!lua_istable(L_, -1)) return;
      start = end + 1;
    }
    lua_pushnil(L_);
    while (lua_next(L_, -2)) {
      lua_pop(L_, 1);
      if (lua_type(L_, -1) != LUA_TSTRING) continue;
      std::string key = lua_tostring(L_, -1);
      if (key.compare(0, partial.size(), partial) == 0) out.push_back(base + key);
    }
  });
  lua_settop(L_, top);
  if (!error.empty()) out.clear();
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> Runtime::complete(std::string_view prefix) {
  if (!impl_->finished_) impl_->start("");
  return impl_->complete(prefix);
}

}  // namespace runara
