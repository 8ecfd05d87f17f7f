// The droplets of one run: creating them within budget, waiting for them, destroying them,
// and — whatever happens to the script — tearing all of them down at the end.
//
// Every create is written to the ledger before the request is sent; a guardian process is
// started before the first one, so that even a SIGKILL of the runtime leaves nothing billing.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <uv.h>

#include "cloud/budget.hpp"
#include "cloud/do_client.hpp"
#include "cloud/guardian.hpp"
#include "cloud/ledger.hpp"
#include "cloud/network_resources.hpp"
#include "cloud/run_cleanup.hpp"
#include "base/delayed_calls.hpp"
#include "base/result.hpp"
#include "curl/http_client.hpp"
#include "runara/runtime.hpp"

namespace runara {

struct Machine {
  std::int64_t id = 0;
  std::string name, status, ip, private_ip, size, region;
  double price_hourly = 0;
  double created_at = 0;    // monotonic seconds
  double destroyed_at = 0;  // monotonic seconds; 0 while alive
  bool destroy_asked = false;  // destroy() was called: the run is done with it, whatever the API says
  bool run_key = false;     // created with the run's own SSH key (no ssh_keys given)
  nlohmann::json raw;       // the API's latest view
  double cost() const;      // accrued dollars
};

struct CreateRequest {
  std::string name, size, image, region, user_data;
  std::vector<std::string> ssh_keys, tags;
  std::string vpc_uuid;  // "" : the region's default VPC
  bool wait = true;
  double timeout_s = 900;
  bool run_key = false;  // set by the fleet: ssh_keys holds the run's own key
};

class DropletFleet {
 public:
  using Log = std::function<void(const std::string&)>;
  using MachineDone = std::function<void(Result<Machine>)>;
  using JsonDone = std::function<void(Result<nlohmann::json>)>;

  // `remaining_s` tells how long the run may still last (for the budget).
  DropletFleet(uv_loop_t* loop, std::string run_id, CloudOptions options, Log log, Log progress,
               std::function<double()> remaining_s);
  ~DropletFleet();

  // Fails with a clear message when the token is missing or the API base is invalid.
  Status check_ready();
  std::string readiness();  // check_ready's message, "" when ready
  const std::string& token() const { return token_; }

  void create(CreateRequest request, MachineDone done);
  void refresh(std::int64_t id, MachineDone done);
  void destroy(std::int64_t id, MachineDone done);
  void sizes(JsonDone done);    // the /v2/sizes catalogue (fetched once per run)
  // The run's VPC and firewall (network_resources.hpp), and the worst case of `count` more
  // machines of `size` (offered in `region`, unless "") against --budget and --max-droplets (the
  // create's refusal if it does not fit).
  void vpc(VpcRequest request, std::function<void(Result<VpcInfo>)> done);
  void firewall(FirewallRequest request, std::function<void(Result<FirewallInfo>)> done);
  void check(const std::string& size, const std::string& region, int count, std::function<void(Status)> done);
  void account(JsonDone done);
  const Machine* find(std::int64_t id) const;
  // The run's own SSH private key (OpenSSH format), "" until a create made it. A secret.
  const std::string& run_private_key() const { return run_key_private_; }
  const std::string& run_private_key_path() const { return run_key_path_; }
  // Trust on first use: records a machine's SSH host key fingerprint in the ledger.
  void pin_host_key(const std::string& machine_name, const std::string& fingerprint);
  std::vector<const Machine*> machines() const;

  // Told each create as it is sent and each droplet once it is gone (optional): the run's
  // Events::activity, so a host learns what was rented from runara, not from run.log.
  std::function<void(const Activity&)> on_activity;

  void teardown(std::function<void(Status)> done);
  std::string pending() const;

 private:
  struct Creation;
  void with_sizes(std::function<void(std::string)> then);
  void with_account(std::function<void(std::string)> then);
  void with_run_key(std::function<void(std::string)> then);  // run_key.cpp
  void register_run_key(std::function<void(std::string)> finish);
  void adopt_run_key(const nlohmann::json& key, std::function<void(std::string)> finish);
  void start_create(CreateRequest request, const std::string& sizes_error, MachineDone done);
  std::string validate_names(const CreateRequest& request) const;  // before anything is sent
  std::string validate(const CreateRequest& request, double& price);
  std::string price_of(const std::string& size, double& price) const;
  bool sells(const std::string& size) const;  // in /v2/sizes, or priced with --assume-price
  std::vector<RunningMachine> running_machines() const;
  std::string check_vpc(const CreateRequest& request) const;
  NetworkResources& network();
  std::string precheck(const CreateRequest& request, const std::string& sizes_error, double& price);
  void send_create(std::shared_ptr<Creation> creation);
  void reconcile(std::shared_ptr<Creation> creation, std::string why);
  void adopt(std::shared_ptr<Creation> creation, const nlohmann::json& droplet);
  void wait_active(std::shared_ptr<Creation> creation);
  void update(Machine& machine, const nlohmann::json& droplet);
  void report_costs();
  void machine_gone(const std::string& name);  // on_activity's machine_gone
  void settle_check();
  Status ensure_guardian();
  // Unix seconds by which the run is over, teardown included: the guardian's deadline and the
  // droplets' deadline tag (deadline_tag.hpp). now + remaining_s_ only moves earlier.
  double deadline_unix() const;
  std::string tag() const { return "runara:run-" + run_id_; }
  static constexpr double kInProcessCleanupS = 240;  // below the runtime's 300 s teardown budget
  // No answer at all this long (longer than any single retry wait): hand over to the guardian.
  static constexpr double kUnreachableS = 45;

  uv_loop_t* loop_;
  std::string run_id_;
  CloudOptions options_;
  Log log_, progress_;
  std::function<double()> remaining_s_;
  std::string api_base_, token_, token_source_, state_dir_;
  bool token_how_to_given_ = false;  // a missing token's how-to went into one error already
  std::unique_ptr<HttpClient> http_;
  std::unique_ptr<DoClient> client_;
  std::unique_ptr<Ledger> ledger_;
  std::unique_ptr<Guardian> guardian_;
  std::unique_ptr<RunCleanup> cleanup_;
  std::unique_ptr<NetworkResources> network_;
  std::optional<nlohmann::json> sizes_;
  std::vector<std::function<void(std::string)>> sizes_waiters_;
  std::string account_uuid_;  // the token's account, known before the first create
  std::vector<std::function<void(std::string)>> account_waiters_;
  std::string run_key_name_, run_key_private_, run_key_path_, run_key_fingerprint_, run_key_public_;
  std::int64_t run_key_id_ = 0;  // the registered key's id at the API (0: none yet)
  std::vector<std::function<void(std::string)>> run_key_waiters_;
  std::map<std::int64_t, Machine> machines_;
  int in_flight_creates_ = 0;
  double in_flight_price_ = 0;  // $/h of the creates in flight
  int counter_ = 0;
  bool stopping_ = false;
  std::function<void()> on_creates_settled_;
  DelayedCalls delayed_;
};

// Default state folder: $RUNARA_STATE_DIR, else ~/.local/state/runara.
std::string default_state_dir();

}  // namespace runara
