// How this computer reaches the machines a cloud creates, where the plain way does not: ssh to
// the machine's public address on port 22 as the user the script names, the machine's own
// services on its own 127.0.0.1. A host that runs scenarios against a stand-in cloud (the
// simulator of `runara --sim` is one: its machines are sshds on loopback addresses of their own,
// some in network namespaces) puts a MachineRoutes in CloudOptions::routes. The droplet
// primitive asks it about each machine the run creates and keeps the answer in
// RunMachine::route, which is all that the primitives that log in, forward ports or send load
// consult: none of them knows there is a simulator.
//
// Honoured only while the run talks to the API the routes are for (api_base()): against any
// other endpoint (the real DigitalOcean) nothing here is consulted, so a host's routes can
// never redirect a real machine's traffic.
//
// Contract: route() may be called from the run's loop thread at any time while the run lives.
#pragma once

#include "runara/export.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace runara {

struct MachineRoute {
  int ssh_port = 0;      // where its sshd listens on its public address; 0: 22
  std::string ssh_user;  // the user its sshd logs in, whatever user a script asks for; "": that one
  // The address that stands for the machine's own loopback, from here and from the machine
  // alike (a stand-in machine sharing this computer's loopback has an address of its own there):
  // where a script aims s:forward or a load run on the machine at 127.0.0.1 or localhost, that
  // address is used instead. "": the machine's own 127.0.0.1.
  std::string loopback;
  // Sockets that reach the machine made another way than a plain socket() here (a machine in a
  // network namespace of its own): returns an unconnected TCP socket (IPv4) that, once connected
  // to its address, reaches it, or -1 with `error` set. Empty: a plain socket.
  std::function<int(std::string& error)> open_socket;
};

class RUNARA_API MachineRoutes {
 public:
  virtual ~MachineRoutes() = default;
  virtual std::string api_base() const = 0;  // the cloud API whose machines these are
  // nullopt: the plain way reaches the machine at `public_address`.
  virtual std::optional<MachineRoute> route(std::string_view public_address) const = 0;
};

}  // namespace runara
