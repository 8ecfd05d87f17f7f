#include "ssh/port_forward.hpp"

#include "ssh/tunnel.hpp"

#include <uv.h>

#include <stdexcept>

namespace runara::ssh {

// Deletes ended tunnels on the next loop turn: never inside their own callbacks.
struct PortForward::Reaper {
  uv_timer_t timer;
};

Result<std::unique_ptr<PortForward>> PortForward::open(uv_loop_t* loop, SshSession& session, std::string remote_host,
                                                      int remote_port) {
  std::unique_ptr<PortForward> forward(new PortForward(loop, session, std::move(remote_host), remote_port));
  if (!forward->listen_error_.empty()) return Error{forward->listen_error_};
  return forward;
}

PortForward::PortForward(uv_loop_t* loop, SshSession& session, std::string remote_host, int remote_port)
    : loop_(loop), session_(session), remote_host_(std::move(remote_host)), remote_port_(remote_port) {
  listener_ = new uv_tcp_t;
  uv_tcp_init(loop_, listener_);
  listener_->data = this;
  reaper_ = new Reaper;
  uv_timer_init(loop_, &reaper_->timer);
  reaper_->timer.data = this;
  sockaddr_in addr{};
  uv_ip4_addr("127.0.0.1", 0, &addr);
  int rc = uv_tcp_bind(listener_, reinterpret_cast<const sockaddr*>(&addr), 0);
  if (rc == 0)
    rc = uv_listen(reinterpret_cast<uv_stream_t*>(listener_), 128, [](uv_stream_t* server, int status) {
      static_cast<PortForward*>(server->data)->on_connection(status);
    });
  if (rc == 0) {
    sockaddr_storage bound{};
    int len = sizeof bound;
    uv_tcp_getsockname(listener_, reinterpret_cast<sockaddr*>(&bound), &len);
    port_ = ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  }
  if (rc != 0) {
    close_handles();
    listen_error_ = std::string("forward: cannot listen on 127.0.0.1: ") + uv_strerror(rc);
    return;
  }
  // Without it, OpenSSH's sshd holds each small reply until our delayed ACK (see
  // command_started): +33 ms on a stream's first token and 50 ms token gaps, measured; as
  // with `ssh -N -L`. Its result does not matter: once it started, the connection is set.
  if (!session_.command_started() && session_.ready())
    if (auto primer = SshExec::start(session_, ExecOptions{.command = "true"}, [](const ExecResult&) {})) primer_ = std::move(*primer);
}

PortForward::~PortForward() { close_handles(); }

void PortForward::close_handles() {
  tunnels_.clear();
  ended_.clear();
  if (listener_) {
    uv_close(reinterpret_cast<uv_handle_t*>(listener_), [](uv_handle_t* h) { delete reinterpret_cast<uv_tcp_t*>(h); });
    listener_ = nullptr;
  }
  if (reaper_) {
    uv_close(reinterpret_cast<uv_handle_t*>(&reaper_->timer),
             [](uv_handle_t* h) { delete reinterpret_cast<Reaper*>(h); });  // timer is the first member
    reaper_ = nullptr;
  }
}

void PortForward::on_connection(int status) {
  if (status < 0) return;
  auto* client = new uv_tcp_t;
  uv_tcp_init(loop_, client);
  if (uv_accept(reinterpret_cast<uv_stream_t*>(listener_), reinterpret_cast<uv_stream_t*>(client)) != 0 ||
      !session_.ready()) {
    // A lost session refuses new connections: the client sees them closed at once.
    uv_close(reinterpret_cast<uv_handle_t*>(client), [](uv_handle_t* h) { delete reinterpret_cast<uv_tcp_t*>(h); });
    if (!session_.ready()) last_error_ = "the SSH session is not connected: " + session_.error();
    return;
  }
  uv_tcp_nodelay(client, 1);
  ++opened_;
  auto tunnel = std::make_unique<Tunnel>(session_, client, remote_host_, remote_port_,
                                         [this](Tunnel* t, const std::string& error) { tunnel_ended(t, error); });
  Tunnel* key = tunnel.get();
  tunnels_[key] = std::move(tunnel);
}

void PortForward::tunnel_ended(Tunnel* tunnel, const std::string& error) {
  if (!error.empty()) last_error_ = error;
  auto it = tunnels_.find(tunnel);
  if (it == tunnels_.end()) return;
  ended_[tunnel] = std::move(it->second);
  tunnels_.erase(it);
  uv_timer_start(&reaper_->timer, [](uv_timer_t* t) { static_cast<PortForward*>(t->data)->reap(); }, 0, 0);
}

void PortForward::reap() { ended_.clear(); }

}  // namespace runara::ssh
