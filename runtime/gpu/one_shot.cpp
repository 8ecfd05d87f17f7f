#include "gpu/one_shot.hpp"

#include <cstdio>

#include <uv.h>

namespace runara::gpu {

OneShot::OneShot(uv_loop_t* loop, uint64_t timeout_ms, std::size_t max_bytes)
    : timer_(new uv_timer_t), timeout_ms_(timeout_ms), max_bytes_(max_bytes) {
  uv_timer_init(loop, timer_);
  timer_->data = this;
}

OneShot::~OneShot() {
  done_ = nullptr;
  running_.reset();
  uv_close(reinterpret_cast<uv_handle_t*>(timer_), [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
}

void OneShot::start(CommandTarget& target, const std::string& command, std::string what, Done done) {
  what_ = std::move(what);
  done_ = std::move(done);
  uv_timer_start(
      timer_,
      [](uv_timer_t* t) {
        auto* self = static_cast<OneShot*>(t->data);
        char secs[32];
        std::snprintf(secs, sizeof secs, "%.1f", static_cast<double>(self->timeout_ms_) / 1000.0);
        self->out_.timed_out = true;
        self->finish(self->what_ + ": no answer within " + secs + " s (the tool hangs); killed it");
      },
      timeout_ms_, 0);
  CommandTarget::Handlers h;
  h.on_line = [this](std::string_view line) {
    out_.last_line_ns = uv_hrtime();
    if (overflow_) return;
    if (out_.text.size() + line.size() + 1 > max_bytes_) {
      overflow_ = true;
      return;
    }
    out_.text.append(line).push_back('\n');
  };
  h.on_exit = [this](const CommandTarget::Exit& exit) {
    std::string error;
    if (!exit.error.empty()) error = what_ + ": " + exit.error;
    else if (exit.code != 0) error = what_ + ": exited with code " + std::to_string(exit.code);
    else if (overflow_) error = what_ + ": more than " + std::to_string(max_bytes_) + " bytes of output";
    if (!error.empty() && !exit.stderr_tail.empty()) {
      std::string tail = exit.stderr_tail.size() > 300 ? exit.stderr_tail.substr(exit.stderr_tail.size() - 300) : exit.stderr_tail;
      while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) tail.pop_back();
      error += " (stderr: " + tail + ")";
    }
    if (starting_) {
      early_error_ = std::move(error);
      early_exit_ = true;
      return;
    }
    finish(std::move(error));
  };
  starting_ = true;
  running_ = target.run(command, std::move(h));
  starting_ = false;
  if (!early_exit_) return;
  // The target reported before run() returned (an ssh session already lost cannot start the
  // command): the callback still comes from the loop. From inside start() it could destroy this
  // while run()'s caller, here, still had running_ to assign (a use after free under ASan).
  uv_timer_start(
      timer_, [](uv_timer_t* t) {
        auto* self = static_cast<OneShot*>(t->data);
        self->finish(std::move(self->early_error_));
      },
      0, 0);
}

void OneShot::finish(std::string error) {
  if (!done_) return;
  uv_timer_stop(timer_);
  auto done = std::move(done_);
  done_ = nullptr;
  out_.error = std::move(error);
  Collected out = std::move(out_);
  // Kill a hung command. Not from inside its own on_exit (running_ is then finished anyway, and
  // destroying it there is allowed by the contract).
  running_.reset();
  done(std::move(out));  // may destroy this
}

}  // namespace runara::gpu
