// `runara ls` and `runara reap`: what earlier runs left behind, and destroying it. The ledger
// says what runara created on this machine; the account's runara tags catch the rest. Both act
// only on the API endpoint (and the token's account) they talk to, show the API's answer
// (leftover_survey.hpp), and exit non-zero whenever they could not check.
#pragma once

#include <string>
#include <vector>

namespace runara {

struct ReapOptions {
  std::string run_id;         // only this run ("" = every run that is not alive)
  double older_than_s = 0;    // only machines created longer ago than this
  bool yes = false;           // do not ask
  bool json = false;          // ls: machine-readable output
  // reap --expired: only runs whose droplets' deadline tags have all passed, as the account's
  // listing shows them, whichever computer started them (expired_runs.hpp); grace_s is added
  // to each deadline first (clocks of two computers disagree).
  bool expired = false;
  double grace_s = 600;
  std::string state_dir, api_base, token;
};

int list_leftovers(const ReapOptions& options);  // runara ls; returns the exit status
int reap_leftovers(const ReapOptions& options);  // runara reap (reap_expired when options.expired)
int reap_expired(const ReapOptions& options);    // runara reap --expired
// One line to print at start when earlier runs left something in the ledger ("" if nothing).
std::string leftover_warning(const std::string& state_dir);
// "90m", "2h", "1d", "3600" -> seconds; < 0 when invalid.
double parse_duration(const std::string& text);

}  // namespace runara
