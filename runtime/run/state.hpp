// Runtime::Impl: everything one run owns — its Lua state, event loop, scheduler, watchdog,
// secrets, permissions and output folder — and the Context primitives see of it.
// The runtime's own files (and its `runara`/`watchdog` Lua API in script/) include this header;
// primitives (bindings/) and hosts see only the Context (include/runara/).
#pragma once

#include <uv.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/text.hpp"
#include "guards/lua_heap.hpp"
#include "runara/memory_budget.hpp"
#include "guards/permissions.hpp"
#include "base/progress_throttle.hpp"
#include "base/run_output.hpp"
#include "run/history.hpp"
#include "run/record.hpp"
#include "runara/primitive.hpp"
#include "runara/runtime.hpp"
#include "run/scheduler.hpp"
#include "guards/secrets.hpp"
#include "guards/watchdog.hpp"

namespace runara {

// Why a run is being stopped from outside the script. The first reason wins.
enum class StopReason : int { none = 0, watchdog, memory, sigint, sigterm, sighup, cancelled };

struct __attribute__((visibility("hidden"))) Runtime::Impl final : Context {  // not exported with Runtime
  Impl(Options options, Events events);
  ~Impl() override;

  // --- Context ---
  uv_loop_t* loop() override { return &loop_; }
  std::string run_id() const override { return run_id_; }
  const Options& options() const override { return options_; }
  const Permissions& permissions() const override { return options_.permissions; }
  bool stopping() const override { return stop_reason() != StopReason::none; }
  double remaining_runtime_s() const override;
  double budget_remaining_s() const override;
  std::string reserve_memory(std::size_t bytes, std::string_view what) override;
  void release_memory(std::size_t bytes) override { memory_->release(bytes); }
  std::shared_ptr<MemoryBudget> memory_budget() override { return memory_; }
  void log(std::string_view line) override;
  // runara.log: the script's own line, marked as the script's in run.log and on the terminal.
  void script_log(std::string_view line);
  void activity(const Activity& activity) override;
  void denied(const std::string& grant) {
    if (events_.denied) events_.denied(grant);
  }
  void progress(std::string_view line) override;
  std::string redact(std::string_view text) const override { return secrets_.redact(text); }
  // Redacted and made visible for the terminal and run.log (run/context.cpp).
  std::string shown(std::string_view text, LineFeeds line_feeds, std::size_t indent = 0) const;
  SecretMask secret_mask() const override { return secrets_.mask(); }
  std::string secret_value(lua_State* L, int index) override;
  std::string secret_name(lua_State* L, int index) const override {
    const char* name = Secrets::handle_name(L, index);
    return name ? name : "";
  }
  void add_secret(const std::string& name, const std::string& value) override { secrets_.add(name, value, false); }
  std::string out_dir() override { return output_.dir(); }
  int open_out_dir(std::string& error) override;
  std::string readable_path(const std::string& path, std::string& error) override;
  void add_reachable(const std::string& address, int port) override { reachable_.emplace_back(address, port); }
  std::vector<std::pair<std::string, int>> reachable() const override { return reachable_; }
  void add_tunnel(RunTunnel tunnel) override;
  void remove_tunnel(int local_port) override;
  std::vector<RunTunnel> tunnels() const override { return tunnels_; }
  void add_machine(RunMachine machine) override;
  const RunMachine* machine(std::string_view address) const override;
  void remove_machine(std::string_view address) override;
  void record_machines(std::function<std::vector<RecordedMachine>()> source) override {
    record_.machine_source = std::move(source);
  }
  void add_command_target(lua_State* L, int index, std::weak_ptr<CommandTarget> target) override;
  std::shared_ptr<CommandTarget> command_target(lua_State* L, int index) const override;
  WaitId suspend(lua_State* L, std::function<void()> on_cancel) override;
  int yield(lua_State* L) override { return lua_yield(L, 0); }
  void resume(WaitId wait, std::function<int(lua_State*)> push) override;
  void fail(WaitId wait, std::string message) override;
  void fail_as_is(WaitId wait, std::string message) override { scheduler_->fail(wait, std::move(message)); }
  void fail_usage(WaitId wait, std::string message) override;
  int raise_usage(lua_State* L, const std::string& message) override;
  void push_async(lua_State* L, lua_CFunction fn, int nup) override;

