// The ssh engine against OpenSSH's own tools, side by side in one run, on a private sshd on
// loopback (tests/support/sshd_fixture): SFTP upload/download vs `scp` and `sftp`, 100
// sequential short execs vs `ssh host true` over a ControlMaster connection, the event loop's
// longest stall while 8 sessions stream output, and 64 streams through `s:forward` vs the same
// server reached directly and through `ssh -N -L` (a runara run).
//
// Last, http_load by runara-agent on the machine (`on = s`) against the same load run here, with
// wrk as the peer (plain GETs), and at 4096 streams with each side's peak memory.
//
//   build/bench/runara_ssh_bench [MiB=1024]      (ONLY=sftp|execs|stall|forward|agent runs one part)
#include "child_process.hpp"
#include "sshd_fixture.hpp"
#include "ssh/sftp_transfer.hpp"
#include "ssh/exec.hpp"
#include "ssh/session.hpp"
#include "sim/fake_llm_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

using namespace runara;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

void run_until(uv_loop_t* loop, const std::function<bool()>& done) {
  while (!done()) uv_run(loop, UV_RUN_ONCE);
}

ssh::SessionOptions options_for(const test::SshdFixture& sshd) {
  ssh::SessionOptions o;
  o.address = "127.0.0.1";
  o.port = sshd.port();
  o.user = sshd.user();
  o.private_key = sshd.user_key_pem();
  o.accept_host_key = [](const ssh::HostKey&) { return true; };
  return o;
}

std::unique_ptr<ssh::SshSession> connect(uv_loop_t* loop, const test::SshdFixture& sshd) {
  auto s = std::make_unique<ssh::SshSession>(loop, options_for(sshd));
  bool done = false;
  s->connect([&](Status connected) {
    if (!connected) std::fprintf(stderr, "connect: %s\n", connected.error().c_str());
    done = true;
  });
  run_until(loop, [&] { return done; });
  return s;
}

double transfer(uv_loop_t* loop, ssh::SshSession& s, ssh::TransferOptions o) {
  std::optional<ssh::TransferResult> r;
  auto t = ssh::SftpTransfer::start(s, std::move(o), [&](const ssh::TransferResult& x) { r = x; });
  if (!t) return std::fprintf(stderr, "transfer: %s\n", t.error().c_str()), 0.0;
  run_until(loop, [&] { return r.has_value(); });
  if (!r->error.empty()) std::fprintf(stderr, "transfer: %s\n", r->error.c_str());
  return r->seconds;
}

double timed_shell(const std::string& command) {
  const auto t0 = Clock::now();
  test::ChildProcess child({"/bin/sh", "-c", command});
  child.close_stdin();
  const test::ChildResult r = child.wait(600);
  if (r.exit_code != 0) std::fprintf(stderr, "%s: exit %d: %s\n", command.c_str(), r.exit_code, r.err.c_str());
  return since(t0);
}

std::string ssh_opts(const test::SshdFixture& sshd) {
  return "-o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -i " +
         sshd.user_key_path() + " ";
}

