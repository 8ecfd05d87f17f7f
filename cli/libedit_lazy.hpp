// libedit, opened when the REPL first reads a line (cli/libedit_lazy.cpp defines the readline
// functions the REPL calls; runtime/base/lazy_library.hpp says why). Its variables are reached
// through libedit_variable, since a variable cannot be forwarded.
//
// Contract: the REPL's thread. Throws std::runtime_error when libedit cannot be loaded.
#pragma once

namespace runara::cli {

void* libedit_symbol(const char* name);

// A libedit global, e.g. libedit_variable<int>("rl_attempted_completion_over") = 1.
template <class T>
T& libedit_variable(const char* name) {
  return *static_cast<T*>(libedit_symbol(name));
}

}  // namespace runara::cli
