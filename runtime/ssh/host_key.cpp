#include "ssh/host_key.hpp"

namespace runara::ssh {

std::string base64_unpadded(std::string_view bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned v = static_cast<unsigned char>(bytes[i]) << 16 | static_cast<unsigned char>(bytes[i + 1]) << 8 |
                       static_cast<unsigned char>(bytes[i + 2]);
    for (int shift : {18, 12, 6, 0}) out += kAlphabet[(v >> shift) & 63];
  }
  const std::size_t left = bytes.size() - i;
  if (left == 0) return out;
  unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
  if (left == 2) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
  out += kAlphabet[(v >> 18) & 63];
  out += kAlphabet[(v >> 12) & 63];
  if (left == 2) out += kAlphabet[(v >> 6) & 63];
  return out;
}

namespace {
std::string type_name(int type) {
  switch (type) {
    case LIBSSH2_HOSTKEY_TYPE_RSA: return "ssh-rsa";
    case LIBSSH2_HOSTKEY_TYPE_DSS: return "ssh-dss";
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_256: return "ecdsa-sha2-nistp256";
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_384: return "ecdsa-sha2-nistp384";
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_521: return "ecdsa-sha2-nistp521";
    case LIBSSH2_HOSTKEY_TYPE_ED25519: return "ssh-ed25519";
    default: return "unknown";
  }
}
}  // namespace

HostKey read_host_key(LIBSSH2_SESSION* session) {
  HostKey key;
  std::size_t len = 0;
  int type = LIBSSH2_HOSTKEY_TYPE_UNKNOWN;
  if (const char* blob = libssh2_session_hostkey(session, &len, &type)) key.blob.assign(blob, len);
  key.type = type_name(type);
  // libssh2 returns the 32 raw bytes of SHA256(blob).
  if (const char* hash = libssh2_hostkey_hash(session, LIBSSH2_HOSTKEY_HASH_SHA256))
    key.fingerprint = "SHA256:" + base64_unpadded(std::string_view(hash, 32));
  return key;
}

}  // namespace runara::ssh
