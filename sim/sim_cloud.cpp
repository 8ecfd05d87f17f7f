#include "sim/sim_cloud.hpp"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <stdexcept>

#include "base/build_paths.hpp"
#include "sim/box_user.hpp"
#include "sim/fake_digitalocean.hpp"
#include "sim/sim_fabric.hpp"
#include "sim/sim_isolation.hpp"
#include "sim/sim_machine.hpp"
#include "sim/sim_sweeper.hpp"

namespace runara::sim {

namespace {

std::string current_user() {
  const passwd* pw = ::getpwuid(::geteuid());
  return pw ? pw->pw_name : "root";
}

std::string random_hex(int bytes) {
  std::random_device rd;
  std::string out;
  char b[3];
  for (int i = 0; i < bytes; ++i) {
    std::snprintf(b, sizeof b, "%02x", static_cast<unsigned>(rd() & 0xff));
    out += b;
  }
  return out;
}

}  // namespace

std::string default_shims_dir() {
  return build_paths::sim_shims();
}

SimCloud::SimCloud(SimCloudConfig config)
    : config_(std::move(config)), token_("sim-" + random_hex(16)), user_(current_user()) {
  if (config_.join_timeout_s.empty())
    if (const char* t = std::getenv("RUNARA_SIM_JOIN_TIMEOUT_S")) config_.join_timeout_s = t;
  if (!config_.join_timeout_s.empty()) {
    char* end = nullptr;
    const double v = std::strtod(config_.join_timeout_s.c_str(), &end);
    if (end == config_.join_timeout_s.c_str() || *end != '\0' || !(v > 0 && v <= 86400))
      throw std::runtime_error("RUNARA_SIM_JOIN_TIMEOUT_S=" + config_.join_timeout_s +
                               ": expected a number of seconds, above 0 and at most 86400");
  }
  std::string error;
  sweeper_ = SimSweeper::start(config_.runara_executable, config_.root_dir, cloud_entry(config_.root_dir), error);
  if (!sweeper_) throw std::runtime_error(error);
  if (::mkdir(state_dir().c_str(), 0700) != 0) throw std::runtime_error("simulated cloud: cannot create " + state_dir());
  if (config_.isolated) {
    const std::string above = std::filesystem::path(config_.root_dir).parent_path().string();
    const std::string warning = choose_box_user({above}, {config_.shims_dir, config_.runara_executable});
    if (!warning.empty()) std::fprintf(stderr, "runara: simulated cloud: %s\n", warning.c_str());
    // Boxes of nobody's (box_user.hpp) walk through this folder to their own: entered, not listed.
    if (box_user()) ::chmod(config_.root_dir.c_str(), 0711);
  }
  FakeDoConfig api;
  api.token = token_;
  // A real GPU Droplet takes minutes to boot; the rehearsal keeps the wait visible but short.
  api.active_after_s = 2 * config_.time_scale;
  api.delete_after_s = 1 * config_.time_scale;
  api.public_ipv4 = [this](std::int64_t id) { return allocate_address(id); };
  api.on_created = [this](const SimulatedDroplet& d) { on_created(d); };
  api.on_deleted = [this](std::int64_t id) { on_deleted(id); };
  api.on_network_changed = [this](const SimulatedNetwork& n) { on_network_changed(n); };
  api_ = std::make_unique<FakeDigitalOcean>(api);
  api_->start(0);
}

SimCloud::~SimCloud() {
  if (api_) api_->stop();
  std::lock_guard lock(mu_);
  machines_.clear();  // each kills its sshd and everything it started
}

std::string SimCloud::api_base() const { return api_->base_url(); }

std::optional<MachineRoute> SimCloud::route(std::string_view address) const {
  std::lock_guard lock(mu_);
  const auto it = ports_.find(std::string(address));
  if (it == ports_.end()) return std::nullopt;
  if (!config_.isolated) return MachineRoute{it->second, user_, it->first, nullptr};
  // Boxed, the machine's loopback is its own: "127.0.0.1" in a tunnel already means the machine.
  return MachineRoute{it->second, kIsolatedUser, "",
                       [this, a = it->first](std::string& error) { return open_socket(a, error); }};
}

int SimCloud::open_socket(const std::string& address, std::string& error) const {
  // Held throughout: a delete (the fake API's thread) must not destroy the machine meanwhile.
  std::lock_guard lock(mu_);
  for (const auto& [id, m] : machines_)
    if (m->address() == address) return m->open_socket(error);
  error = "the simulated machine " + address + " is gone";
  return -1;
}

int SimCloud::live_machines() const {
  std::lock_guard lock(mu_);
  return static_cast<int>(machines_.size());
}

// Each machine gets an address of its own in 127/8 (all of it is loopback on Linux), so two
// simulated machines, or two simulated runs side by side, can each serve on port 8000.
std::string SimCloud::allocate_address(std::int64_t droplet_id) {
  std::lock_guard lock(mu_);
  std::random_device rd;
  for (int attempt = 0; attempt < 64; ++attempt) {
    const unsigned r = rd();
    const std::string ip = "127." + std::to_string(1 + (r >> 16) % 254) + "." + std::to_string((r >> 8) & 0xff) +
                           "." + std::to_string(2 + (r & 0xff) % 252);
    bool used = false;
    for (const auto& [id, a] : addresses_) used = used || a == ip;
    if (!used && free_port_on(ip) != 0) return addresses_[droplet_id] = ip;
  }
  return addresses_[droplet_id] = "127.0.0.1";
}

std::vector<SimulatedDroplet> SimCloud::created() const {
  std::lock_guard lock(mu_);
  return created_;
}

int SimCloud::peak_machines() const {
  std::lock_guard lock(mu_);
  return peak_;
}

void SimCloud::on_created(const SimulatedDroplet& d) {
  std::lock_guard lock(mu_);
  created_.push_back(d);
  created_.back().public_keys.clear();
  SimMachineSpec spec;
  spec.dir = config_.root_dir + "/droplet-" + std::to_string(d.id);
  spec.address = d.public_ipv4;
  spec.size_slug = d.size_slug;
  spec.public_keys = d.public_keys;
  spec.runara_executable = config_.runara_executable;
  spec.shims_dir = config_.shims_dir;
  spec.cloud_entry = cloud_entry(config_.root_dir);
  spec.time_scale = config_.time_scale;
  spec.faults = config_.faults;
  spec.isolated = config_.isolated;
  spec.private_ip = d.private_ipv4;
  spec.vpc_uuid = d.vpc_uuid;
  spec.join_timeout_s = config_.join_timeout_s;
  spec.limits = config_.box_limits;
  try {
    spec.fabric_dir = fabric_dir(config_.root_dir, d.vpc_uuid);
    // The folder exists before the box that mounts it; its files follow (on_network_changed).
    if (!spec.fabric_dir.empty()) make_fabric_dir(spec.fabric_dir);
    auto machine = std::make_unique<SimMachine>(spec);
    ports_[d.public_ipv4] = machine->ssh_port();
    machines_[d.id] = std::move(machine);
    peak_ = std::max(peak_, static_cast<int>(machines_.size()));
  } catch (const std::exception& e) {
    // The script's ssh.connect then fails with its own timeout; say why here.
    std::fprintf(stderr, "runara: simulated cloud: droplet %s: %s\n", d.name.c_str(), e.what());
  }
}

// The fake API's lock is held: one writer at a time, and the files follow every change.
void SimCloud::on_network_changed(const SimulatedNetwork& network) {
  try {
    write_fabric(config_.root_dir, network);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "runara: simulated cloud: %s\n", e.what());
  }
}

void SimCloud::on_deleted(std::int64_t id) {
  std::unique_ptr<SimMachine> gone;
  {
    std::lock_guard lock(mu_);
    const auto it = machines_.find(id);
    if (it == machines_.end()) return;
    ports_.erase(it->second->address());
    gone = std::move(it->second);
    machines_.erase(it);
  }
  gone.reset();  // kills it, outside our lock (the fake's lock is still held: it is quick)
}

}  // namespace runara::sim