  // --- lifecycle (runtime.cpp) ---
  void start(const std::string& script_path);
  Outcome exec_chunk(const std::string& code, const std::string& chunk_name);
  Outcome exec_path(const std::string& path);
  Outcome finish();
  EvalResult eval(std::string_view code);
  std::vector<std::string> complete(std::string_view text);

  // --- running (run/loop.cpp) ---
  bool drive(std::uint64_t main_id);
  Task* spawn_main(const std::string& chunk_name);
  Outcome run_main(std::uint64_t main_id);
  Outcome stopped_outcome() const;
  void halt();  // cancels every unfinished task

  // --- the end (teardown.cpp) ---
  void report_leftover_tasks(Outcome& out);
  void log_unjoined_failure(Task& task);  // when it fails, not only when the run ends
  // A script that spawns thousands of tasks which all fail must not flood run.log: the first
  // kLoggedFailures are logged in full, the rest counted and summed up at the end.
  static constexpr std::size_t kLoggedFailures = 20;
  std::size_t failures_logged_ = 0;
  std::size_t failures_unlogged_ = 0;
  void teardown(Outcome& out);
  void write_results();
  void record_ending(const Outcome& end);  // the `run` section and run.log's last lines

  // --- the run's row in the run history (history_row.cpp, history.hpp) ---
  void record_history_start();                     // as the run starts: "running", with this process
  void record_history_folder();                    // RunOutput::on_created: where its folder is
  void record_history(const nlohmann::json& run);  // as it ends: the run record's ending and figures
  void forget_history();                           // it ended leaving nothing to list
  void write_running_row();                        // throws HistoryError
  const std::string& history_script_sha256();      // read once, as the run starts
  enum class HistoryRow { none, running, ended } history_row_ = HistoryRow::none;
  std::optional<std::string> history_sha256_;
  // One connection for the run's writes (its start, its folder, its end), opened at the first.
  RunHistory& history_db();
  // How the stdlib's modules are named as chunks ("@<stdlib_dir>/"): caller_location passes
  // over their frames.
  std::string stdlib_chunk_prefix_;
  std::unique_ptr<RunHistory> history_db_;
  // runara.at_exit functions (script/runara_at_exit.cpp): run once, before teardown.
  void run_at_exit(const Outcome& ending);
  bool at_exit_over() const;  // their budget is spent, or another signal came
  // Whether script code must stop now: after a stop, except while at_exit functions run
  // within their budget.
  bool must_stop() const { return finalizing_ ? at_exit_over() : stopping(); }
  static constexpr double kAtExitBudgetS = 10;
  static constexpr const char* kAtExitOutOfTime = "runara.at_exit: out of time";
  std::string cleanup_command() const;

  // --- stopping (stop.cpp); all of these are safe from any thread or a signal handler ---
  void request_stop(StopReason reason);
  StopReason stop_reason() const { return static_cast<StopReason>(stop_.load()); }
  void request_interrupt();
  std::string stop_message() const;
  void install_hook();
  void open_primitive(Primitive& primitive);
  static void hook(lua_State* L, lua_Debug* ar);
  void report_stuck();
  static constexpr double kStuckGraceS = 5;
  void panicked(const std::string& message);  // LuaHeap::on_panic (runtime.cpp)

  // --- deadlines of watchdog.deadline(), per task (watchdog_binding.cpp) ---
  bool deadline_passed(lua_State* L, Task* task) const;

  void print(std::string_view text) override;
  void log_entry(std::string_view line, std::string_view marker);  // log() and script_log()
  void report_threshold_crossed(std::string_view what) override;
  void emit_result(lua_State* L, const std::string& name, const nlohmann::json& value);
  void clear_deadlines(Task& task);
  // What the memory cap still allows: results and JSON built outside the Lua heap count too.
  std::size_t memory_left() const { return memory_->left(); }
  nlohmann::json redact_json(const nlohmann::json& value) const;
  std::size_t results_bytes_ = 0;  // reserved from memory_
  void set_run_deadline(double deadline, std::string source);
  void lower_budget_deadline(double deadline) { budget_deadline_ = std::min(budget_deadline_, deadline); }
  double started_at() const { return started_at_; }

