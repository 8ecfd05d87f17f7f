// ssh.connect's decisions that need no Lua and no run: what a target string names ("HOST",
// "HOST:PORT", "[V6]:PORT", a host being an address or a DNS name nothing could read another
// way), and which of the user's keys log into a granted host (the SSH agent's first, then
// --ssh-key or else ~/.ssh/id_ed25519, id_ecdsa, id_rsa, as OpenSSH picks them; an encrypted
// key file is left to the agent, which may hold it unlocked).
//
// Contract: plain functions; user_keys reads files and the environment (SSH_AUTH_SOCK, HOME), at
// connect time only (small files, before anything is sent). Errors say what to do; they never
// hold key material.
#pragma once

#include <string>

#include "base/result.hpp"
#include "ssh/session.hpp"

namespace runara::ssh {

struct HostPort {
  std::string host;
  int port = 0;  // 0: none given
};
Result<HostPort> parse_target(const std::string& target);

// Fills options.agent_socket and/or options.private_key for a login as the user; `given_key` is
// --ssh-key ("" for none), `name` the machine, for the message when there is no key at all.
Status user_keys(SessionOptions& options, const std::string& given_key, const std::string& name);

bool key_is_encrypted(const std::string& pem);  // an OpenSSH or PEM private key needing a passphrase

}  // namespace runara::ssh
