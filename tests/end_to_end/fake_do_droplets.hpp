// Droplets a test makes straight through the fake DigitalOcean API, as someone other than the
// run would (its owner, an earlier runara, a run on another computer), and whether one is still
// there. Shared by the reap tests (test_reap_ownership.cpp, test_reap_expired.cpp).
//
// Contract: test code; blocking HTTP to the fake on loopback; REQUIREs the create's 202.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "sim/fake_digitalocean.hpp"

namespace runara::test {

inline std::int64_t create_droplet(const runara::sim::FakeDigitalOcean& fake, const std::string& token,
                                   const std::string& name, const nlohmann::json& tags) {
  httplib::Client cli(fake.base_url());
  cli.set_default_headers({{"Authorization", "Bearer " + token}});
  const nlohmann::json body = {
      {"name", name}, {"size", "s-1vcpu-1gb"}, {"image", "ubuntu-22-04-x64"}, {"region", "nyc3"}, {"tags", tags}};
  auto res = cli.Post("/v2/droplets", body.dump(), "application/json");
  REQUIRE(res);
  REQUIRE(res->status == 202);
  return nlohmann::json::parse(res->body)["droplet"]["id"].get<std::int64_t>();
}

inline bool droplet_exists(const runara::sim::FakeDigitalOcean& fake, std::int64_t id) {
  for (const auto& d : fake.droplets()) {
    if (d.value("id", std::int64_t{0}) == id) return true;
  }
  return false;
}

}  // namespace runara::test