void bench_sftp(uv_loop_t* loop, test::SshdFixture& sshd, int mib) {
  const std::string d = sshd.dir(), src = d + "/src", dst = d + "/dst";
  test::run_tool({"/bin/sh", "-c", "head -c " + std::to_string(mib) + "M /dev/urandom > " + src});
  auto s = connect(loop, sshd);
  const double mb = mib * 1.048576;
  const double up = transfer(loop, *s, {ssh::TransferOptions::Direction::Upload, src, dst});
  const double down = transfer(loop, *s, {ssh::TransferOptions::Direction::Download, d + "/back", dst});
  // Byte for byte: what went up is the source, what came back is too (cmp, an independent reader).
  const bool same = test::ChildProcess({"/usr/bin/cmp", "-s", src, d + "/back"}).wait(600).exit_code == 0 &&
                    test::ChildProcess({"/usr/bin/cmp", "-s", src, dst}).wait(600).exit_code == 0;
  const std::string o = ssh_opts(sshd), p = std::to_string(sshd.port()), host = sshd.user() + "@127.0.0.1";
  if (const char* block = std::getenv("BLOCK_MIB")) {  // the pipeline depth, to explore
    ssh::TransferOptions t{ssh::TransferOptions::Direction::Upload, src, dst};
    t.block_bytes = static_cast<std::size_t>(std::atoi(block)) << 20;
    const double u = transfer(loop, *s, t);
    t = {ssh::TransferOptions::Direction::Download, d + "/back", dst};
    t.block_bytes = static_cast<std::size_t>(std::atoi(block)) << 20;
    std::printf("  block %s MiB: upload %.1f MB/s, download %.1f MB/s\n", block, mb / u, mb / transfer(loop, *s, t));
  }
  const double scp_up = timed_shell("scp -q " + o + "-P " + p + " " + src + " " + host + ":" + dst);
  const double scp_down = timed_shell("scp -q " + o + "-P " + p + " " + host + ":" + dst + " " + d + "/back");
  const double sftp_up = timed_shell("echo 'put " + src + " " + dst + "' | sftp -q " + o + "-P " + p + " -b - " + host);
  const double sftp_down = timed_shell("echo 'get " + dst + " " + d + "/back' | sftp -q " + o + "-P " + p + " -b - " + host);
  std::printf("SFTP %d MiB on loopback (MB/s; OpenSSH tools include their connection setup); runara's copies %s\n", mib,
              same ? "match the source byte for byte (cmp)" : "DIFFER FROM THE SOURCE");
  std::printf("  upload:   runara %7.1f   scp %7.1f   sftp %7.1f\n", mb / up, mb / scp_up, mb / sftp_up);
  std::printf("  download: runara %7.1f   scp %7.1f   sftp %7.1f\n", mb / down, mb / scp_down, mb / sftp_down);
  std::remove(src.c_str());
  std::remove(dst.c_str());
  std::remove((d + "/back").c_str());
}

void bench_execs(uv_loop_t* loop, test::SshdFixture& sshd) {
  auto s = connect(loop, sshd);
  const auto t0 = Clock::now();
  for (int i = 0; i < 100; ++i) {
    std::optional<ssh::ExecResult> r;
    auto e = ssh::SshExec::start(*s, ssh::ExecOptions{.command = "true"}, [&](const ssh::ExecResult& x) { r = x; });
    if (!e) break;
    run_until(loop, [&] { return r.has_value(); });
  }
  const double ours = since(t0);
  const std::string cp = sshd.dir() + "/cm", o = ssh_opts(sshd) + "-o ControlPath=" + cp + " -p " +
                                                   std::to_string(sshd.port()) + " " + sshd.user() + "@127.0.0.1";
  // Its own output elsewhere: the backgrounded master must not hold our pipes open.
  timed_shell("ssh -f -N -o ControlMaster=yes " + o + " </dev/null >/dev/null 2>&1");
  const double theirs = timed_shell("i=0; while [ $i -lt 100 ]; do ssh " + o + " true; i=$((i+1)); done");
  timed_shell("ssh -O exit " + o + " 2>/dev/null; true");
  std::printf("100 sequential execs of `true` on one connection\n");
  std::printf("  runara %.2f s (%.1f ms each)   ssh+ControlMaster %.2f s (%.1f ms each)\n", ours, ours * 10, theirs,
              theirs * 10);
}

