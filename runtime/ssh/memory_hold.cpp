#include "ssh/memory_hold.hpp"

#include <algorithm>

namespace runara::ssh {

Status MemoryHold::grow(std::size_t bytes, std::string_view what) {
  constexpr std::size_t kStep = 64u << 10;
  if (used_ + bytes > reserved_) {
    const std::size_t more = ((used_ + bytes - reserved_) + kStep - 1) / kStep * kStep;
    if (Status taken = hooks_->reserve_memory(more, what); !taken) return taken;
    reserved_ += more;
  }
  used_ += bytes;
  return {};
}

void MemoryHold::shrink(std::size_t bytes) { used_ -= std::min(bytes, used_); }

void MemoryHold::reset() {
  if (reserved_) hooks_->release_memory(reserved_);
  reserved_ = used_ = 0;
}

}  // namespace runara::ssh
