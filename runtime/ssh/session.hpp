// One SSH connection (libssh2, non-blocking) on a libuv loop: host name lookup (libuv's thread
// pool), TCP connect, handshake, host key check by the caller, public-key auth (an SSH agent's
// keys, then a key), keepalive, close. Connecting retries
// with backoff until `connect_timeout_s` (a freshly booted machine refuses SSH for a minute) and
// then fails with the last error. Channels (ssh_exec, and later SFTP and tunnels) ride on a Ready
// session as Steppers: the session runs their step() whenever the socket may have progressed.
//
// Contract. Threading: every call, and every callback, on the loop's thread; nothing blocks:
// the socket is polled with uv_poll in the directions libssh2_session_block_directions names,
// and a 250 ms tick enforces deadlines, keepalives and dead-peer detection (no reply for
// 3 keepalive intervals while something is attached; while idle, keepalives want no reply and
// a closed connection is seen by peeking), so a dead or silent host never stalls the loop or
// teardown.
// Ownership: the caller owns the session; it must outlive nothing, since destroying it (even
// from inside one of its callbacks or a Stepper's) tells every attached Stepper lost() and frees
// libssh2 without waiting on the network. close() is the polite end (SSH disconnect, 2 s at most).
// Errors are sentences naming the host and the phase; they never contain key material.
// Must not call: anything that blocks, Lua (engines stay free of it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <libssh2.h>

#include "base/result.hpp"

typedef struct uv_loop_s uv_loop_t;
typedef struct uv_poll_s uv_poll_t;
typedef struct uv_timer_s uv_timer_t;
typedef struct uv_getaddrinfo_s uv_getaddrinfo_t;
struct addrinfo;

namespace runara::ssh {

class AgentAuth;
class LoopBudget;

struct HostKey {
  std::string fingerprint;  // "SHA256:<base64, no padding>", as `ssh-keygen -l` prints it
  std::string type;         // "ssh-ed25519", "ecdsa-sha2-nistp256", "ssh-rsa", ...
  std::string blob;         // the raw public key, for known_hosts / pinning
};

struct SessionOptions {
  std::string address;  // numeric IPv4 or IPv6, or a host name (looked up on each attempt)
  int port = 22;
  std::string user = "root";
  std::string private_key;       // an OpenSSH or PEM private key in memory, or else
  std::string private_key_path;  // a file holding one
  std::string passphrase;        // for an encrypted key
  // An SSH agent's socket (the user's SSH_AUTH_SOCK): its keys are offered first, then the key
  // above if there is one. "" for none. The run's own droplets never use it.
  std::string agent_socket;
  double connect_timeout_s = 600;  // keep retrying until this much time has passed
  double attempt_timeout_s = 15;   // one attempt: TCP connect, handshake, auth
  double keepalive_s = 15;         // 0: none (and no dead-peer detection)
  bool retry_auth_failure = false;  // a booting machine may run sshd before its key is installed
  // A booting machine refuses connections until its sshd listens; a machine that is up (one of
  // the user's) and refuses is set up wrong: false fails at once, as a setup mistake (Error::setup).
  bool retry_refused = true;
  // Decides on the server's key (pinning, known_hosts): true accepts. Required.
  std::function<bool(const HostKey&)> accept_host_key;
  // Optional: makes the unconnected IPv4 socket each attempt connects (a machine in a network
  // namespace of its own; see MachineRoute::open_socket). -1 with the error set: the attempt fails.
  std::function<int(std::string& error)> open_socket;
  // Optional: told each time an attempt failed and another will follow (what is awaited).
  std::function<void(const std::string& status)> on_retry;
};

// A channel, transfer or tunnel riding on the session.
class Stepper {
 public:
  enum class Step { Blocked, Progress };
  virtual ~Stepper() = default;
  // Advance as far as possible without blocking. Progress: did something (the session asks
  // again, since libssh2 may have buffered data for it while serving another channel).
  virtual Step step() = 0;
  // The session is gone (lost, closed or destroyed) and has already forgotten this stepper.
  // The socket is already shut down, so freeing this stepper's own libssh2 handles (e.g.
  // libssh2_sftp_shutdown) fails fast and never waits; call nothing else in libssh2 nor the
  // session, and finish with `error`. Called from inside step() too, when the step's libssh2
  // call found the link dead. Channels need no freeing: they go with the session.
  virtual void lost(const std::string& error) = 0;
};

class SshSession {
 public:
  using Done = std::function<void(Status)>;
  enum class State { Idle, Connecting, Waiting, Ready, Closing, Closed, Failed };

  SshSession(uv_loop_t* loop, SessionOptions options);
  ~SshSession();
  SshSession(const SshSession&) = delete;
  SshSession& operator=(const SshSession&) = delete;

  void connect(Done done);  // once; `done` gets ok when Ready, or the final error
  void close(Done done);    // polite disconnect (always ok); steppers are told lost("... closed")

  State state() const { return state_; }
  bool ready() const { return state_ == State::Ready; }
  const std::string& error() const { return error_; }  // why it failed or was lost
  std::string where() const;                           // "user@address:port"
  int attempts() const { return attempts_; }