void bench_stall(uv_loop_t* loop, test::SshdFixture& sshd) {
  std::vector<std::unique_ptr<ssh::SshSession>> sessions;
  for (int i = 0; i < 8; ++i) sessions.push_back(connect(loop, sshd));
  // Wall time between iterations, and the loop thread's own CPU time between them: on a
  // machine whose cores are shared, the wall gap includes time the thread was not scheduled.
  struct Probe {
    uv_idle_t idle;
    uint64_t last = 0, worst = 0, iterations = 0, last_cpu = 0, worst_cpu = 0, first = 0, worst_at = 0;
    uint64_t worst_cpu_streaming = 0;  // before the first command ends (its 8 MiB tail is copied then)
    const int* done = nullptr;
  } probe;
  uv_idle_init(loop, &probe.idle);
  probe.idle.data = &probe;
  std::vector<std::unique_ptr<ssh::SshExec>> execs;
  int done = 0;
  std::size_t lines = 0;
  for (auto& s : sessions) {
    ssh::ExecOptions o;
    o.command = "yes 'a line of output, about sixty bytes long, streamed' | head -c 50000000";
    o.on_stdout = [&](std::string_view) { ++lines; };
    if (auto e = ssh::SshExec::start(*s, o, [&](const ssh::ExecResult&) { ++done; })) execs.push_back(std::move(*e));
  }
  probe.done = &done;
  probe.last = probe.first = uv_hrtime();
  uv_idle_start(&probe.idle, [](uv_idle_t* h) {
    auto* p = static_cast<Probe*>(h->data);
    const uint64_t now = uv_hrtime();
    p->worst = std::max(p->worst, now - p->last);
    p->last = now;
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    const uint64_t cpu = static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
    if (p->last_cpu && *p->done == 0) p->worst_cpu_streaming = std::max(p->worst_cpu_streaming, cpu - p->last_cpu);
    if (p->last_cpu && cpu - p->last_cpu > p->worst_cpu) {
      p->worst_cpu = cpu - p->last_cpu;
      p->worst_at = now - p->first;
    }
    p->last_cpu = cpu;
    ++p->iterations;
  });
  const auto t0 = Clock::now();
  run_until(loop, [&] { return done == 8; });
  const double secs = since(t0);
  uv_close(reinterpret_cast<uv_handle_t*>(&probe.idle), nullptr);
  std::printf("8 sessions streaming 50 MB each (%zu lines, %.1f MB/s in all)\n", lines, 400 / secs);
  std::printf("  longest gap between loop iterations: %.2f ms wall, %.2f ms of loop-thread CPU (%lu iterations; "
              "the CPU one %.3f s after the start)\n",
              probe.worst / 1e6, probe.worst_cpu / 1e6, static_cast<unsigned long>(probe.iterations), probe.worst_at / 1e9);
  std::printf("  while all 8 stream (before the first ends): %.2f ms of loop-thread CPU at most\n",
              probe.worst_cpu_streaming / 1e6);
  execs.clear();
}

// A port nothing listens on now (bound, then released).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

