// The ssh engine's pieces that need neither sshd nor Lua (issue 29: the run manager moved out of
// the binding): what a target string names, which user key logs in, the command label, the
// memory hold's steps and refusal through RunHooks, and droplet.sizes's catalogue.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cloud/size_catalog.hpp"
#include "ssh/login_plan.hpp"
#include "ssh/memory_hold.hpp"
#include "ssh/remote_process.hpp"

using namespace runara;

TEST_CASE("ssh login plan: targets name a host and maybe a port, or say what is wrong", "[ssh]") {
  auto t = ssh::parse_target("203.0.113.7");
  REQUIRE(t.ok());
  CHECK(t->host == "203.0.113.7");
  CHECK(t->port == 0);
  t = ssh::parse_target("[::1]:2222");
  REQUIRE(t.ok());
  CHECK(t->host == "::1");
  CHECK(t->port == 2222);
  CHECK(ssh::parse_target("fe80::1").value().host == "fe80::1");  // a bare IPv6 address: no port
  CHECK(ssh::parse_target("box.example:22").value().port == 22);
  CHECK(ssh::parse_target("[::1").error() == "target '[::1' has '[' without ']'");
  CHECK(ssh::parse_target("h:0").error() == "target 'h:0': the port must be a number from 1 to 65535");
  CHECK(ssh::parse_target("a;b").error().find("expected an IP address or a host name") != std::string::npos);
  CHECK_FALSE(ssh::parse_target("-bad.example").ok());
}

TEST_CASE("ssh login plan: the user's keys, refused with what to do", "[ssh]") {
  const std::string dir = std::filesystem::temp_directory_path() / ("runara-keys-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const char* agent = std::getenv("SSH_AUTH_SOCK");
  const std::string saved = agent ? agent : "";
  ::unsetenv("SSH_AUTH_SOCK");  // no agent: a key file is needed
  ssh::SessionOptions o;
  CHECK(ssh::user_keys(o, dir + "/missing", "m").error() == "cannot read the key given with --ssh-key ('" + dir + "/missing')");
  std::ofstream(dir + "/enc") << "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n";
  CHECK(ssh::user_keys(o, dir + "/enc", "m").error().find("is encrypted with a passphrase") != std::string::npos);
  std::ofstream(dir + "/clear") << "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEI\n-----END PRIVATE KEY-----\n";
  REQUIRE(ssh::user_keys(o, dir + "/clear", "m").ok());
  CHECK(o.private_key.find("BEGIN PRIVATE KEY") != std::string::npos);
  std::filesystem::remove_all(dir);
  if (!saved.empty()) ::setenv("SSH_AUTH_SOCK", saved.c_str(), 1);
}

TEST_CASE("ssh remote process: a command's label is its first line, shortened", "[ssh]") {
  CHECK(ssh::command_label("nproc") == "nproc");
  CHECK(ssh::command_label("make\nmake install") == "make ...");
  CHECK(ssh::command_label(std::string(100, 'x')).size() == 80);
  CHECK(ssh::queued_line_cost("") == sizeof(std::string));  // an empty line is not free
}

TEST_CASE("ssh memory hold: reserved from the run in 64 KiB steps, refused as the run says", "[ssh]") {
  std::vector<std::size_t> reserved, released;
  ssh::RunHooks hooks;
  hooks.reserve_memory = [&](std::size_t bytes, std::string_view what) -> Status {
    if (bytes > (1u << 20)) return Error{std::string(what) + " would pass --max-memory"};
    reserved.push_back(bytes);
    return {};
  };
  hooks.release_memory = [&](std::size_t bytes) { released.push_back(bytes); };
  {
    ssh::MemoryHold hold(hooks);
    REQUIRE(hold.grow(10, "x").ok());
    REQUIRE(hold.grow(10, "x").ok());  // inside the first step: nothing more asked
    CHECK(reserved == std::vector<std::size_t>{64u << 10});
    CHECK(hold.grow(2u << 20, "ssh output").error() == "ssh output would pass --max-memory");
  }
  CHECK(released == std::vector<std::size_t>{64u << 10});  // given back once, when it goes
}

TEST_CASE("droplet sizes: the catalogue a script sees, GPU sizes only when asked", "[droplet]") {
  const auto api = nlohmann::json::parse(R"([
    {"slug": "s-1vcpu-1gb", "price_hourly": 0.009, "vcpus": 1, "memory": 1024, "disk": 25, "available": true},
    {"slug": "gpu-h100x1-80gb", "price_hourly": 3.39, "vcpus": 20, "memory": 245760, "disk": 720,
     "gpu_info": {"count": 1, "model": "nvidia_h100", "vram": {"amount": 80, "unit": "gib"}}}])");
  const auto all = size_catalog(api, false);
  REQUIRE(all.size() == 2);
  CHECK(all[0]["memory_mb"] == 1024);
  CHECK_FALSE(all[0].contains("gpu"));
  const auto gpu = size_catalog(api, true);
  REQUIRE(gpu.size() == 1);
  CHECK(gpu[0]["gpu"]["vram_gb"] == 80);
  CHECK(gpu[0]["regions"] == nlohmann::json::array());
}
