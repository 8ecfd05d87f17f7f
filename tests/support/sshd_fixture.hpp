// A real OpenSSH server (Debian's /usr/sbin/sshd) on 127.0.0.1 at a free port, for the ssh
// engine's tests: its own temp folder with a generated ed25519 host key, a generated user key
// pair authorised for the current user, and its own sshd_config (AuthorizedKeysFile pointing at
// the fixture's file, StrictModes no, UsePAM no, PidFile in the folder, SFTP, TCP forwarding), and
// a HOME of its own for the sessions, so the user's dotfiles never run.
//
// Contract: used from one test thread. Keys are made with ssh-keygen (allowed in tests; the
// runtime itself never starts ssh-keygen). sshd runs in the foreground (`-D -e`), its stderr
// going to `log_path()`, started with posix_spawn (never a bare fork: see exec_image.hpp). The
// destructor kills sshd and everything it started (per-connection children and the commands
// they run, which sshd puts in sessions of their own) and waits for the listener.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace runara::test {

class SshdFixture {
 public:
  // `start_now = false`: keys, config and port are ready but nobody listens until start().
  explicit SshdFixture(bool start_now = true);
  ~SshdFixture();
  SshdFixture(const SshdFixture&) = delete;
  SshdFixture& operator=(const SshdFixture&) = delete;

  void start();     // starts sshd and waits (10 s at most, else throws) until it sends its banner
  void kill_now();  // SIGKILL to sshd, its connections and their commands; waits for the listener
  // SIGSTOP to every open connection's processes: a host that went silent without closing
  // anything (TCP stays up, nothing answers). kill_now() still ends them.
  void freeze_connections();
  void replace_host_key();  // a new host key (restarts sshd when it runs): "the host key changed"
  // An environment variable of every session (sshd's SetEnv), for sshd started after this.
  void set_env(const std::string& name, const std::string& value);

  int port() const { return port_; }
  const std::string& user() const { return user_; }
  const std::string& dir() const { return dir_; }
  std::string home() const;  // the sessions' HOME and SFTP start folder: not the user's own
  const std::string& user_key_path() const { return user_key_path_; }  // authorised, OpenSSH PEM
  std::string user_key_pem() const;
  std::string other_key_pem() const;  // a valid key that is NOT authorised
  const std::string& host_key_fingerprint() const { return host_fingerprint_; }  // "SHA256:..."
  std::string log() const;  // what sshd wrote to stderr
  bool running() const { return pid_ > 0; }

 private:
  void make_host_key();
  void write_config();

  std::string dir_, user_, user_key_path_, host_fingerprint_;
  std::vector<std::string> env_;  // NAME=value
  int port_ = 0;
  pid_t pid_ = -1;
};

// Runs `argv` to completion (posix_spawn), returns its stdout; throws if it fails.
std::string run_tool(const std::vector<std::string>& argv);

}  // namespace runara::test
