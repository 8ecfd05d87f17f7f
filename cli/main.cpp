// `runara`: a thin command-line client of the runtime library.
#include <unistd.h>

#include <climits>
#include <cstdio>

#include "cli_options.hpp"
#include "repl.hpp"
#include "runara/runtime.hpp"
#include "cloud/droplet_fleet.hpp"
#include "cloud/reaper.hpp"
#include "signals.hpp"
#include "subcommands.hpp"
#include "terminal_events.hpp"

namespace {

int report(const runara::Outcome& outcome) {
  runara::cli::end_progress_line();
  if (outcome.exit != runara::Exit::ok) {
    std::fprintf(stderr, "runara: %s\n", outcome.message.c_str());
    if (!outcome.traceback.empty()) std::fprintf(stderr, "%s\n", outcome.traceback.c_str());
  }
  if (!outcome.out_dir.empty()) std::fprintf(stderr, "runara: results in %s/\n", outcome.out_dir.c_str());
  return static_cast<int>(outcome.exit);
}

// The guardian is this very executable, started as `runara __guardian`.
std::string own_executable() {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<std::size_t>(n)) : std::string();
}

}  // namespace

int main(int argc, char** argv) {
  if (int status = runara::cli::run_subcommand(argc, argv); status >= 0) return status;
  using runara::cli::CommandLine;
  CommandLine command;
  if (std::string error = runara::cli::parse_command_line(argc, argv, command); !error.empty()) {
    std::fprintf(stderr, "runara: %s\n", error.c_str());
    return static_cast<int>(runara::Exit::usage);
  }
  if (command.mode == CommandLine::Mode::help) {
    std::fputs(runara::cli::help_text(), stdout);
    return 0;
  }
  if (command.mode == CommandLine::Mode::version) {
    std::printf("runara %s\n", runara::version().c_str());
    return 0;
  }

  command.options.cloud.guardian_executable = own_executable();
  if (std::string warning = runara::leftover_warning(runara::default_state_dir()); !warning.empty()) {
    std::fprintf(stderr, "runara: warning: %s\n", warning.c_str());
  }
  runara::Runtime runtime(command.options, runara::cli::terminal_events());
  runara::cli::install_signal_handlers(runtime);
  switch (command.mode) {
    case CommandLine::Mode::script: return report(runtime.run_file(command.script));
    case CommandLine::Mode::eval: return report(runtime.run_string(command.code));
    case CommandLine::Mode::interactive_script: {
      runara::Outcome first = runtime.exec_file(command.script);
      if (first.exit == runara::Exit::usage) return report(first);
      if (first.exit != runara::Exit::ok) report(first);
      runara::cli::run_repl(runtime);
      const int status = report(runtime.finish());
      return status != 0 ? status : static_cast<int>(first.exit);  // the script's failure still counts
    }
    default:
      runara::cli::run_repl(runtime);
      return report(runtime.finish());
  }
}
