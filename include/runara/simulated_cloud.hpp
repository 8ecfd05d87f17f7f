// The simulated cloud (`runara --sim`) as the primitives see it. A host that runs a scenario
// against the simulator puts one in CloudOptions::simulated, with CloudOptions::api_base set to
// its api_base(); the droplet primitive then asks it how to reach each machine it creates (a
// real sshd on a loopback address of its own, at a port of its own, logged into as the user
// running runara). Honoured only while the run talks to that very API: against any other
// endpoint (the real DigitalOcean) nothing here is consulted.
//
// Contract: host() may be called from the run's loop thread at any time while the run lives.
#pragma once

#include "runara/export.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace runara {

struct SimulatedHost {
  int ssh_port = 0;          // where its sshd listens (on the machine's own address)
  std::string ssh_user;      // the local user the sshd logs in, whatever user a script asks for
  std::string forward_host;  // what "the machine's own loopback" is for s:forward ("": loopback)
  // An isolated machine's network is not this computer's: sockets that reach it are made inside
  // it (see RunMachine::open_socket). Empty when a plain socket reaches it.
  std::function<int(std::string& error)> open_socket;
};

class RUNARA_API SimulatedCloud {
 public:
  virtual ~SimulatedCloud() = default;
  virtual std::string api_base() const = 0;
  // nullopt: the address is not one of the simulated machines.
  virtual std::optional<SimulatedHost> host(std::string_view public_address) const = 0;
};

}  // namespace runara