  // --- for Steppers ---
  LIBSSH2_SESSION* raw() { return session_; }
  uv_loop_t* loop() const { return loop_; }
  std::uint64_t attach(Stepper* stepper);  // the id to detach with
  // A stepper going away while it holds the open turn (its open half done) passes `finish_open`:
  // a call that continues that very open (same libssh2 function) and returns true once it has
  // ended, freeing what it got. The session runs it before anyone else may open, so the next
  // opener never inherits the half-done open (libssh2 would hand it that channel).
  void detach(std::uint64_t id, std::function<bool()> finish_open = {});
  void wake();  // run the steppers soon (after queuing new work from outside a step)
  // A stepper going away with libssh2 handles still open (an SFTP file, the SFTP subsystem)
  // hands over `finish`: a call that continues closing them and returns true once done. The
  // session runs it as the socket moves, and once more, failing fast, when it is lost or
  // destroyed, so libssh2 frees what it holds.
  void adopt(std::function<bool()> finish);
  // libssh2 keeps the state of a channel being opened (session, direct-tcpip, SFTP start-up) in
  // the session, not in the channel: one stepper at a time may be opening. True when `id` holds
  // the turn (or just got it); release it once the open finished (detach releases too).
  bool take_open_turn(std::uint64_t id);
  void release_open_turn(std::uint64_t id);
  // libssh2 returned `rc` (< 0, not EAGAIN) on this session: if it means the connection is
  // gone, fail the session (every stepper is told lost) and return true.
  bool fatal(int rc);
  std::string last_error() const;  // libssh2's message for the last error
  // OpenSSH's sshd turns Nagle's algorithm off on the connection only once a command or a
  // subsystem starts on it (packet_set_interactive). Before that, each small packet it sends
  // waits for our delayed ACK: up to 40 ms per reply through a tunnel (PortForward starts a
  // command when none has run). Set by the steppers that start one.
  bool command_started() const { return command_started_; }
  void note_command_started() { command_started_ = true; }

 private:
  struct Handles;
  void start_attempt();
  void resolve();
  void resolved(int status, const ::addrinfo* found);
  void abandon_resolution();
  void connect_to(const std::string& address);
  void on_socket(int status, int events);
  void tcp_connected();
  void step_connect();
  bool step_agent();
  void attempt_failed(const std::string& why, bool retryable, bool setup = false);
  void tcp_failed(int err);  // a TCP connect that failed with errno `err`
  void become_ready();
  void pump();
  bool idle() const { return steppers_.empty() && !orphan_open_ && orphans_.empty(); }
  bool finish_orphan_open();
  void run_orphans();  // true when it ended (the turn is free again)
  void idle_readable();
  void configure_keepalive();
  void rearm();
  void tick();
  void lose(const std::string& why);
  void cut();
  void drop_connection();
  void finish_close();
  void notify_lost(const std::string& why);
  double now() const;

  uv_loop_t* loop_;
  SessionOptions options_;
  State state_ = State::Idle;
  enum class Phase { None, Tcp, Handshake, Auth, Resolve } phase_ = Phase::None;
  uv_getaddrinfo_t* resolving_ = nullptr;  // this attempt's host name lookup, while it runs
  Handles* handles_;  // libuv handles; freed by their close callbacks, so they may outlive us
  LoopBudget* budget_;  // this loop's per-phase time for all sessions (shared, released at the end)
  LIBSSH2_SESSION* session_ = nullptr;
  std::unique_ptr<AgentAuth> agent_;  // this attempt's offers of the agent's keys
  bool agent_done_ = false;           // this attempt: the agent's keys were all refused (or unusable)
  std::string agent_note_;            // what the agent came to, for the final error
  int fd_ = -1;
  Done done_, close_done_;
  std::string error_, last_attempt_error_;
  int attempts_ = 0;
  double deadline_ = 0, attempt_deadline_ = 0, close_deadline_ = 0, last_recv_ = 0;
  std::map<std::uint64_t, Stepper*> steppers_;
  std::uint64_t next_id_ = 1;
  // Where the next pump starts: a pump out of time mid-pass leaves the rest the first turn of the
  // next one, so every stepper is stepped however many there are (none is starved by the budget).
  std::uint64_t resume_at_ = 0;
  std::vector<std::uint64_t> stepping_order() const;
  std::uint64_t open_turn_ = 0;  // the stepper opening a channel now, 0: none
  std::function<bool()> orphan_open_;  // a departed stepper's open, finished by the session
  std::vector<std::function<bool()>> orphans_;  // departed steppers' closes (adopt)
  static constexpr std::size_t kNoBudget = ~std::size_t{0};
  bool command_started_ = false;
  bool idle_keepalive_ = false;     // keepalives currently ask for no reply (no steppers)
  bool unread_while_idle_ = false;  // bytes wait that only a stepper's libssh2 call will read
  std::size_t recv_budget_ = kNoBudget;  // socket bytes a step may still read
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);

  friend struct SessionIo;
};

}  // namespace runara::ssh
