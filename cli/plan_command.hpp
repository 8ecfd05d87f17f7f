// `runara plan SCRIPT [key=value ...]`: what a scenario would do before it costs anything. The
// script runs on the simulated cloud with its delays compressed and its output discarded; then
// the plan says which machines it creates (size, region, image, price), how many at once, the
// worst case it may cost under --budget and --max-runtime, and which grants it asked for: as the
// rehearsal reported each through a pipe (plan_record.hpp), never from a file the script could
// write. Its folder is made with mkdtemp (0700, never an existing name) and removed at the end.
#pragma once

namespace runara::cli {

int plan_command(int argc, char** argv);  // argv[1] == "plan"

}  // namespace runara::cli
