// The simulated cloud behind `runara --sim`: the fake DigitalOcean API on loopback (so the real
// client path runs: ledger, guardian, budget, teardown) and, for each Droplet it creates, a
// SimMachine: a real sshd on a loopback address of its own with shim commands behaving like the
// real GPU machine. DELETE of a Droplet kills its machine and everything it started. The machines
// of one VPC share its fabric folder (sim_fabric.hpp), kept in step with the account's firewalls.
//
// Contract: built by the host (the CLI) before the run, destroyed after it. Everything the cloud
// starts carries the entry "RUNARA_SIM_DIR=<root_dir>" in its environment; a sweeper process
// kills all of it and removes root_dir when the cloud ends, or when runara dies (see
// sim_sweeper.hpp). host() is thread-safe. The fake API calls back on its own thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sim/box_limits.hpp"
#include "sim/simulated_droplet.hpp"

#include "runara/machine_routes.hpp"

namespace runara::sim {

class FakeDigitalOcean;
class SimMachine;
class SimSweeper;

struct SimCloudConfig {
  std::string root_dir;           // an empty folder this cloud owns (removed at the end)
  std::string runara_executable;  // for the sweeper and the shims (`runara serve-fake-llm`)
  std::string shims_dir;          // sim/machine: bin/, amd/, nvidia/ and data/
  double time_scale = 1;          // boot and other simulated delays are multiplied by this
  std::string faults;             // RUNARA_SIM_FAULTS for the shims
  bool isolated = true;           // false: machines' commands run on this computer (--sim-unisolated)
  // How long the shims of the distributed tools wait for a peer (ray's GCS, vLLM's placement
  // group, torchrun's rendezvous), in wall seconds; "" each tool's own default times time_scale.
  // The constructor takes RUNARA_SIM_JOIN_TIMEOUT_S from the environment when this is empty.
  std::string join_timeout_s;
  BoxLimits box_limits = box_limits_for(std::size_t{1} << 30);  // each isolated machine's (box_limits.hpp)
};

// The shim folder (sim/machine) this build was made with, else the installed copy.
std::string default_shims_dir();

class SimCloud : public MachineRoutes {
 public:
  explicit SimCloud(SimCloudConfig config);  // throws std::runtime_error
  ~SimCloud() override;

  std::string api_base() const override;
  std::optional<MachineRoute> route(std::string_view public_address) const override;

  const std::string& token() const { return token_; }
  std::string state_dir() const { return config_.root_dir + "/state"; }  // the simulated run's ledger
  int live_machines() const;
  // Every Droplet the API created, in order, and the most that were alive at once (runara plan).
  std::vector<SimulatedDroplet> created() const;
  int peak_machines() const;
  // Unconnected TCP socket that reaches the machine at `address` (see MachineRoute::open_socket).
  int open_socket(const std::string& address, std::string& error) const;
  static std::string cloud_entry(const std::string& root_dir) { return "RUNARA_SIM_DIR=" + root_dir; }

 private:
  std::string allocate_address(std::int64_t droplet_id);
  void on_created(const SimulatedDroplet& droplet);
  void on_deleted(std::int64_t droplet_id);
  void on_network_changed(const SimulatedNetwork& network);

  SimCloudConfig config_;
  std::string token_, user_;
  std::unique_ptr<SimSweeper> sweeper_;
  mutable std::mutex mu_;
  std::map<std::int64_t, std::string> addresses_;  // droplet id -> 127.x.y.z
  std::map<std::int64_t, std::unique_ptr<SimMachine>> machines_;
  std::map<std::string, int> ports_;  // address -> its sshd's port
  std::vector<SimulatedDroplet> created_;
  int peak_ = 0;
  std::unique_ptr<FakeDigitalOcean> api_;
};

}  // namespace runara::sim
