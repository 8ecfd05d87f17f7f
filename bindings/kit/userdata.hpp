// Typed userdata: a C++ value of type T owned by a Lua value, with one metatable per type and
// per Lua state. Replaces the hand-rolled registry keys, __gc, __metatable and "is this ours"
// checks that every object (ssh session, ssh process, samplers) repeated.
//
//   using SamplerObject = kit::Userdata<std::shared_ptr<RunSampler>>;   // one alias per type
//   SamplerObject::define(L, ctx, "gpu_metrics sampler", {{"mark", mark}, {"stop", stop}});
//   SamplerObject::push(L, sampler);
//   auto& s = SamplerObject::check(L, 1, "sampler:mark");   // raises with the caller's line
//
// The metatable's __metatable field is the type's name (getmetatable() shows it, setmetatable
// is refused), __gc destroys the T, __index is the methods table or, when `index` is given, that
// function with the methods table as its first upvalue (for fields computed per object).
//
// Two object types with the same T would share a metatable: give each its own T (wrap it in a
// small struct) when that matters. Contract: Lua thread only.
#pragma once

#include <new>
#include <string>
#include <utility>

#include <lua.hpp>

#include "kit/functions.hpp"
#include "script/args.hpp"

namespace runara::kit {

struct Metamethods {
  lua_CFunction index = nullptr;     // __index(self, key), upvalue 1: the methods table
  lua_CFunction tostring = nullptr;  // __tostring(self)
};

template <class T>
class Userdata {
 public:
  // Makes the type's metatable in this Lua state (once per state; again replaces it).
  static void define(lua_State* L, Context& ctx, const char* type_name, std::initializer_list<Function> methods,
                     Metamethods extra = {}, void* upvalue = nullptr) {
    name_ = type_name;
    lua_pushlightuserdata(L, &key_);
    lua_newtable(L);
    lua_newtable(L);
    set_functions(L, ctx, methods, upvalue);
    if (extra.index) lua_pushcclosure(L, extra.index, 1);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, &Userdata::gc);
    lua_setfield(L, -2, "__gc");
    if (extra.tostring) {
      lua_pushcfunction(L, extra.tostring);
      lua_setfield(L, -2, "__tostring");
    }
    lua_pushstring(L, type_name);
    lua_setfield(L, -2, "__metatable");
    lua_rawset(L, LUA_REGISTRYINDEX);
  }

  // Pushes a new object holding `value`; define() must have run in this state.
  static T& push(lua_State* L, T value) {
    void* memory = lua_newuserdata(L, sizeof(T));
    T* object = new (memory) T(std::move(value));
    lua_pushlightuserdata(L, &key_);
    lua_rawget(L, LUA_REGISTRYINDEX);
    lua_setmetatable(L, -2);
    return *object;
  }

  // The object at `index`, or nullptr when the value there is anything else.
  static T* test(lua_State* L, int index) {
    if (lua_type(L, index) != LUA_TUSERDATA || !lua_getmetatable(L, index)) return nullptr;
    lua_pushlightuserdata(L, &key_);
    lua_rawget(L, LUA_REGISTRYINDEX);
    const bool ours = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
    return ours ? static_cast<T*>(lua_touserdata(L, index)) : nullptr;
  }

  // The object at `index`, or a Lua error at the caller's line: "fn: argument #1 (self) must be
  // a <type> (call it with ':')".
  static T& check(lua_State* L, int index, const char* fn) {
    if (T* object = test(L, index)) return *object;
    const std::string expected = std::string("a ") + (name_ ? name_ : "runara object") + " (call it with ':')";
    return check(L, index, fn, expected.c_str());
  }
  // The same, the expected value in the caller's words ("an ssh session (call it with ':')").
  static T& check(lua_State* L, int index, const char* fn, const char* expected) {
    if (T* object = test(L, index)) return *object;
    args::fail(L, fn, index, "self", expected);
  }

 private:
  static int gc(lua_State* L) {
    static_cast<T*>(lua_touserdata(L, 1))->~T();
    return 0;
  }

  inline static char key_;  // its address is the metatable's registry key
  inline static const char* name_ = nullptr;
};

}  // namespace runara::kit
