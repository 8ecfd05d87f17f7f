#include "base/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace runara {

bool read_file_text(const std::string& path, std::string& out) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const int saved = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
    ::close(fd);
    errno = saved;
    return false;
  }
  out.clear();
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int saved = errno;
      ::close(fd);
      errno = saved;
      return false;
    }
    if (n == 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return true;
}

std::string make_dirs(const std::string& path, unsigned mode) {
  std::string partial;
  std::size_t start = 0;
  while (start < path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    partial = path.substr(0, end);
    if (!partial.empty() && mkdir(partial.c_str(), mode) != 0 && errno != EEXIST) {
      return "cannot create folder '" + partial + "': " + std::strerror(errno);
    }
    start = end + 1;
  }
  return {};
}

std::string write_file_atomic(const std::string& path, const std::string& data) {
  const std::size_t slash = path.rfind('/');
  if (std::string error = make_dirs(path.substr(0, slash)); !error.empty()) return error;
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!out) return "cannot write '" + path + "': " + std::strerror(errno);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return "cannot write '" + path + "': " + std::strerror(errno);
  }
  return {};
}

bool path_within(const std::string& path, const std::string& root) {
  if (root.empty() || path.compare(0, root.size(), root) != 0) return false;
  return path.size() == root.size() || path[root.size()] == '/' || root == "/";
}

}  // namespace runara
