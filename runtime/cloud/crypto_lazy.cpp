// OpenSSL's libcrypto, loaded when a run first makes its ssh key (runtime/base/lazy_library.hpp:
// linking it cost every start of runara about 1 ms). Each function below is one runara calls;
// its first call opens libcrypto.so.3 and it forwards from then on. The definitions must match
// OpenSSL's declarations exactly (a mismatch is a compile error), and calling a function not
// listed here fails at link time.
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "base/lazy_library.hpp"

namespace {

void* libcrypto() {
  static void* const lib = runara::open_library("libcrypto.so.3", "libssl3");
  return lib;
}

}  // namespace

#define RUNARA_CRYPTO_REAL(name) RUNARA_LAZY_REAL(libcrypto, "libcrypto.so.3", name)

extern "C" {

int EVP_Digest(const void* data, size_t count, unsigned char* md, unsigned int* size, const EVP_MD* type,
               ENGINE* impl) {
  RUNARA_CRYPTO_REAL(EVP_Digest);
  return fn(data, count, md, size, type, impl);
}

void EVP_PKEY_CTX_free(EVP_PKEY_CTX* ctx) {
  RUNARA_CRYPTO_REAL(EVP_PKEY_CTX_free);
  fn(ctx);
}

EVP_PKEY_CTX* EVP_PKEY_CTX_new_id(int id, ENGINE* e) {
  RUNARA_CRYPTO_REAL(EVP_PKEY_CTX_new_id);
  return fn(id, e);
}

void EVP_PKEY_free(EVP_PKEY* pkey) {
  RUNARA_CRYPTO_REAL(EVP_PKEY_free);
  fn(pkey);
}

int EVP_PKEY_get_raw_private_key(const EVP_PKEY* pkey, unsigned char* priv, size_t* len) {
  RUNARA_CRYPTO_REAL(EVP_PKEY_get_raw_private_key);
  return fn(pkey, priv, len);
}

int EVP_PKEY_get_raw_public_key(const EVP_PKEY* pkey, unsigned char* pub, size_t* len) {
  RUNARA_CRYPTO_REAL(EVP_PKEY_get_raw_public_key);
  return fn(pkey, pub, len);
}

int EVP_PKEY_keygen(EVP_PKEY_CTX* ctx, EVP_PKEY** ppkey) {
  RUNARA_CRYPTO_REAL(EVP_PKEY_keygen);
  return fn(ctx, ppkey);
}

int EVP_PKEY_keygen_init(EVP_PKEY_CTX* ctx) {
  RUNARA_CRYPTO_REAL(EVP_PKEY_keygen_init);
  return fn(ctx);
}

const EVP_MD* EVP_md5(void) {
  RUNARA_CRYPTO_REAL(EVP_md5);
  return fn();
}

const EVP_MD* EVP_sha256(void) {
  RUNARA_CRYPTO_REAL(EVP_sha256);
  return fn();
}

void OPENSSL_cleanse(void* ptr, size_t len) {
  RUNARA_CRYPTO_REAL(OPENSSL_cleanse);
  fn(ptr, len);
}

int RAND_bytes(unsigned char* buf, int num) {
  RUNARA_CRYPTO_REAL(RAND_bytes);
  return fn(buf, num);
}

}  // extern "C"
