#include "base/delayed_calls.hpp"

#include <algorithm>
#include <cstdint>

namespace runara {

namespace {
struct Call {
  uv_timer_t timer;  // first member: the uv_timer_t* handed around is this object
  std::function<void()> fn;
  std::vector<uv_timer_t*>* pending;
};

void close_call(uv_timer_t* timer) {
  uv_timer_stop(timer);
  uv_close(reinterpret_cast<uv_handle_t*>(timer), [](uv_handle_t* h) { delete reinterpret_cast<Call*>(h); });
}
}  // namespace

void DelayedCalls::after(double seconds, std::function<void()> fn) {
  auto* call = new Call{{}, std::move(fn), &pending_};
  uv_timer_init(loop_, &call->timer);
  pending_.push_back(&call->timer);
  uv_update_time(loop_);  // the loop's cached clock may be stale
  uv_timer_start(&call->timer, [](uv_timer_t* t) {
    auto* c = reinterpret_cast<Call*>(t);
    c->pending->erase(std::remove(c->pending->begin(), c->pending->end(), t), c->pending->end());
    auto fn = std::move(c->fn);
    close_call(t);
    fn();  // may schedule more calls, or destroy the owner
  }, static_cast<std::uint64_t>(std::max(0.0, seconds) * 1000), 0);
}

void DelayedCalls::cancel_all() {
  for (uv_timer_t* timer : pending_) close_call(timer);
  pending_.clear();
}

}  // namespace runara
