#include "load_job/remote_load.hpp"

#include <uv.h>

#include <algorithm>
#include <atomic>

#include "base/text.hpp"
#include "base/json_limits.hpp"
#include "load/agent_protocol.hpp"

namespace runara {

namespace {

constexpr int kPings = 3;

// At most `max` bytes of `line`, control characters (a terminal's escape sequences) made '?'.
std::string excerpt(std::string_view line, std::size_t max = 80) {
  return printable(line, max) + (line.size() > max ? "..." : "");
}

class RemoteLoad final : public LoadRunner {
 public:
  RemoteLoad(std::shared_ptr<const LoadSpec> spec, Progress progress, RemoteLoadPlan plan)
      : spec_(std::move(spec)), progress_(std::move(progress)), plan_(std::move(plan)),
        partial_(spec_->slo), lengths_(spec_->max_lengths) {
    if (auto target = plan_.target.lock()) {
      host_ = target->name();
      address_ = target->address();
    }
  }

  ~RemoteLoad() override {
    *alive_ = false;
    running_.reset();
  }

  void write_requests_to(std::shared_ptr<RequestLog> log) override {
    log_ = std::move(log);
    if (log_) batch_ = log_->first_batch();
  }

  void start(Done done) override {
    done_ = std::move(done);
    started_ns_ = uv_hrtime();
    if (!reserve()) return;
    CommandTarget::Input input;
    input.hold_open = true;
    input.max_line = kAgentMaxLine + 2;
    auto target = plan_.target.lock();
    if (!target) return fail("the ssh session for the load agent was closed before the load started");
    auto alive = alive_;
    auto running = target->run("exec " + plan_.agent_command,
                               {[this](std::string_view line) { on_line(line); },
                                [this](const CommandTarget::Exit& exit) { on_exit(exit); }},
                               std::move(input));
    if (!*alive) return;  // it failed at once, and `done` destroyed this runner
    if (!finished_) running_ = std::move(running);
  }

  LoadOutcome abort() override {
    finished_ = true;
    running_.reset();  // TERM to the agent's group, its stdin closed
    return partial("", true);
  }

 private:
  const std::string& host() const { return host_; }

  // The rebuilt statistics' histograms and the lengths, from the run's budget.
  bool reserve() {
    if (!spec_->memory) return true;
    const std::uint64_t lengths = spec_->requests ? std::min<std::uint64_t>(spec_->requests, spec_->max_lengths) : spec_->max_lengths;
    const std::size_t need = 7 * partial_.ttft.memory_bytes() + static_cast<std::size_t>(lengths) * RequestLengths::kBytesEach;
    held_ = MemoryReservation(spec_->memory, 0);
    if (held_.grow(need)) return true;
    fail(spec_->memory->refusal(need, "the remote load " + spec_->name));
    return false;
  }

  std::string redacted(std::string text) const { return plan_.redact ? plan_.redact(text) : text; }
  // Text the machine sent, fit for an error message or the progress line.
  std::string from_machine(std::string_view text, std::size_t max = 80) const { return redacted(excerpt(text, max)); }

  void on_line(std::string_view line) {
    if (finished_) return;
    if (line.size() > kAgentMaxLine) return fail("a line from the agent on " + host() + " is too long");
    if (!hello_) return on_hello(line);
    if (line.starts_with("R ")) return on_record(line.substr(2));
    if (line.starts_with("P ")) {
      if (progress_) progress_(from_machine(line.substr(2), 240) + "  (agent on " + address_ + ")");
      return;
    }
    if (line.starts_with("pong ")) return on_pong();
    if (line.starts_with("S ")) return on_outcome(line.substr(2));
    if (line.starts_with("E ")) return fail("the load agent on " + host() + " refused the load: " + from_machine(line.substr(2)));
    fail("the load agent on " + host() + " sent a line runara does not understand: '" + from_machine(line) + "'");
  }

  void on_hello(std::string_view line) {
    int protocol = 0;
    std::string version;
    if (!parse_hello(line, protocol, version)) {
      return fail("the program started as the load agent on " + host() + " did not answer as one (its first line: '" +
                  from_machine(line) + "')");
    }
    if (protocol != kAgentProtocol) {
      return fail("the load agent on " + host() + " speaks protocol " + std::to_string(protocol) + " (runara-agent " +
                  from_machine(version) + "), this runara speaks " + std::to_string(kAgentProtocol));
    }
    hello_ = true;
    ping();
  }

  void ping() {
    ping_sent_ns_ = uv_hrtime();
    if (running_) running_->write("ping " + std::to_string(pings_) + "\n");
  }

  void on_pong() {
    const double rtt = static_cast<double>(uv_hrtime() - ping_sent_ns_) / 1e6;
    rtt_ms_ = pings_ == 0 ? rtt : std::min(rtt_ms_, rtt);
    if (++pings_ < kPings) return ping();
    const double deadline = std::max(0.001, plan_.deadline_s - static_cast<double>(uv_hrtime() - started_ns_) / 1e9);
    if (running_) running_->write("spec " + encode_agent_spec(*spec_, deadline, plan_.memory_bytes) + "\n");
  }

  double elapsed_s() const { return static_cast<double>(uv_hrtime() - started_ns_) / 1e9; }

