// runara.read_file / runara.write_file. Paths are checked on the Lua thread; the disk work runs
// on libuv's thread pool while the calling task waits (except in a runara.at_exit function,
// which cannot wait: its writes are done at once).
//
// The output folder is write-only for scripts: runara redacts secrets from what is written
// there (run.log, results.json, write_file's data), and reading redacted text back would tell
// a script which of its guesses was a secret. Writes go through the folder's descriptor
// (write_beneath: no symlink is followed). Errors go back to the script unredacted: they quote
// only the script's own path and the system's reason, and a masked path would be an oracle too.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/checked_read.hpp"
#include "script/args.hpp"
#include "script/values.hpp"
#include "script/runara_binding.hpp"

namespace runara {

namespace {

struct FileJob {
  uv_work_t req;
  Runtime::Impl* rt;
  WaitId wait = 0;
  bool cancelled = false;
  bool writing = false;
  int dir_fd = -1;  // writing: the output folder, owned by the job
  std::string path, data, error;
  std::size_t max_bytes = 0;
  std::shared_ptr<MemoryBudget> memory;
  MemoryReservation held;  // what the file's bytes take until they are a Lua string
  ~FileJob() {
    if (dir_fd >= 0) ::close(dir_fd);
  }
};

void do_job(uv_work_t* req) {
  auto* job = static_cast<FileJob*>(req->data);
  if (job->writing) {
    job->error = write_beneath(job->dir_fd, job->path, job->data);
    return;
  }
  // The size is checked (fstat) and reserved before a byte is read: the whole file is held
  // twice for a moment, here and then in the Lua string.
  job->error = read_file_checked(job->path, [job](std::size_t size) {
    const std::size_t need = size * 2;
    if (size > job->max_bytes || !job->held.grow(need)) {
      return job->memory->refusal(need, "reading '" + job->path + "' (" + std::to_string(size) + " bytes)");
    }
    return std::string();
  }, job->data);
}

void job_done(uv_work_t* req, int) {
  std::unique_ptr<FileJob> job(static_cast<FileJob*>(req->data));
  if (job->cancelled) return;
  if (!job->error.empty()) {
    job->rt->scheduler_->fail(job->wait, job->error);  // not Context::fail: see the top
  } else if (job->writing) {
    job->rt->resume(job->wait, [](lua_State*) { return 0; });
  } else {
    job->held.reset();  // the Lua heap counts the string from here on
    job->rt->resume(job->wait, [data = std::move(job->data)](lua_State* L) {
      lua_pushlstring(L, data.data(), data.size());
      return 1;
    });
  }
}

int start_job(lua_State* L, std::unique_ptr<FileJob> job) {
  FileJob* raw = job.get();
  raw->wait = raw->rt->suspend(L, [raw] { raw->cancelled = true; });
  raw->req.data = raw;
  uv_queue_work(raw->rt->loop(), &raw->req, do_job, job_done);
  job.release();
  return raw->rt->yield(L);
}

int read_file(lua_State* L) {
  const std::string path = args::string(L, 1, "runara.read_file", "path");
  auto& rt = impl_of(L);
  std::string error;
  std::string real = script_readable_path(rt, path, error);
  if (real.empty()) args::raise(L, "runara.read_file: %s", error.c_str());
  auto job = std::make_unique<FileJob>();
  job->rt = &rt;
  job->path = real;
  job->max_bytes = rt.heap_.limit();
  job->memory = rt.memory_;
  job->held = MemoryReservation(rt.memory_, 0);
  return start_job(L, std::move(job));
}

std::string data_to_write(lua_State* L, Runtime::Impl& rt) {
  if (lua_type(L, 2) == LUA_TSTRING) {
    std::size_t len;
    const char* s = lua_tolstring(L, 2, &len);
    return rt.redact(std::string_view(s, len));
  }
  if (lua_type(L, 2) == LUA_TTABLE) {
    return rt.redact_json(to_json(L, 2, "runara.write_file: data", rt.memory_left(), [&rt] { return rt.must_stop(); }))
               .dump(2) + "\n";
  }
  args::fail(L, "runara.write_file", 2, "data", "a string or a table (written as JSON)");
  return {};
}

int write_file(lua_State* L) {
  const std::string path = args::string(L, 1, "runara.write_file", "path");
  auto& rt = impl_of(L);
  std::string error;
  const std::string relative = normalize_output_path(path, error);
  if (relative.empty()) args::raise(L, "runara.write_file: %s", error.c_str());
  if (starts_with_reserved_name(relative)) {
    args::raise(L, "runara.write_file: '%s' is written by runara itself; choose another name", path.c_str());
  }
  std::string data = data_to_write(L, rt);
  const int dir_fd = output_dir_fd(L, rt, "runara.write_file");
  if (rt.finalizing_) {  // a runara.at_exit function cannot wait: the write happens here, now
    const std::string failed = write_beneath(dir_fd, relative, data);
    ::close(dir_fd);
    if (!failed.empty()) args::raise(L, "runara.write_file: %s", failed.c_str());
    return 0;
  }
  auto job = std::make_unique<FileJob>();
  job->rt = &rt;
  job->writing = true;
  job->dir_fd = dir_fd;
  job->path = relative;
  job->data = std::move(data);
  return start_job(L, std::move(job));
}

}  // namespace

void open_file_api(lua_State* L, Runtime::Impl& rt) {
  rt.push_async(L, read_file, 0);
  lua_setfield(L, -2, "read_file");
  rt.push_async(L, write_file, 0);
  lua_setfield(L, -2, "write_file");
}

namespace {

// An earlier run's folder granted by name (Permissions::earlier_runs), in a run that holds no
// secret: there is then nothing masked whose reading could reveal one.
bool granted_earlier_run(Runtime::Impl& rt, const std::string& real) {
  if (!rt.options_.secrets.empty()) return false;
  for (const auto& granted : rt.options_.permissions.earlier_runs) {
    const std::string folder = canonical_path(granted, "");
    if (!folder.empty() && path_within(real, folder)) return true;
  }
  return false;
}

}  // namespace

std::string script_readable_path(Runtime::Impl& rt, const std::string& path, std::string& error) {
  std::vector<std::string> roots{rt.script_dir_};
  for (const auto& granted : rt.options_.permissions.earlier_runs) {
    std::string real = canonical_path(granted, "");
    if (!real.empty() && rt.options_.secrets.empty()) roots.push_back(real);
  }
  for (const auto& granted : rt.options_.permissions.read_paths) {
    std::string real = canonical_path(granted, "");
    if (!real.empty()) roots.push_back(real);
  }
  const std::string real = check_readable(path, rt.script_dir_, roots, error);
  if (real.empty() && error.find("--allow-read") != std::string::npos) rt.denied("--allow-read " + path);
  const bool this_run = rt.output_.created() && path_within(real, rt.output_.real_path());
  if (!real.empty() && !this_run && granted_earlier_run(rt, real)) return real;
  if (!real.empty() && (this_run || inside_output_folder(real))) {
    error = "'" + path + "' is in " + std::string(this_run ? "the run's" : "an earlier run's") +
            " output folder, which scripts cannot read: runara redacts secrets from what is written there, so "
            "reading it back would reveal them; keep what you need in a variable";
    return {};
  }
  return real;
}

const std::string& output_dir_or_raise(lua_State* L, Runtime::Impl& rt, const char* function) {
  const std::string& dir = rt.output_.dir();
  if (!rt.output_.error().empty()) args::raise(L, "%s: %s", function, rt.output_.error().c_str());
  return dir;
}

int output_dir_fd(lua_State* L, Runtime::Impl& rt, const char* function) {
  output_dir_or_raise(L, rt, function);
  const int fd = rt.output_.dup_dir_fd();
  if (fd < 0) args::raise(L, "%s: cannot use the output folder: %s", function, std::strerror(errno));
  return fd;
}

}  // namespace runara
