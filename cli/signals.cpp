#include "signals.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>

namespace runara::cli {

namespace {

// Signal handlers can only reach process-wide state; this is the CLI's, never the library's.
Runtime* g_runtime = nullptr;
std::atomic<int> g_stop_signals{0};
std::atomic<bool> g_statement_running{false};
std::atomic<bool> g_at_prompt{false};
std::atomic<bool> g_prompt_interrupted{false};
char g_last_words[512];  // prepared in advance: a handler must not allocate

int exit_code_for(int signal_number) {
  return signal_number == SIGINT ? 130 : signal_number == SIGHUP ? 129 : 143;
}

void on_signal(int signal_number) {
  if (signal_number == SIGINT && g_at_prompt) {
    g_prompt_interrupted = true;
    return;
  }
  if (signal_number == SIGINT && g_statement_running) {
    g_runtime->interrupt();
    return;
  }
  const int count = ++g_stop_signals;
  if (count <= 2) {
    g_runtime->cancel(signal_number);
    return;
  }
  const ssize_t ignored = write(STDERR_FILENO, g_last_words, std::strlen(g_last_words));
  (void)ignored;
  _exit(exit_code_for(signal_number));
}

}  // namespace

void install_signal_handlers(Runtime& runtime) {
  g_runtime = &runtime;
  const std::string words = "\nrunara: exiting without finishing teardown. Anything left is recorded; clean it up with:\n  " +
                            runtime.cleanup_command() + "\n";
  std::strncpy(g_last_words, words.c_str(), sizeof g_last_words - 1);
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaction(s, &action, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

// The REPL is always at its prompt or running a statement: each switch sets the new state before
// clearing the old, so a Ctrl-C in between is never taken for a stop of the whole session. One
// that came while the line was being handed over interrupts the statement it was meant for.
void set_repl_statement_running(bool running) {
  if (running) {
    g_statement_running = true;
    g_at_prompt = false;
    if (g_prompt_interrupted.exchange(false) && g_runtime) g_runtime->interrupt();
  } else {
    g_at_prompt = true;
    g_statement_running = false;
  }
}
void set_repl_prompt(bool at_prompt) { g_at_prompt = at_prompt; }
bool take_prompt_interrupt() { return g_prompt_interrupted.exchange(false); }

}  // namespace runara::cli
