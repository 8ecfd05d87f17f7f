// Runs the runara binary (or any program) as a child process for end-to-end tests: feed stdin,
// capture stdout/stderr, send signals, wait with a timeout.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace runara::test {

struct ChildResult {
  int exit_code = -1;   // exit status, or 128+signal if killed by a signal
  std::string out, err;
  double seconds = 0;   // wall time until exit
  bool timed_out = false;
  long max_rss_kb = 0;  // the child's peak resident memory (wait4's ru_maxrss)
};

class ChildProcess {
 public:
  // `env` entries are added to (or replace in) the current environment.
  ChildProcess(std::vector<std::string> argv, std::map<std::string, std::string> env = {},
               std::string cwd = "");
  ~ChildProcess();  // kills the child if still running

  void write_stdin(const std::string& data);
  void close_stdin();
  void signal(int signal_number);
  // Waits until stderr or stdout contains `text` (true) or `timeout_s` passes (false).
  bool wait_for_output(const std::string& text, double timeout_s);
  // What the child has written to stdout so far (as of the last wait_for_output), while it runs.
  const std::string& out_so_far() const { return result_.out; }
  const std::string& err_so_far() const { return result_.err; }
  ChildResult wait(double timeout_s = 30);
  pid_t pid() const { return pid_; }

 private:
  void pump(double timeout_s);

  pid_t pid_ = -1;
  int in_ = -1, out_ = -1, err_ = -1;
  double started_ = 0;
  ChildResult result_;
  bool done_ = false;
};

// Shorthand: run `runara ARGS...` to completion.
ChildResult run_runara(std::vector<std::string> args, double timeout_s = 30,
                       std::map<std::string, std::string> env = {}, const std::string& stdin_data = "");

// A fresh temporary folder, removed with what is in it when the test process exits (kept with
// RUNARA_KEEP_TEST_DIRS=1); a guardian left running with its state in it is killed first.
std::string temp_dir(const std::string& tag);
// Removes a folder made by temp_dir now, the same careful way: a test that starts runs in a loop
// calls it instead of std::filesystem::remove_all, so no guardian loses its ledger mid-work.
void remove_temp_dir(const std::string& dir);
std::string write_temp_file(const std::string& dir, const std::string& name, const std::string& content);

}  // namespace runara::test
