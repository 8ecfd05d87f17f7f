// The commands that are not a script run: `runara ls`, `runara reap`, `runara serve-fake-do`,
// `runara serve-fake-llm`, and the hidden `runara __guardian` the runtime starts itself.
#pragma once

namespace runara::cli {

// Runs argv[1] as a subcommand and returns its exit status; -1 if argv[1] is not one.
int run_subcommand(int argc, char** argv);

}  // namespace runara::cli
