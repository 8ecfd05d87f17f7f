// The command line of `runara`: what was asked for, parsed and checked.
#pragma once

#include <string>
#include <vector>

#include "runara/runtime.hpp"

namespace runara::cli {

struct CommandLine {
  enum class Mode { script, eval, repl, interactive_script, version, help } mode = Mode::repl;
  std::string script;  // script path (script, interactive_script)
  std::string code;    // -e CODE
  std::vector<std::string> secret_names;
  bool sim = false;             // --sim: run against the simulated cloud
  bool sim_unisolated = false;  // --sim-unisolated: its machines' commands run on this computer
  bool json_log = false;        // --json-log
  Options options;
};

// Returns "" on success, or a usage error message (exit status 2).
std::string parse_command_line(int argc, char** argv, CommandLine& out);
const char* help_text();

}  // namespace runara::cli
