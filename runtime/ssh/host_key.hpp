// The server's host key of a handshaken libssh2 session, as callers judge it: SHA256
// fingerprint in OpenSSH's notation, type name and raw blob.
//
// Contract: pure functions, any thread; the session must have completed its handshake.
#pragma once

#include <string>
#include <string_view>

#include "ssh/session.hpp"

namespace runara::ssh {

HostKey read_host_key(LIBSSH2_SESSION* session);
// Base64 without '=' padding, as OpenSSH writes fingerprints.
std::string base64_unpadded(std::string_view bytes);

}  // namespace runara::ssh
