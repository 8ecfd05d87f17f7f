// libedit's readline functions that the REPL calls, each opening libedit.so.2 on first use and
// forwarding from then on: linking libedit (and its tinfo, bsd and md) cost every start of runara,
// the runs without a REPL too, about 0.4 ms. A definition that does not match
// <editline/readline.h> is a compile error.
#include "libedit_lazy.hpp"

#include <stdio.h>

#include <editline/readline.h>

#include "base/lazy_library.hpp"

namespace runara::cli {

void* libedit_symbol(const char* name) {
  static void* const lib = runara::open_library("libedit.so.2", "libedit2");
  return runara::library_symbol(lib, "libedit.so.2", name);
}

}  // namespace runara::cli

#define RUNARA_LIBEDIT_REAL(name) \
  static auto* const fn = reinterpret_cast<decltype(&name)>(runara::cli::libedit_symbol(#name))

extern "C" {

char* readline(const char* prompt) {
  RUNARA_LIBEDIT_REAL(readline);
  return fn(prompt);
}

void using_history(void) {
  RUNARA_LIBEDIT_REAL(using_history);
  fn();
}

int add_history(const char* line) {
  RUNARA_LIBEDIT_REAL(add_history);
  return fn(line);
}

int read_history(const char* path) {
  RUNARA_LIBEDIT_REAL(read_history);
  return fn(path);
}

int write_history(const char* path) {
  RUNARA_LIBEDIT_REAL(write_history);
  return fn(path);
}

char** rl_completion_matches(const char* text, rl_compentry_func_t* generator) {
  RUNARA_LIBEDIT_REAL(rl_completion_matches);
  return fn(text, generator);
}

}  // extern "C"
