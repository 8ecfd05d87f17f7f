// Blocking DigitalOcean calls on a private loop; see api_session.hpp for the contract.
#include "cloud/api_session.hpp"

#include <optional>

namespace runara {

ApiSession::ApiSession(const std::string& api_base, const std::string& token) {
  uv_loop_init(&loop_);
  http_ = std::make_unique<HttpClient>(&loop_);
  // A person waits at the terminal: a few quick retries, then say the API could not be reached
  // (RunCleanup keeps its own, longer patience for the destroys).
  DoClientOptions options;
  options.retry.max_attempts = 3;
  options.retry.base_delay_s = 0.5;
  options.timeout_s = 15;
  client_ = std::make_unique<DoClient>(*http_, api_base, token, options);
}

ApiSession::~ApiSession() {
  client_.reset();
  http_->close({});
  uv_run(&loop_, UV_RUN_DEFAULT);
  http_.reset();
  uv_run(&loop_, UV_RUN_DEFAULT);
  uv_loop_close(&loop_);
}

void ApiSession::run() { uv_run(&loop_, UV_RUN_DEFAULT); }

template <typename Start>
DoResult ApiSession::wait_for(Start start) {
  std::optional<DoResult> out;
  start([&out](DoResult result) { out = std::move(result); });
  // The client answers from the loop; a loop with nothing left on it cannot answer any more.
  while (!out && uv_run(&loop_, UV_RUN_ONCE) != 0) {
  }
  if (out) return *out;
  DoResult lost;
  lost.error = "the request ended without an answer";
  return lost;
}

DoResult ApiSession::get_account() {
  return wait_for([this](DoClient::Callback done) { client_->get_account(std::move(done)); });
}

DoResult ApiSession::list_droplets(const std::string& tag) {
  return wait_for([this, &tag](DoClient::Callback done) { client_->list_droplets(tag, std::move(done)); });
}

DoResult ApiSession::get_droplet(std::int64_t id) {
  return wait_for([this, id](DoClient::Callback done) { client_->get_droplet(id, std::move(done)); });
}

DoResult ApiSession::get_key(const std::string& ident) {
  return wait_for([this, ident](DoClient::Callback done) { client_->get_key(ident, std::move(done)); });
}

DoResult ApiSession::get_resource(const std::string& path) {
  return wait_for([this, path](DoClient::Callback done) { client_->get_resource(path, std::move(done)); });
}

}  // namespace runara
