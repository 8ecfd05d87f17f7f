// Reading the script a run starts from (a path on the command line or run_file()). The file must
// be a regular, readable text file: a folder, a device, an unreadable file or a binary one (NUL
// bytes, LuaJIT bytecode) gets an error that says which, never an exception.
// Called on the thread that runs the script, before the script starts; no Lua involved.
#pragma once

#include <string>

namespace runara {

// The script's text in `code`; "" on success, else a message naming the path and the problem.
std::string load_script_source(const std::string& path, std::string& code);

}  // namespace runara
