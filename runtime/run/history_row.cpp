// A run's row in the run history (run/history.hpp), from its start to its end. It is written
// "running" as the run starts, with the process that runs it, so that a run killed outright
// (SIGKILL, a crash, a machine that lost power) is still listed; it gains the output folder when
// that is made; and it is completed, the same row rewritten, in the end-of-run step that writes
// the run record, so that every ending the record sees (an error, the watchdog, a signal, a
// panic) is in the history too. The history bills nothing: a failure to write it is a warning,
// never a failed run.
#include "base/files.hpp"
#include "base/process_identity.hpp"
#include "base/sha256.hpp"
#include "run/history.hpp"
#include "run/history_entry.hpp"
#include "run/state.hpp"

namespace runara {

namespace {

// Where the run ran, for `runara runs`: what --sim, --on or the host named, else (once it has
// ended: `run` is its record) the droplets it created, or this computer when it created none.
std::string where_of(const Options& o, const nlohmann::json* run) {
  if (o.simulated) return "simulated";
  if (!o.history_where.empty()) return o.history_where;
  if (!o.on.host.empty()) {
    return "your machine " + (o.on.user.empty() ? "" : o.on.user + "@") + o.on.host + (o.on.port != 22 ? ":" + std::to_string(o.on.port) : "");
  }
  if (!o.on.endpoint.empty()) return "endpoint " + o.on.endpoint;
  if (!run) return {};
  const auto machines = run->find("machines");
  const std::size_t n = machines != run->end() && machines->is_array() ? machines->size() : 0;
  if (n == 0) return "this computer";
  return n == 1 ? "droplet" : "droplets (" + std::to_string(n) + ")";
}

// What every write of the row says alike: which run, of what, where, by which process.
HistoryEntry row_of(Runtime::Impl& rt) {
  HistoryEntry e;
  e.run_id = rt.run_id_;
  e.script = !rt.options_.history_name.empty() ? rt.options_.history_name
             : !rt.script_path_.empty()        ? rt.script_path_
                                               : "(command line)";
  e.script_sha256 = rt.history_script_sha256();
  e.start_unix = rt.record_.start_unix();
  e.out_dir = rt.output_.created() ? rt.output_.real_path() : "";
  e.simulated = rt.options_.simulated;
  e.where = where_of(rt.options_, nullptr);
  e.process = this_process();
  return e;
}

}  // namespace

// Read as the run starts, not as it ends: the file may be edited while a run of hours goes on,
// and the row names what ran.
const std::string& Runtime::Impl::history_script_sha256() {
  if (!history_sha256_) {
    std::string code;
    const bool read = !script_path_.empty() && script_path_ != "-" && read_file_text(script_path_, code);
    history_sha256_ = read ? sha256_hex(code) : "";
  }
  return *history_sha256_;
}

RunHistory& Runtime::Impl::history_db() {
  if (!history_db_) history_db_ = std::make_unique<RunHistory>(options_.history_dir);
  return *history_db_;
}

void Runtime::Impl::write_running_row() {
  HistoryEntry e = row_of(*this);
  e.status = kRunning;
  history_db().record(e);
  history_row_ = HistoryRow::running;
}

// Runs of a script file and named runs (`runara bench`) are listed from their start. `-e`, `-`
// and the REPL are listed only once they leave a folder (a REPL that printed a few values is not
// a run to list), and so is a script's --help (which usually writes nothing): their row starts
// when the folder is made (record_history_folder).
void Runtime::Impl::record_history_start() {
  if (options_.history_dir.empty() || options_.script_help) return;
  if (script_path_.empty() && options_.history_name.empty()) return;
  try {
    write_running_row();
  } catch (const std::exception& ex) {
    log(std::string("warning: the run history has no row for this run yet (if it is killed, runara runs will not "
                    "list it): ") + ex.what());
  }
}

// This runs inside the folder's creation, perhaps inside run.log's first line: a failure is not
// logged (it would re-enter the log being opened). The row's end says whether the history can be
// written, and carries the folder anyway.
void Runtime::Impl::record_history_folder() {
  if (options_.history_dir.empty() || history_row_ == HistoryRow::ended) return;
  try {
    write_running_row();
  } catch (const std::exception&) {
  }
}

void Runtime::Impl::record_history(const nlohmann::json& run) {
  if (options_.history_dir.empty()) return;
  history_row_ = HistoryRow::ended;
  try {
    HistoryEntry e = row_of(*this);
    e.start_unix = run.value("start_unix", e.start_unix);
    e.end_unix = run.value("end_unix", 0.0);
    e.exit_code = run.value("exit_code", 0);
    e.status = run.value("status", std::string());
    e.where = where_of(options_, &run);
    const Headline h = headline_of(results_);
    e.output_tokens_per_s = h.output_tokens_per_s;
    e.ttft_p50_ms = h.ttft_p50_ms;
    e.cost_usd = h.cost_usd;
    history_db().record(e);
  } catch (const std::exception& ex) {
    log(std::string("warning: the run history was not written (runara runs will not list this run): ") + ex.what());
  }
}

// A run that ends leaving no folder and no record (a script that could not be loaded) loses the
// row its start wrote: the history lists runs, not attempts. A failure goes to the terminal
// only: log() would make a folder this run does not otherwise leave.
void Runtime::Impl::forget_history() {
  const bool written = history_row_ == HistoryRow::running;
  history_row_ = HistoryRow::ended;
  if (!written) return;
  try {
    history_db().forget(run_id_);
  } catch (const std::exception& ex) {
    const std::string line = shown(std::string("warning: the run history keeps a row for this run, which left "
                                               "nothing (runara runs will list it as killed): ") + ex.what(),
                                   LineFeeds::show);
    if (events_.log) events_.log(line);
    else std::fprintf(stderr, "%s\n", line.c_str());
  }
}

}  // namespace runara
