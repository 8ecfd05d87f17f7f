// gpu_metrics figures: parse time of one 8-GPU sample per tool, and the event loop's longest
// stall while a sampler reads 8 GPUs at 10 Hz from shim tools (nvidia-smi streaming, amd-smi
// polled), as the issue asks (goals: < 50 µs per 8-GPU amd-smi parse, < 1 ms stall).
//
//   build/bench/runara_gpu_bench [seconds=10]
//
// The 8-GPU amd-smi document repeats the RX 6600 recording's GPU entry (tests/fixtures/gpu/) with
// gpu = 0..7: no full MI300X `amd-smi metric --json` recording exists (see its SOURCES.md); the
// entry has every section an MI300X entry has, so its size is representative (about 8.6 KB per
// GPU, 69 KB in all).
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <uv.h>

#include "gpu/amd_smi_parser.hpp"
#include "gpu/sampler.hpp"
#include "gpu/local_target.hpp"
#include "gpu/nvidia_smi_parser.hpp"

using namespace runara::gpu;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string eight_gpu_amd_smi() {
  auto one = nlohmann::json::parse(slurp(std::string(RUNARA_SOURCE_DIR) +
                                         "/tests/fixtures/gpu/amd-smi/radeon-rx6600-amdsmi-list-shape-metric.json"));
  nlohmann::json all = nlohmann::json::array();
  for (int i = 0; i < 8; ++i) {
    nlohmann::json g = one[0];
    g["gpu"] = i;
    all.push_back(g);
  }
  return all.dump(4);
}

std::string eight_gpu_nvidia() {
  std::string out;
  for (int i = 0; i < 8; ++i) out += std::to_string(i) + ", 631.95, 19818, 81559, 100, 11, 59, 54, 1980, 2619\n";
  return out;
}

template <class Parse>
void time_parse(const char* what, const std::string& text, Parse parse) {
  std::vector<double> us;
  for (int i = 0; i < 200; ++i) parse(text);  // warm-up
  for (int i = 0; i < 5000; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = parse(text);
    const auto t1 = std::chrono::steady_clock::now();
    if (r.gpus.size() != 8) std::abort();
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::sort(us.begin(), us.end());
  std::printf("  %-34s %7zu bytes   median %7.1f us   p99 %7.1f us\n", what, text.size(), us[us.size() / 2],
              us[us.size() * 99 / 100]);
}

struct Probe {
  uv_idle_t idle;
  uint64_t last = 0, worst = 0, iterations = 0, last_cpu = 0, worst_cpu = 0;
};

uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

void stall(uv_loop_t* loop, const std::string& shims, Backend backend, double seconds) {
  auto target = std::make_shared<LocalTarget>(loop, shims + ":/usr/bin:/bin");
  GpuSampler::Options o;
  o.backend = backend;
  o.interval_s = 0.1;
  std::vector<std::string> problems;
  GpuSampler sampler(loop, target, o, [&](const std::string& p) { problems.push_back(p); });
  Probe probe;
  uv_idle_init(loop, &probe.idle);
  probe.idle.data = &probe;
  uv_timer_t end;
  uv_timer_init(loop, &end);
  bool done = false;
  end.data = &done;
  sampler.start();
  probe.last = uv_hrtime();
  uv_idle_start(&probe.idle, [](uv_idle_t* h) {
    auto* p = static_cast<Probe*>(h->data);
    const uint64_t now = uv_hrtime(), cpu = thread_cpu_ns();
    p->worst = std::max(p->worst, now - p->last);
    if (p->last_cpu) p->worst_cpu = std::max(p->worst_cpu, cpu - p->last_cpu);
    p->last = now;
    p->last_cpu = cpu;
    ++p->iterations;
  });
  uv_timer_start(&end, [](uv_timer_t* t) { *static_cast<bool*>(t->data) = true; }, static_cast<uint64_t>(seconds * 1000), 0);
  while (!done) uv_run(loop, UV_RUN_ONCE);
  sampler.stop();
  uv_close(reinterpret_cast<uv_handle_t*>(&probe.idle), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&end), nullptr);
  uv_run(loop, UV_RUN_NOWAIT);
  std::size_t readings = 0;
  for (const auto& s : sampler.samples()) readings += s.gpus.size();
  std::printf("  %-10s %4zu samples (%zu GPU readings) in %.0f s, %zu problem(s); longest gap between loop "
              "iterations: %.3f ms wall, %.3f ms loop-thread CPU\n",
              std::string(backend_name(backend)).c_str(), sampler.samples().size(), readings, seconds, problems.size(),
              probe.worst / 1e6, probe.worst_cpu / 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 10;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const std::string amd = eight_gpu_amd_smi(), nv = eight_gpu_nvidia();
  std::printf("Parse time of one 8-GPU sample (5000 parses)\n");
  time_parse("amd-smi metric --json (8 GPUs)", amd, [](const std::string& t) { return parse_amd_smi_metric(t); });
  time_parse("amd-smi, nlohmann reference (8 GPUs)", amd,
             [](const std::string& t) { return parse_amd_smi_metric_reference(t); });
  time_parse("nvidia-smi csv (8 lines)", nv,
             [](const std::string& t) { return parse_nvidia_smi_csv(t, nvidia_sample_fields()); });

  char tmpl[] = "/tmp/runara-gpu-bench-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  std::ofstream(dir + "/amd8.json") << amd;
  std::ofstream(dir + "/nvidia-smi") << "#!/bin/sh\nwhile :; do\n"
                                     << "printf '" << nv << "'\nsleep 0.1\ndone\n";
  std::ofstream(dir + "/amd-smi") << "#!/bin/sh\ncat '" << dir << "/amd8.json'\n";
  chmod((dir + "/nvidia-smi").c_str(), 0755);
  chmod((dir + "/amd-smi").c_str(), 0755);
  uv_loop_t loop;
  uv_loop_init(&loop);
  std::printf("Sampler at 10 Hz x 8 GPUs from shim tools\n");
  stall(&loop, dir, Backend::nvidia_smi, seconds);
  stall(&loop, dir, Backend::amd_smi, seconds);
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  std::filesystem::remove_all(dir);
  return 0;
}
