// The life of a run: start (fresh sandboxed state), execute chunks as tasks on the event loop,
// finish (cancel leftovers, report failures, tear down, write results).
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <random>

#include "base/build_paths.hpp"
#include "script/values.hpp"
#include "run/state.hpp"

namespace runara {

namespace {

std::string new_run_id() {
  std::random_device random;
  char id[16];
  std::snprintf(id, sizeof id, "%08x", static_cast<unsigned>(random()));
  return id;
}

std::string folder_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string stem_of(const std::string& path) {
  std::string name = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  const std::size_t dot = name.rfind('.');
  return dot == std::string::npos || dot == 0 ? name : name.substr(0, dot);
}

void on_wake(uv_async_t*) {}  // waking uv_run is all it is for: the run loop checks the flags

void on_heap_exceeded(void* data) {
  static_cast<Runtime::Impl*>(data)->request_stop(StopReason::memory);
}

void on_lua_panic(void* data, const std::string& message) {
  static_cast<Runtime::Impl*>(data)->panicked(message);
}

}  // namespace

Runtime::Impl& impl_of(lua_State* L) {
  void* heap = nullptr;
  lua_getallocf(L, &heap);
  return *static_cast<Runtime::Impl*>(static_cast<LuaHeap*>(heap)->owner);
}

Context& Context::from(lua_State* L) { return impl_of(L); }

Runtime::Impl::Impl(Options options, Events events)
    : options_(std::move(options)),
      events_(std::move(events)),
      run_id_(new_run_id()),
      heap_(options_.max_memory_bytes),
      memory_(std::make_shared<MemoryBudget>(options_.max_memory_bytes)),
      watchdog_([this] { request_stop(StopReason::watchdog); },
                [this] { return stopping() && !unwound_; },
                [this] { report_stuck(); }, kStuckGraceS) {
  uv_loop_init(&loop_);
  uv_async_init(&loop_, &wake_, on_wake);
  uv_unref(reinterpret_cast<uv_handle_t*>(&wake_));
  heap_.on_exceeded = on_heap_exceeded;
  heap_.on_panic = on_lua_panic;
  heap_.owner = this;
  heap_.budget = memory_.get();
  for (const auto& [name, value] : options_.secrets) secrets_.add(name, value);
  if (options_.stdlib_dir.empty()) {
    options_.stdlib_dir = build_paths::stdlib();
  }
  stdlib_chunk_prefix_ = "@" + options_.stdlib_dir + "/";
  // Last: its callbacks read stop_, unwound_, events_... which are initialized only now. A
  // thread started by the member initializer read stop_ before its `{0}`, found a stop
  // pending, and reported the run stuck at its deadline.
  watchdog_.start();
}

Runtime::Impl::~Impl() {
  if (started_ && !finished_) finish();
  // Primitives own handles on the loop (HTTP clients, timers): they go first, and the loop
  // then runs until every handle has finished closing.
  primitives_.clear();
  watchdog_.disarm();
  uv_close(reinterpret_cast<uv_handle_t*>(&wake_), nullptr);
  uv_run(&loop_, UV_RUN_DEFAULT);  // lets every handle's close callback run
  uv_loop_close(&loop_);
}

// The last resort: a Lua error was raised outside any protected call and outside every
// LuaHeap::unprotected() section, and LuaJIT exits the process when this returns. Nothing that
// needs the event loop or the Lua state is safe now (the teardown of machines: the guardian
// destroys them once this process is gone); the ending is still said, and written down.
void Runtime::Impl::panicked(const std::string& message) {
  try {
    Outcome out = stopping() ? stopped_outcome()
                             : Outcome{Exit::script_error, "the Lua state failed outside a protected call: " + message, {}, {}};
    log(out.message + " (runara exits now, without tearing down; what the run created is destroyed by its guardian, "
        "or `" + cleanup_command() + "`)");
    finished_ = true;
    record_ending(out);
    output_.close();
  } catch (...) {  // only C++ errors reach here: this runs once, on the way out
  }
  std::fflush(stdout);
  std::fflush(stderr);
}

double Runtime::Impl::remaining_runtime_s() const {
  const double deadline = watchdog_.deadline();
  return deadline == 0 ? options_.max_runtime_s : deadline - monotonic_seconds();
}

double Runtime::Impl::budget_remaining_s() const {
  if (options_.budget_runtime_s <= 0) return remaining_runtime_s();
  return budget_deadline_ - monotonic_seconds();
}

void Runtime::Impl::set_run_deadline(double deadline, std::string source) {
  const double current = watchdog_.deadline();
  if (current != 0 && deadline >= current) return;
  deadline_source_ = std::move(source);
  watchdog_.arm(deadline);
}

void Runtime::Impl::start(const std::string& script_path) {
  if (started_) return;
  started_ = true;
  started_at_ = monotonic_seconds();
  script_path_ = script_path;
  const std::string dir = script_path.empty() ? "." : folder_of(script_path);
  script_dir_ = canonical_path(dir, "");
  if (script_dir_.empty()) script_dir_ = dir;
  output_.configure(options_.out_dir, script_path.empty() ? "repl" : stem_of(script_path));
  output_.on_created = [this] { record_history_folder(); };
  record_.begin(script_path, options_);
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%g s (--max-runtime)", options_.max_runtime_s);
  set_run_deadline(started_at_ + options_.max_runtime_s, seconds);
  budget_deadline_ = started_at_ + (options_.budget_runtime_s > 0 ? options_.budget_runtime_s : options_.max_runtime_s);
  record_history_start();  // before any script code: a run killed from here on is still listed

  L_ = lua_newstate(LuaHeap::alloc, &heap_);
  lua_atpanic(L_, LuaHeap::panic);  // errors outside protected calls: see LuaHeap::unprotected
  // Count hooks never fire inside JIT-compiled traces, so scripts run interpreted: they
  // orchestrate, the heavy lifting is in C++.
  luaJIT_setmode(L_, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_OFF);
  scheduler_ = std::make_unique<Scheduler>(L_);
  scheduler_->stop_requested = [this] { return stopping(); };
  scheduler_->on_finished = [this](Task& task) {
    clear_deadlines(task);
    log_unjoined_failure(task);
  };
  open_sandbox(L_, *this);
  open_require(L_, *this);
  open_runara_binding(L_, *this);
  lua_setglobal(L_, "runara");
  open_watchdog_binding(L_, *this);
  lua_setglobal(L_, "watchdog");
  for (auto& primitive : primitives_) open_primitive(*primitive);
  install_hook();
}

// A primitive's table becomes a global. One that adds to a table opened before it
// (Primitive::adds_to_existing: http_load.fake_server, from the simulator) has its fields set on
// that table instead, and becomes the global only where no such table was opened.
void Runtime::Impl::open_primitive(Primitive& primitive) {
  const std::string name = primitive.name();
  primitive.open(L_, *this);
  lua_getglobal(L_, name.c_str());
  if (!primitive.adds_to_existing() || !lua_istable(L_, -1) || !lua_istable(L_, -2)) {
    lua_pop(L_, 1);
    return lua_setglobal(L_, name.c_str());
  }
  lua_pushnil(L_);
  while (lua_next(L_, -3) != 0) {
    lua_pushvalue(L_, -2);
    lua_insert(L_, -2);
    lua_rawset(L_, -4);
  }
  lua_pop(L_, 2);
}

}  // namespace runara

