// One tunnelled connection of a PortForward: an accepted local TCP client joined to a
// direct-tcpip channel of the SSH session, bytes copied both ways with backpressure (reading
// stops while ~1 MiB waits to go on), EOF passed on each way.
//
// Contract. Threading: the session's loop thread. Ownership: its PortForward owns it and deletes
// it later on the loop (never inside its own callbacks); it owns the accepted client handle,
// which it closes (the handle's memory is freed by its close callback, so pending writes finish
// safely after the tunnel is gone). `ended` is called once, when the tunnel is over.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "ssh/session.hpp"

typedef struct uv_tcp_s uv_tcp_t;

namespace runara::ssh {

class Tunnel final : public Stepper {
 public:
  using Ended = std::function<void(Tunnel*, const std::string& error)>;
  Tunnel(SshSession& session, uv_tcp_t* client, std::string host, int port, Ended ended);
  ~Tunnel() override;
  Tunnel(const Tunnel&) = delete;
  Tunnel& operator=(const Tunnel&) = delete;

  Step step() override;
  void lost(const std::string& error) override;

  // libuv callbacks (public for the C trampolines)
  void on_read(long nread, const char* data);
  void on_written(int status, std::size_t bytes);

 private:
  enum class Phase { Open, Flow, Close, Done };
  bool open();
  bool push_to_remote();
  bool pull_from_remote();
  void end(const std::string& error);
  void close_client();

  SshSession* session_;
  uv_tcp_t* client_;
  std::string host_;
  int port_;
  Ended ended_;
  std::uint64_t id_ = 0;
  LIBSSH2_CHANNEL* channel_ = nullptr;
  Phase phase_ = Phase::Open;
  std::string to_remote_;
  std::size_t writes_pending_ = 0;  // bytes handed to uv_write, not yet written
  bool reading_ = false, client_eof_ = false, eof_sent_ = false, remote_eof_ = false, shut_down_ = false;
  double close_deadline_ = 0;
};

}  // namespace runara::ssh
