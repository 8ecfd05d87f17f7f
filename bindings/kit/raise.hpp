// Engine errors into Lua errors, for functions that do not wait (those that wait settle a
// kit::Wait, which does the same): the one place an Error (base/result.hpp) becomes a Lua error,
// raised at the script line that called into runara, as "fn: message".
//
// Contract: Lua thread only; raises (longjmp), so hold no C++ object with a destructor that
// matters in the calling frame when it may raise.
#pragma once

#include <utility>

#include <lua.hpp>

#include "base/result.hpp"
#include "runara/primitive.hpp"
#include "script/args.hpp"

namespace runara::kit {

// A setup mistake (Error::setup) is raised as a usage error: the message alone, no location.
[[noreturn]] inline void raise(lua_State* L, const char* fn, const Error& error) {
  if (error.setup) Context::from(L).raise_usage(L, error.message);
  args::raise(L, "%s: %s", fn, error.message.c_str());
}

// The value, or a Lua error.
template <class T>
T value_or_raise(lua_State* L, const char* fn, Result<T> result) {
  if (!result) raise(L, fn, result.failure());
  return std::move(result.value());
}

inline void check(lua_State* L, const char* fn, const Status& status) {
  if (!status) raise(L, fn, status.failure());
}

}  // namespace runara::kit
