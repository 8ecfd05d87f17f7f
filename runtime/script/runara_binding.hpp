// The pieces of the `runara` table, one file each (runara_*.cpp).
#pragma once

#include "run/state.hpp"

namespace runara {

void open_task_api(lua_State* L, Runtime::Impl& rt);  // spawn, sleep, task methods
void open_file_api(lua_State* L, Runtime::Impl& rt);  // read_file, write_file
void open_json_api(lua_State* L, Runtime::Impl& rt);  // runara.json: decode, encode, null, is_array

// The canonical path of a file a script may read: inside its own folder or an --allow-read
// grant, and never inside the run's output folder (write-only for scripts: what runara writes
// there is redacted). "" with `error` set when refused.
std::string script_readable_path(Runtime::Impl& rt, const std::string& path, std::string& error);

// The output folder, created if needed; raises "<function>: cannot create the output folder..."
// when it could not be.
const std::string& output_dir_or_raise(lua_State* L, Runtime::Impl& rt, const char* function);
// A descriptor of the output folder for a job to own (and close); raises like the above.
int output_dir_fd(lua_State* L, Runtime::Impl& rt, const char* function);

}  // namespace runara
