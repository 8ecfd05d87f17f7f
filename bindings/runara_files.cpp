// runara.read_file / runara.write_file. Paths are checked on the Lua thread; the disk work runs
// on libuv's thread pool while the calling task waits.
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "lua_args.hpp"
#include "lua_values.hpp"
#include "runara_binding.hpp"

namespace runara {

namespace {

struct FileJob {
  uv_work_t req;
  Runtime::Impl* rt;
  WaitId wait = 0;
  bool cancelled = false;
  bool writing = false;
  std::string path, data, error;
  std::size_t max_bytes = 0;
};

void do_job(uv_work_t* req) {
  auto* job = static_cast<FileJob*>(req->data);
  if (job->writing) {
    job->error = write_file_atomic(job->path, job->data);
    return;
  }
  struct stat st {};
  if (stat(job->path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    job->error = "'" + job->path + "' is not a regular file";
    return;
  }
  if (!read_file_text(job->path, job->data)) {
    job->error = "cannot read '" + job->path + "': " + std::strerror(errno);
    return;
  }
  if (job->data.size() > job->max_bytes) {
    job->error = "'" + job->path + "' is larger than the script's memory limit";
    job->data.clear();
  }
}

void job_done(uv_work_t* req, int) {
  std::unique_ptr<FileJob> job(static_cast<FileJob*>(req->data));
  if (job->cancelled) return;
  if (!job->error.empty()) {
    job->rt->fail(job->wait, job->error);
  } else if (job->writing) {
    job->rt->resume(job->wait, [](lua_State*) { return 0; });
  } else {
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
  std::string real = check_readable(path, rt.script_dir_, readable_roots(rt), error);
  if (real.empty()) args::raise(L, "runara.read_file: %s", error.c_str());
  auto job = std::make_unique<FileJob>();
  job->rt = &rt;
  job->path = real;
  job->max_bytes = rt.heap_.limit();
  return start_job(L, std::move(job));
}

int write_file(lua_State* L) {
  const std::string path = args::string(L, 1, "runara.write_file", "path");
  auto& rt = impl_of(L);
  std::string data;
  if (lua_type(L, 2) == LUA_TSTRING) {
    std::size_t len;
    const char* s = lua_tolstring(L, 2, &len);
    data = rt.redact(std::string_view(s, len));
  } else if (lua_type(L, 2) == LUA_TTABLE) {
    data = rt.redact_json(to_json(L, 2, "runara.write_file: data", rt.memory_left(),
                                  [&rt] { return rt.stopping(); }))
               .dump(2) + "\n";
  } else {
    args::fail(L, "runara.write_file", 2, "data", "a string or a table (written as JSON)");
  }
  std::string error;
  if (!check_writable_relative(path, error)) args::raise(L, "runara.write_file: %s", error.c_str());
  if (path == "run.log" || path == "results.json") {
    args::raise(L, "runara.write_file: '%s' is written by runara itself; choose another name", path.c_str());
  }
  auto job = std::make_unique<FileJob>();
  job->rt = &rt;
  job->writing = true;
  job->path = rt.out_dir() + "/" + path;
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

std::vector<std::string> readable_roots(Runtime::Impl& rt) {
  std::vector<std::string> roots{rt.script_dir_};
  for (const auto& path : rt.options_.permissions.read_paths) {
    std::string real = canonical_path(path, "");
    if (!real.empty()) roots.push_back(real);
  }
  if (rt.output_.created()) roots.push_back(canonical_path(rt.output_.dir(), ""));
  return roots;
}

}  // namespace runara
