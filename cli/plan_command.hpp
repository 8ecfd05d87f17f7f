// `runara plan SCRIPT [key=value ...]`: what a scenario would do before it costs anything. The
// script runs on the simulated cloud with its delays compressed and its output discarded; then
// the plan says which machines it creates (size, region, image, price), how many at once, the
// worst case it may cost under --budget and --max-runtime, and which grants it asked for.
#pragma once

namespace runara::cli {

int plan_command(int argc, char** argv);  // argv[1] == "plan"

}  // namespace runara::cli
