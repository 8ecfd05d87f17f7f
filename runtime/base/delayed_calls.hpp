// "Call this in N seconds" on a libuv loop, for objects that poll and back off. Destroying the
// owner (or cancel_all) stops every pending call: none can reach a dead object.
#pragma once

#include <functional>
#include <vector>

#include <uv.h>

namespace runara {

class DelayedCalls {
 public:
  explicit DelayedCalls(uv_loop_t* loop) : loop_(loop) {}
  ~DelayedCalls() { cancel_all(); }
  DelayedCalls(const DelayedCalls&) = delete;
  DelayedCalls& operator=(const DelayedCalls&) = delete;

  void after(double seconds, std::function<void()> fn);
  void cancel_all();

 private:
  uv_loop_t* loop_;
  std::vector<uv_timer_t*> pending_;
};

}  // namespace runara
