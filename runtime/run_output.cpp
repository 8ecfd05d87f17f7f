#include "run_output.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>

namespace runara {

bool read_file_text(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

std::string make_dirs(const std::string& path, unsigned mode) {
  std::string partial;
  std::size_t start = 0;
  while (start < path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    partial = path.substr(0, end);
    if (!partial.empty() && mkdir(partial.c_str(), mode) != 0 && errno != EEXIST) {
      return "cannot create folder '" + partial + "': " + std::strerror(errno);
    }
    start = end + 1;
  }
  return {};
}

RunOutput::~RunOutput() { close(); }

void RunOutput::configure(const std::string& requested, const std::string& script_name) {
  if (!requested.empty()) {
    dir_ = requested;
    return;
  }
  char stamp[32];
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &utc);
  dir_ = "results/" + std::string(stamp) + "-" + script_name;
}

const std::string& RunOutput::dir() {
  if (!created_) {
    std::string error = make_dirs(dir_);
    created_ = error.empty();
  }
  return dir_;
}

void RunOutput::append_log(const std::string& line) {
  if (!log_) {
    dir();
    if (!created_) return;
    log_ = std::fopen((dir_ + "/run.log").c_str(), "a");
    if (!log_) return;
  }
  std::fputs(line.c_str(), log_);
  std::fputc('\n', log_);
  std::fflush(log_);
}

std::string RunOutput::write(const std::string& relative, const std::string& data) {
  dir();
  if (!created_) return "cannot create the output folder '" + dir_ + "'";
  return write_file_atomic(dir_ + "/" + relative, data);
}

std::string write_file_atomic(const std::string& path, const std::string& data) {
  const std::size_t slash = path.rfind('/');
  if (std::string error = make_dirs(path.substr(0, slash)); !error.empty()) return error;
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!out) return "cannot write '" + path + "': " + std::strerror(errno);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return "cannot write '" + path + "': " + std::strerror(errno);
  }
  return {};
}

void RunOutput::close() {
  if (log_) std::fclose(log_);
  log_ = nullptr;
}

}  // namespace runara
