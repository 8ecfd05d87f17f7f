// A real TLS HTTP/1.1 server on loopback (OpenSSL) that answers the first request on each
// connection and, when a second request arrives on the same kept-alive connection, closes it
// without answering: what a client meets when a server's idle timeout or request limit fires
// just as it reuses a connection. The client sent on a live connection and got nothing back.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace runara::test {

class TlsClosingServer {
 public:
  // `cert` and `key`: PEM files (e.g. made with `openssl req -x509`).
  TlsClosingServer(const std::string& cert, const std::string& key);
  ~TlsClosingServer();
  TlsClosingServer(const TlsClosingServer&) = delete;
  TlsClosingServer& operator=(const TlsClosingServer&) = delete;

  int port() const { return port_; }
  int answered() const { return answered_.load(); }
  int dropped() const { return dropped_.load(); }  // requests met with a close instead of an answer

 private:
  void accept_loop();
  void serve(int fd);

  void* ctx_ = nullptr;  // SSL_CTX
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> answered_{0}, dropped_{0};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<std::thread> connections_;
};

}  // namespace runara::test
