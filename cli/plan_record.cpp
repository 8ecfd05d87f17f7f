#include "plan_record.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <set>

namespace runara::cli {

namespace {

std::string escaped(const std::string& field) {
  std::string out;
  for (char c : field.substr(0, kMaxFieldBytes)) {
    if (c == '\\') out += "\\\\";
    else if (c == '\t') out += "\\t";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::vector<std::string> fields_of(const std::string& line) {
  std::vector<std::string> fields(1);
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '\t') {
      fields.emplace_back();
    } else if (c == '\\' && i + 1 < line.size()) {
      const char next = line[++i];
      fields.back() += next == 't' ? '\t' : next == 'n' ? '\n' : next;
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

const char* kind_name(Activity::Kind kind) {
  switch (kind) {
    case Activity::Kind::machine_created: return "machine";
    case Activity::Kind::machine_gone: return "gone";
    case Activity::Kind::command: return "command";
    case Activity::Kind::transfer: return "transfer";
    case Activity::Kind::load: return "load";
    case Activity::Kind::script_limit: return "limit";
    case Activity::Kind::grant_refused: return "denied";
  }
  return "?";
}

void count(PlanRecord& r, std::map<std::string, int>& into, const std::string& key) {
  const auto it = into.find(key);
  if (it != into.end()) {
    ++it->second;
  } else if (into.size() < kMaxEntries) {
    into[key.substr(0, 400)] = 1;
  } else {
    ++r.left_out;
  }
}

// The rehearsal's output folder is a temporary one: shown as OUT/ (where a run's would be).
std::string outside_paths(std::string text, const std::string& out_dir) {
  for (std::size_t at = 0; (at = text.find(out_dir + "/", at)) != std::string::npos;) text.replace(at, out_dir.size(), "OUT");
  return text;
}

}  // namespace

// One write per entry, whole: the plan reads lines, and the mutex keeps two threads' entries
// from interleaving. A plan that is gone (EPIPE) ends the rehearsal's record, nothing else.
void PlanRecordWriter::entry(const std::vector<std::string>& fields) {
  std::string line;
  for (std::size_t i = 0; i < fields.size(); ++i) line += (i ? "\t" : "") + escaped(fields[i]);
  line += '\n';
  std::lock_guard<std::mutex> lock(mutex_);
  std::size_t at = 0;
  while (fd_ >= 0 && at < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + at, line.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    at += static_cast<std::size_t>(n);
  }
}

void PlanRecordWriter::activity(const Activity& a) {
  char number[64];
  std::snprintf(number, sizeof number, "%.17g", a.number);
  switch (a.kind) {
    case Activity::Kind::machine_created:
      return entry({kind_name(a.kind), a.machine, a.size, a.region, a.image, number});
    case Activity::Kind::machine_gone: return entry({kind_name(a.kind), a.machine});
    case Activity::Kind::command:
    case Activity::Kind::transfer: return entry({kind_name(a.kind), a.machine, a.text});
    case Activity::Kind::load: return entry({kind_name(a.kind), a.text});
    case Activity::Kind::script_limit: return entry({kind_name(a.kind), number});
    case Activity::Kind::grant_refused: return denied(a.text);  // the runtime hands these to denied() first
  }
}

void PlanRecordWriter::denied(const std::string& grant) {
  if (++denied_ <= 1000) entry({"denied", grant.substr(0, 300)});
}

void PlanRecordWriter::outcome(int exit_code, const std::string& message) {
  entry({"outcome", std::to_string(exit_code), message});
}

bool PlanRecordReader::drain() {
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK;
    if (n == 0) return false;
    const std::size_t room = bytes_.size() < kMaxRecordBytes ? kMaxRecordBytes - bytes_.size() : 0;
    const std::size_t kept = std::min(room, static_cast<std::size_t>(n));
    bytes_.append(buffer, kept);
    dropped_entries_ += static_cast<std::size_t>(std::count(buffer + kept, buffer + n, '\n'));
  }
}

PlanRecord PlanRecordReader::record(const std::string& out_dir) const {
  PlanRecord r;
  r.left_out = dropped_entries_;
  std::set<std::string> alive;
  // Only whole lines: a rehearsal killed mid-write leaves a part entry, which is not one.
  for (std::size_t start = 0, end; (end = bytes_.find('\n', start)) != std::string::npos; start = end + 1) {
    const std::vector<std::string> f = fields_of(bytes_.substr(start, end - start));
    const std::string& kind = f[0];
    if (kind == "machine" && f.size() == 6) {
      if (r.machines.size() < kMaxEntries) r.machines.push_back({f[1], f[2], f[3], f[4], std::strtod(f[5].c_str(), nullptr)});
      else ++r.left_out;
      alive.insert(f[1]);
      r.peak_machines = std::max(r.peak_machines, static_cast<int>(alive.size()));
    } else if (kind == "gone" && f.size() == 2) {
      alive.erase(f[1]);
    } else if (kind == "command" && f.size() == 3) {
      count(r, r.commands, f[2]);
    } else if (kind == "transfer" && f.size() == 3) {
      count(r, r.files, outside_paths(f[2], out_dir) + " (" + f[1] + ")");
    } else if (kind == "load" && f.size() == 2) {
      count(r, r.loads, f[1]);
    } else if (kind == "limit" && f.size() == 2) {
      const double s = std::strtod(f[1].c_str(), nullptr);
      if (s > 0 && (r.script_limit_s == 0 || s < r.script_limit_s)) r.script_limit_s = s;
    } else if (kind == "denied" && f.size() == 2) {
      if (r.denied.size() < 100 && std::find(r.denied.begin(), r.denied.end(), f[1]) == r.denied.end())
        r.denied.push_back(f[1]);
    } else if (kind == "outcome" && f.size() == 3) {
      r.outcome_known = true;
      r.exit_code = std::atoi(f[1].c_str());
      r.message = f[2];
    }
  }
  return r;
}

}  // namespace runara::cli
