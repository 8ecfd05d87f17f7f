// The simulated VPC fabric of `runara --sim`: one folder per VPC (ROOT/vpc-<uuid>), mounted into
// every simulated machine of that VPC and into no other, through which the shims of the
// distributed tools (ray, multi-node vllm, torchrun; sim/machine/lib/fabric.sh) meet, addressed
// by private IP and port as the real tools are. It is a rendezvous fabric, not IP routing: a
// shim "listens" on IP:PORT by holding a lock on listen/IP:PORT there, and "connects" by finding
// that lock held and the port let through by the cloud firewalls. No packet moves; a real program
// on a simulated machine (curl 10.116.0.3:8000) finds no route to a peer.
//
// What the firewalls let through is written here as the shims read it: firewall/<private IP>
// holds, for that member, either "open" (no firewall applies to it: everything is open, as on the
// real cloud) or one line "tcp LO HI SOURCE_IP" per port range a firewall's inbound rule opens to
// a peer of the same VPC (by address or CIDR, Droplet id or tag). Rules take effect at once (the
// real API applies them within seconds: status "waiting" then "succeeded").
//
// Contract: pure functions plus write_fabric, which the simulated cloud calls with the fake API's
// lock held (so one writer at a time); files are replaced by rename, so a shim never reads half.
#pragma once

#include <map>
#include <string>

#include "sim/simulated_droplet.hpp"

namespace runara::sim {

// ROOT/vpc-<uuid>; "" for a uuid that is not one (it never reaches a path).
std::string fabric_dir(const std::string& root, const std::string& vpc_uuid);

// Creates a VPC's fabric folder with its firewall/ and listen/ (existing ones are kept).
void make_fabric_dir(const std::string& dir);

// For each VPC with members: each member's private IP -> the text of its firewall/<IP> file.
std::map<std::string, std::map<std::string, std::string>> fabric_firewall_files(const SimulatedNetwork& network);

// Creates each VPC's folder (and firewall/, listen/) and writes its members' firewall files,
// removing those of members that are gone. Throws std::runtime_error when a folder cannot be made.
void write_fabric(const std::string& root, const SimulatedNetwork& network);

}  // namespace runara::sim
