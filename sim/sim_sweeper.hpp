// Everything a simulated machine starts (its sshd, the sessions' commands, servers a script left
// running in the background) carries one environment entry naming its folder, e.g.
// "RUNARA_SIM_STATE=/tmp/runara-sim-x/droplet-1/state". Killing a machine kills every process
// whose environment holds that entry; nothing else is touched, whatever it is called.
//
// The sweeper process (`runara __sim_sweeper`) makes that hold even when runara itself dies
// (SIGKILL, crash): started in a session of its own with the read end of a pipe, it waits for the
// pipe to close, then kills every process marked with the simulated cloud's entry and removes the
// cloud's folder.
//
// Contract: kill_marked_processes may be called from any thread; it never signals the calling
// process. A SimSweeper is owned by one SimCloud; its destructor closes the pipe.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

namespace runara::sim {

// SIGKILLs every process of this user whose environment holds `entry` ("NAME=value") or whose
// command line names a path below `folder` ("" for none), and their descendants, until a scan
// finds none (processes may fork while being killed). Returns how many were signalled.
int kill_marked_processes(const std::string& entry, const std::string& folder);

class SimSweeper {
 public:
  // nullptr and `error` set when it cannot be started.
  static std::unique_ptr<SimSweeper> start(const std::string& executable, const std::string& root_dir,
                                           const std::string& entry, std::string& error);
  ~SimSweeper();

 private:
  SimSweeper(pid_t pid, int fd) : pid_(pid), fd_(fd) {}
  pid_t pid_;
  int fd_;
};

// `runara __sim_sweeper --dir DIR --entry NAME=VALUE` (started by SimSweeper::start only).
int sim_sweeper_main(int argc, char** argv);

}  // namespace runara::sim
