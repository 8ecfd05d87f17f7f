// The permission checks behind --allow-read, --allow-env and --allow-host (Deno-style: whatever
// is not granted is denied). Paths are compared after resolving symlinks and "..".
#pragma once

#include <string>
#include <vector>

#include "runara/runtime.hpp"

#include "base/files.hpp"  // path_within

namespace runara {

// Canonical absolute form of `path` (relative paths start at `base`); "" if it does not exist.
std::string canonical_path(const std::string& path, const std::string& base);

// Checks a path a script wants to read. On success returns the canonical path; otherwise
// returns "" and sets `error` to a message saying what to grant.
std::string check_readable(const std::string& path, const std::string& base,
                           const std::vector<std::string>& roots, std::string& error);

// Checks a path a script wants to write inside the output folder (relative, no "..", no NUL,
// names a file) and returns it normalised: empty and "." components dropped, so "./run.log" is
// "run.log". Returns "" and sets `error` when it is refused.
std::string normalize_output_path(const std::string& path, std::string& error);

bool env_allowed(const Permissions& permissions, const std::string& name);
bool host_allowed(const Permissions& permissions, const std::string& host, int port);

}  // namespace runara
