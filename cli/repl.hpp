// The interactive prompt: libedit line editing, persistent history, multi-line input, printed
// results, tab completion of globals and fields.
#pragma once

#include "runara/runtime.hpp"

namespace runara::cli {

// Reads and evaluates input until Ctrl-D (or the run is stopped). Does not tear down.
void run_repl(Runtime& runtime);

}  // namespace runara::cli
