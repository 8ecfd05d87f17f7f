// What `help` (or `help()`) at the REPL prints: what the session offers — each primitive table
// with the fields it has in this runtime (so the list is never stale), the standard library's
// modules, and where the documentation is (the source tree's docs/ while it is there, else the
// installed copy). The REPL answers it only while the session has no global `help` of its own.
#pragma once

#include <string>

#include "runara/runtime.hpp"

namespace runara::cli {

// True when `input` asks for the REPL's help ("help" or "help()", spaces around allowed) and the
// session has not defined a global `help`.
bool is_help_request(Runtime& runtime, const std::string& input);

std::string repl_help(Runtime& runtime);

}  // namespace runara::cli
