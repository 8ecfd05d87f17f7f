// LoopBudget: a thread-local table of budgets by loop, refilled by a prepare and a check handle.
#include "ssh/loop_budget.hpp"

#include <uv.h>

#include <map>

namespace runara::ssh {

namespace {

thread_local std::map<uv_loop_t*, LoopBudget*> budgets;

}  // namespace

LoopBudget::LoopBudget(uv_loop_t* loop) : loop_(loop), prepare_(new uv_prepare_t), check_(new uv_check_t) {
  uv_prepare_init(loop_, prepare_);
  uv_check_init(loop_, check_);
  prepare_->data = check_->data = this;
  uv_prepare_start(prepare_, [](uv_prepare_t* h) { static_cast<LoopBudget*>(h->data)->spent_ = 0; });
  uv_check_start(check_, [](uv_check_t* h) { static_cast<LoopBudget*>(h->data)->spent_ = 0; });
  uv_unref(reinterpret_cast<uv_handle_t*>(prepare_));
  uv_unref(reinterpret_cast<uv_handle_t*>(check_));
}

LoopBudget* LoopBudget::acquire(uv_loop_t* loop) {
  LoopBudget*& b = budgets[loop];
  if (b == nullptr) b = new LoopBudget(loop);
  ++b->users_;
  return b;
}

void LoopBudget::release() {
  if (--users_ > 0) return;
  budgets.erase(loop_);
  uv_close(reinterpret_cast<uv_handle_t*>(prepare_), [](uv_handle_t* h) { delete reinterpret_cast<uv_prepare_t*>(h); });
  uv_close(reinterpret_cast<uv_handle_t*>(check_), [](uv_handle_t* h) { delete reinterpret_cast<uv_check_t*>(h); });
  delete this;
}

}  // namespace runara::ssh
