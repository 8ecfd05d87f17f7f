// The end of a run, whatever ended it: leftover tasks are cancelled and reported, every
// primitive tears down what it created (on the event loop, under its own time budget, with no
// script code involved), and what was measured is written out.
#include <cstring>

#include "base/files.hpp"
#include "script/values.hpp"
#include "run/state.hpp"

namespace runara {

void Runtime::Impl::report_leftover_tasks(Outcome& out) {
  const auto leftover = scheduler_->unfinished();
  if (!leftover.empty() && !stopping()) {
    std::string line = "the main chunk ended; cancelling " + std::to_string(leftover.size()) +
                       " unfinished task(s):";
    for (Task* task : leftover) line += " task " + std::to_string(task->id) + " (spawned at " + task->origin + ")";
    log(line);
  }
  halt();
  for (Task* task : scheduler_->failed_unobserved()) {
    task->error_observed = true;
    log_unjoined_failure(*task);
    if (out.exit == Exit::ok) {
      out.exit = Exit::script_error;
      out.message = "task " + std::to_string(task->id) + " failed and was never joined: " + task->error;
    }
  }
  if (failures_unlogged_ > 0) {
    log("... and " + std::to_string(failures_unlogged_) + " more task(s) failed without being joined (only the first " +
        std::to_string(kLoggedFailures) + " are logged)");
    failures_unlogged_ = 0;
  }
}

// A task nobody joins may fail long before the main chunk ends (a soak of hours): the failure
// goes into run.log as it happens, so a user watching the log, or a run killed later, has it.
void Runtime::Impl::log_unjoined_failure(Task& task) {
  if (task.state != Task::State::failed || task.is_main || task.failure_logged) return;
  if (task.error_observed && !finished_) return;  // a joiner took the error
  task.failure_logged = true;
  if (failures_logged_ >= kLoggedFailures) {
    ++failures_unlogged_;
    return;
  }
  ++failures_logged_;
  log("task " + std::to_string(task.id) + " (spawned at " + task.origin + ") failed" +
      (finished_ ? "" : " (not joined yet)") + ": " + task.error + "\n" + task.traceback);
}

// Primitives are torn down in reverse order of registration, one after another, as C++ destroys
// members: a later primitive may be using what an earlier one made (ssh sessions and remote
// processes on droplets), so it must be done before that goes. A stage that takes longer than
// kStageWaitS stops holding up the next one (destroying droplets must not wait on a stuck
// session); the whole teardown still ends within the budget.
void Runtime::Impl::teardown(Outcome& out) {
  constexpr double kStageWaitS = 15;
  const std::size_t count = primitives_.size();
  std::size_t pending = count;
  std::size_t next = count;  // primitives_[next - 1] is the next to start
  std::vector<bool> finished(count, false);
  std::vector<std::string> errors;
  double stage_started = 0;
  auto start_due = [&](bool force) {
    while (next > 0 && (next == count || finished[next] || force || monotonic_seconds() - stage_started >= kStageWaitS)) {
      force = false;
      const std::size_t i = --next;
      stage_started = monotonic_seconds();
      primitives_[i]->teardown(*this, [&pending, &errors, &finished, i](std::string error) {
        if (!error.empty()) errors.push_back(std::move(error));
        finished[i] = true;
        --pending;
      });
    }
  };
  const double give_up = monotonic_seconds() + options_.teardown_budget_s;
  // A timer wakes the loop at the budget's end even when nothing else would; another one lets
  // a slow stage be overtaken after kStageWaitS.
  uv_timer_t budget_timer, stage_timer;
  uv_timer_init(&loop_, &budget_timer);
  uv_timer_init(&loop_, &stage_timer);
  uv_update_time(&loop_);
  uv_timer_start(&budget_timer, [](uv_timer_t*) {}, static_cast<std::uint64_t>(options_.teardown_budget_s * 1000), 0);
  uv_timer_start(&stage_timer, [](uv_timer_t*) {}, 250, 250);
  uv_unref(reinterpret_cast<uv_handle_t*>(&budget_timer));
  uv_unref(reinterpret_cast<uv_handle_t*>(&stage_timer));
  int signals = signals_seen_.load();
  start_due(false);
  while (pending > 0 && monotonic_seconds() < give_up) {
    const bool alive = uv_run(&loop_, UV_RUN_ONCE) != 0;
    if (!alive && pending > 0) {
      if (next == 0) break;  // nothing left that could finish it
      start_due(true);       // the running stage has nothing on the loop: it cannot finish
    }
    start_due(false);
    if (signals_seen_.load() != signals) {  // another Ctrl-C: say what we are waiting for
      signals = signals_seen_.load();
      std::string waiting;
      for (const auto& primitive : primitives_) {
        const std::string line = primitive->pending_teardown();
        if (!line.empty()) waiting += (waiting.empty() ? "" : "; ") + line;
      }
      log("tearing down: " + (waiting.empty() ? std::string("finishing") : waiting) +
          " (Ctrl-C again exits now and leaves the rest to `" + cleanup_command() + "`)");
    }
  }
  uv_close(reinterpret_cast<uv_handle_t*>(&stage_timer), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&budget_timer), nullptr);
  uv_run(&loop_, UV_RUN_NOWAIT);  // lets the close finish before the timer goes out of scope
  if (pending > 0) errors.push_back("teardown did not finish within " +
                                    std::to_string(static_cast<int>(options_.teardown_budget_s)) +
                                    " s; run `" + cleanup_command() + "`");
  for (const auto& error : errors) {
    log("TEARDOWN FAILED: " + error);
    if (out.exit == Exit::ok) {
      out.exit = Exit::script_error;
      out.message = "teardown failed: " + error;
    }
  }
}

