// The per-run SSH key: an ed25519 key pair made in-process with OpenSSL (no ssh-keygen child),
// in the forms the cloud and the ssh engine need: the public key line DigitalOcean registers,
// the private key in OpenSSH's own file format (what libssh2 and `ssh -i` read), and the
// fingerprints (MD5 colon hex, as DigitalOcean names keys; SHA256, as OpenSSH prints them).
//
// Contract: pure functions, any thread, no I/O. The private key text is a secret: callers keep
// it out of logs and results (register it for redaction) and write it only 0600.
#pragma once

#include <string>
#include <string_view>

#include "base/result.hpp"

namespace runara {

struct SshKeyPair {
  std::string public_line;         // "ssh-ed25519 AAAA... comment"
  std::string private_openssh;     // "-----BEGIN OPENSSH PRIVATE KEY-----\n...-----END ...\n"
  std::string md5_fingerprint;     // "aa:bb:..." (16 bytes), DigitalOcean's key fingerprint
  std::string sha256_fingerprint;  // "SHA256:<base64 without padding>"
};

// A new key, or why OpenSSL could not make one (no entropy, no ed25519).
Result<SshKeyPair> make_ed25519_keypair(std::string_view comment);

}  // namespace runara
