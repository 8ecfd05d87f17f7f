// A traceback as a script's author reads it: only the script's own frames. runara's small Lua
// wrappers ("runara:11: in function 'create'") and C frames ("[C]: in function 'error'") say
// nothing about where the script went wrong and are left out.
//
// Contract. Pure text processing, any thread.
#pragma once

#include <string>
#include <string_view>

namespace runara {

std::string script_traceback(std::string_view traceback);

}  // namespace runara