  void on_record(std::string_view fields) {
    RequestRecord r;
    std::string error;
    if (!parse_record_line(fields, r, error)) return fail("the load agent on " + host() + " sent a broken line: " + error);
    if (!admit_record(*spec_, r, elapsed_s(), tally_, error)) {
      return fail("the load agent on " + host() + " sent an impossible request record: " + error);
    }
    partial_.add(r, {}, "");
    lengths_.add(r, lengths_taken_);
    // requests.jsonl's bounds hold whatever the agent sends: what `record` chose, up to
    // max_request_lines (the rest counted as left out), as a local load keeps them.
    if (!log_ || !spec_->wants_record(r)) return;
    if (batch_.capacity() == 0 || kept_++ >= spec_->max_request_lines) {
      ++left_out_;
      return;
    }
    batch_.push_back(r);
    if (batch_.size() == RequestLog::kBatchRecords) left_out_ += log_->hand_over(batch_);
  }

  void on_outcome(std::string_view json) {
    LoadOutcome outcome;
    std::uint64_t dropped = 0;
    std::string error;
    // While it is decoded, the line (held twice over: the line buffer's spare room) and its
    // document, as json_tree_bytes estimates it, count against the run's --max-memory; past
    // kAgentMaxOutcomeTreeBytes decode_outcome refuses it before building anything.
    MemoryReservation decoding;
    if (const std::size_t tree = json_tree_bytes(json); spec_->memory && tree <= kAgentMaxOutcomeTreeBytes) {
      const std::size_t need = tree + 2 * json.size();
      decoding = MemoryReservation(spec_->memory, 0);
      if (!decoding.grow(need)) {
        return fail("the load agent on " + host() + ": " +
                    spec_->memory->refusal(need, "decoding the agent's results (" + std::to_string(json.size() >> 10) + " KiB)"));
      }
    }
    if (!decode_outcome(json, spec_->slo, spec_->max_lengths, outcome, dropped, error)) {
      return fail("the load agent on " + host() + ": " + redacted(error));
    }
    decoding.reset();
    if (!check_outcome(*spec_, outcome, dropped, tally_, elapsed_s(), error)) return fail("the load agent on " + host() + ": " + error);
    add_local_part(outcome);
    complete(std::move(outcome));
  }

  void on_exit(const CommandTarget::Exit& exit) {
    if (finished_) return;
    std::string why = !exit.error.empty() ? exit.error : "exit status " + std::to_string(exit.code);
    if (exit.code == 127) why += " (the agent is not on the machine, or cannot run there)";
    std::string_view tail = exit.stderr_tail;
    while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.remove_suffix(1);
    if (tail.size() > 80) tail.remove_prefix(tail.size() - 80);  // its last words
    if (!tail.empty()) why += "; its last error output: " + from_machine(tail);
    fail("the load agent on " + host() + " ended before its results: " + why);
  }

  void fail(const std::string& why) {
    if (finished_) return;
    running_.reset();
    complete(partial(why, false));
  }

  // What the records received so far say, for an agent that could not finish.
  LoadOutcome partial(const std::string& error, bool interrupted) {
    LoadOutcome out;
    out.stats = partial_;
    out.lengths = std::move(lengths_);
    out.wall_s = elapsed_s();
    out.threads = spec_->threads;
    out.interrupted = interrupted;
    out.error = error;
    add_local_part(out);
    return out;
  }

  // What runara itself adds to an outcome, the agent's or a partial one: where the load ran,
  // the round trip, requests.jsonl's writer with the last records and what it left out, and
  // the memory held for the load.
  void add_local_part(LoadOutcome& out) {
    out.load_host = address_;
    out.controller_rtt_ms = rtt_ms_;  // -1 until a pong came
    out.left_out += left_out_ + (log_ ? log_->hand_over(batch_) : 0);
    out.request_log = std::move(log_);
    out.held.absorb(std::move(held_));
  }

  void complete(LoadOutcome outcome) {
    finished_ = true;
    if (done_) done_(outcome);  // may destroy this runner
  }

  std::shared_ptr<const LoadSpec> spec_;
  Progress progress_;
  RemoteLoadPlan plan_;
  std::string host_, address_;  // the target's name and address, for messages and results
  Done done_;
  std::unique_ptr<CommandTarget::Running> running_;
  std::shared_ptr<RequestLog> log_;
  RequestLog::Batch batch_;
  LoadStats partial_;
  RequestLengths lengths_;
  MemoryReservation held_;
  std::atomic<std::uint64_t> lengths_taken_{0};
  std::uint64_t left_out_ = 0;
  std::uint64_t kept_ = 0;  // records chosen for requests.jsonl, up to max_request_lines
  RecordTally tally_;       // records admitted, for checking the next one and the outcome
  std::uint64_t started_ns_ = 0, ping_sent_ns_ = 0;
  int pings_ = 0;
  double rtt_ms_ = -1;
  bool hello_ = false;
  bool finished_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace

std::unique_ptr<LoadRunner> make_remote_load(std::shared_ptr<const LoadSpec> spec, LoadRunner::Progress progress,
                                             RemoteLoadPlan plan) {
  return std::make_unique<RemoteLoad>(std::move(spec), std::move(progress), std::move(plan));
}

}  // namespace runara
