// One simulated Droplet: a real OpenSSH sshd (Debian's /usr/sbin/sshd) listening on a loopback
// address of its own (inside a box of its own unless run unisolated: see sim_isolation.hpp and
// sim_machine_init.hpp), with a folder of its own (home, state, host key, authorized_keys), whose
// sessions run this machine's commands with the shim folders first on PATH (sim/machine/bin:
// docker, vllm, cloud-init; plus sim/machine/amd (amd-smi, rocm-smi) on MI300X sizes or
// sim/machine/nvidia (nvidia-smi) on H100 sizes, never both, behaving like the real machine's) and
// the environment the shims read (sim/machine/README.md). Logged into as `runara` when boxed, as
// the user running runara when not.
//
// Contract: start() and the destructor may run on any one thread at a time (the fake API's).
// The destructor SIGKILLs sshd and every process the machine started (see sim_sweeper.hpp) and
// waits for sshd; the folder stays until the simulated cloud removes its root.
#pragma once

#include <sys/types.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sim/box_limits.hpp"
#include "sim/sim_isolation.hpp"

namespace runara::sim {

struct SimMachineSpec {
  std::string dir;                // created here; must not exist yet
  std::string address;            // 127.x.y.z
  std::string size_slug;          // decides the GPU the shims pretend to have
  std::vector<std::string> public_keys;
  std::string runara_executable;  // shims start `runara serve-fake-llm`
  std::string shims_dir;          // sim/machine (bin/, amd/, nvidia/ and data/)
  std::string cloud_entry;        // "RUNARA_SIM_DIR=<root>": the whole cloud's process marker
  double time_scale = 1;          // simulated delays are multiplied by this
  std::string faults;             // RUNARA_SIM_FAULTS for the shims ("" none)
  // true: the machine runs boxed by bubblewrap (sim_isolation.hpp): its own files, processes and
  // network. false (--sim-unisolated): its commands run on this computer as this user.
  bool isolated = true;
  // Its VPC (sim_fabric.hpp): the fabric folder mounted into its box (read-write, at the same
  // path), its private address there and the VPC's id; empty when the Droplet has none.
  std::string fabric_dir, private_ip, vpc_uuid;
  std::string join_timeout_s;  // RUNARA_SIM_JOIN_TIMEOUT_S for the shims ("" their own defaults)
  BoxLimits limits;            // isolated: what its box may take (box_limits.hpp)
};

class SimMachine {
 public:
  // Throws std::runtime_error (with sshd's log when it exits at once).
  explicit SimMachine(SimMachineSpec spec);
  ~SimMachine();
  SimMachine(const SimMachine&) = delete;
  SimMachine& operator=(const SimMachine&) = delete;

  int ssh_port() const { return port_; }
  const std::string& address() const { return spec_.address; }
  // Isolated machines: an unconnected TCP socket made inside the machine's network (at most 2 s),
  // -1 with `error` set when the machine does not answer. Unisolated ones: a plain socket.
  // Thread-safe.
  int open_socket(std::string& error);

 private:
  void write_config();
  std::vector<std::string> environment() const;
  void spawn_sshd();
  std::vector<std::string> command_line() const;
  IsolationLayout layout() const;
  void wait_until_listening();

  SimMachineSpec spec_;
  int port_ = 0;
  pid_t pid_ = -1;      // sshd, or bubblewrap holding the isolated machine
  int channel_ = -1;    // isolated: runara's end of the socket the machine's init answers on
  std::mutex channel_mu_;
};

// GPU model and count the shims simulate for a size slug: {"mi300x", 8} for gpu-mi300x8-1536gb,
// {"h100", 1} for gpu-h100x1-80gb, {"none", 0} for anything else.
std::pair<std::string, int> simulated_gpu(const std::string& size_slug);

// A port free on `address` now (bound and released).
int free_port_on(const std::string& address);

}  // namespace runara::sim
