// Whole-file helpers for paths runara itself chooses (never a script's: those go through
// RunOutput's descriptor and open_beneath).
//
// Contract: any thread; nothing here throws, logs or redacts.
#pragma once

#include <string>

namespace runara {

// Writes through a temporary file and rename, creating parent folders; "" or an error message.
// Safe to call from any thread. For paths runara chooses (not a script).
std::string write_file_atomic(const std::string& path, const std::string& data);

// The whole file as bytes; false (errno set) when it cannot be opened or read, or is not a
// regular file (EISDIR / EINVAL). Never throws. Safe from any thread.
bool read_file_text(const std::string& path, std::string& out);

// mkdir -p; returns "" or an error message.
std::string make_dirs(const std::string& path, unsigned mode = 0755);

// True when canonical `path` is `root` or lies below it.
bool path_within(const std::string& path, const std::string& root);

}  // namespace runara
