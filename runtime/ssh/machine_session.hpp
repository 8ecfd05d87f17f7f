// One login a script holds on a machine (ssh.connect's session) and everything riding on it:
// the commands it started (RemoteProcess), its SFTP transfers, its port forwards, its log file
// ssh/<name>.log, and the close sequence, which kills every remote process group still running
// (TERM, KILL after the grace) before the SSH disconnect, so nothing a script started outlives
// the run on a machine that stays.
//
// Contract. Threading: the run's loop thread (calls and callbacks alike). Ownership: the run's
// RunSessions owns every MachineSession (scripts hold weak references, so a closed session is
// simply gone for them); a session owns its SSH connection and what rides on it, and frees those
// first. Processes are shared with their scripts' objects and may outlive it. Callbacks given to
// it are called at most once and may free it only where said (close's `done`, the last one).
// Must not call: Lua (the binding pushes what it returns).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "ssh/command_target.hpp"
#include "ssh/exec.hpp"
#include "ssh/port_forward.hpp"
#include "ssh/remote_process.hpp"
#include "ssh/run_hooks.hpp"
#include "ssh/session.hpp"
#include "ssh/session_log.hpp"
#include "ssh/sftp_transfer.hpp"

namespace runara::ssh {

// Who a session logs in as, and where.
struct MachineLogin {
  std::string name;  // the machine's name or the host: terminal prefix and log file name
  std::string host;  // the address connected to
  int port = 22;
  std::string user;
  bool run_machine = false;  // one of the run's own droplets (else a host granted with --allow-host)
};

class MachineSession {
 public:
  MachineSession(const RunHooks& hooks, MachineLogin login) : hooks_(&hooks), login_(std::move(login)) {}
  ~MachineSession();
  MachineSession(const MachineSession&) = delete;
  MachineSession& operator=(const MachineSession&) = delete;

  const MachineLogin& login() const { return login_; }
  const std::string& name() const { return login_.name; }
  std::string where() const;  // "name (user@host:port)", for messages
  bool closing() const { return closing_; }
  bool usable() const { return ssh_ && ssh_->ready() && !closing_; }
  // Why it cannot be used: closed by the script or the run, or the connection was lost.
  Status check_usable() const;
  SshSession& ssh() { return *ssh_; }
  SessionLog& log() { return log_; }
  std::shared_ptr<SshCommandTarget> command_target() const { return target_; }

  // A command; its lines flow to the terminal, the log and the process's tails at once (not an
  // internal one's: it keeps only the tails `options` asks for).
  Result<std::shared_ptr<RemoteProcess>> start_process(ExecOptions options, ProcessKind kind, bool quiet = false);

  // SFTP: the transfer's buffers are first taken from --max-memory (refused: nothing starts);
  // then it runs, and `done` gets its result, or why it failed or was stopped. `what` names it in
  // progress and log lines ("s:upload"). The id cancels it (the caller stopped waiting).
  using TransferDone = std::function<void(Result<TransferResult>)>;
  Result<std::shared_ptr<void>> reserve_transfer(const TransferOptions& options);
  Result<std::uint64_t> transfer(std::shared_ptr<void> reserved, TransferOptions options, std::string what,
                                 TransferDone done);
  void cancel_transfer(std::uint64_t id) { transfers_.erase(id); }

  // A 127.0.0.1 listener tunnelled to host:port as the machine sees it: its local port.
  Result<int> forward(const std::string& host, int port);

  // Kill the processes, stop the transfers and forwards, disconnect; `done` is told when closed
  // (the last such call may free this session). Again while closing: `done` joins the wait.
  void close(std::function<void()> done);

  // The host-key policy's refusal (host_key_policy.hpp), which the connect error then gives.
  // `unknown`: known_hosts lacks the key (the user's setup), not a key that changed or differs.
  void refuse_host_key(std::string why, bool unknown = false) {
    host_key_error_ = std::move(why);
    host_key_unknown_ = unknown;
  }

 private:
  friend class RunSessions;
  void connected();  // the connection is up: the command target and the log file
  void process_ended(RemoteProcess& process);
  void drop_forwards();  // closes the tunnels; their ports leave the run's reachable set
  void disconnect();

  const RunHooks* hooks_;
  MachineLogin login_;
  std::unique_ptr<SshSession> ssh_;
  std::shared_ptr<SshCommandTarget> target_;
  std::map<std::uint64_t, std::shared_ptr<RemoteProcess>> processes_;  // running
  std::uint64_t next_process_ = 1;
  struct Transfer {
    std::unique_ptr<SftpTransfer> transfer;
    TransferDone done;
  };
  std::map<std::uint64_t, Transfer> transfers_;
  std::uint64_t next_transfer_ = 1;
  std::vector<std::unique_ptr<PortForward>> forwards_;
  SessionLog log_;
  bool closing_ = false;
  std::vector<std::function<void()>> on_closed_;  // close() callers, and teardown
  std::size_t kills_pending_ = 0;
  std::string host_key_error_;  // why the host key was refused, for the connect error
  bool host_key_unknown_ = false;
};

}  // namespace runara::ssh
