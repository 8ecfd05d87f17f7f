#include "ssh/host_key_policy.hpp"

#include "ssh/known_hosts.hpp"

namespace runara::ssh {

namespace {

// A granted host's key, judged against known_hosts; `refused` says why it was not trusted.
bool judge_known_host(RunSessions& run, MachineSession& s, const HostKeyRules& rules, const HostKey& key,
                      const std::string& id, const std::string& shown, std::string& refused, bool& unknown) {
  const auto& login = s.login();
  const std::string file = rules.known_hosts.empty() ? default_known_hosts() : rules.known_hosts;
  const auto check = check_known_host(s.ssh().raw(), file, login.host, login.port, key);
  if (check.verdict == KnownHost::Match) {
    run.pinned()[id] = key.fingerprint;
    return true;
  }
  const std::string lookup = login.port == 22 ? login.host : "[" + login.host + "]:" + std::to_string(login.port);
  if (check.verdict == KnownHost::Mismatch) {
    refused = "the host key of " + shown + " (" + key.type + " " + key.fingerprint + ") does NOT match the one in " + file +
              ": refusing to log in. If the host was reinstalled, remove the old entry (ssh-keygen -R '" + lookup +
              "') and check the new one";
    run.hooks().log("ssh: WARNING: " + refused);
    return false;
  }
  if (rules.accept_new) {
    run.pinned()[id] = key.fingerprint;
    run.hooks().log("ssh: " + shown + " is not in " + (file.empty() ? "known_hosts" : file) + "; accepted its host key " +
                    key.type + " " + key.fingerprint + " for this run (--accept-new-host-keys; the file is not changed)");
    return true;
  }
  unknown = true;
  refused = "the host key of " + shown + " (" + key.type + " " + key.fingerprint + ") is unknown: it is not in " +
            (file.empty() ? std::string("known_hosts ($HOME is unset)") : file) +
            (check.note.empty() ? "" : " (" + check.note + ")") + "; check the fingerprint and add it (ssh-keyscan -p " +
            std::to_string(login.port) + " " + login.host + " >> ~/.ssh/known_hosts), or run with --accept-new-host-keys";
  return false;
}

}  // namespace

std::function<bool(const HostKey&)> host_key_policy(RunSessions& run, MachineSession& s, HostKeyRules rules) {
  return [&run, &s, rules = std::move(rules)](const HostKey& key) {
    const auto& login = s.login();
    const std::string id = login.host + ":" + std::to_string(login.port);
    const std::string shown = login.name == login.host ? id : login.name + " (" + id + ")";
    if (auto it = run.pinned().find(id); it != run.pinned().end()) {
      if (it->second == key.fingerprint) return true;
      const std::string why = "the host key of " + shown + " CHANGED during this run: it was " + it->second +
                              ", now it is " + key.fingerprint + "; refusing to log in (the machine was replaced, or "
                              "someone is intercepting the connection)";
      run.hooks().log("ssh: WARNING: " + why);
      s.refuse_host_key(why);
      return false;
    }
    if (login.run_machine) {
      run.pinned()[id] = key.fingerprint;
      if (rules.pin) rules.pin(key.fingerprint);
      run.hooks().log("ssh: " + shown + " host key " + key.type + " " + key.fingerprint +
                      " (trusted on first use, pinned for the run)");
      return true;
    }
    std::string refused;
    bool unknown = false;
    const bool trusted = judge_known_host(run, s, rules, key, id, shown, refused, unknown);
    if (!trusted) s.refuse_host_key(refused, unknown);
    return trusted;
  };
}

}  // namespace runara::ssh
