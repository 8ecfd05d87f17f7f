#include "base/checked_read.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace runara {

namespace {

std::string cannot_read(const std::string& path) { return "cannot read '" + path + "': " + std::strerror(errno); }

// Reads exactly up to out.size() bytes; false with errno on a read error.
bool read_all(int fd, std::string& out, std::size_t& got) {
  got = 0;
  while (got < out.size()) {
    const ssize_t n = ::read(fd, out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

std::string read_file_checked(const std::string& path, const SizeCheck& check, std::string& out) {
  out.clear();
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below anyway.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return cannot_read(path);
  struct stat st {};
  std::string error;
  if (::fstat(fd, &st) != 0) {
    error = cannot_read(path);
  } else if (!S_ISREG(st.st_mode)) {
    error = "'" + path + "' is not a regular file";
  } else {
    error = check(static_cast<std::size_t>(st.st_size));
  }
  if (error.empty()) {
    out.resize(static_cast<std::size_t>(st.st_size));
    std::size_t got = 0;
    char extra = 0;
    if (!read_all(fd, out, got)) error = cannot_read(path);
    else if (got < out.size()) out.resize(got);  // shrank meanwhile: what is there
    else if (::read(fd, &extra, 1) > 0) error = "'" + path + "' grew while it was being read; read it again when it is complete";
  }
  ::close(fd);
  if (!error.empty()) {
    out.clear();
    out.shrink_to_fit();
  }
  return error;
}

}  // namespace runara
