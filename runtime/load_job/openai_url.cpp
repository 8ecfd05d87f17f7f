#include "load_job/openai_url.hpp"

#include <curl/curl.h>

#include <memory>
#include <string_view>

namespace runara {

namespace {

// `url` with its path replaced; query and fragment are kept where libcurl found them.
std::string with_path(const std::string& url, const std::string& path) {
  std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> u(curl_url(), &curl_url_cleanup);
  if (!u || curl_url_set(u.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK ||
      curl_url_set(u.get(), CURLUPART_PATH, path.c_str(), 0) != CURLUE_OK) {
    return {};
  }
  char* text = nullptr;
  if (curl_url_get(u.get(), CURLUPART_URL, &text, 0) != CURLUE_OK || !text) return {};
  std::string out(text);
  curl_free(text);
  return out;
}

// The URL's path as libcurl parsed it; "" when it cannot be read.
std::string path_of(const std::string& url) {
  std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> u(curl_url(), &curl_url_cleanup);
  char* text = nullptr;
  if (!u || curl_url_set(u.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK ||
      curl_url_get(u.get(), CURLUPART_PATH, &text, 0) != CURLUE_OK || !text) {
    return {};
  }
  std::string out(text);
  curl_free(text);
  return out;
}

}  // namespace

std::string openai_endpoint_url(const TargetUrl& p, const std::string& endpoint) {
  const std::string tail = endpoint == "chat" ? "/v1/chat/completions" : "/v1/completions";
  if (p.path.empty() || p.path == "/" || p.path == "/v1" || p.path == "/v1/") return with_path(p.url, tail);
  return p.url;
}

std::string tokenize_url(const std::string& endpoint_url) {
  const std::string path = path_of(endpoint_url);
  for (const std::string_view tail : {std::string_view("/v1/completions"), std::string_view("/v1/chat/completions")}) {
    if (path.ends_with(tail)) return with_path(endpoint_url, path.substr(0, path.size() - tail.size()) + "/tokenize");
  }
  return {};
}

}  // namespace runara
