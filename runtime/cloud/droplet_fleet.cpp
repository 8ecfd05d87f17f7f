#include "cloud/droplet_fleet.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>

#include "cloud/cost_report.hpp"
#include "cloud/deadline_tag.hpp"
#include "cloud/droplet_names.hpp"
#include "cloud/unknown_size.hpp"
#include "base/run_output.hpp"
#include "base/clock.hpp"

namespace runara {

namespace {


std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

std::string duration_text(double seconds) {
  char text[32];
  if (seconds < 10) std::snprintf(text, sizeof text, "%.1f s", seconds);
  else if (seconds < 120) std::snprintf(text, sizeof text, "%.0f s", seconds);
  else std::snprintf(text, sizeof text, "%.1f min", seconds / 60);
  return text;
}

// 8-GPU sizes: the ones multi-node GPU clusters are made of, which an account must have enabled.
bool multi_node_gpu_size(const std::string& size) {
  return size.rfind("gpu-", 0) == 0 && size.find("x8-") != std::string::npos;
}

// The first IPv4 address of a type ("public" or "private") in a droplet's networks.
std::string ipv4(const nlohmann::json& droplet, const std::string& type) {
  const auto networks = droplet.value("networks", nlohmann::json::object());
  for (const auto& net : networks.value("v4", nlohmann::json::array())) {
    if (net.value("type", "") == type) return net.value("ip_address", "");
  }
  return {};
}

}  // namespace

double Machine::cost() const {
  if (created_at == 0) return 0;
  const double end = destroyed_at != 0 ? destroyed_at : monotonic_seconds();
  return price_hourly * std::max(0.0, end - created_at) / 3600.0;
}

std::string default_state_dir() {
  if (const char* dir = std::getenv("RUNARA_STATE_DIR"); dir && *dir) return dir;
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.local/state/runara";
}

struct DropletFleet::Creation {
  CreateRequest request;
  std::string name;
  double price = 0;
  double started = 0;
  std::int64_t id = 0;
  MachineDone done;
  int reconcile_tries = 0;
};

DropletFleet::DropletFleet(uv_loop_t* loop, std::string run_id, CloudOptions options, Log log, Log progress,
                           std::function<double()> remaining_s)
    : loop_(loop), run_id_(std::move(run_id)), options_(std::move(options)), log_(std::move(log)),
      progress_(std::move(progress)), remaining_s_(std::move(remaining_s)), delayed_(loop) {
  api_base_ = !options_.api_base.empty() ? options_.api_base
                                         : env_or("RUNARA_DO_API_URL", DoClient::kDefaultApiBase);
  token_ = options_.token;
  if (token_.empty()) token_ = load_do_token(&token_source_, options_.context).value_or("");
  state_dir_ = !options_.state_dir.empty() ? options_.state_dir : default_state_dir();
  // Polling faster than the real API allows is only for the fake one (tests, simulations).
  if (const char* poll = std::getenv("RUNARA_POLL_S"); poll && std::atof(poll) > 0) options_.poll_s = std::atof(poll);
}

DropletFleet::~DropletFleet() {
  delayed_.cancel_all();
  cleanup_.reset();
  network_.reset();
  client_.reset();
  if (http_) http_->close({});
  http_.reset();
}

// No token is the user's setup (Error::setup): said as a usage error, with how to give one.
Status DropletFleet::check_ready() {
  std::string problem = readiness();
  if (problem.empty()) return {};
  return Error{std::move(problem), token_.empty()};
}

bool DropletFleet::sells(const std::string& size) const {
  if (options_.assumed_prices.count(size)) return true;
  for (const auto& s : sizes_ ? *sizes_ : nlohmann::json::array())
    if (s.value("slug", "") == size) return true;
  return false;
}

std::string DropletFleet::readiness() {
  if (token_.empty()) {
    // The how-to is given once per run: a fleet created from several tasks would otherwise
    // repeat it in every task's failure and again in the final error.
    const std::string missing = options_.context.empty()
                                    ? std::string("no DigitalOcean token")
                                    : "no DigitalOcean token for doctl context '" + options_.context + "'";
    if (token_how_to_given_) return missing + " (how to give one: see this run's first droplet error)";
    token_how_to_given_ = true;
    if (!options_.context.empty()) {
      return missing + " (--context): its config.yaml has no such auth context (`doctl auth list` shows them)";
    }
    return missing + ": set DIGITALOCEAN_TOKEN (export DIGITALOCEAN_TOKEN=dop_v1_...; or DIGITALOCEAN_ACCESS_TOKEN, or "
                     "log in with `doctl auth init`), or rehearse for free on the simulated cloud with --sim "
                     "(runara --sim SCRIPT: no account, no money)";
  }
  if (api_base_.rfind("http://", 0) != 0 && api_base_.rfind("https://", 0) != 0) {
    return "RUNARA_DO_API_URL must start with http:// or https://, got '" + api_base_ + "'";
  }
  if (!client_) {
    http_ = std::make_unique<HttpClient>(loop_);
    DoClientOptions client_options;
    client_options.log = [this](const std::string& line) { log_(line); };
    client_ = std::make_unique<DoClient>(*http_, api_base_, token_, client_options);
    try {
      ledger_ = std::make_unique<Ledger>(state_dir_);
    } catch (const std::exception& e) {
      return std::string("cannot open the ledger in ") + state_dir_ + ": " + e.what();
    }
  }
  return {};
}

void DropletFleet::with_sizes(std::function<void(std::string)> then) {
  if (sizes_) return then({});
  sizes_waiters_.push_back(std::move(then));
  if (sizes_waiters_.size() > 1) return;
  with_account([](std::string) {});  // fetched alongside, so a create adds no request of its own
  client_->list_sizes([this](DoResult result) {
    if (result.ok) sizes_ = result.body.value("sizes", nlohmann::json::array());
    auto waiters = std::move(sizes_waiters_);
    sizes_waiters_.clear();
    for (auto& waiter : waiters) waiter(result.ok ? "" : result.error);
  });
}

// The ledger records each droplet's account, so that `runara reap` with another token never
// acts on it; no create is sent without knowing it.
void DropletFleet::with_account(std::function<void(std::string)> then) {
  if (!account_uuid_.empty()) return then({});
  account_waiters_.push_back(std::move(then));
  if (account_waiters_.size() > 1) return;
  client_->get_account([this](DoResult result) {
    std::string error = result.ok ? "" : result.error;
    if (result.ok) account_uuid_ = result.body.value("account", nlohmann::json::object()).value("uuid", "");
    if (result.ok && account_uuid_.empty()) error = "GET /v2/account answered without an account uuid";
    auto waiters = std::move(account_waiters_);
    account_waiters_.clear();
    for (auto& waiter : waiters) waiter(error);
  });
}

NetworkResources& DropletFleet::network() {
  if (!network_) {
    NetworkResources::Setup setup;
    setup.loop = loop_;
    setup.client = client_.get();
    setup.ledger = ledger_.get();
    setup.run_id = run_id_;
    setup.api_base = api_base_;
    setup.poll_s = options_.poll_s;
    setup.ensure_guardian = [this] { return ensure_guardian(); };
    setup.log = log_;
    setup.settled = [this] { settle_check(); };
    network_ = std::make_unique<NetworkResources>(std::move(setup));
  }
  return *network_;
}

void DropletFleet::vpc(VpcRequest request, std::function<void(Result<VpcInfo>)> done) {
  if (stopping_) return done(Error{"the run is ending"});
  if (Status ready = check_ready(); !ready) return done(ready.failure());
  with_account([this, request = std::move(request), done](std::string error) mutable {
    if (!error.empty()) return done(Error{"cannot read the account behind the token (GET /v2/account): " + error});
    if (stopping_) return done(Error{"the run is ending"});
    network().vpc(std::move(request), account_uuid_, std::move(done));
  });
}

void DropletFleet::firewall(FirewallRequest request, std::function<void(Result<FirewallInfo>)> done) {
  if (stopping_) return done(Error{"the run is ending"});
  if (Status ready = check_ready(); !ready) return done(ready.failure());
  with_account([this, request = std::move(request), done](std::string error) mutable {
    if (!error.empty()) return done(Error{"cannot read the account behind the token (GET /v2/account): " + error});
    if (stopping_) return done(Error{"the run is ending"});
    network().firewall(std::move(request), account_uuid_, std::move(done));
  });
}

// As many more machines as asked, one after another through the create's own budget check.
void DropletFleet::check(const std::string& size, const std::string& region, int count, std::function<void(Status)> done) {
  if (Status ready = check_ready(); !ready) return done(ready.failure());
  with_sizes([this, size, region, count, done](std::string sizes_error) {
    if (!sizes_error.empty() && !options_.assumed_prices.count(size)) {
      return done(Error{"cannot check the size against /v2/sizes: " + sizes_error});
    }
    double price = 0;
    CreateRequest where;  // the create's own checks of the size (and its region, when given)
    where.size = size;
    where.region = region;
    const std::string problem = region.empty() ? price_of(size, price) : validate(where, price);
    if (!problem.empty()) return done(Error{problem, !sells(size)});
    std::vector<RunningMachine> running = running_machines();
    BudgetLimits limits{options_.budget_usd, options_.max_droplets, options_.assumed_prices};
    for (int i = 1; i <= count; ++i) {
      if (Status fits = check_budget(limits, size, price, remaining_s_(), running); !fits) {
        return done(Error{std::to_string(count) + " x " + size + " do not fit: at machine " + std::to_string(i) +
                          " of " + std::to_string(count) + ", " + fits.error()});
      }
      running.push_back({price, 0});
    }
    done({});
  });
}

std::string DropletFleet::price_of(const std::string& size, double& price) const {
  if (auto assumed = options_.assumed_prices.find(size); assumed != options_.assumed_prices.end()) {
    price = assumed->second;
    return {};
  }
  for (const auto& s : sizes_ ? *sizes_ : nlohmann::json::array()) {
    if (s.value("slug", "") != size) continue;
    price = s.value("price_hourly", 0.0);
    return {};
  }
  return unknown_size_message(size, sizes_ ? *sizes_ : nlohmann::json::array());
}

// A droplet joins a VPC this run has from droplet.vpc (its own, or an account VPC the user
// granted): any other id could be an account VPC whose machines trust what is in it. And it joins
// one of its own region.
std::string DropletFleet::check_vpc(const CreateRequest& request) const {
  if (request.vpc_uuid.empty()) return {};
  const std::string region = network_ ? network_->vpc_region(request.vpc_uuid) : std::string();
  if (region.empty()) {
    return "droplet.create: option 'vpc': " + request.vpc_uuid + " is not a VPC of this run: pass what droplet.vpc{} "
           "returned (a VPC of the run's own, or an account VPC granted with --allow-vpc NAME and used with "
           "existing = NAME)";
  }
  if (region == request.region) return {};
  return "droplet.create: the VPC " + request.vpc_uuid + " is in region '" + region + "', not '" + request.region +
         "': a droplet joins a VPC of its own region";
}

std::vector<RunningMachine> DropletFleet::running_machines() const {
  std::vector<RunningMachine> running;
  for (const auto& [id, m] : machines_) {
    if (m.destroyed_at == 0) running.push_back({m.price_hourly, m.cost()});
  }
  for (int i = 0; i < in_flight_creates_; ++i) {
    running.push_back({i == 0 ? in_flight_price_ : 0, 0});  // counts each, prices them all once
  }
  return running;
}

void DropletFleet::sizes(JsonDone done) {
  if (Status ready = check_ready(); !ready) return done(ready.failure());
  with_sizes([this, done](std::string error) {
    if (!error.empty()) return done(Error{error});
    done(*sizes_);
  });
}

void DropletFleet::account(JsonDone done) {
  if (Status ready = check_ready(); !ready) return done(ready.failure());
  client_->get_account([done](DoResult result) {
    if (!result.ok) return done(Error{result.error});
    done(result.body.value("account", nlohmann::json::object()));
  });
}

std::string DropletFleet::validate_names(const CreateRequest& request) const {
  // runara appends "-<run id>-<n>" to the name; the whole must fit DigitalOcean's limit.
  const std::size_t suffix = 2 + run_id_.size() + 10;
  if (!request.name.empty()) {
    if (Status valid = check_droplet_name(request.name, kMaxDropletNameLength - suffix); !valid) {
      return "droplet.create: " + valid.error();
    }
  }
  for (const auto& tag : request.tags) {
    if (Status valid = check_tag(tag); !valid) return "droplet.create: option 'tags': " + valid.error();
  }
  return {};
}

std::string DropletFleet::validate(const CreateRequest& request, double& price) {
  if (auto assumed = options_.assumed_prices.find(request.size); assumed != options_.assumed_prices.end()) {
    price = assumed->second;
    return {};
  }
  for (const auto& size : *sizes_) {
    if (size.value("slug", "") != request.size) continue;
    if (!size.value("available", true)) return "size '" + request.size + "' is not available right now";
    const auto regions = size.value("regions", nlohmann::json::array());
    if (std::find(regions.begin(), regions.end(), request.region) == regions.end()) {
      std::string list;
      for (const auto& r : regions) list += (list.empty() ? "" : ", ") + r.get<std::string>();
      return "size '" + request.size + "' is not offered in region '" + request.region + "' (it is in: " +
             (list.empty() ? "none" : list) + ")";
    }
    price = size.value("price_hourly", 0.0);
    return {};
  }
  return unknown_size_message(request.size, *sizes_);
}

double DropletFleet::deadline_unix() const {
  return static_cast<double>(std::time(nullptr)) + remaining_s_() + kTeardownAllowanceS;
}

Status DropletFleet::ensure_guardian() {
  if (guardian_) return {};
  try {
    RunRecord run;
    run.run_id = run_id_;
    run.pid = getpid();
    run.deadline = static_cast<double>(std::time(nullptr)) + remaining_s_();
    ledger_->begin_run(run);
  } catch (const std::exception& e) {
    return Error{std::string("cannot record the run in the ledger: ") + e.what()};
  }
  GuardianSpec spec{options_.guardian_executable, run_id_, state_dir_, api_base_, token_, deadline_unix()};
  auto started = Guardian::start(spec);
  if (!started) return Error{started.error()};
  guardian_ = std::move(*started);
  return {};
}

void DropletFleet::create(CreateRequest request, MachineDone done) {
  if (stopping_) return done(Error{"the run is ending"});
  if (std::string invalid = validate_names(request); !invalid.empty()) return done(Error{invalid});
  if (Status ready = check_ready(); !ready) return done(ready.failure());
  with_sizes([this, request = std::move(request), done](std::string sizes_error) mutable {
    with_account([this, request = std::move(request), done, sizes_error](std::string error) mutable {
      if (!error.empty() && !stopping_) {
        return done(Error{"cannot read the account behind the token (GET /v2/account): " + error});
      }
      if (!request.ssh_keys.empty() || stopping_) return start_create(std::move(request), sizes_error, std::move(done));
      double price = 0;
      if (std::string refusal = precheck(request, sizes_error, price); !refusal.empty()) {
        return done(Error{refusal, sizes_error.empty() && !stopping_ && !sells(request.size)});  // an unknown size: a setup mistake
      }
      // No key of the script's own: the machine gets the run's key, registered once per run.
      with_run_key([this, request = std::move(request), done, sizes_error](std::string key_error) mutable {
        if (!key_error.empty()) return done(Error{"cannot register the run's SSH key: " + key_error});
        request.ssh_keys = {std::to_string(run_key_id_)};
        request.run_key = true;
        start_create(std::move(request), sizes_error, std::move(done));
      });
    });
  });
}

// Size, region and budget: checked before anything is sent (the run key too) and again right
// before the POST.
std::string DropletFleet::precheck(const CreateRequest& request, const std::string& sizes_error, double& price) {
  if (stopping_) return "the run is ending";
  if (!sizes_error.empty() && !options_.assumed_prices.count(request.size)) {
    return "cannot check the size against /v2/sizes: " + sizes_error;
  }
  if (!sizes_) sizes_ = nlohmann::json::array();
  if (std::string invalid = validate(request, price); !invalid.empty()) return invalid;
  if (std::string wrong = check_vpc(request); !wrong.empty()) return wrong;
  BudgetLimits limits{options_.budget_usd, options_.max_droplets, options_.assumed_prices};
  return check_budget(limits, request.size, price, remaining_s_(), running_machines()).error();
}

// From the checks to the POST without a wait: the budget sees every create already in flight.
void DropletFleet::start_create(CreateRequest request, const std::string& sizes_error, MachineDone done) {
  // The run may have ended while the catalogue was fetched: teardown has started (or is
  // over), so nothing may be created any more.
  auto creation = std::make_shared<Creation>();
  if (std::string refusal = precheck(request, sizes_error, creation->price); !refusal.empty()) {
    return done(Error{refusal, sizes_error.empty() && !stopping_ && !sells(request.size)});
  }
  if (Status guardian = ensure_guardian(); !guardian) {
    return done(Error{guardian.error() + "; no machine is created without a guardian"});
  }
  creation->name = (request.name.empty() ? std::string("runara") : request.name) + "-" + run_id_ + "-" +
                   std::to_string(++counter_);
  creation->request = std::move(request);
  creation->done = std::move(done);
  creation->started = monotonic_seconds();
  try {
    ledger_->record_intent({run_id_, creation->name, tag(), api_base_, account_uuid_, creation->price,
                            creation->request.size, creation->request.region});
  } catch (const std::exception& e) {
    return creation->done(Error{std::string("cannot record the create in the ledger: ") + e.what()});
  }
  send_create(creation);
}

void DropletFleet::send_create(std::shared_ptr<Creation> creation) {
  const auto& r = creation->request;
  nlohmann::json body = {{"name", creation->name}, {"size", r.size}, {"image", r.image}, {"region", r.region}};
  // The deadline travels with the droplet: `runara reap --expired` on any machine can tell the
  // run is over when this computer and its guardian are gone (deadline_tag.hpp).
  nlohmann::json tags = nlohmann::json::array({"runara", tag(), deadline_tag(deadline_unix())});
  for (const auto& t : r.tags) tags.push_back(t);
  body["tags"] = tags;
  if (!r.ssh_keys.empty()) body["ssh_keys"] = r.ssh_keys;
  if (!r.user_data.empty()) body["user_data"] = r.user_data;
  if (!r.vpc_uuid.empty()) body["vpc_uuid"] = r.vpc_uuid;
  ++in_flight_creates_;
  in_flight_price_ += creation->price;
  log_("creating droplet " + creation->name + " (" + r.size + " in " + r.region + ", image " + r.image + ", " +
       format_dollars(creation->price) + "/h)");
  if (on_activity) {
    Activity created;
    created.kind = Activity::Kind::machine_created;
    created.machine = creation->name;
    created.size = r.size;
    created.region = r.region;
    created.image = r.image;
    created.number = creation->price;
    on_activity(created);
  }
  client_->create_droplet(body, [this, creation](DoResult result) {
    in_flight_price_ -= creation->price;
    if (result.ok) {
      --in_flight_creates_;
      return adopt(creation, result.body.value("droplet", nlohmann::json::object()));
    }
    if (result.ambiguous) return reconcile(creation, result.error);
    --in_flight_creates_;
    ledger_->mark_create_failed(creation->name);
    std::string hint;
    if (result.status == 422 && multi_node_gpu_size(creation->request.size)) {
      hint = ". multi-node GPU droplets must be enabled on the account: 8-GPU sizes (gpu-*x8-*) such as " +
             creation->request.size + " are refused until DigitalOcean enables them for it (ask DigitalOcean support)";
    }
    creation->done(Error{"DigitalOcean refused to create " + creation->name + ": " + result.error + hint});
    settle_check();
  });
}

// The create may or may not have happened: the run's tag tells.
void DropletFleet::reconcile(std::shared_ptr<Creation> creation, std::string why) {
  log_("the create of " + creation->name + " ended ambiguously (" + why + "); looking for it by tag");
  client_->list_droplets(tag(), [this, creation, why](DoResult result) {
    if (result.ok) {
      for (const auto& droplet : result.body.value("droplets", nlohmann::json::array())) {
        if (droplet.value("name", "") == creation->name) {
          --in_flight_creates_;
          return adopt(creation, droplet);
        }
      }
    }
    if (++creation->reconcile_tries < 5) {
      return delayed_.after(options_.poll_s, [this, creation, why] { reconcile(creation, why); });
    }
    --in_flight_creates_;
    // Not marked create_failed: teardown and the guardian keep looking for it by tag.
    creation->done(Error{"the create of " + creation->name + " failed (" + why +
                   ") and the droplet does not show up under the run's tag"});
    settle_check();
  });
}

// Test-only fault switch: RUNARA_FAULT=crash-after-create makes the runtime die the hard way
// right after a create succeeded, so tests can prove the guardian cleans up after a crash.
static void crash_if_asked(const char* moment) {
  const char* fault = std::getenv("RUNARA_FAULT");
  if (fault && std::string(fault) == moment) std::abort();
}

void DropletFleet::adopt(std::shared_ptr<Creation> creation, const nlohmann::json& droplet) {
  creation->id = droplet.value("id", std::int64_t{0});
  ledger_->record_id(creation->name, creation->id);
  crash_if_asked("crash-after-create");
  Machine& machine = machines_[creation->id];
  machine.id = creation->id;
  machine.run_key = creation->request.run_key;
  machine.price_hourly = creation->price;
  machine.created_at = monotonic_seconds();
  update(machine, droplet);
  settle_check();
  if (stopping_) return;
  if (!creation->request.wait) return creation->done(machine);
  wait_active(creation);
}

void DropletFleet::wait_active(std::shared_ptr<Creation> creation) {
  if (stopping_) return;
  Machine& machine = machines_[creation->id];
  const double waited = monotonic_seconds() - creation->started;
  if (machine.status == "active" && !machine.ip.empty()) {
    log_("droplet " + machine.name + " is active at " + machine.ip + " after " + duration_text(waited));
    return creation->done(machine);
  }
  if (waited > creation->request.timeout_s) {
    return creation->done(Error{"droplet " + machine.name + " did not become active within " +
                          duration_text(creation->request.timeout_s) + " (status '" + machine.status +
                          "'); it is destroyed at the end of the run, or now with :destroy()"});
  }
  progress_("droplet " + machine.name + ": " + machine.status + " (" + duration_text(waited) + ")");
  delayed_.after(options_.poll_s, [this, creation] {
    client_->get_droplet(creation->id, [this, creation](DoResult result) {
      Machine& m = machines_[creation->id];
      if (result.status == 404) {
        m.destroyed_at = monotonic_seconds();
        m.status = "gone";
        ledger_->mark_destroyed(api_base_, creation->id);
        return creation->done(Error{"droplet " + m.name + " disappeared after it was created (DigitalOcean removes GPU "
                              "droplets whose placement failed); try again or another region"});
      }
      if (result.ok) update(m, result.body.value("droplet", nlohmann::json::object()));
      wait_active(creation);
    });
  });
}

void DropletFleet::update(Machine& machine, const nlohmann::json& droplet) {
  machine.raw = droplet;
  machine.name = droplet.value("name", machine.name);
  machine.status = droplet.value("status", machine.status);
  machine.size = droplet.value("size_slug", machine.size);
  if (droplet.contains("region") && droplet["region"].is_object()) machine.region = droplet["region"].value("slug", "");
  machine.ip = ipv4(droplet, "public");
  machine.private_ip = ipv4(droplet, "private");
}

void DropletFleet::refresh(std::int64_t id, MachineDone done) {
  if (!machines_.count(id)) return done(Error{"droplet " + std::to_string(id) + " does not belong to this run"});
  client_->get_droplet(id, [this, id, done](DoResult result) {
    Machine& m = machines_[id];
    if (result.status == 404) {
      if (m.destroyed_at == 0) m.destroyed_at = monotonic_seconds();
      m.status = "gone";
      return done(m);
    }
    if (!result.ok) return done(Error{result.error});
    update(m, result.body.value("droplet", nlohmann::json::object()));
    done(m);
  });
}

void DropletFleet::destroy(std::int64_t id, MachineDone done) {
  if (!machines_.count(id)) return done(Error{"droplet " + std::to_string(id) + " does not belong to this run"});
  machines_[id].destroy_asked = true;
  client_->delete_droplet(id, [this, id, done](DoResult result) {
    if (!result.ok) return done(Error{"could not destroy droplet " + std::to_string(id) + ": " + result.error});
    ledger_->mark_destroying(api_base_, id);
    auto poll = std::make_shared<std::function<void()>>();
    *poll = [this, id, done, poll] {
      client_->get_droplet(id, [this, id, done, poll](DoResult r) {
        if (r.status == 404) {
          Machine& m = machines_[id];
          m.destroyed_at = monotonic_seconds();
          m.status = "gone";
          ledger_->mark_destroyed(api_base_, id);
          log_("droplet " + m.name + " destroyed after " + duration_text(m.destroyed_at - m.created_at) + ", " +
               format_cost(m.cost()));
          machine_gone(m.name);
          auto self = std::move(*poll);  // break the cycle
          return done(m);
        }
        delayed_.after(options_.poll_s, *poll);
      });
    };
    (*poll)();
  });
}

void DropletFleet::machine_gone(const std::string& name) {
  if (!on_activity) return;
  Activity gone;
  gone.kind = Activity::Kind::machine_gone;
  gone.machine = name;
  on_activity(gone);
}

const Machine* DropletFleet::find(std::int64_t id) const {
  auto it = machines_.find(id);
  return it == machines_.end() ? nullptr : &it->second;
}

std::vector<const Machine*> DropletFleet::machines() const {
  std::vector<const Machine*> out;
  for (const auto& [id, m] : machines_) out.push_back(&m);
  return out;
}

// Teardown waits for creates in flight; the last one to settle lets it go on.
void DropletFleet::settle_check() {
  if (in_flight_creates_ != 0 || (network_ && network_->in_flight() != 0) || !on_creates_settled_) return;
  auto settled = std::move(on_creates_settled_);  // it may set a new one while it runs
  on_creates_settled_ = nullptr;
  settled();
}

void DropletFleet::report_costs() {
  std::vector<std::pair<std::string, double>> parts;
  for (auto& [id, m] : machines_) {
    if (m.destroyed_at == 0) m.destroyed_at = monotonic_seconds();
    parts.emplace_back("droplet " + m.name + " (" + std::to_string(id) + ", " + m.size + "): lived " +
                           duration_text(m.destroyed_at - m.created_at), m.cost());
  }
  for (const auto& line : cost_report(parts)) log_(line);
}

void DropletFleet::teardown(std::function<void(Status)> done) {
  stopping_ = true;
  if (network_) network_->stop();
  // No guardian means no create was ever recorded: nothing of this run can be on the cloud.
  if (!client_ || !ledger_ || !guardian_) return done({});
  // Creates still in flight settle first (answer, error or reconciliation): a cancelled POST
  // could still land after the listing below and leave a machine behind.
  const int in_flight = in_flight_creates_ + (network_ ? network_->in_flight() : 0);
  if (in_flight > 0) {
    on_creates_settled_ = [this, done] { teardown(done); };
    log_("waiting for " + std::to_string(in_flight) + " create request(s) in flight");
    return;
  }
  for (const auto& entry : ledger_->pending(run_id_)) {
    if (entry.droplet_id) log_("destroying droplet " + entry.name + " (" + std::to_string(*entry.droplet_id) + ")");
  }
  for (const auto& r : ledger_->pending_resources(run_id_)) log_("deleting " + r.kind + " " + r.name + " after the droplets");
  CleanupOptions options;
  options.poll_s = options_.poll_s;
  // Give up in-process well before the runtime's own teardown budget, with a report naming
  // the machines; the guardian keeps trying after that.
  options.budget_s = kInProcessCleanupS;
  options.unreachable_s = kUnreachableS;
  options.account = account_uuid_;
  for (const auto& [id, machine] : machines_) options.own_creates.insert(id);
  cleanup_ = std::make_unique<RunCleanup>(loop_, *client_, *ledger_, run_id_, tag(), options, log_);
  cleanup_->on_gone = [this](const std::string& name) { machine_gone(name); };
  cleanup_->start([this, done](CleanupReport report) {
    for (const auto& d : report.destroyed) {
      const auto m = machines_.find(d.droplet_id);
      if (d.kind == "droplet" && m != machines_.end() && m->second.destroyed_at == 0) m->second.destroyed_at = monotonic_seconds();
    }
    report_costs();
    if (report.complete()) {
      ledger_->finish_run(run_id_, RunStatus::finished);
      guardian_.reset();  // the guardian sees a finished run and exits
      return done({});
    }
    std::string what;
    for (const auto& line : report.remaining) what += (what.empty() ? "" : ", ") + line;
    // The run stays "running" in the ledger: the guardian takes over when its pipe closes.
    guardian_.reset();
    done(Error{"could not confirm that these are destroyed: " + what + (report.error.empty() ? "" : " (" + report.error + ")") +
               ". The guardian keeps trying in the background; to finish by hand run: runara reap --run " + run_id_});
  });
}

std::string DropletFleet::pending() const {
  const int in_flight = in_flight_creates_ + (network_ ? network_->in_flight() : 0);
  if (in_flight > 0) return "waiting for " + std::to_string(in_flight) + " create request(s)";
  return cleanup_ ? cleanup_->pending() : "";
}

}  // namespace runara
