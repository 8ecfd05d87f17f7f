// The per-machine log ssh/<name>.log in the run's output folder: every command ("$ ..."), its
// output, and how it and each transfer ended ("# ..."), redacted. A machine's own line that starts
// with '$' or '#' is indented, so a reader can tell runara's lines from it (`runara plan` does not
// read this file: the script may overwrite it; it counts RunHooks::activity instead).
//
// Contract: loop thread only; plain writes (local disk at page-cache speed, as run.log's),
// buffered up to 64 KiB. A file that cannot be opened is reported once in run.log, never raised.
#pragma once

#include <string>
#include <string_view>

#include "ssh/run_hooks.hpp"

namespace runara::ssh {

class SessionLog {
 public:
  SessionLog() = default;
  ~SessionLog();
  SessionLog(const SessionLog&) = delete;
  SessionLog& operator=(const SessionLog&) = delete;
  void open(const RunHooks& hooks, const std::string& name);
  void line(std::string_view text);
  void flush();

 private:
  const RunHooks* hooks_ = nullptr;
  int fd_ = -1;
  std::string buffer_;
};

// A machine name or an address as a file name: never a path.
std::string log_file_name(const std::string& name);

}  // namespace runara::ssh
