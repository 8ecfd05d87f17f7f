// How a run's events look on a terminal: print() to stdout, log lines and progress to stderr.
#pragma once

#include "runara/runtime.hpp"

namespace runara::cli {

Events terminal_events();

}  // namespace runara::cli
