// runara-agent: the load engine on the machine under test, driven by runara over ssh (see
// README.md and runtime/load/agent_protocol.hpp). One load per process: it reads pings and one
// spec on stdin, runs the spec with the same LoadEngine a local http_load.run uses, streams
// progress and every finished request on stdout, and ends with the outcome.
//
// It stops, writing the outcome of what ran, when stdin ends (runara or its connection went),
// at the spec's deadline, or on SIGTERM/SIGINT/SIGHUP (ssh teardown signals its process group).
// Statically linked: nothing on the remote machine is needed, not even its C library's NSS.
#include <ifaddrs.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>
#include <uv.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "base/cores.hpp"
#include "load/agent_protocol.hpp"
#include "load/request_target.hpp"
#include "net/target_policy.hpp"

namespace runara {
namespace {

const char* const kVersion = RUNARA_VERSION;

// Every byte the agent writes to stdout: the record writer thread and the loop share the fd.
std::mutex out_lock;

void write_all(const std::string& text) {
  std::lock_guard lock(out_lock);
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(1, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // runara is gone: nobody reads; the EOF on stdin ends the agent
    done += static_cast<std::size_t>(n);
  }
}

// The target must be this machine: loopback, or an address of one of its own interfaces.
bool own_address(const sockaddr* target) {
  if (classify_address(target) == AddressClass::kLoopback) return true;
  const std::string wanted = address_text(target);
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return false;
  bool found = false;
  for (ifaddrs* a = list; a && !found; a = a->ifa_next) {
    if (a->ifa_addr && (a->ifa_addr->sa_family == AF_INET || a->ifa_addr->sa_family == AF_INET6)) {
      found = address_text(a->ifa_addr) == wanted;
    }
  }
  freeifaddrs(list);
  return found;
}

class Agent {
 public:
  explicit Agent(uv_loop_t* loop) : loop_(loop) {}

  int run() {
    write_all(hello_line(kVersion) + "\n");
    uv_pipe_init(loop_, &in_, 0);
    if (uv_pipe_open(&in_, 0) != 0) {
      fatal("stdin is not a pipe or a socket");
      return exit_code_;
    }
    in_.data = this;
    uv_read_start(reinterpret_cast<uv_stream_t*>(&in_), alloc, on_read);
    for (int i = 0; i < 3; ++i) {
      static const int kSignals[] = {SIGTERM, SIGINT, SIGHUP};
      uv_signal_init(loop_, &signals_[i]);
      signals_[i].data = this;
      uv_signal_start(&signals_[i], [](uv_signal_t* s, int) { static_cast<Agent*>(s->data)->stop(); }, kSignals[i]);
      uv_unref(reinterpret_cast<uv_handle_t*>(&signals_[i]));
    }
    uv_timer_init(loop_, &deadline_);
    deadline_.data = this;
    uv_run(loop_, UV_RUN_DEFAULT);
    return exit_code_;
  }

 private:
  static void alloc(uv_handle_t*, size_t, uv_buf_t* buf) {
    static char block[64 * 1024];
    *buf = uv_buf_init(block, sizeof block);
  }

  static void on_read(uv_stream_t* stream, ssize_t n, const uv_buf_t* buf) {
    auto* self = static_cast<Agent*>(stream->data);
    if (n < 0) return self->input_ended();
    self->input(std::string_view(buf->base, static_cast<std::size_t>(n)));
  }

  void input(std::string_view bytes) {
    pending_.append(bytes);
    std::size_t start = 0;
    for (std::size_t nl; (nl = pending_.find('\n', start)) != std::string::npos; start = nl + 1) {
      line(std::string_view(pending_).substr(start, nl - start));
      if (finished_) return;
    }
    pending_.erase(0, start);
    if (pending_.size() > kAgentMaxLine) fatal("a line on stdin is longer than " + std::to_string(kAgentMaxLine) + " bytes");
  }

  void line(std::string_view text) {
    if (text.starts_with("ping ")) return write_all("pong " + std::string(text.substr(5)) + "\n");
    if (text.starts_with("spec ") && !engine_) return start(text.substr(5));
    fatal("unexpected input line: " + std::string(text.substr(0, 40)));
  }

