// Running a chunk: it becomes the main task, and the event loop turns until it has finished,
// the run is stopped from outside, or nothing is left that could ever wake it (a deadlock).
#include <fstream>
#include <sstream>

#include "script/values.hpp"
#include "run/state.hpp"
#include "script/source.hpp"

namespace runara {

namespace {

Exit exit_for(StopReason reason) {
  switch (reason) {
    case StopReason::watchdog: return Exit::watchdog;
    case StopReason::sigint: return Exit::interrupted;
    case StopReason::sigterm:
    case StopReason::cancelled: return Exit::terminated;
    case StopReason::sighup: return Exit::hangup;
    case StopReason::memory:
    case StopReason::none: break;
  }
  return Exit::script_error;
}

}  // namespace

Outcome Runtime::Impl::stopped_outcome() const {
  return Outcome{exit_for(stop_reason()), stop_message(), {}, {}};
}

void Runtime::Impl::halt() {
  scheduler_->cancel_all();
}

// Turns the event loop until `main` has finished. Returns false on a deadlock.
bool Runtime::Impl::drive(std::uint64_t main_id) {
  auto finished = [&] {
    Task* main = scheduler_->find(main_id);
    return !main || main->state == Task::State::done || main->state == Task::State::failed ||
           main->state == Task::State::cancelled;
  };
  while (true) {
    if (stopping()) {
      unwound_ = true;
      halt();
      return true;
    }
    if (interrupt_) {
      if (Task* main = scheduler_->find(main_id)) scheduler_->interrupt_wait(main, "interrupted");
    }
    scheduler_->drain();
    if (finished()) return true;
    if (stopping()) continue;
    const bool alive = uv_run(&loop_, scheduler_->has_ready() || interrupt_ ? UV_RUN_NOWAIT : UV_RUN_ONCE);
    if (!alive && !scheduler_->has_ready() && !stopping() && !interrupt_ && !finished()) return false;
  }
}

// The chunk on top of L_ becomes the main task (popped). Its thread and registry entries are
// made outside a protected call (lua_heap.hpp): null if that failed.
Task* Runtime::Impl::spawn_main(const std::string& chunk_name) {
  const int top = lua_gettop(L_);
  Task* main = nullptr;
  const std::string error = heap_.unprotected([&] { main = scheduler_->spawn(L_, top, 0, chunk_name, true); });
  lua_settop(L_, top - 1);
  return error.empty() ? main : nullptr;
}

Outcome Runtime::Impl::exec_chunk(const std::string& code, const std::string& chunk_name) {
  if (stopping()) return stopped_outcome();
  if (luaL_loadbufferx(L_, code.data(), code.size(), chunk_name.c_str(), "t") != 0) {
    Outcome out{Exit::script_error, redact(describe_value(L_, -1)), {}, {}};
    lua_pop(L_, 1);
    return out;
  }
  Task* main = spawn_main(chunk_name);
  if (!main) return stopping() ? stopped_outcome() : Outcome{Exit::script_error, "not enough memory", {}, {}};
  unwound_ = false;  // script code is about to run
  return run_main(main->id);
}

Outcome Runtime::Impl::run_main(std::uint64_t main_id) {
  const bool progressing = drive(main_id);
  if (!interrupt_) unwound_ = true;  // back on the loop: a later stop finds nothing running
  if (interrupt_) {
    interrupt_ = false;
    install_hook();
  }
  if (stopping()) return stopped_outcome();
  Task* main = scheduler_->find(main_id);
  if (!progressing) {
    if (main) scheduler_->cancel(main);
    return Outcome{Exit::script_error,
                   "deadlock: the main chunk is waiting (task:join?) but no task or operation is "
                   "left that could wake it", {}, {}};
  }
  Outcome out;
  if (main && main->state == Task::State::failed) {
    // runara.usage_error ended it: the command line's fault, said without a traceback.
    const bool usage = !usage_message_.empty() && main->error == usage_message_;
    out = usage ? Outcome{Exit::usage, redact(main->error), {}, {}}
                : Outcome{Exit::script_error, redact(main->error), redact(main->traceback), {}};
  } else if (main && main->state == Task::State::cancelled) {
    out = Outcome{Exit::script_error, "interrupted", {}, {}};
  }
  return out;
}

Outcome Runtime::Impl::exec_path(const std::string& path) {
  std::string code;
  if (std::string error = load_script_source(path, code); !error.empty()) return Outcome{Exit::usage, error, {}, {}};
  // A "#!" first line is for the shell: blank it out, keeping the line numbers.
  if (code.rfind("#", 0) == 0) code.replace(0, code.find('\n') == std::string::npos ? code.size() : code.find('\n'), "");
  return exec_chunk(code, "@" + path);
}

}  // namespace runara
