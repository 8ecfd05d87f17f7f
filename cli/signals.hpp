// SIGINT/SIGTERM/SIGHUP for the command line. The library never touches signals; the CLI turns
// them into Runtime::cancel() (or interrupt() while the REPL runs a statement).
#pragma once

#include "runara/runtime.hpp"

namespace runara::cli {

// First signal: stop the run and tear down. Second: teardown says what it is waiting for.
// Third: exit at once, printing the command that cleans up what remains.
void install_signal_handlers(Runtime& runtime);
// While set, SIGINT interrupts the running REPL statement instead of ending the session.
void set_repl_statement_running(bool running);
// While set, SIGINT is only counted (the REPL's line editor handles Ctrl-C at the prompt).
void set_repl_prompt(bool at_prompt);
bool take_prompt_interrupt();

}  // namespace runara::cli