  void start(std::string_view json) {
    auto spec = std::make_shared<LoadSpec>();
    double deadline_s = 0;
    std::size_t memory = 0;
    std::string error;
    if (!decode_agent_spec(json, *spec, deadline_s, memory, error)) return fatal(error);
    if (spec->threads_auto) spec->threads = spec->auto_threads(usable_cores());  // this machine's cores, not runara's
    sockaddr_storage target{};
    if (!numeric_host(spec->url_host, spec->url_port, target)) return fatal("the target must be a numeric address, got " + spec->url_host);
    if (!own_address(reinterpret_cast<const sockaddr*>(&target))) {
      return fatal("refusing " + spec->url_host + ": the agent loads only this machine (loopback or its own addresses)");
    }
    auto policy = std::make_shared<TargetPolicy>("runara-agent");
    policy->add_reachable(spec->url_host, spec->url_port);
    spec->policy = policy;
    if (memory) spec->memory = std::make_shared<MemoryBudget>(memory);
    const int fd = dup(1);
    std::shared_ptr<RequestLog> log;
    try {
      log = std::make_shared<RequestLog>(fd, "stdout", spec->request_queue_bytes, spec->threads, spec->memory,
                                         RequestLogOutput{append_record_line, &out_lock});
      engine_ = std::make_unique<LoadEngine>(loop_, spec, [](const std::string& p) { progress(p); });
      engine_->write_requests_to(log);
      engine_->start([this](LoadOutcome& outcome) { finish(outcome); });
    } catch (const std::exception& e) {
      return fatal(std::string("cannot start the load: ") + e.what());
    }
    if (deadline_s > 0) {
      uv_timer_start(&deadline_, [](uv_timer_t* t) { static_cast<Agent*>(t->data)->stop(); },
                     static_cast<std::uint64_t>(deadline_s * 1000), 0);
    }
  }

  // Skipped, not waited for, while the record writer holds stdout (a slow network).
  static void progress(const std::string& text) {
    std::unique_lock lock(out_lock, std::try_to_lock);
    if (!lock.owns_lock()) return;
    const std::string line = "P " + text + "\n";
    if (::write(1, line.data(), line.size()) < 0) return;
  }

  void input_ended() { stop(); }

  void stop() {
    if (finished_) return;
    if (!engine_) return fatal("stopped before a load was given");
    LoadOutcome outcome = engine_->abort();
    finish(outcome);
  }

  void finish(LoadOutcome& outcome) {
    if (finished_) return;
    std::string log_error;
    std::uint64_t dropped = outcome.left_out;
    if (outcome.request_log) log_error = outcome.request_log->finish();  // every record line is out
    if (!log_error.empty() && outcome.error.empty()) outcome.error = log_error;
    rusage usage{};
    if (getrusage(RUSAGE_SELF, &usage) == 0) outcome.agent_max_rss_kb = usage.ru_maxrss;
    write_all("S " + encode_outcome(outcome, dropped) + "\n");
    end(0);
  }

  void fatal(const std::string& why) {
    if (!finished_) write_all("E " + why + "\n");
    end(2);
  }

  void end(int code) {
    finished_ = true;
    exit_code_ = code;
    uv_stop(loop_);
  }

  uv_loop_t* loop_;
  uv_pipe_t in_{};
  uv_signal_t signals_[3]{};
  uv_timer_t deadline_{};
  std::string pending_;
  std::unique_ptr<LoadEngine> engine_;
  bool finished_ = false;
  int exit_code_ = 0;
};

}  // namespace
}  // namespace runara

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--version") == 0) {
    std::printf("%s\n", runara::hello_line(runara::kVersion).c_str());
    return 0;
  }
  if (argc > 1) {
    std::fprintf(stderr, "runara-agent: takes no arguments; runara starts it and talks on stdin/stdout\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  uv_loop_t* loop = uv_default_loop();
  const int code = runara::Agent(loop).run();
  // Threads of an aborted engine are joined by abort(); exit now without running the loop's
  // handles down: the process ends here.
  std::fflush(stdout);
  _exit(code);
}
