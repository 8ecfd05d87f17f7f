// One cancel-aware wait: the calling task sleeps until an operation that ends on the loop calls
// back. It wraps Context::suspend/resume/fail with the rule every waiting binding had to keep by
// hand: once the task is cancelled (the run is stopping, the deadline passed), the operation's
// callback must neither resume nor fail it. After cancellation, resume() and fail() do nothing.
//
//   auto wait = kit::Wait::start(L, [op] { op->abort(); });      // on_cancel: stop the operation
//   engine.run(..., [wait](Result<Answer> r) { wait->settle(std::move(r), push_answer); });
//   return wait->yield(L);
//
// Engine errors become Lua errors here, raised at the script line that called the function,
// prefixed with the function's name (kit/raise.hpp does the same for functions that do not
// wait). Contract: loop thread only; the Wait is shared by the callback and lives as long as
// the longer of the two.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include <lua.hpp>

#include "base/result.hpp"
#include "runara/primitive.hpp"

namespace runara::kit {

class Wait {
 public:
  using Push = std::function<int(lua_State*)>;

  // Suspends the calling task. `fn` names the Lua function in failures ("ssh.connect"); "" leaves
  // the engine's messages as they are (droplet's, whose texts scripts and tests match whole).
  static std::shared_ptr<Wait> start(lua_State* L, const char* fn, std::function<void()> on_cancel = {});

  int yield(lua_State* L);  // `return wait->yield(L);` right after start
  bool cancelled() const { return cancelled_; }
  bool settled() const { return settled_ || cancelled_; }
  Context& context() const { return *ctx_; }

  void resume(Push push);
  void resume_nothing();
  void fail(const std::string& message);        // "fn: message", redacted
  void fail_as_is(const std::string& message);  // see Context::fail_as_is
  // An engine's Error: a setup mistake (Error::setup) as a usage error (Context::fail_usage,
  // the message as the engine wrote it), any other as fail().
  void fail(const Error& error);

  template <class T>
  void settle(Result<T> result, std::function<int(lua_State*, T&)> push) {
    if (!result) return fail(result.failure());
    resume([value = std::make_shared<T>(std::move(result.value())), push = std::move(push)](lua_State* L) {
      return push(L, *value);
    });
  }
  void settle(Status status) {
    if (!status) return fail(status.failure());
    resume_nothing();
  }

 private:
  Wait(Context& ctx, const char* fn) : ctx_(&ctx), fn_(fn) {}
  bool take();  // true once, for the first resume/fail of a live wait
  std::string named(const std::string& message) const;

  Context* ctx_;
  std::string fn_;
  WaitId id_ = 0;
  bool cancelled_ = false, settled_ = false;
};

}  // namespace runara::kit