bool accepts(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

// http_load at 64 streams against runara's fake LLM server (in this process), directly, through
// s:forward and through OpenSSH's own `ssh -N -L` tunnel to the same sshd, in one runara run,
// alternated three times. The server streams 64 tokens 2 ms apart after 10 ms, so a request
// takes about 140 ms and 64 streams ask ~460 requests/s of a tunnel.
// FWD_STREAMS and FWD_ITL_MS change the stream count and the token gap (64 and 2).
void bench_forward(test::SshdFixture& sshd) {
  const std::string dir = test::temp_dir("ssh-bench-forward");
  const std::string host = "127.0.0.1:" + std::to_string(sshd.port());
  const int streams = std::getenv("FWD_STREAMS") ? std::atoi(std::getenv("FWD_STREAMS")) : 64;
  const double itl_ms = std::getenv("FWD_ITL_MS") ? std::atof(std::getenv("FWD_ITL_MS")) : 2;
  FakeLlmConfig config;
  config.ttft_ms = 10;
  config.itl_ms = itl_ms;
  config.output_tokens = 64;
  FakeLlmServer server(config);
  const int server_port = server.start();
  const int tunnel_port = free_port();
  test::ChildProcess tunnel({"/bin/sh", "-c", "exec ssh -N " + ssh_opts(sshd) + "-o ExitOnForwardFailure=yes -L " +
                                                  std::to_string(tunnel_port) + ":127.0.0.1:" + std::to_string(server_port) +
                                                  " -p " + std::to_string(sshd.port()) + " " + sshd.user() + "@127.0.0.1"});
  for (int i = 0; i < 100 && !accepts(tunnel_port); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::ofstream(dir + "/forward.lua") << "local streams, port, tunnel = " << streams << ", " << server_port << ", "
                                      << tunnel_port << R"(
local s = ssh.connect(")" << host << R"(")
local paths = { { "direct", "http://127.0.0.1:" .. port }, { "s:forward", s:forward(port) },
                { "ssh -L", "http://127.0.0.1:" .. tunnel } }
for round = 1, 3 do
  for _, p in ipairs(paths) do
    local r = http_load.run{ name = p[1]:gsub("[: ]", "-") .. "-" .. round, url = p[2], model = "fake-model",
                             max_tokens = 64, concurrency = streams, duration = 5, warmup = streams, quiet = true,
                             record = "none" }
    print(string.format("  %-9s round %d: %6.1f req/s  %7.0f tok/s  TTFT p50 %6.2f p99 %6.2f ms" ..
                        "  ITL p50 %5.2f p99 %5.2f ms  failed %d", p[1], round, r.request_throughput,
                        r.output_throughput, r.median_ttft_ms, r.p99_ttft_ms, r.median_itl_ms, r.p99_itl_ms, r.failed))
  end
end
)";
  std::printf("s:forward: %d streams, tokens %g ms apart, direct vs s:forward vs `ssh -N -L` (5 s each, after as many "
              "warm-up requests)\n", streams, itl_ms);
  const test::ChildResult r =
      test::run_runara({"--out", dir + "/out", "--allow-host", "127.0.0.1:" + std::to_string(server_port), "--allow-host",
                        "127.0.0.1:" + std::to_string(tunnel_port), "--allow-host", host, "--ssh-key", sshd.user_key_path(),
                        "--accept-new-host-keys", dir + "/forward.lua"},
                       180, {{"HOME", dir}});
  std::printf("%s", r.out.c_str());
  if (r.exit_code != 0) std::fprintf(stderr, "forward bench: exit %d\n%s\n", r.exit_code, r.err.c_str());
  tunnel.signal(SIGTERM);
  tunnel.wait(10);
}

// http_load run here and by runara-agent on the machine (`on = s`, through the same sshd) against
// the same server in this process, alternated three times in one runara run, with wrk on the
// same server as the peer: (1) plain GETs of a small static body, 64 connections, 5 s each (the
// wrk comparison); (2) 64 streams, 20 requests each, the medians side by side (parity); (3)
// AGENT_STREAMS (4096) streams of 64 tokens 100 ms apart, 2 requests each. (2) and (3) run each side in its own runara run, so that
// runara's peak RSS (local) and the agent's (agent_max_rss_kb) are the load's alone.
void bench_agent(test::SshdFixture& sshd) {
  const std::string dir = test::temp_dir("ssh-bench-agent");
  const std::string host = "127.0.0.1:" + std::to_string(sshd.port());
  auto runara = [&](const std::string& name, const std::string& script, int port) {
    std::ofstream(dir + "/" + name + ".lua") << script;
    return test::run_runara({"--out", dir + "/out-" + name, "--allow-host", "127.0.0.1:" + std::to_string(port),
                             "--allow-host", host, "--ssh-key", sshd.user_key_path(), "--accept-new-host-keys",
                             "--max-memory", "4G", dir + "/" + name + ".lua"},
                            600, {{"HOME", dir}});
  };
  {
    FakeLlmConfig config;
    config.serve_static = true;
    config.static_body = "hello from a static page\n";
    FakeLlmServer server(config);
    const int port = server.start();
    const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/";
    std::printf("agent: plain GETs, 64 connections, 5 s each: wrk, http_load here, http_load by the agent\n");
    const std::string wrk = "wrk -t2 -c64 -d5s " + url + " 2>&1 | awk '/Requests\\/sec/ {print $2}'";
    const std::string script = "local s = ssh.connect(\"" + host + "\")\nlocal url = \"" + url + R"("
for round = 1, 3 do
  for _, on in ipairs({ false, s }) do
    local r = http_load.run{ name = (on and "agent-" or "here-") .. round, url = url, concurrency = 64, threads = 2,
                             duration = 5, quiet = true, record = "none", on = on or nil }
    print(string.format("  %-6s round %d: %9.0f req/s  failed %d", on and "agent" or "here", round, r.request_throughput, r.failed))
  end
end
)";
    for (int round = 1; round <= 3; ++round) {
      FILE* p = popen(wrk.c_str(), "r");
      char line[64] = {0};
      if (p && std::fgets(line, sizeof line, p)) std::printf("  wrk    round %d: %9.0f req/s\n", round, std::atof(line));
      if (p) pclose(p);
    }
    const test::ChildResult r = runara("get", script, port);
    std::printf("%s", r.out.c_str());
    if (r.exit_code != 0) std::fprintf(stderr, "agent bench: exit %d\n%s\n", r.exit_code, r.err.c_str());
  }
  // Parity (64 streams, 20 ms to the first token, 5 ms gaps: medians side by side) and memory
  // (AGENT_STREAMS, default 4096, 64 tokens 100 ms apart), each side in its own runara run.
  const int many = std::getenv("AGENT_STREAMS") ? std::atoi(std::getenv("AGENT_STREAMS")) : 4096;
  for (const auto& [streams, ttft, itl, each] : {std::tuple{64, 20.0, 5.0, 20}, std::tuple{many, 100.0, 100.0, 2}}) {
    FakeLlmConfig config;
    config.ttft_ms = ttft;
    config.itl_ms = itl;
    config.output_tokens = 64;
    FakeLlmServer server(config);
    const int port = server.start();
    std::printf("agent: %d streams, first token after %g ms, 64 tokens %g ms apart, %d requests each: here vs by the agent\n",
                streams, ttft, itl, each);
    for (const bool remote : {false, true}) {
      const std::string script = "local s = ssh.connect(\"" + host + "\")\n" +
          "local r = http_load.run{ name = 'streams', url = 'http://127.0.0.1:" + std::to_string(port) +
          "', model = 'fake-model', max_tokens = 64, concurrency = " + std::to_string(streams) + ", requests = " +
          std::to_string(each * streams) + ", quiet = true, record = 'none'" + (remote ? ", on = s" : "") + R"( }
print(string.format("  %-6s %7.0f tok/s  %d done  %d tokens  TTFT p50 %7.3f p99 %7.2f ms  TPOT p50 %7.3f ms  ITL p50 %6.3f p99 %6.2f ms" ..
  "  failed %d  threads %d  agent RSS %s KiB", r.load_host == "local" and "here" or "agent", r.output_throughput, r.completed,
  r.total_output_tokens, r.median_ttft_ms, r.p99_ttft_ms, r.median_tpot_ms, r.median_itl_ms, r.p99_itl_ms, r.failed, r.threads,
  tostring(r.agent_max_rss_kb)))
)";
      const test::ChildResult r = runara(remote ? "streams-agent" : "streams-here", script, port);
      std::printf("%s  runara's peak RSS: %ld KiB\n", r.out.c_str(), r.max_rss_kb);
      if (r.exit_code != 0) std::fprintf(stderr, "agent bench: exit %d\n%s\n", r.exit_code, r.err.c_str());
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int mib = argc > 1 ? std::atoi(argv[1]) : 1024;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  uv_loop_t loop;
  uv_loop_init(&loop);
  {
    test::SshdFixture sshd;
    const std::string only = std::getenv("ONLY") ? std::getenv("ONLY") : "";  // sftp, execs or stall
    if (only.empty() || only == "sftp") bench_sftp(&loop, sshd, mib);
    if (only.empty() || only == "execs") bench_execs(&loop, sshd);
    if (only.empty() || only == "stall") bench_stall(&loop, sshd);
    if (only.empty() || only == "forward") bench_forward(sshd);
    if (only.empty() || only == "agent") bench_agent(sshd);
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
}
