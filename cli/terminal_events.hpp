// How a run's events look on a terminal: print() to stdout, log lines and progress to stderr.
// With --json-log (for CI and log collectors) every stderr line is one JSON object instead:
// {"time": unix seconds, "kind": "log" | "progress" | "outcome", "text": ...}.
#pragma once

#include "runara/runtime.hpp"

namespace runara::cli {

Events terminal_events();
void use_json_log();  // before terminal_events() and report_outcome()
void say(std::string_view line);  // a line from runara itself on stderr, plain or JSON
// Erases a progress line still showing, before the last words of the run.
void end_progress_line();
// The run's last words on stderr (its error and traceback, where its results are); the exit status.
int report_outcome(const Outcome& outcome);

}  // namespace runara::cli
