// A local TCP listener on 127.0.0.1 at an ephemeral port whose connections are tunnelled through
// an SSH session (direct-tcpip channels) to a host:port as seen from the remote machine, like
// `ssh -L`. Each accepted connection is one channel; bytes flow both ways with backpressure
// (at most ~1 MiB buffered per direction), and end-of-stream is passed on each way.
//
// Contract. Threading: all calls and callbacks on the session's loop thread, never blocking.
// Ownership: the caller owns the forward; the session must outlive it. Destroying it closes the
// listener and every tunnel at once (their channels go with the session when not yet freed).
// When the session is lost, open tunnels are closed and new connections are refused (closed at
// once). Must not call: Lua. The address is only reachable from this machine (127.0.0.1).
// On a session that has run no command yet, it runs `true` first: OpenSSH's sshd leaves Nagle's
// algorithm on until a command starts, which delays a tunnel's small replies by up to 40 ms.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "ssh/exec.hpp"
#include "ssh/session.hpp"

typedef struct uv_tcp_s uv_tcp_t;

namespace runara::ssh {

class Tunnel;

class PortForward {
 public:
  // Listens at once, or fails when it cannot.
  static Result<std::unique_ptr<PortForward>> open(uv_loop_t* loop, SshSession& session, std::string remote_host,
                                                   int remote_port);
  ~PortForward();
  PortForward(const PortForward&) = delete;
  PortForward& operator=(const PortForward&) = delete;

  int port() const { return port_; }                 // on 127.0.0.1
  std::size_t open_tunnels() const { return tunnels_.size(); }
  std::uint64_t tunnels_opened() const { return opened_; }
  const std::string& last_error() const { return last_error_; }  // of a tunnel that failed

 private:
  friend class Tunnel;
  PortForward(uv_loop_t* loop, SshSession& session, std::string remote_host, int remote_port);
  void on_connection(int status);
  void tunnel_ended(Tunnel* tunnel, const std::string& error);
  void reap();
  void close_handles();

  uv_loop_t* loop_;
  SshSession& session_;
  std::string remote_host_;
  int remote_port_;
  uv_tcp_t* listener_ = nullptr;
  struct Reaper;
  Reaper* reaper_ = nullptr;
  int port_ = 0;
  std::map<Tunnel*, std::unique_ptr<Tunnel>> tunnels_, ended_;
  std::uint64_t opened_ = 0;
  std::string last_error_;
  std::string listen_error_;  // why the listener could not start ("" when it did)
  std::unique_ptr<SshExec> primer_;  // `true`, run when the session had run no command yet
};

}  // namespace runara::ssh
