#include "guards/lua_heap.hpp"

#include <cstdlib>

namespace runara {

LuaHeap& LuaHeap::of(lua_State* L) {
  void* heap = nullptr;
  lua_getallocf(L, &heap);
  return *static_cast<LuaHeap*>(heap);
}

void* LuaHeap::alloc(void* ud, void* ptr, std::size_t old_size, std::size_t new_size) {
  auto* heap = static_cast<LuaHeap*>(ud);
  if (new_size == 0) {
    std::free(ptr);
    heap->used_ -= old_size;
    heap->publish();
    return nullptr;
  }
  const std::size_t grow = new_size > old_size ? new_size - old_size : 0;
  const std::size_t others = heap->budget ? heap->budget->reserved() : 0;
  const std::size_t after = heap->used_ + others + grow;
  if (grow > 0 && after > heap->limit_) {
    const bool first = !heap->exceeded_.exchange(true);
    if (first && heap->on_exceeded) heap->on_exceeded(heap->owner);
    // The first time, script code gets "not enough memory" (LuaJIT raises it for a null); code
    // outside a protected call gets the memory instead, and the stop (see unprotected()).
    if (after > heap->limit_ + kReserve || (first && heap->unprotected_ == 0)) return nullptr;
  }
  void* p = std::realloc(ptr, new_size);
  if (p) {
    heap->used_ = heap->used_ - old_size + new_size;
    heap->publish();
  }
  return p;
}

// Called by LuaJIT for an error raised where no protected call can catch it. With nothing
// caught it exits the process once this returns. Inside unprotected() the error becomes a C++
// exception instead: LuaJIT has unwound nothing yet (its own frames, compiled with unwind
// tables, are passed through), and the caller decides what the failed work means.
int LuaHeap::panic(lua_State* L) {
  LuaHeap& heap = of(L);
  std::string message;
  if (lua_type(L, -1) == LUA_TSTRING) {
    std::size_t len = 0;
    const char* s = lua_tolstring(L, -1, &len);
    message.assign(s, len);
  } else {
    message = "error object is not a string";
  }
  lua_pop(L, 1);
  if (heap.unprotected_ > 0) throw Panic{std::move(message)};
  if (heap.on_panic) heap.on_panic(heap.owner, message);
  return 0;
}

}  // namespace runara
