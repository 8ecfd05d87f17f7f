// DropletFleet's per-run SSH key: made in-process, written 0600 into the state folder,
// recorded in the ledger BEFORE it is registered (POST /v2/account/keys), passed to every
// create without ssh_keys, and deleted by the run cleanup (key_cleanup.hpp) like a droplet.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cloud/droplet_fleet.hpp"
#include "cloud/ownership.hpp"
#include "cloud/ssh_keypair.hpp"

namespace runara {

namespace {

// state_dir/keys/<run id>/id_ed25519, folders 0700, the file 0600 and new (O_EXCL: never
// through a planted file or link).
std::string write_private_key(const std::string& state_dir, const std::string& run_id, const std::string& pem,
                              std::string& error) {
  std::string dir = state_dir + "/keys";
  for (const std::string& d : {dir, dir + "/" + run_id}) {
    if (::mkdir(d.c_str(), 0700) != 0 && errno != EEXIST) {
      error = "cannot create " + d + ": " + std::strerror(errno);
      return {};
    }
  }
  const std::string path = dir + "/" + run_id + "/id_ed25519";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    error = "cannot create " + path + ": " + std::strerror(errno);
    return {};
  }
  const bool ok = ::write(fd, pem.data(), pem.size()) == static_cast<ssize_t>(pem.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) {
    ::unlink(path.c_str());
    error = "cannot write " + path;
    return {};
  }
  return path;
}

}  // namespace

void DropletFleet::with_run_key(std::function<void(std::string)> then) {
  if (run_key_id_ != 0) return then({});
  run_key_waiters_.push_back(std::move(then));
  if (run_key_waiters_.size() > 1) return;
  auto finish = [this](std::string error) {
    auto waiters = std::move(run_key_waiters_);
    run_key_waiters_.clear();
    for (auto& waiter : waiters) waiter(error);
  };
  if (stopping_) return finish("the run is ending");
  // The guardian must be watching before anything is registered: after a SIGKILL it deletes the key.
  if (Status guardian = ensure_guardian(); !guardian) {
    return finish(guardian.error() + "; no key is registered without a guardian");
  }
  if (run_key_private_.empty()) {
    try {
      run_key_name_ = "runara-" + run_id_;
      auto made = make_ed25519_keypair(run_key_name_);
      if (!made) return finish(made.error());
      SshKeyPair pair = std::move(*made);
      std::string error;
      run_key_path_ = write_private_key(state_dir_, run_id_, pair.private_openssh, error);
      if (!error.empty()) return finish(error);
      run_key_private_ = std::move(pair.private_openssh);
      run_key_public_ = pair.public_line;
      run_key_fingerprint_ = pair.md5_fingerprint;
      ledger_->record_key_intent({run_id_, run_key_name_, run_key_fingerprint_, api_base_, account_uuid_, run_key_path_,
                                  std::nullopt, ResourceState::intent, 0, 0});
    } catch (const std::exception& e) {
      return finish(e.what());
    }
  }
  register_run_key(finish);
}

void DropletFleet::register_run_key(std::function<void(std::string)> finish) {
  log_("registering the run's SSH key " + run_key_name_ + " (" + run_key_fingerprint_ + ")");
  const nlohmann::json body = {{"name", run_key_name_}, {"public_key", run_key_public_}};
  client_->create_key(body, [this, finish](DoResult result) {
    if (result.ok) return adopt_run_key(result.body.value("ssh_key", nlohmann::json::object()), finish);
    // No answer, a 5xx, or 422 "already in use" after a POST that did land: the fingerprint tells.
    client_->get_key(run_key_fingerprint_, [this, finish, post_error = result.error](DoResult found) {
      if (found.ok) return adopt_run_key(found.body.value("ssh_key", nlohmann::json::object()), finish);
      if (found.status == 404) ledger_->mark_key(run_key_name_, ResourceState::create_failed);
      finish(post_error);
    });
  });
}

void DropletFleet::adopt_run_key(const nlohmann::json& key, std::function<void(std::string)> finish) {
  if (Status owned = check_key_owned(key, run_key_name_, run_key_fingerprint_); !owned) {
    return finish("the API's answer is not the key the run registered: " + owned.error());
  }
  const std::int64_t id = key.value("id", std::int64_t{0});
  if (id <= 0) return finish("the API answered the key without an id");
  run_key_id_ = id;
  ledger_->record_key_id(run_key_name_, id);
  finish({});
}

void DropletFleet::pin_host_key(const std::string& machine_name, const std::string& fingerprint) {
  if (!ledger_) return;
  try {
    ledger_->pin_host_key(machine_name, fingerprint);
  } catch (const std::exception& e) {
    log_(std::string("could not record the host key of ") + machine_name + " in the ledger: " + e.what());
  }
}

}  // namespace runara
