// The interactive prompt: libedit line editing, persistent history, multi-line input, printed
// results, tab completion of globals and fields.
#pragma once

#include "runara/runtime.hpp"

namespace runara::cli {

// Reads and evaluates input until Ctrl-D (or the run is stopped). Does not tear down. Returns
// true when input that is not a terminal (a pipe, a file) had an error: the caller exits 1.
bool run_repl(Runtime& runtime);

}  // namespace runara::cli
