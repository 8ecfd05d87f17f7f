// The fake DigitalOcean API's routing table: method + path + query + body -> Store operation.
// HTTP-library free, so the same table can serve other front ends (the simulated cloud).
#pragma once

#include <map>
#include <string>

#include "sim/fake_do_store.hpp"

namespace runara::sim::fakedo {

struct ApiRequest {
  std::string method;  // "GET" (HEAD is treated as GET), "POST", "PUT", "DELETE", ...
  std::string path;    // decoded path, "/v2/droplets/123"
  std::multimap<std::string, std::string> params;  // decoded query parameters
  std::string body;
  std::string base_url;  // for absolute links
  int per_page_default = 20;
};

// "METHOD /path" (no query): what fault injection matches requests against.
std::string request_line(const ApiRequest& req);
// True for GET /v2/account/keys (limited to 10 per minute).
bool is_key_list(const ApiRequest& req);

Reply route(Store& store, const ApiRequest& req);

}  // namespace runara::sim::fakedo
