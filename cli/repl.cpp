#include "repl.hpp"

#include <editline/readline.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/text.hpp"
#include "libedit_lazy.hpp"
#include "repl_help.hpp"

#include "signals.hpp"

namespace runara::cli {

namespace {

Runtime* g_repl_runtime = nullptr;  // libedit's completion callback takes no user data
std::vector<std::string> g_matches;

std::string history_path() {
  const char* state = std::getenv("XDG_STATE_HOME");
  const char* home = std::getenv("HOME");
  std::string dir;
  if (state && *state) dir = std::string(state) + "/runara";
  else if (home && *home) dir = std::string(home) + "/.local/state/runara";
  else return {};
  std::string partial;
  for (std::size_t pos = 1; pos != std::string::npos;) {
    pos = dir.find('/', pos + 1);
    mkdir(dir.substr(0, pos).c_str(), 0700);
  }
  return dir + "/history";
}

char* match_generator(const char* text, int state) {
  static std::size_t next;
  if (state == 0) {
    g_matches = g_repl_runtime->complete(text);
    next = 0;
  }
  if (next < g_matches.size()) return strdup(g_matches[next++].c_str());
  return nullptr;
}

char** complete(const char* text, int, int) {
  libedit_variable<int>("rl_attempted_completion_over") = 1;  // no filename completion
  libedit_variable<int>("rl_completion_append_character") = '\0';  // "runara" then '.' or ':': no space in between
  return rl_completion_matches(text, match_generator);
}

// Reads one line; returns false at end of input (Ctrl-D). Ctrl-C at the prompt drops the line.
// The prompt state lasts until a statement starts (signals.cpp): a Ctrl-C right after Enter then
// interrupts that statement instead of stopping the session.
bool read_line(const char* prompt, std::string& line, bool& interrupted) {
  set_repl_prompt(true);
  char* raw = readline(prompt);
  // A Ctrl-C that cut the line short makes readline return NULL. One that came after the line
  // was complete (the terminal already back in canonical mode) stays pending for its statement.
  interrupted = !raw && take_prompt_interrupt();
  if (!raw) return interrupted;  // an interrupted read also returns NULL: not an end
  line = raw;
  std::free(raw);
  return true;
}

}  // namespace

bool run_repl(Runtime& runtime) {
  // Input from a pipe or file is a script fed line by line: an error in it is a failure of the
  // whole session (exit status 1), as it would be for `runara script.lua`.
  const bool piped = !isatty(STDIN_FILENO);
  bool failed = false;
  g_repl_runtime = &runtime;
  const std::string history = history_path();
  using_history();
  if (!history.empty()) read_history(history.c_str());
  libedit_variable<rl_completion_func_t*>("rl_attempted_completion_function") = complete;
  libedit_variable<const char*>("rl_basic_word_break_characters") = " \t\n\"'><=;+-*/%^~#{}()[],";
  std::printf("runara %s — Lua REPL. Ctrl-D to leave (tears down what the session created); help for help.\n",
              version().c_str());

  std::string buffer;
  while (true) {
    std::string line;
    bool interrupted = false;
    if (!read_line(buffer.empty() ? "runara> " : "    >> ", line, interrupted)) break;
    if (interrupted) {
      std::printf("^C\n");
      buffer.clear();
      continue;
    }
    buffer += buffer.empty() ? line : "\n" + line;
    if (buffer.find_first_not_of(" \t") == std::string::npos) {
      buffer.clear();
      continue;
    }
    if (is_help_request(runtime, buffer)) {
      add_history(buffer.c_str());
      buffer.clear();
      std::printf("%s", repl_help(runtime).c_str());
      std::fflush(stdout);
      continue;
    }
    set_repl_statement_running(true);
    EvalResult result = runtime.eval(buffer);
    set_repl_statement_running(false);
    if (result.kind == EvalResult::Kind::incomplete) continue;
    add_history(buffer.c_str());
    if (!history.empty()) write_history(history.c_str());
    buffer.clear();
    // Values and errors may hold a machine's or a script's text: made visible (base/text.hpp).
    if (result.kind == EvalResult::Kind::ok && !result.text.empty()) {
      std::printf("%s\n", visible(result.text).c_str());
    } else if (result.kind == EvalResult::Kind::error) {
      std::fprintf(stderr, "error: %s\n", visible(result.text).c_str());
      failed = failed || piped;
    } else if (result.kind == EvalResult::Kind::stopped) {
      std::fprintf(stderr, "%s\n", visible(result.text).c_str());
      break;
    }
    std::fflush(stdout);
  }
  set_repl_prompt(false);  // leaving: Ctrl-C stops the session (and its teardown) again
  if (!buffer.empty()) {  // the input ended inside a statement
    std::fprintf(stderr, "error: the input ended in the middle of a statement: %s\n", buffer.c_str());
    failed = failed || piped;
  }
  std::printf("\n");
  return failed;
}

}  // namespace runara::cli
