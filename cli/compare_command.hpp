// `runara compare RUN_DIR|RUN_ID... [--baseline DIR|ID] [--last N [--script NAME]]
// [--threshold METRIC=PCT ...] [--noise PCT] [--out DIR]`: two or more runs side by side.
// Resolves the runs named (a folder, a run id from the run history, or the last N of a script),
// grants reading those folders and nothing else, and runs the stdlib scenario `runara_compare`
// (stdlib/runara_compare.lua) in an ordinary sandboxed run, which writes compare.md,
// compare.html and compare.json. A crossed --threshold ends it with status 4.
//
// Contract. The CLI's main thread; returns the process exit status. Usage errors (status 2) name
// the argument, what it got and what it expects; so does a run the history cannot find, or
// whose folder is gone.
#pragma once

namespace runara::cli {

int compare_command(int argc, char** argv);

}  // namespace runara::cli
