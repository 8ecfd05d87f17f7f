#include "load_job/remote_agent.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <vector>

#include "base/build_paths.hpp"
#include "load/request_target.hpp"
#include "load_job/off_loop.hpp"
#include "load_job/remote_load.hpp"

namespace runara {

Result<std::string> agent_executable(const std::string& configured) {
  std::string path = configured;
  if (path.empty()) path = build_paths::agent();
  if (access(path.c_str(), R_OK | X_OK) != 0) {
    return Error{"option 'on': the load agent " + path +
                 " is not an executable file here (build the runara_agent target, or give --load-agent PATH)"};
  }
  return path;
}

Status check_remote_target(const TargetUrl& url, const CommandTarget& target, const TargetPolicy* secrets_policy) {
  if (url.scheme != "http") {
    return Error{"option 'on': the load agent speaks plain http:// to the machine's own server; give url = \"http://127.0.0.1:PORT\", not " +
                 url.scheme + "://"};
  }
  sockaddr_storage address{};
  if (!numeric_host(url.host, url.port, address)) {
    return Error{"option 'on': the url's host must be a numeric address on that machine (e.g. 127.0.0.1), got '" + url.host + "'"};
  }
  const AddressClass cls = classify_address(reinterpret_cast<const sockaddr*>(&address));
  const std::string text = address_text(reinterpret_cast<const sockaddr*>(&address));
  if (cls != AddressClass::kLoopback && cls != AddressClass::kPrivate && text != target.address()) {
    return Error{"option 'on': the agent may load only the machine it runs on: its loopback (127.0.0.1) or its own private address, not " +
                 text + " (" + std::string(address_class_name(cls)) + ")"};
  }
  // A secret in the load's headers travels to the machine (inside ssh), so it must be allowed
  // to go there, as a local load's secrets must be allowed to go to its server.
  if (!secrets_policy) return {};
  sockaddr_storage machine{};
  std::string why = "its address is not numeric";
  if (!numeric_host(target.address(), target.port(), machine) ||
      !secrets_policy->allows(reinterpret_cast<const sockaddr*>(&machine), target.address(), why)) {
    return Error{"option 'on': the load carries a secret, which would go to " + target.name() + ": " + why};
  }
  return {};
}

Result<std::string> agent_hash(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{"the load agent " + path + " cannot be read"};
  std::uint64_t h = 0xcbf29ce484222325ull;
  std::vector<char> block(1 << 16);
  while (in.read(block.data(), static_cast<std::streamsize>(block.size())) || in.gcount() > 0) {
    for (std::streamsize i = 0; i < in.gcount(); ++i) h = (h ^ static_cast<unsigned char>(block[static_cast<std::size_t>(i)])) * 0x100000001b3ull;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return std::string(hex);
}

void install_agent(uv_loop_t* loop, const RemoteAgent& agent, std::function<void(Status)> done) {
  auto hashed = std::make_shared<Result<std::string>>(Error{"reading the load agent was cancelled"});
  off_loop(
      loop, [hashed, path = agent.agent_local] { *hashed = agent_hash(path); },
      [hashed, agent, done = std::move(done)] {
        if (!*hashed) return done(Error{hashed->error()});
        *agent.agent_remote = ".cache/runara/runara-agent-" + hashed->value();
        auto target = agent.target.lock();
        if (!target) return done(Error{"the ssh session was closed"});
        target->install(agent.agent_local, *agent.agent_remote, [done](const std::string& error) { done(status_from(error)); });
      });
}

std::function<std::unique_ptr<LoadRunner>(uv_loop_t*, std::shared_ptr<const LoadSpec>, LoadRunner::Progress)> remote_runner(
    const RemoteAgent& agent) {
  return [agent](uv_loop_t*, std::shared_ptr<const LoadSpec> spec, LoadRunner::Progress progress) {
    RemoteLoadPlan plan{agent.target, *agent.agent_remote, agent.remaining_s ? agent.remaining_s() : 0, agent.memory_bytes, agent.redact};
    return make_remote_load(std::move(spec), std::move(progress), std::move(plan));
  };
}

}  // namespace runara
