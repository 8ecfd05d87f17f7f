// Registration tables: a primitive lists its Lua functions, each with whether it waits, and the
// kit pushes them into the table on top of the stack (through Context::push_async for those
// that wait: a function that yields must be pushed that way, and one that is not must not be,
// since an async function costs a coroutine check per call).
//
// Contract: Lua thread only, while the primitive opens; no allocation beyond Lua's own.
#pragma once

#include <initializer_list>

#include <lua.hpp>

namespace runara {
class Context;
}

namespace runara::kit {

enum class Waits { no, yes };

struct Function {
  const char* name;
  lua_CFunction fn;
  Waits waits = Waits::no;
};

// Sets t[name] = fn for each entry, t being the table at the top of the stack. With `upvalue`,
// each function gets it as its one upvalue (lua_upvalueindex(1)): the primitive's `this`, or the
// Context, as light userdata.
void set_functions(lua_State* L, Context& ctx, std::initializer_list<Function> functions, void* upvalue = nullptr);

}  // namespace runara::kit
