#include "kit/wait.hpp"

namespace runara::kit {

std::shared_ptr<Wait> Wait::start(lua_State* L, const char* fn, std::function<void()> on_cancel) {
  Context& ctx = Context::from(L);
  std::shared_ptr<Wait> wait(new Wait(ctx, fn));
  // The cancel hook holds the Wait weakly: a finished wait is not kept alive by the task.
  wait->id_ = ctx.suspend(L, [weak = std::weak_ptr<Wait>(wait), on_cancel = std::move(on_cancel)] {
    if (auto w = weak.lock()) w->cancelled_ = true;
    if (on_cancel) on_cancel();
  });
  return wait;
}

int Wait::yield(lua_State* L) { return ctx_->yield(L); }

bool Wait::take() {
  if (cancelled_ || settled_) return false;
  settled_ = true;
  return true;
}

void Wait::resume(Push push) {
  if (take()) ctx_->resume(id_, std::move(push));
}

void Wait::resume_nothing() {
  resume([](lua_State*) { return 0; });
}

std::string Wait::named(const std::string& message) const { return fn_.empty() ? message : fn_ + ": " + message; }

void Wait::fail(const std::string& message) {
  if (take()) ctx_->fail(id_, named(message));
}

void Wait::fail(const Error& error) {
  if (!error.setup) return fail(error.message);
  if (take()) ctx_->fail_usage(id_, error.message);
}

void Wait::fail_as_is(const std::string& message) {
  if (take()) ctx_->fail_as_is(id_, named(message));
}

}  // namespace runara::kit
