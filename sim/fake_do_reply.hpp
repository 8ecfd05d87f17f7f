// What every operation of the fake DigitalOcean API answers: an HTTP status with a JSON body, the
// API's error shape, and its pagination ({key: [...], "links": {...}, "meta": {"total": N}}).
// No state; safe from any thread.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace runara::sim::fakedo {

struct Reply {
  int status = 200;
  nlohmann::json body;  // null: empty body (204)
};

Reply error_reply(int status, const std::string& id, const std::string& message);

// One page of a collection: where it is (for absolute links) and which slice is asked for.
struct PageRequest {
  std::string base_url;  // "http://127.0.0.1:PORT"
  std::string path;      // "/v2/droplets"
  int page = 1;
  int per_page = 20;
  std::vector<std::pair<std::string, std::string>> extra;  // other query parameters, kept in links
};

// {key: [...slice...], "links": {...}, "meta": {"total": N}} as the API paginates.
nlohmann::json paginate(const std::string& key, const std::vector<nlohmann::json>& all,
                        const PageRequest& page);

}  // namespace runara::sim::fakedo
