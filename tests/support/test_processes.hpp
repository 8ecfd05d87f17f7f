// Which processes are alive, read from /proc: for tests that check a run left nothing running.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <string>

namespace runara::test {

// A /proc file's text, "" when it cannot be read. Plain read(2): a process may exit while its file
// is read, and the read then fails with ESRCH, which libstdc++'s filebuf turns into an exception
// (std::ios_base::failure from underflow) whatever the stream's exception mask.
inline std::string proc_file(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string text;
  char buf[8192];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  close(fd);
  return text;
}

// Processes whose environment or command line mentions `needle` (e.g. the simulated cloud's folder).
inline int processes_mentioning(const std::string& needle) {
  int found = 0;
  DIR* proc = opendir("/proc");
  if (!proc) return 0;
  while (dirent* e = readdir(proc)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    for (const char* what : {"/environ", "/cmdline"}) {
      if (proc_file(std::string("/proc/") + e->d_name + what).find(needle) != std::string::npos) {
        ++found;
        break;
      }
    }
  }
  closedir(proc);
  return found;
}

}  // namespace runara::test
