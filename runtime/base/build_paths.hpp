// Where runara finds its own files: the standard library, the simulated machines' shims, the
// runara program (which runs the guardian) and the load agent. Each is the build tree's while
// it is there (a developer's build), the installed copy otherwise.
//
// Why functions in one generated file, not macros in every file that needs them: the paths name
// the build folder, which differs in each clone of the repository. As compile definitions they
// made every object of every component differ between clones, so a compiler cache (ccache, which
// ./setup installs) could reuse none of a clone's objects in another (CI builds a fresh clone).
// Only build_paths.cpp, which CMake generates from cmake/build_paths.cpp.in, holds them.
//
// Contract: any thread; each call checks the file system (access(2)), no state.
#pragma once

#include <string>

namespace runara::build_paths {

std::string stdlib();     // the Lua standard library's folder
std::string sim_shims();  // the simulated machines' tools (sim/machine)
std::string guardian();   // the runara program the guardian runs as
std::string agent();      // runara-agent, the load agent

}  // namespace runara::build_paths
