// `runara`: a thin command-line client of the runtime library.
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <string>

#include "cli_options.hpp"
#include "repl.hpp"
#include "runara/runtime.hpp"
#include "cloud/droplet_fleet.hpp"
#include "cloud/reaper.hpp"
#include "signals.hpp"
#include "sim_mode.hpp"
#include "subcommands.hpp"
#include "terminal_events.hpp"
#include "sim/fake_server_primitive.hpp"

namespace {

int report(const runara::Outcome& outcome) { return runara::cli::report_outcome(outcome); }

// `runara -`: the script from standard input (a pipe, a heredoc), bounded like a script file.
bool read_stdin_script(std::string& code) {
  constexpr std::size_t kMaxScriptBytes = 64u << 20;
  char buffer[65536];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, stdin)) > 0) {
    code.append(buffer, n);
    if (code.size() > kMaxScriptBytes) return false;
  }
  return true;
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

  if (command.json_log) runara::cli::use_json_log();
  command.options.cloud.guardian_executable = runara::cli::own_executable();
  // The run history sits beside the real ledger, not the simulated cloud's (a temporary folder
  // gone after the run): rehearsals are listed too, marked simulated (docs/cli.md#runara-runs).
  command.options.history_dir = runara::default_state_dir();
  std::shared_ptr<runara::sim::SimCloud> sim;  // outlives the runtime: destroyed after teardown
  if (command.sim) {
    std::string error;
    sim = runara::cli::start_simulated_cloud(command.options, runara::cli::own_executable(), error,
                                             runara::cli::time_scale_from_environment(),
                                             !command.sim_unisolated);
    if (!sim) {
      std::fprintf(stderr, "runara: %s\n", error.c_str());
      return static_cast<int>(runara::Exit::usage);
    }
  }
  if (std::string warning = runara::leftover_warning(runara::default_state_dir()); !warning.empty()) {
    std::fprintf(stderr, "runara: warning: %s\n", warning.c_str());
  }
  runara::Runtime runtime(command.options, runara::cli::terminal_events());
  runtime.add_primitive(runara::make_fake_server_primitive());  // http_load.fake_server (the simulator)
  runara::cli::install_signal_handlers(runtime);
  switch (command.mode) {
    case CommandLine::Mode::script: {
      if (command.script != "-") return report(runtime.run_file(command.script));
      std::string code;
      if (!read_stdin_script(code)) {
        std::fprintf(stderr, "runara: the script on standard input is larger than 64 MiB\n");
        return static_cast<int>(runara::Exit::usage);
      }
      if (code.rfind("#", 0) == 0) code.erase(0, code.find('\n') == std::string::npos ? code.size() : code.find('\n'));
      return report(runtime.run_string(code, "=stdin"));
    }
    case CommandLine::Mode::eval: return report(runtime.run_string(command.code));
    case CommandLine::Mode::interactive_script: {
      runara::Outcome first = runtime.exec_file(command.script);
      if (first.exit == runara::Exit::usage) return report(first);
      if (first.exit != runara::Exit::ok) report(first);
      const bool input_failed = runara::cli::run_repl(runtime);
      const int status = report(runtime.finish());
      if (status != 0) return status;
      return first.exit != runara::Exit::ok ? static_cast<int>(first.exit) : input_failed ? 1 : 0;  // the script's failure still counts
    }
    default: {
      const bool input_failed = runara::cli::run_repl(runtime);
      const int status = report(runtime.finish());
      return status != 0 ? status : input_failed ? 1 : 0;
    }
  }
}
