#include "ssh/known_hosts.hpp"

#include <unistd.h>

#include <cstdlib>
#include <memory>

namespace runara::ssh {

namespace {

int key_bits(const std::string& type) {
  if (type == "ssh-rsa") return LIBSSH2_KNOWNHOST_KEY_SSHRSA;
  if (type == "ssh-dss") return LIBSSH2_KNOWNHOST_KEY_SSHDSS;
  if (type == "ecdsa-sha2-nistp256") return LIBSSH2_KNOWNHOST_KEY_ECDSA_256;
  if (type == "ecdsa-sha2-nistp384") return LIBSSH2_KNOWNHOST_KEY_ECDSA_384;
  if (type == "ecdsa-sha2-nistp521") return LIBSSH2_KNOWNHOST_KEY_ECDSA_521;
  if (type == "ssh-ed25519") return LIBSSH2_KNOWNHOST_KEY_ED25519;
  return LIBSSH2_KNOWNHOST_KEY_UNKNOWN;
}

}  // namespace

std::string default_known_hosts() {
  const char* home = std::getenv("HOME");
  return home && *home ? std::string(home) + "/.ssh/known_hosts" : std::string();
}

KnownHostCheck check_known_host(LIBSSH2_SESSION* session, const std::string& file, const std::string& host, int port,
                                const HostKey& key) {
  KnownHostCheck out;
  if (file.empty() || ::access(file.c_str(), F_OK) != 0) return out;  // nothing known: Unknown
  std::unique_ptr<LIBSSH2_KNOWNHOSTS, decltype(&libssh2_knownhost_free)> hosts(libssh2_knownhost_init(session),
                                                                               &libssh2_knownhost_free);
  if (!hosts) {
    out.note = "cannot read '" + file + "': out of memory";
    return out;
  }
  if (libssh2_knownhost_readfile(hosts.get(), file.c_str(), LIBSSH2_KNOWNHOST_FILE_OPENSSH) < 0) {
    out.note = "cannot read '" + file + "' (not an OpenSSH known_hosts file?)";
    return out;
  }
  const int mask = LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW | key_bits(key.type);
  const int rc = libssh2_knownhost_checkp(hosts.get(), host.c_str(), port, key.blob.data(), key.blob.size(), mask,
                                          nullptr);
  if (rc == LIBSSH2_KNOWNHOST_CHECK_MATCH) out.verdict = KnownHost::Match;
  else if (rc == LIBSSH2_KNOWNHOST_CHECK_MISMATCH) out.verdict = KnownHost::Mismatch;
  else if (rc == LIBSSH2_KNOWNHOST_CHECK_FAILURE) out.note = "could not check '" + file + "'";
  return out;
}

}  // namespace runara::ssh
