#include "guards/permissions.hpp"

#include <climits>
#include <cstdlib>

namespace runara {

std::string canonical_path(const std::string& path, const std::string& base) {
  std::string full = (!path.empty() && path[0] == '/') || base.empty() ? path : base + "/" + path;
  char resolved[PATH_MAX];
  if (!realpath(full.c_str(), resolved)) return {};
  return resolved;
}

std::string check_readable(const std::string& path, const std::string& base,
                           const std::vector<std::string>& roots, std::string& error) {
  if (path.empty() || path.find('\0') != std::string::npos) {
    error = "expected a file path, got an empty or invalid string";
    return {};
  }
  const std::string real = canonical_path(path, base);
  if (real.empty()) {
    error = "cannot read '" + path + "': no such file";
    return {};
  }
  for (const auto& root : roots) {
    if (path_within(real, root)) return real;
  }
  error = "reading '" + path + "' is not allowed: scripts may read their own folder; grant more with --allow-read " + path;
  return {};
}

std::string normalize_output_path(const std::string& path, std::string& error) {
  if (path.empty() || path.find('\0') != std::string::npos) {
    error = "expected a relative file path inside the output folder, got an empty or invalid string";
    return {};
  }
  if (path[0] == '/') {
    error = "'" + path + "' is absolute: files can only be written inside the run's output folder, give a relative path";
    return {};
  }
  if (path.back() == '/') {
    error = "'" + path + "' names a folder, expected a file name";
    return {};
  }
  std::string normalized;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const std::string part = path.substr(start, end - start);
    if (part == "..") {
      error = "'" + path + "' leaves the output folder (\"..\" is not allowed)";
      return {};
    }
    if (!part.empty() && part != ".") normalized += (normalized.empty() ? "" : "/") + part;
    start = end + 1;
  }
  if (normalized.empty() || path.substr(path.rfind('/') + 1) == ".") {
    error = "'" + path + "' names a folder, expected a file name";
    return {};
  }
  return normalized;
}

bool env_allowed(const Permissions& permissions, const std::string& name) {
  for (const auto& granted : permissions.env) {
    if (granted == name) return true;
  }
  return false;
}

bool host_allowed(const Permissions& permissions, const std::string& host, int port) {
  const std::string with_port = host + ":" + std::to_string(port);
  for (const auto& granted : permissions.hosts) {
    if (granted == host || granted == with_port) return true;
  }
  return false;
}

}  // namespace runara
