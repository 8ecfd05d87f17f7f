// `runara bench URL [...]`: the one-liner. Parses the flags `vllm bench serve` users reach for,
// grants the URL's host and port (it is named on the command line), and runs the stdlib
// scenario `runara_bench` (stdlib/runara_bench.lua) in an ordinary sandboxed run.
//
// Contract. The CLI's main thread; returns the process exit status. Prints usage errors (status
// 2) naming the flag, what it got and what it expects.
#pragma once

namespace runara::cli {

int bench_command(int argc, char** argv);

}  // namespace runara::cli
