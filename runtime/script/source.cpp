#include "script/source.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "base/run_output.hpp"

namespace runara {

std::string load_script_source(const std::string& path, std::string& code) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return "cannot open script '" + path + "': " + std::strerror(errno);
  if (S_ISDIR(st.st_mode)) return "'" + path + "' is a folder, expected a Lua script file";
  if (!S_ISREG(st.st_mode)) return "'" + path + "' is not a regular file, expected a Lua script file";
  if (!read_file_text(path, code)) return "cannot read script '" + path + "': " + std::strerror(errno);
  // Scripts are text: bytecode would skip the loader's checks, and NUL bytes mean a binary.
  if (code.rfind("\x1bLJ", 0) == 0 || code.find('\0') != std::string::npos) {
    code.clear();
    return "'" + path + "' is a binary file, not a Lua script";
  }
  return {};
}

}  // namespace runara
