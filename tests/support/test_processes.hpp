// Which processes are alive, read from /proc: for tests that check a run left nothing running.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <string>

namespace runara::test {

// Processes whose environment or command line mentions `needle` (e.g. the simulated cloud's folder).
inline int processes_mentioning(const std::string& needle) {
  int found = 0;
  DIR* proc = opendir("/proc");
  if (!proc) return 0;
  while (dirent* e = readdir(proc)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    for (const char* what : {"/environ", "/cmdline"}) {
      const int fd = open((std::string("/proc/") + e->d_name + what).c_str(), O_RDONLY);
      if (fd < 0) continue;
      std::string text;
      char buf[8192];
      ssize_t n;
      while ((n = read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
      close(fd);
      if (text.find(needle) != std::string::npos) {
        ++found;
        break;
      }
    }
  }
  closedir(proc);
  return found;
}

}  // namespace runara::test