namespace runara {

// ---- the public facade ----

// The plain Runtime(options, events), with the built-in primitives, is defined by the layer that
// has them (bindings/builtins.cpp): the core knows primitives only as the Primitive interface.
Runtime::Runtime(Options options, Events events, WithoutBuiltins)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(events))) {}

Runtime::~Runtime() = default;

void Runtime::add_primitive(std::unique_ptr<Primitive> primitive) {
  impl_->primitives_.push_back(std::move(primitive));
}

namespace {
Outcome already_used() {
  return Outcome{Exit::usage, "this Runtime has already run and finished; create a new Runtime for each run", {}, {}};
}
}  // namespace

Outcome Runtime::run_file(const std::string& path) {
  if (impl_->finished_) return already_used();
  impl_->start(path);
  impl_->script_outcome_ = impl_->exec_path(path);
  return merge_outcomes(impl_->script_outcome_, impl_->finish());
}

Outcome Runtime::run_string(std::string_view code, std::string_view chunk_name) {
  if (impl_->finished_) return already_used();
  impl_->start("");
  impl_->script_outcome_ = impl_->exec_chunk(std::string(code), std::string(chunk_name));
  return merge_outcomes(impl_->script_outcome_, impl_->finish());
}

Outcome Runtime::exec_file(const std::string& path) {
  if (impl_->finished_) return already_used();
  impl_->start(path);
  impl_->script_outcome_ = impl_->exec_path(path);
  return impl_->script_outcome_;
}

EvalResult Runtime::eval(std::string_view code) {
  if (impl_->finished_) return {EvalResult::Kind::stopped, already_used().message};
  impl_->start("");
  return impl_->eval(code);
}

Outcome Runtime::finish() { return impl_->finish(); }

void Runtime::cancel(int signal_number) {
  impl_->signals_seen_.fetch_add(1);
  StopReason reason = StopReason::cancelled;
  if (signal_number == SIGINT) reason = StopReason::sigint;
  if (signal_number == SIGTERM) reason = StopReason::sigterm;
  if (signal_number == SIGHUP) reason = StopReason::sighup;
  impl_->request_stop(reason);
}

void Runtime::interrupt() { impl_->request_interrupt(); }

std::string Runtime::pending_teardown() const {
  std::string out;
  for (const auto& primitive : impl_->primitives_) {
    std::string line = primitive->pending_teardown();
    if (!line.empty()) out += (out.empty() ? "" : "; ") + line;
  }
  return out;
}

std::string Runtime::cleanup_command() const { return impl_->cleanup_command(); }
std::string Runtime::run_id() const { return impl_->run_id_; }

}  // namespace runara
