// The Lua heap of one run, capped exactly through a custom lua_Alloc. What C++ code holds on the
// script's behalf (MemoryBudget, shared with the run's primitives) counts against the same cap.
//
// It also owns what happens when the runtime itself touches the Lua state outside any protected
// call (LuaJIT's panic function), because the one error that gets there is an allocation the
// cap refused.
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <string>

#include <lua.hpp>

#include "runara/memory_budget.hpp"

namespace runara {

class LuaHeap {
 public:
  explicit LuaHeap(std::size_t limit) : limit_(limit) {}

  static void* alloc(void* ud, void* ptr, std::size_t old_size, std::size_t new_size);
  // The heap of a state made with LuaHeap::alloc.
  static LuaHeap& of(lua_State* L);

  std::size_t used() const { return used_; }
  std::size_t limit() const { return limit_; }
  bool exceeded() const { return exceeded_.load(); }
  // The runtime that owns this heap: Lua code reaches it through lua_getallocf, which is
  // cheaper than a registry lookup in the instruction hook.
  void* owner = nullptr;
  // The run's budget: its reservations shrink what the heap may grow to, and the heap's size is
  // published there for reservations made on other threads. Null: the heap alone.
  MemoryBudget* budget = nullptr;
  // Called once when the limit is first hit (to stop the run), with `owner`.
  void (*on_exceeded)(void* owner) = nullptr;

  // ---- touching the Lua state outside a protected call ----
  //
  // Script code always runs inside a protected call (a task's lua_resume, lua_pcall): there an
  // allocation the cap refuses raises "not enough memory" like any error, and the run stops.
  // The runtime also works on the state from C++ with nothing to unwind to: the event loop
  // pushing a wait's values onto a suspended coroutine, collecting a finished task's results,
  // building its traceback, making an at_exit thread, printing REPL values. An error raised
  // there reaches LuaJIT's panic function, and LuaJIT then calls exit(1): no message, no
  // results.json, no teardown. Such code runs through unprotected(), where
  //  - the first allocation past the limit succeeds (from the reserve kept for unwinding) and
  //    stops the run as a refused one would: the task it was for is stopped by the hook as soon
  //    as it runs again, with the usual memory-limit ending;
  //  - an error that happens anyway (an allocation larger than the reserve, a Lua error raised
  //    by the code itself) is caught here and returned as a message. The thread it was raised
  //    on is no longer in the state it was (LuaJIT marks it as not suspended): the caller must
  //    give that thread up. How it gets here depends on how LuaJIT was built: with external
  //    unwinding (x86-64 Linux builds) the error is a foreign exception that the catch (...)
  //    here sees before any panic; with internal unwinding it reaches the panic function, which
  //    throws Panic. Keep fn to the work that needs it: a protected call made inside it (a
  //    __tostring, an at_exit function) would run script code with the first allocation past
  //    the limit allowed (the run still stops at the next instruction).
  // Outside such a section, the panic function reports through on_panic and LuaJIT exits (with
  // external unwinding, a host's own catch (...) further up catches the error first, past the
  // run's frames: no code of the run's own may touch the state outside a section).
  template <class Fn>
  std::string unprotected(Fn&& fn) {
    ++unprotected_;
    std::string error;
    try {
      fn();
    } catch (const Panic& panic) {
      error = panic.message.empty() ? std::string("error in error handling") : panic.message;
    } catch (const std::exception&) {
      --unprotected_;
      throw;  // C++'s own (std::bad_alloc...): not ours to judge
    } catch (...) {  // LuaJIT's error, unwinding as a foreign exception (its message is on the thread)
      error = exceeded() ? "not enough memory" : "error outside a protected call";
    }
    --unprotected_;
    return error;
  }
  // The state's panic function (lua_atpanic): see unprotected().
  static int panic(lua_State* L);
  // Last resort, from the panic function outside unprotected(): `owner` and the error's message.
  // LuaJIT exits the process when it returns.
  void (*on_panic)(void* owner, const std::string& message) = nullptr;

 private:
  struct Panic {
    std::string message;
  };

  void publish() {
    if (budget) budget->heap_used.store(used_, std::memory_order_relaxed);
  }

  // Once the limit is hit the run is being stopped; unwinding and error reporting still need a
  // little memory, so a small reserve beyond the limit stays available for them.
  static constexpr std::size_t kReserve = 32u << 20;

  std::size_t limit_;
  std::size_t used_ = 0;
  std::atomic<bool> exceeded_{false};
  int unprotected_ = 0;  // unprotected() calls in progress (on the Lua thread)
};

}  // namespace runara
