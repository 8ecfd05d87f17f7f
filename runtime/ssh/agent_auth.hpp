// Public-key authentication with the keys of the user's SSH agent (the socket SSH_AUTH_SOCK
// names), offered one by one as OpenSSH does, on a non-blocking libssh2 session.
//
// Contract. Threading: the session's loop thread only, called from SshSession's auth phase until
// it returns something other than Again (then again after the session socket moves). Blocking:
// libssh2 talks to the agent over its unix socket synchronously — a local process of the user's
// answering in microseconds; the SSH server's side never blocks (EAGAIN). Ownership: one per
// connection attempt, freed before its session. The agent is asked only to list its keys and to
// sign this session's authentication; agent forwarding is never requested. Errors name the socket
// and never carry key material. Must not call: Lua, anything that waits on the network.
#pragma once

#include <string>

#include <libssh2.h>

namespace runara::ssh {

class AgentAuth {
 public:
  AgentAuth(LIBSSH2_SESSION* session, std::string socket_path, std::string user);
  ~AgentAuth();
  AgentAuth(const AgentAuth&) = delete;
  AgentAuth& operator=(const AgentAuth&) = delete;

  enum class Result {
    Again,      // the server has not answered yet: call again when the socket moves
    Accepted,   // logged in with one of the agent's keys
    Exhausted,  // the server refused every key the agent holds (or it holds none)
    Failed,     // the agent could not be used, or the link broke: error() says which
  };
  Result step();
  int offered() const { return offered_; }     // keys offered so far
  int rc() const { return rc_; }               // libssh2's code behind Failed
  const std::string& error() const { return error_; }

 private:
  Result start();
  Result fail(const std::string& why, int rc);

  LIBSSH2_SESSION* session_;
  std::string socket_path_, user_;
  LIBSSH2_AGENT* agent_ = nullptr;
  libssh2_agent_publickey* identity_ = nullptr;  // the key being offered
  bool listed_ = false;
  int offered_ = 0, rc_ = 0;
  std::string error_;
};

}  // namespace runara::ssh
