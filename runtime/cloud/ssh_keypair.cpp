#include "cloud/ssh_keypair.hpp"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cstdint>
#include <memory>
#include <stdexcept>

namespace runara {

namespace {

// OpenSSH's wire encoding (RFC 4251): a uint32 length, then the bytes.
void put_u32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xff));
}
void put_string(std::string& out, std::string_view bytes) {
  put_u32(out, static_cast<std::uint32_t>(bytes.size()));
  out.append(bytes);
}

std::string base64(std::string_view bytes) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const std::uint32_t n = (static_cast<unsigned char>(bytes[i]) << 16) |
                            (static_cast<unsigned char>(bytes[i + 1]) << 8) | static_cast<unsigned char>(bytes[i + 2]);
    for (int k = 3; k >= 0; --k) out.push_back(kAlphabet[(n >> (6 * k)) & 63]);
  }
  if (i < bytes.size()) {
    std::uint32_t n = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) n |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out.push_back(kAlphabet[(n >> 18) & 63]);
    out.push_back(kAlphabet[(n >> 12) & 63]);
    out.push_back(i + 1 < bytes.size() ? kAlphabet[(n >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

std::string digest(const EVP_MD* md, std::string_view bytes) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), out, &len, md, nullptr) != 1) {
    throw std::runtime_error("ssh key: OpenSSL could not hash the public key");
  }
  return std::string(reinterpret_cast<const char*>(out), len);
}

std::string colon_hex(std::string_view bytes) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    if (!out.empty()) out.push_back(':');
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

// The private half of openssh-key-v1 (unencrypted: cipher and kdf "none", block size 8).
std::string private_section(std::string_view pub, std::string_view seed, std::string_view comment) {
  std::uint32_t check = 0;
  if (RAND_bytes(reinterpret_cast<unsigned char*>(&check), sizeof check) != 1) {
    throw std::runtime_error("ssh key: OpenSSL has no randomness");
  }
  std::string s;
  put_u32(s, check);
  put_u32(s, check);
  put_string(s, "ssh-ed25519");
  put_string(s, pub);
  put_string(s, std::string(seed) + std::string(pub));  // OpenSSH stores seed || public key
  put_string(s, comment);
  for (char pad = 1; s.size() % 8 != 0; ++pad) s.push_back(pad);
  return s;
}

std::string pem_wrap(const std::string& body) {
  std::string out = "-----BEGIN OPENSSH PRIVATE KEY-----\n";
  const std::string text = base64(body);
  for (std::size_t i = 0; i < text.size(); i += 70) out += text.substr(i, 70) + "\n";
  return out + "-----END OPENSSH PRIVATE KEY-----\n";
}

// OpenSSL's failures are thrown inside this file and turned into an Error at its surface.
SshKeyPair make_keypair_or_throw(std::string_view comment) {
  std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> ctx(EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nullptr),
                                                                  EVP_PKEY_CTX_free);
  EVP_PKEY* raw = nullptr;
  if (!ctx || EVP_PKEY_keygen_init(ctx.get()) != 1 || EVP_PKEY_keygen(ctx.get(), &raw) != 1) {
    throw std::runtime_error("ssh key: OpenSSL could not generate an ed25519 key");
  }
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(raw, EVP_PKEY_free);
  unsigned char pub[32], seed[32];
  std::size_t pub_len = sizeof pub, seed_len = sizeof seed;
  if (EVP_PKEY_get_raw_public_key(key.get(), pub, &pub_len) != 1 ||
      EVP_PKEY_get_raw_private_key(key.get(), seed, &seed_len) != 1 || pub_len != 32 || seed_len != 32) {
    throw std::runtime_error("ssh key: OpenSSL could not export the ed25519 key");
  }
  const std::string_view pub_bytes(reinterpret_cast<const char*>(pub), 32);
  const std::string_view seed_bytes(reinterpret_cast<const char*>(seed), 32);

  std::string blob;  // the public key as SSH encodes it: type, then the 32 bytes
  put_string(blob, "ssh-ed25519");
  put_string(blob, pub_bytes);

  std::string file = std::string("openssh-key-v1") + '\0';
  put_string(file, "none");  // cipher
  put_string(file, "none");  // kdf
  put_string(file, "");      // kdf options
  put_u32(file, 1);          // one key
  put_string(file, blob);
  put_string(file, private_section(pub_bytes, seed_bytes, comment));
  OPENSSL_cleanse(seed, sizeof seed);

  SshKeyPair pair;
  pair.public_line = "ssh-ed25519 " + base64(blob) + (comment.empty() ? "" : " " + std::string(comment));
  pair.private_openssh = pem_wrap(file);
  OPENSSL_cleanse(file.data(), file.size());
  pair.md5_fingerprint = colon_hex(digest(EVP_md5(), blob));
  std::string sha = base64(digest(EVP_sha256(), blob));
  while (!sha.empty() && sha.back() == '=') sha.pop_back();
  pair.sha256_fingerprint = "SHA256:" + sha;
  return pair;
}

}  // namespace

Result<SshKeyPair> make_ed25519_keypair(std::string_view comment) {
  try {
    return make_keypair_or_throw(comment);
  } catch (const std::exception& e) {
    return Error{e.what()};
  }
}

}  // namespace runara
