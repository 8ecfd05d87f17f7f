// Helpers for the ssh engine tests: session options aimed at an SshdFixture, and connecting
// a session on a test loop.
#pragma once

#include "sshd_fixture.hpp"
#include "ssh/session.hpp"

#include <memory>
#include <stdexcept>
#include <string>

#include "base/result.hpp"

namespace runara::test {

inline ssh::SessionOptions sshd_options(const SshdFixture& sshd) {
  ssh::SessionOptions o;
  o.address = "127.0.0.1";
  o.port = sshd.port();
  o.user = sshd.user();
  o.private_key = sshd.user_key_pem();
  o.connect_timeout_s = 10;
  const std::string pinned = sshd.host_key_fingerprint();
  o.accept_host_key = [pinned](const ssh::HostKey& key) { return key.fingerprint == pinned; };
  return o;
}

// An engine object the test needs started (SshExec::start, SftpTransfer::start,
// PortForward::open): a failure is thrown, so Catch reports it where it happened.
template <class T>
std::unique_ptr<T> must(Result<std::unique_ptr<T>> started) {
  if (!started) throw std::runtime_error(started.error());
  return std::move(*started);
}

// Connects on `loop`, driving it with `run_until`; returns "" or the error.
template <class Loop>
std::string connect_session(Loop& loop, ssh::SshSession& session, double max_s = 15) {
  bool done = false;
  std::string error;
  session.connect([&](Status connected) {
    error = connected.error();
    done = true;
  });
  if (!loop.run_until([&] { return done; }, max_s)) return "connect did not finish";
  return error;
}

}  // namespace runara::test
