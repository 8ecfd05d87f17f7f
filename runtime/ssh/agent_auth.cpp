// AgentAuth: connect to the agent, list its keys once, then offer each in turn until one is
// accepted; an EAGAIN keeps the same key for the next call.
#include "ssh/agent_auth.hpp"

namespace runara::ssh {

AgentAuth::AgentAuth(LIBSSH2_SESSION* session, std::string socket_path, std::string user)
    : session_(session), socket_path_(std::move(socket_path)), user_(std::move(user)) {}

AgentAuth::~AgentAuth() {
  if (agent_ == nullptr) return;
  libssh2_agent_disconnect(agent_);
  libssh2_agent_free(agent_);
}

AgentAuth::Result AgentAuth::fail(const std::string& why, int rc) {
  error_ = why;
  rc_ = rc;
  return Result::Failed;
}

AgentAuth::Result AgentAuth::start() {
  agent_ = libssh2_agent_init(session_);
  if (agent_ == nullptr) return fail("libssh2 could not make an agent handle", LIBSSH2_ERROR_ALLOC);
  libssh2_agent_set_identity_path(agent_, socket_path_.c_str());
  if (int rc = libssh2_agent_connect(agent_); rc != 0)
    return fail("cannot reach the SSH agent at " + socket_path_ + " (SSH_AUTH_SOCK)", rc);
  if (int rc = libssh2_agent_list_identities(agent_); rc != 0)
    return fail("the SSH agent at " + socket_path_ + " did not list its keys", rc);
  listed_ = true;
  return Result::Again;
}

AgentAuth::Result AgentAuth::step() {
  if (!listed_ && start() == Result::Failed) return Result::Failed;
  for (;;) {
    if (identity_ == nullptr) {
      const int got = libssh2_agent_get_identity(agent_, &identity_, nullptr);
      if (got == 1) return Result::Exhausted;  // an empty agent
      if (got < 0) return fail("the SSH agent at " + socket_path_ + " gave no key", got);
      ++offered_;
    }
    const int rc = libssh2_agent_userauth(agent_, user_.c_str(), identity_);
    if (rc == LIBSSH2_ERROR_EAGAIN) return Result::Again;
    if (rc == 0) return Result::Accepted;
    if (rc != LIBSSH2_ERROR_AUTHENTICATION_FAILED && rc != LIBSSH2_ERROR_PUBLICKEY_UNVERIFIED &&
        rc != LIBSSH2_ERROR_AGENT_PROTOCOL)
      return fail("authentication with a key of the SSH agent at " + socket_path_ + " failed", rc);
    libssh2_agent_publickey* next = nullptr;  // refused (or the agent would not sign): the next key
    const int got = libssh2_agent_get_identity(agent_, &next, identity_);
    if (got != 0) return Result::Exhausted;
    identity_ = next;
    ++offered_;
  }
}

}  // namespace runara::ssh