  Options options_;
  Events events_;
  std::string run_id_;
  std::string script_path_;  // "" for -e / REPL
  std::string script_dir_;   // folder require and read_file start from
  double started_at_ = 0;
  std::string deadline_source_;
  double budget_deadline_ = 0;  // budget_remaining_s()'s end (monotonic seconds), set by start()

  LuaHeap heap_;
  std::shared_ptr<MemoryBudget> memory_;  // the C++ side of --max-memory (memory_budget.hpp)
  lua_State* L_ = nullptr;
  uv_loop_t loop_{};
  uv_async_t wake_{};
  std::unique_ptr<Scheduler> scheduler_;
  Watchdog watchdog_;
  Secrets secrets_;
  RunOutput output_;
  RunRecorder record_;
  ProgressThrottle log_progress_;  // progress lines copied into run.log
  std::vector<std::string> thresholds_crossed_;  // Context::report_threshold_crossed
  // The last message runara.usage_error raised: the main chunk failing with exactly this text
  // ends the run as a usage error (exit 2, no traceback). At most kUsageMessageMax bytes.
  std::string usage_message_;
  // Whether runara did anything for the script yet (Activity: a machine created, a command, a
  // transfer, a load). A usage error before any of it leaves no folder and no history row.
  bool acted_ = false;
  Outcome script_outcome_;  // how the script itself ended (run_file, run_string, exec_file)
  std::vector<std::unique_ptr<Primitive>> primitives_;
  nlohmann::json results_ = nlohmann::json::object();  // runara.result
  std::vector<std::pair<std::string, int>> reachable_;  // Context::add_reachable
  std::vector<RunTunnel> tunnels_;                       // Context::add_tunnel
  std::vector<RunMachine> machines_;                     // Context::add_machine
  std::map<const void*, std::weak_ptr<CommandTarget>> command_targets_;  // userdata -> target
  std::map<std::uint64_t, uv_timer_t*> deadline_timers_;  // watchdog.deadline() token -> timer
  std::uint64_t next_deadline_token_ = 1;

  std::atomic<int> stop_{0};
  std::atomic<int> signals_seen_{0};
  std::atomic<bool> interrupt_{false};
  std::atomic<bool> unwound_{false};  // after a stop: the script is off the stack
  int resume_nesting_ = 0;  // coroutine.resume calls inside each other (sandbox.cpp)
  bool started_ = false;
  bool finished_ = false;
  int async_ref_ = LUA_NOREF;  // the shim that turns fail() into an error at the caller
  int async_check_ref_ = LUA_NOREF;  // its check function: how suspend() knows a wrapped call
  bool called_by_async_shim(lua_State* L);
  int at_exit_ref_ = LUA_NOREF;  // the list of runara.at_exit functions
  bool finalizing_ = false;      // they are running
  double at_exit_deadline_ = 0;
  int at_exit_signals_ = 0;
};

// The Impl a Lua state belongs to (set when the state is created).
Runtime::Impl& impl_of(lua_State* L);

// The `runara` and `watchdog` globals (script/runara_binding.cpp, script/watchdog_binding.cpp), opened into every run before the primitives.
void open_runara_binding(lua_State* L, Runtime::Impl& rt);
void open_watchdog_binding(lua_State* L, Runtime::Impl& rt);
void open_at_exit_api(lua_State* L, Runtime::Impl& rt);  // into the `runara` table on the stack

// The sandboxed standard environment (sandbox.cpp) and require (require.cpp).
void open_sandbox(lua_State* L, Runtime::Impl& rt);
void open_require(lua_State* L, Runtime::Impl& rt);

// "file:line" of the Lua code that called the running C function (level 1): the script's, when
// the stdlib made the call on its behalf.
std::string caller_location(lua_State* L, int level = 1);

}  // namespace runara
