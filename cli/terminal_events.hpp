// How a run's events look on a terminal: print() to stdout, log lines and progress to stderr.
#pragma once

#include "runara/runtime.hpp"

namespace runara::cli {

Events terminal_events();
// Erases a progress line still showing, before the last words of the run.
void end_progress_line();

}  // namespace runara::cli
