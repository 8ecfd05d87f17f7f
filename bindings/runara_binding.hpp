// The pieces of the `runara` table, one file each (runara_*.cpp).
#pragma once

#include "run_state.hpp"

namespace runara {

void open_task_api(lua_State* L, Runtime::Impl& rt);  // spawn, sleep, task methods
void open_file_api(lua_State* L, Runtime::Impl& rt);  // read_file, write_file

// The folders a script may read: its own, --allow-read grants, and its output folder.
std::vector<std::string> readable_roots(Runtime::Impl& rt);

}  // namespace runara
