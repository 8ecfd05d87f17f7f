// The CPU time ssh sessions may spend per libuv loop phase, shared by every session on a loop, so
// many busy sessions together cannot stall the loop (the goal: < 2 ms between iterations with 8
// sessions streaming). It is handed out afresh twice per iteration: before the poll phase (socket
// callbacks) and after it (the idle callbacks sessions use to come back). A session that finds
// it spent yields (its idle handle) and continues in the next phase.
//
// Contract. Threading: the loop's thread only; one LoopBudget per loop, found through the loop
// (a thread-local table: each of runara's loops lives on one thread). Ownership: acquired by each
// session, released in its destructor; the last release closes its two libuv handles (their
// close callbacks free them, so the loop must run once more, as for any handle). The handles are
// unreferenced: they never keep a loop alive. Must not call: Lua, anything that blocks.
#pragma once

#include <cstdint>

typedef struct uv_loop_s uv_loop_t;
typedef struct uv_prepare_s uv_prepare_t;
typedef struct uv_check_s uv_check_t;

namespace runara::ssh {

class LoopBudget {
 public:
  static constexpr std::uint64_t kPerPhaseNs = 500'000;

  static LoopBudget* acquire(uv_loop_t* loop);
  void release();

  std::uint64_t left_ns() const { return spent_ >= kPerPhaseNs ? 0 : kPerPhaseNs - spent_; }
  void charge(std::uint64_t ns) { spent_ += ns; }

 private:
  explicit LoopBudget(uv_loop_t* loop);
  uv_loop_t* loop_;
  uv_prepare_t* prepare_;
  uv_check_t* check_;
  int users_ = 0;
  std::uint64_t spent_ = 0;
};

}  // namespace runara::ssh
