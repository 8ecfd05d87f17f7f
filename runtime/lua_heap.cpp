#include "lua_heap.hpp"

#include <cstdlib>

namespace runara {

void* LuaHeap::alloc(void* ud, void* ptr, std::size_t old_size, std::size_t new_size) {
  auto* heap = static_cast<LuaHeap*>(ud);
  if (new_size == 0) {
    std::free(ptr);
    heap->used_ -= old_size;
    heap->publish();
    return nullptr;
  }
  const std::size_t grow = new_size > old_size ? new_size - old_size : 0;
  const std::size_t cap = heap->exceeded_ ? heap->limit_ + kReserve : heap->limit_;
  const std::size_t others = heap->budget ? heap->budget->reserved() : 0;
  if (grow > 0 && heap->used_ + others + grow > cap) {
    if (!heap->exceeded_.exchange(true) && heap->on_exceeded) heap->on_exceeded(heap->owner);
    return nullptr;  // LuaJIT raises "not enough memory"
  }
  void* p = std::realloc(ptr, new_size);
  if (p) {
    heap->used_ = heap->used_ - old_size + new_size;
    heap->publish();
  }
  return p;
}

}  // namespace runara
