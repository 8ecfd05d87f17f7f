#include "kit/functions.hpp"

#include "runara/primitive.hpp"

namespace runara::kit {

void set_functions(lua_State* L, Context& ctx, std::initializer_list<Function> functions, void* upvalue) {
  for (const Function& f : functions) {
    const int nup = upvalue ? 1 : 0;
    if (upvalue) lua_pushlightuserdata(L, upvalue);
    if (f.waits == Waits::yes) ctx.push_async(L, f.fn, nup);
    else lua_pushcclosure(L, f.fn, nup);
    lua_setfield(L, -2, f.name);
  }
}

}  // namespace runara::kit
