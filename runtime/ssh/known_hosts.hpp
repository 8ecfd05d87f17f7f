// A host's key judged against an OpenSSH known_hosts file (libssh2's knownhost API): the file is
// read, never written. Hosts on a port other than 22 are looked up as "[host]:port", as OpenSSH
// writes them; hashed entries (HashKnownHosts) are understood.
//
// Contract: any thread; reads the file with plain calls (a small local file, read once per
// connection). `session` only lends libssh2 its allocator. Messages name the file and the host,
// never key material beyond the public fingerprint.
#pragma once

#include <string>

#include "ssh/session.hpp"

namespace runara::ssh {

enum class KnownHost { Match, Mismatch, Unknown };

struct KnownHostCheck {
  KnownHost verdict = KnownHost::Unknown;
  std::string note;  // why a file could not be used (missing file: "" and Unknown)
};

KnownHostCheck check_known_host(LIBSSH2_SESSION* session, const std::string& file, const std::string& host, int port,
                                const HostKey& key);

// $HOME/.ssh/known_hosts, or "" when HOME is unset.
std::string default_known_hosts();

}  // namespace runara::ssh
