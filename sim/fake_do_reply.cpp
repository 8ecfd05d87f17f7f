#include "sim/fake_do_reply.hpp"

#include <algorithm>

#include "sim/fake_do_support.hpp"

namespace runara::sim::fakedo {

using nlohmann::json;

Reply error_reply(int status, const std::string& id, const std::string& message) {
  return {status, json{{"id", id}, {"message", message}}};
}

json paginate(const std::string& key, const std::vector<json>& all, const PageRequest& page) {
  const int per = std::max(1, page.per_page);
  const int p = std::max(1, page.page);
  const int total = static_cast<int>(all.size());
  const int pages = std::max(1, (total + per - 1) / per);
  json slice = json::array();
  for (long long i = static_cast<long long>(p - 1) * per; i < total && i < static_cast<long long>(p) * per; ++i)
    slice.push_back(all[static_cast<std::size_t>(i)]);

  auto link = [&](int n) {
    std::string url = page.base_url + page.path + "?page=" + std::to_string(n) +
                      "&per_page=" + std::to_string(per);
    for (const auto& [k, v] : page.extra) url += "&" + url_encode(k) + "=" + url_encode(v);
    return url;
  };
  json links_pages = json::object();
  if (p < pages) {
    links_pages["last"] = link(pages);
    links_pages["next"] = link(p + 1);
  }
  if (p > 1) {
    links_pages["first"] = link(1);
    links_pages["prev"] = link(std::min(p - 1, pages));
  }
  json out = json::object();
  out[key] = std::move(slice);
  out["links"] = links_pages.empty() ? json::object() : json{{"pages", links_pages}};
  out["meta"] = json{{"total", total}};
  return out;
}

}  // namespace runara::sim::fakedo
