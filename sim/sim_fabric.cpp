#include "sim/sim_fabric.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <stdexcept>

#include "sim/box_user.hpp"
#include "sim/fake_do_addresses.hpp"

namespace runara::sim {

using nlohmann::json;

namespace {

bool is_uuid(const std::string& s) {
  return !s.empty() && s.size() <= 64 &&
         std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-'; });
}

bool same_tag(const std::string& a, const std::string& b) {
  const auto lower = [](char c) { return std::tolower(static_cast<unsigned char>(c)); };
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [&](char x, char y) { return lower(x) == lower(y); });
}

bool has_any_tag(const SimulatedDroplet& d, const json& tags) {
  if (!tags.is_array()) return false;
  for (const auto& t : tags)
    if (t.is_string())
      for (const auto& mine : d.tags)
        if (same_tag(mine, t.get<std::string>())) return true;
  return false;
}

bool has_id(const SimulatedDroplet& d, const json& ids) {
  if (!ids.is_array()) return false;
  return std::any_of(ids.begin(), ids.end(),
                     [&](const json& i) { return i.is_number_integer() && i.get<std::int64_t>() == d.id; });
}

// A firewall applies to the Droplets it names and to those carrying one of its tags.
bool applies_to(const json& fw, const SimulatedDroplet& d) {
  return has_id(d, fw.value("droplet_ids", json())) || has_any_tag(d, fw.value("tags", json()));
}

// Whether an inbound rule's sources take in traffic from `peer` over the VPC (its private address).
bool source_matches(const json& sources, const SimulatedDroplet& peer) {
  if (!sources.is_object()) return false;
  if (has_id(peer, sources.value("droplet_ids", json())) || has_any_tag(peer, sources.value("tags", json()))) return true;
  const auto ip = fakedo::parse_ipv4(peer.private_ipv4);
  if (!ip) return false;
  for (const auto& a : sources.value("addresses", json::array())) {
    if (!a.is_string()) continue;
    const std::string text = a.get<std::string>();
    if (const auto one = fakedo::parse_ipv4(text); one && *one == *ip) return true;
    if (const auto range = fakedo::parse_ipv4_cidr(text); range && range->range.contains(*ip)) return true;
  }
  return false;
}

// "0" (every port), "N" or "N-M", as the API normalises them.
std::pair<int, int> port_range(const std::string& ports) {
  if (ports == "0" || ports == "all" || ports.empty()) return {1, 65535};
  const auto dash = ports.find('-');
  if (dash == std::string::npos) return {std::atoi(ports.c_str()), std::atoi(ports.c_str())};
  return {std::atoi(ports.substr(0, dash).c_str()), std::atoi(ports.substr(dash + 1).c_str())};
}

std::string member_file(const SimulatedDroplet& dst, const std::vector<const SimulatedDroplet*>& peers,
                        const std::vector<json>& firewalls) {
  std::string out = "# runara simulated VPC fabric: inbound TCP to " + dst.private_ipv4 + " from this VPC's members\n";
  bool guarded = false;
  std::set<std::string> lines;
  for (const auto& fw : firewalls) {
    if (!applies_to(fw, dst)) continue;
    guarded = true;
    for (const auto& rule : fw.value("inbound_rules", json::array())) {
      if (rule.value("protocol", "") != "tcp") continue;
      const auto [lo, hi] = port_range(rule.value("ports", "0"));
      for (const SimulatedDroplet* peer : peers)
        if (peer->id != dst.id && source_matches(rule.value("sources", json()), *peer))
          lines.insert("tcp " + std::to_string(lo) + " " + std::to_string(hi) + " " + peer->private_ipv4 + "\n");
    }
  }
  if (!guarded) return out + "open\n";
  for (const auto& l : lines) out += l;
  return out;
}

void make_dir(const std::string& path) {
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST)
    throw std::runtime_error("simulated VPC fabric: cannot create " + path + ": " + std::strerror(errno));
}

void replace_file(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out) throw std::runtime_error("simulated VPC fabric: cannot write " + tmp);
  }
  std::filesystem::rename(tmp, path);
  hand_to_box_user(path, false);  // readable by boxes of nobody's (runara as root) whatever the umask
}

}  // namespace

void make_fabric_dir(const std::string& dir) {
  // Each path handed over alone, never a walk below: the boxes write listen/, and a walk could be
  // led through a link of theirs to a file of this computer's.
  for (const char* sub : {"", "/firewall", "/listen"}) {
    make_dir(dir + sub);
    hand_to_box_user(dir + sub, false);
  }
}

std::string fabric_dir(const std::string& root, const std::string& vpc_uuid) {
  return is_uuid(vpc_uuid) ? root + "/vpc-" + vpc_uuid : "";
}

std::map<std::string, std::map<std::string, std::string>> fabric_firewall_files(const SimulatedNetwork& network) {
  std::map<std::string, std::vector<const SimulatedDroplet*>> members;
  for (const auto& d : network.droplets)
    if (is_uuid(d.vpc_uuid) && fakedo::parse_ipv4(d.private_ipv4)) members[d.vpc_uuid].push_back(&d);
  std::map<std::string, std::map<std::string, std::string>> out;
  for (const auto& [vpc, peers] : members)
    for (const SimulatedDroplet* d : peers) out[vpc][d->private_ipv4] = member_file(*d, peers, network.firewalls);
  return out;
}

void write_fabric(const std::string& root, const SimulatedNetwork& network) {
  for (const auto& [vpc, files] : fabric_firewall_files(network)) {
    const std::string dir = fabric_dir(root, vpc);
    make_fabric_dir(dir);
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir + "/firewall", ec))
      if (!files.count(e.path().filename().string())) std::filesystem::remove(e.path(), ec);
    for (const auto& [ip, text] : files) replace_file(dir + "/firewall/" + ip, text);
  }
}

}  // namespace runara::sim
