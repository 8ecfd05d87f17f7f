#include "gpu/local_target.hpp"

#include <signal.h>

#include <cstdlib>
#include <vector>

#include <uv.h>

namespace runara::gpu {

namespace {

constexpr std::size_t kMaxLine = 64u << 10;
constexpr std::size_t kStderrTail = 4u << 10;
constexpr uint64_t kDrainAfterExitMs = 500;  // a grandchild holding the pipe cannot hold us

std::vector<std::string> split_words(const std::string& line) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

// Everything one command owns on the loop; freed when its last handle has closed.
struct Proc {
  uv_process_t process;
  uv_pipe_t out, err;
  uv_timer_t timer;  // the not-found report, then the drain deadline after exit
  int open_handles = 0;
  CommandTarget::Handlers handlers;
  CommandTarget::Exit exit;
  std::string partial, err_tail;
  bool spawned = false, exited = false, out_eof = false, err_eof = false, finished = false, detached = false;

  void deliver_line(std::string_view line) {
    if (handlers.on_line && !detached) handlers.on_line(line);
  }
  void feed(const char* p, std::size_t n) {
    for (std::size_t i = 0; i < n && !detached; ++i) {
      if (p[i] == '\n') {
        deliver_line(partial);
        partial.clear();
      } else {
        partial += p[i];
        if (partial.size() >= kMaxLine) {
          deliver_line(partial);
          partial.clear();
        }
      }
    }
  }
  void keep_err(const char* p, std::size_t n) {
    err_tail.append(p, n);
    if (err_tail.size() > kStderrTail) err_tail.erase(0, err_tail.size() - kStderrTail);
  }
  void maybe_finish(bool force) {
    if (finished || detached) return;
    if (!force && !(exited && out_eof && err_eof) && spawned) return;
    finished = true;
    if (!partial.empty()) deliver_line(partial);
    partial.clear();
    exit.stderr_tail = err_tail;
    auto on_exit = std::move(handlers.on_exit);
    handlers = {};
    if (on_exit) on_exit(exit);  // may destroy the Running handle: nothing of ours after this
  }
};

void on_closed(uv_handle_t* h) {
  auto* p = static_cast<Proc*>(h->data);
  if (--p->open_handles == 0) delete p;
}

void close_handle(Proc* p, uv_handle_t* h) {
  if (!uv_is_closing(h)) uv_close(h, on_closed);
  (void)p;
}

void on_alloc(uv_handle_t*, size_t suggested, uv_buf_t* buf) {
  buf->base = static_cast<char*>(std::malloc(suggested));
  buf->len = buf->base ? suggested : 0;
}

void on_out(uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
  auto* p = static_cast<Proc*>(s->data);
  if (n > 0) p->feed(buf->base, static_cast<std::size_t>(n));
  std::free(buf->base);
  if (n < 0) {
    uv_read_stop(s);
    p->out_eof = true;
    p->maybe_finish(false);
  }
}

void on_err(uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
  auto* p = static_cast<Proc*>(s->data);
  if (n > 0) p->keep_err(buf->base, static_cast<std::size_t>(n));
  std::free(buf->base);
  if (n < 0) {
    uv_read_stop(s);
    p->err_eof = true;
    p->maybe_finish(false);
  }
}

void on_drain_deadline(uv_timer_t* t) { static_cast<Proc*>(t->data)->maybe_finish(true); }

void on_process_exit(uv_process_t* h, int64_t status, int signal) {
  auto* p = static_cast<Proc*>(h->data);
  p->exited = true;
  p->exit.code = signal ? -1 : static_cast<int>(status);
  if (signal) p->exit.error = "killed by signal " + std::to_string(signal);
  uv_timer_start(&p->timer, on_drain_deadline, kDrainAfterExitMs, 0);
  p->maybe_finish(false);
}

class LocalRunning : public CommandTarget::Running {
 public:
  explicit LocalRunning(Proc* p) : p_(p) {}
  ~LocalRunning() override {
    p_->detached = true;
    p_->handlers = {};
    if (p_->spawned && !p_->exited) uv_kill(-p_->process.pid, SIGKILL);
    if (p_->spawned) close_handle(p_, reinterpret_cast<uv_handle_t*>(&p_->process));
    close_handle(p_, reinterpret_cast<uv_handle_t*>(&p_->out));
    close_handle(p_, reinterpret_cast<uv_handle_t*>(&p_->err));
    close_handle(p_, reinterpret_cast<uv_handle_t*>(&p_->timer));
  }

 private:
  Proc* p_;
};

std::string not_found(const std::string& path) { return "not found on this host (PATH=" + path + ")"; }

}  // namespace

std::unique_ptr<CommandTarget::Running> LocalTarget::run(const std::string& command, Handlers handlers) {
  auto* p = new Proc;
  p->handlers = std::move(handlers);
  std::vector<std::string> words = split_words(command);
  for (uv_handle_t* h : {reinterpret_cast<uv_handle_t*>(&p->out), reinterpret_cast<uv_handle_t*>(&p->err),
                         reinterpret_cast<uv_handle_t*>(&p->timer)})
    h->data = p;
  uv_pipe_init(loop_, &p->out, 0);
  uv_pipe_init(loop_, &p->err, 0);
  uv_timer_init(loop_, &p->timer);
  p->open_handles = 3;

  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const char* own = std::getenv("PATH");
  const std::string path = !path_.empty() ? path_ : own ? own : "/usr/bin:/bin";
  // libuv looks the program up in the child's PATH (execvp after the environment is set).
  std::string env_path = "PATH=" + path;
  std::string env_lc = "LC_ALL=C";
  char* env[] = {env_path.data(), env_lc.data(), nullptr};
  uv_stdio_container_t stdio[3];
  stdio[0].flags = UV_IGNORE;
  stdio[1].flags = static_cast<uv_stdio_flags>(UV_CREATE_PIPE | UV_WRITABLE_PIPE);
  stdio[1].data.stream = reinterpret_cast<uv_stream_t*>(&p->out);
  stdio[2].flags = static_cast<uv_stdio_flags>(UV_CREATE_PIPE | UV_WRITABLE_PIPE);
  stdio[2].data.stream = reinterpret_cast<uv_stream_t*>(&p->err);
  uv_process_options_t opts{};
  opts.file = argv[0];
  opts.args = argv.data();
  opts.env = env;
  opts.stdio = stdio;
  opts.stdio_count = 3;
  opts.flags = UV_PROCESS_DETACHED;  // its own process group: one kill reaches its children too
  opts.exit_cb = on_process_exit;
  p->process.data = p;
  const int rc = words.empty() ? UV_EINVAL : uv_spawn(loop_, &p->process, &opts);
  if (rc != 0) {
    p->exit.error = rc == UV_ENOENT ? not_found(path) : std::string("cannot start: ") + uv_strerror(rc);
    // uv_spawn leaves the handle initialised even on failure: it must be closed too.
    if (!words.empty()) {
      ++p->open_handles;
      p->spawned = false;
      uv_close(reinterpret_cast<uv_handle_t*>(&p->process), on_closed);
    }
    uv_timer_start(&p->timer, on_drain_deadline, 0, 0);
    return std::make_unique<LocalRunning>(p);
  }
  p->spawned = true;
  p->open_handles++;
  uv_read_start(reinterpret_cast<uv_stream_t*>(&p->out), on_alloc, on_out);
  uv_read_start(reinterpret_cast<uv_stream_t*>(&p->err), on_alloc, on_err);
  return std::make_unique<LocalRunning>(p);
}

}  // namespace runara::gpu
