#include "tls_closing_server.hpp"

#include "loopback_socket.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

namespace runara::test {

namespace {

SSL_CTX* ctx_of(void* p) { return static_cast<SSL_CTX*>(p); }

// Reads one request head (a GET: no body) into `buf`; false when the connection ends first.
bool read_request(SSL* ssl, std::string& buf) {
  char chunk[4096];
  while (buf.find("\r\n\r\n") == std::string::npos) {
    const int n = SSL_read(ssl, chunk, sizeof chunk);
    if (n <= 0) return false;
    buf.append(chunk, static_cast<std::size_t>(n));
  }
  buf.erase(0, buf.find("\r\n\r\n") + 4);
  return true;
}

}  // namespace

TlsClosingServer::TlsClosingServer(const std::string& cert, const std::string& key) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  ctx_ = ctx;
  if (!ctx || SSL_CTX_use_certificate_chain_file(ctx, cert.c_str()) != 1 ||
      SSL_CTX_use_PrivateKey_file(ctx, key.c_str(), SSL_FILETYPE_PEM) != 1) {
    throw std::runtime_error("TlsClosingServer: cannot load " + cert + " / " + key);
  }
  SSL_CTX_set_alpn_select_cb(
      ctx,
      [](SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char*, unsigned int, void*) {
        static const unsigned char h1[] = "http/1.1";
        *out = h1;
        *outlen = sizeof h1 - 1;
        return SSL_TLSEXT_ERR_OK;
      },
      nullptr);
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const sockaddr_in a = runara::test::loopback_address();
  if (bind(listen_fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0 || listen(listen_fd_, 64) != 0) {
    throw std::runtime_error("TlsClosingServer: cannot listen on loopback");
  }
  port_ = runara::test::bound_port(listen_fd_);
  acceptor_ = std::thread([this] { accept_loop(); });
}

TlsClosingServer::~TlsClosingServer() {
  stopping_ = true;
  shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  close(listen_fd_);
  std::lock_guard lock(mu_);
  for (auto& t : connections_) t.join();
  SSL_CTX_free(ctx_of(ctx_));
}

void TlsClosingServer::accept_loop() {
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    std::lock_guard lock(mu_);
    connections_.emplace_back([this, fd] { serve(fd); });
  }
}

void TlsClosingServer::serve(int fd) {
  SSL* ssl = SSL_new(ctx_of(ctx_));
  SSL_set_fd(ssl, fd);
  timeval timeout{5, 0};  // a client that goes quiet does not hold the destructor up for long
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  std::string buf;
  if (SSL_accept(ssl) == 1 && read_request(ssl, buf)) {
    static const std::string kAnswer = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Type: text/plain\r\n\r\nok\n";
    if (SSL_write(ssl, kAnswer.data(), static_cast<int>(kAnswer.size())) > 0) ++answered_;
    if (read_request(ssl, buf)) ++dropped_;  // the reused connection's request: closed, unanswered
  }
  SSL_free(ssl);
  close(fd);
}

}  // namespace runara::test
