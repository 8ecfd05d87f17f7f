// How a run's events look on a terminal: print() to stdout, log lines and progress to stderr.
#pragma once

#include "runara/runtime.hpp"

namespace runara::cli {

Events terminal_events();
// Erases a progress line still showing, before the last words of the run.
void end_progress_line();
// The run's last words on stderr (its error and traceback, where its results are); the exit status.
int report_outcome(const Outcome& outcome);

}  // namespace runara::cli