void Runtime::Impl::write_results() {
  if (results_.empty()) return;
  const std::string error = output_.write("results.json", results_.dump(2) + "\n");  // redacted when stored
  if (!error.empty()) log("could not write results.json: " + error);
}

void Runtime::Impl::report_threshold_crossed(std::string_view what) {
  log("threshold crossed: " + std::string(what));
  if (thresholds_crossed_.size() < 1000) thresholds_crossed_.push_back(redact(what));
}

// Every run that ran a script, or wrote anything, leaves its record: a failed run's says why.
// A usage error (a script that could not be loaded, runara.usage_error, a setup mistake a
// primitive found) before runara did anything for the script (no machine, command, transfer or
// load) leaves no folder and no history row, whatever it logged or wrote: it measured nothing,
// and the command line is what to fix. Neither does a bare REPL.
void Runtime::Impl::record_ending(const Outcome& end) {
  const Outcome whole = merge_outcomes(script_outcome_, end);
  if (whole.exit == Exit::usage && !acted_) {
    output_.discard();
    forget_history();
    return;
  }
  const bool ran_script = !script_path_.empty() && script_outcome_.exit != Exit::usage;
  if ((!ran_script || options_.script_help) && !output_.created() && results_.empty()) {
    forget_history();  // the row its start wrote, if any
    return;
  }
  results_["run"] = redact_json(record_.finish(whole));
  if (events_.result) events_.result("run", results_["run"].dump());  // hosts get the record too
  write_results();
  // The history's row completed (run/history_row.cpp), before run.log's last line: a warning
  // about it stays above that.
  record_history(results_["run"]);
  char stamp[32];
  std::snprintf(stamp, sizeof stamp, "[%8.3f] ", monotonic_seconds() - started_at_);
  if (whole.exit != Exit::ok) {  // one entry, as log() writes them: the script's message cannot forge a line
    output_.append_log(stamp + shown("error: " + whole.message + (whole.traceback.empty() ? "" : "\n" + whole.traceback),
                                     LineFeeds::keep, std::strlen(stamp)));
  }
  output_.append_log(std::string(stamp) + "exit status " + std::to_string(static_cast<int>(whole.exit)) + " (" +
                     run_status(whole.exit) + ")");
}

std::string Runtime::Impl::cleanup_command() const { return "runara reap --run " + run_id_; }

Outcome Runtime::Impl::finish() {
  Outcome out;
  if (finished_ || !started_) return out;
  finished_ = true;
  unwound_ = true;  // the script is off the stack: the stuck backstop has nothing to watch
  if (stopping()) out = stopped_outcome();
  report_leftover_tasks(out);
  run_at_exit(merge_outcomes(script_outcome_, out));  // before teardown: the machines still exist
  teardown(out);
  if (!thresholds_crossed_.empty() && out.exit == Exit::ok && script_outcome_.exit == Exit::ok) {
    out.exit = Exit::thresholds;
    out.message = "thresholds crossed: " + thresholds_crossed_.front() +
                  (thresholds_crossed_.size() > 1 ? " (and " + std::to_string(thresholds_crossed_.size() - 1) + " more in run.log)" : "");
  }
  record_ending(out);
  // Something had to be written and the folder could not be made (a symlink in its place...).
  if (!output_.error().empty() && out.exit == Exit::ok) out = Outcome{Exit::script_error, output_.error(), {}, {}};
  lua_close(L_);
  L_ = nullptr;
  scheduler_.reset();
  watchdog_.disarm();
  if (output_.created()) out.out_dir = output_.dir();
  output_.close();
  return out;
}

}  // namespace runara
