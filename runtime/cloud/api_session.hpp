// A private event loop with a DigitalOcean client on it, for the command-line tools that talk
// to the API one question at a time (`runara ls`, `runara reap`). Each call runs the loop until
// its answer is in: blocking on purpose, as these commands have nothing else to do. Never use
// it on a run's loop or its Lua thread.
//
// One thread; the session owns the loop, the HttpClient and the DoClient, and closes them in
// its destructor. Errors come back in DoResult (never thrown); the token never appears in them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <uv.h>

#include "cloud/do_client.hpp"
#include "curl/http_client.hpp"

namespace runara {

class ApiSession {
 public:
  ApiSession(const std::string& api_base, const std::string& token);
  ~ApiSession();
  ApiSession(const ApiSession&) = delete;
  ApiSession& operator=(const ApiSession&) = delete;

  DoResult get_account();
  DoResult list_droplets(const std::string& tag);
  DoResult get_droplet(std::int64_t id);
  DoResult get_key(const std::string& ident);
  DoResult get_resource(const std::string& path);  // "/v2/vpcs/<id>"...

  uv_loop_t* loop() { return &loop_; }
  DoClient& client() { return *client_; }
  // Runs the loop until nothing is left on it (asynchronous work started through client()).
  void run();

 private:
  template <typename Start>
  DoResult wait_for(Start start);

  uv_loop_t loop_{};
  std::unique_ptr<HttpClient> http_;
  std::unique_ptr<DoClient> client_;
};

}  // namespace runara
