// Summaries and CSV of sampled GPU readings (runtime/gpu/summary.*, gpu/csv.*): energy by
// the counter or by trapezoids, phases from marks, per-GPU peaks and means.
#include <catch2/catch.hpp>

#include "gpu/csv.hpp"
#include "gpu/summary.hpp"

#include <random>
#include <set>

using namespace runara::gpu;

namespace {

Sample at(double t, double watts, std::optional<double> counter = std::nullopt, int gpus = 1) {
  Sample s;
  s.t_s = t;
  for (int i = 0; i < gpus; ++i) {
    GpuReading g;
    g.index = i;
    g.power_w = watts;
    g.energy_j = counter;
    g.vram_used_bytes = 1e9 * (i + 1) + t;
    g.gpu_util_pct = watts / 10;
    g.temp_edge_c = 40 + t;
    s.gpus.push_back(g);
  }
  return s;
}

// 300 W for 10 s, then 600 W for 10 s, read at 10 Hz: 3000 J + 6000 J.
std::vector<Sample> step_curve(bool with_counter) {
  std::vector<Sample> out;
  for (int i = 0; i <= 200; ++i) {
    const double t = i * 0.1;
    const double w = t < 10.0 - 1e-9 ? 300 : 600;
    const double joules = t <= 10 ? 300 * t : 3000 + 600 * (t - 10);
    out.push_back(at(t, w, with_counter ? std::optional<double>(joules) : std::nullopt));
  }
  return out;
}

}  // namespace

TEST_CASE("energy of a 300 W -> 600 W step by trapezoids is exact within 1 %", "[gpu_summary]") {
  auto phases = summarize(step_curve(false), {{0, "low"}, {10, "high"}}, 20);
  REQUIRE(phases.size() == 3);
  const PhaseSummary& run = phases[0];
  CHECK(run.label == "run");
  REQUIRE(run.energy_j);
  CHECK(*run.energy_j == Approx(9000).epsilon(0.01));
  CHECK_FALSE(run.gpus[0].energy_from_counter);
  CHECK(*phases[1].energy_j == Approx(3000).epsilon(0.01));
  CHECK(*phases[2].energy_j == Approx(6000).epsilon(0.01));
  // Phases split the curve, so they add up to the run.
  CHECK(*phases[1].energy_j + *phases[2].energy_j == Approx(*run.energy_j).epsilon(1e-9));
  CHECK(phases[2].gpus[0].max_power_w == 600.0);
  CHECK(*phases[1].gpus[0].mean_power_w == Approx(300).epsilon(0.01));
}

TEST_CASE("energy comes from the tool's counter when every sample has one", "[gpu_summary]") {
  auto samples = step_curve(true);
  // A power reading that disagrees with the counter shows which one was used.
  for (auto& s : samples) s.gpus[0].power_w = 1;
  auto phases = summarize(samples, {{5, "middle"}}, 20);
  CHECK(phases[0].gpus[0].energy_from_counter);
  CHECK(*phases[0].energy_j == Approx(9000).epsilon(1e-9));
  CHECK(*phases[1].energy_j == Approx(9000 - 1500).epsilon(1e-9));
  // A counter that goes backwards (reset, wrap) is not trusted: trapezoids instead.
  samples[100].gpus[0].energy_j = 0;
  CHECK_FALSE(summarize(samples, {}, 20)[0].gpus[0].energy_from_counter);
}

TEST_CASE("a counter that does not advance while power is drawn gives the integrated figure, and says why", "[gpu_summary]") {
  // The counter stuck at 0 (recorded on real AMD boards) while the board draws 300 W, then 600 W.
  auto samples = step_curve(true);
  for (auto& s : samples) s.gpus[0].energy_j = 0.0;
  auto phases = summarize(samples, {{10, "high"}}, 20);
  const GpuStats& run = phases[0].gpus[0];
  CHECK_FALSE(run.energy_from_counter);
  CHECK(*run.energy_j == Approx(9000).epsilon(0.01));
  CHECK(*run.counter_energy_j == 0.0);
  CHECK(*run.integrated_energy_j == Approx(9000).epsilon(0.01));
  CHECK(run.energy_note ==
        "power samples integrated (trapezoids): the energy counter did not advance while the power samples integrate to 9015 J "
        "(a stuck or lagging counter)");
  CHECK(phases[0].energy_source == "trapezoid");
  CHECK(phases[0].energy_note == run.energy_note);
  CHECK(*phases[1].energy_j == Approx(6000).epsilon(0.01));  // every window is judged on its own
  // A counter that advances far too slowly (a tenth of the power drawn) is not believed either.
  for (std::size_t i = 0; i < samples.size(); ++i) samples[i].gpus[0].energy_j = 30.0 * samples[i].t_s * 3;
  auto slow = summarize(samples, {}, 20)[0];
  CHECK_FALSE(slow.gpus[0].energy_from_counter);
  CHECK_THAT(slow.energy_note, Catch::Contains("the energy counter advanced only 1800 J while the power samples integrate to 9015 J"));
  // One that agrees within the margin is used, and the note gives the integrated figure beside it.
  for (std::size_t i = 0; i < samples.size(); ++i) samples[i].gpus[0].energy_j = 0.8 * (samples[i].t_s <= 10 ? 300 * samples[i].t_s : 3000 + 600 * (samples[i].t_s - 10));
  auto close = summarize(samples, {}, 20)[0];
  CHECK(close.gpus[0].energy_from_counter);
  CHECK(*close.energy_j == Approx(7200).epsilon(1e-9));
  CHECK(close.energy_source == "counter");
  CHECK(close.energy_note == "the tool's energy counter (the power samples integrate to 9015 J)");
}

TEST_CASE("energy notes: no counter, a counter with power readings far too low, GPUs that differ", "[gpu_summary]") {
  auto plain = summarize(step_curve(false), {}, 20)[0];
  CHECK(plain.energy_source == "trapezoid");
  CHECK(plain.energy_note == "power samples integrated (trapezoids): the tool reports no energy counter");
  // rocm-smi reading 0-2 W on a busy board: the counter is kept, the note says the power looks wrong.
  auto samples = step_curve(true);
  for (auto& s : samples) s.gpus[0].power_w = 1.5;
  auto low = summarize(samples, {}, 20)[0];
  CHECK(low.energy_source == "counter");
  CHECK(low.energy_note == "the tool's energy counter; the power samples integrate to only 30 J, so the power readings look too low");
  // Two GPUs, one counter stuck: the sum mixes both sources, and the note names each GPU.
  std::vector<Sample> two;
  for (int i = 0; i <= 20; ++i) {
    Sample s = at(i, 500, std::nullopt, 2);
    s.gpus[0].energy_j = 500.0 * i;
    s.gpus[1].energy_j = 0.0;
    two.push_back(s);
  }
  auto mixed = summarize(two, {}, 20)[0];
  CHECK(*mixed.energy_j == Approx(20000));
  CHECK(mixed.energy_source == "mixed");
  CHECK(mixed.energy_note ==
        "GPU 0: the tool's energy counter (the power samples integrate to 10000 J); GPU 1: power samples integrated (trapezoids): "
        "the energy counter did not advance while the power samples integrate to 10000 J (a stuck or lagging counter)");
}

TEST_CASE("summaries: several GPUs, peaks, means, nothing to stand on", "[gpu_summary]") {
  std::vector<Sample> s = {at(0, 100, std::nullopt, 2), at(1, 200, std::nullopt, 2), at(2, 300, std::nullopt, 2)};
  auto run = summarize(s, {}, 2)[0];
  REQUIRE(run.gpus.size() == 2);
  CHECK(run.gpus[1].index == 1);
  CHECK(run.gpus[1].samples == 3);
  CHECK(run.gpus[1].max_vram_used_bytes == 2e9 + 2);
  CHECK(run.peak_vram_bytes == 2e9 + 2);
  CHECK(run.gpus[0].mean_gpu_util_pct == Approx(20));
  CHECK(run.gpus[0].max_temp_edge_c == 42.0);
  CHECK_FALSE(run.gpus[0].max_temp_hotspot_c);
  CHECK(*run.energy_j == Approx(2 * (150 + 250)));
  CHECK(*run.mean_power_w == Approx(400));
  // A phase between samples still gets the interpolated energy; one past the end gets none.
  auto mid = summarize_window(s, 0.5, 0.75, "x");
  CHECK(*mid.energy_j == Approx(2 * 0.25 * (150 + 175) / 2));
  CHECK(mid.gpus[0].samples == 0);
  CHECK_FALSE(mid.gpus[0].mean_power_w);
  auto after = summarize_window(s, 5, 6, "late");
  CHECK_FALSE(after.energy_j);
  auto none = summarize({}, {}, 1)[0];
  CHECK(none.gpus.empty());
  CHECK_FALSE(none.energy_j);
}

TEST_CASE("samples CSV: one row per GPU per sample, phase labels quoted", "[gpu_summary]") {
  std::vector<Sample> s = {at(0, 100, std::nullopt, 2), at(1.5, 200)};
  s[1].gpus[0].temp_edge_c.reset();
  const std::string csv = samples_csv(s, {{1, "c=32, \"hot\""}});
  CHECK(csv ==
        "t_s,phase,gpu,power_w,energy_j,vram_used_bytes,vram_total_bytes,vram_used_pct,gpu_util_pct,mem_util_pct,"
        "temp_edge_c,temp_hotspot_c,temp_memory_c,clock_gfx_mhz,clock_mem_mhz\n"
        "0.000000,,0,100,,1000000000,,,10,,40,,,,\n"
        "0.000000,,1,100,,2000000000,,,10,,40,,,,\n"
        "1.500000,\"c=32, \"\"hot\"\"\",0,200,,1000000001.5,,,20,,,,,,\n");
}

TEST_CASE("energy of a ramp is the trapezoid's, exactly (a rectangle rule would be 10 % off)", "[gpu_summary]") {
  std::vector<Sample> ramp;
  for (int i = 0; i <= 10; ++i) ramp.push_back(at(i, 100.0 * i));  // 0 W -> 1000 W over 10 s, 1 Hz
  CHECK(*summarize(ramp, {}, 10)[0].energy_j == Approx(5000).epsilon(1e-12));
  // Clipped to a phase between samples: 2.5 s .. 4.5 s under the line w = 100 t.
  CHECK(*summarize_window(ramp, 2.5, 4.5, "x").energy_j == Approx(100 * (4.5 * 4.5 - 2.5 * 2.5) / 2).epsilon(1e-12));
}

namespace {

// The summaries as they were computed before Summarizer (every window scanning every sample
// once per GPU, series rebuilt each time): the reference the linear version must equal exactly.
namespace reference {

using Points = std::vector<std::pair<double, double>>;
using Field = std::optional<double> GpuReading::*;

Points series(const std::vector<Sample>& samples, int index, Field field) {
  Points out;
  for (const Sample& s : samples)
    for (const GpuReading& g : s.gpus)
      if (g.index == index && g.*field) out.emplace_back(s.t_s, *(g.*field));
  return out;
}

double lerp(const std::pair<double, double>& a, const std::pair<double, double>& b, double t) {
  if (b.first == a.first) return b.second;
  return a.second + (b.second - a.second) * (t - a.first) / (b.first - a.first);
}

std::optional<double> integrate(const Points& p, double a, double b) {
  if (p.size() < 2) return std::nullopt;
  a = std::max(a, p.front().first);
  b = std::min(b, p.back().first);
  if (b <= a) return std::nullopt;
  double sum = 0;
  for (std::size_t i = 1; i < p.size(); ++i) {
    const double lo = std::max(a, p[i - 1].first), hi = std::min(b, p[i].first);
    if (hi <= lo) continue;
    sum += (hi - lo) * (lerp(p[i - 1], p[i], lo) + lerp(p[i - 1], p[i], hi)) / 2;
  }
  return sum;
}

std::optional<double> counter_delta(const Points& p, double a, double b) {
  if (p.size() < 2) return std::nullopt;
  for (std::size_t i = 1; i < p.size(); ++i)
    if (p[i].second < p[i - 1].second) return std::nullopt;
  a = std::max(a, p.front().first);
  b = std::min(b, p.back().first);
  if (b <= a) return std::nullopt;
  auto at = [&](double t) {
    auto it = std::lower_bound(p.begin(), p.end(), t, [](const auto& x, double v) { return x.first < v; });
    if (it == p.begin()) return it->second;
    return lerp(*(it - 1), *it, t);
  };
  return at(b) - at(a);
}

struct Acc {
  int n = 0;
  double sum = 0;
  std::optional<double> max;
  void add(const std::optional<double>& v) {
    if (!v) return;
    ++n;
    sum += *v;
    max = std::max(max.value_or(*v), *v);
  }
  std::optional<double> mean() const { return n ? std::optional<double>(sum / n) : std::nullopt; }
};

GpuStats stats_for(const std::vector<Sample>& samples, int index, double a, double b) {
  GpuStats st;
  st.index = index;
  Acc power, vram, util, mutil, edge, hot, mem;
  for (const Sample& s : samples) {
    if (s.t_s < a || s.t_s > b) continue;
    for (const GpuReading& g : s.gpus) {
      if (g.index != index) continue;
      ++st.samples;
      power.add(g.power_w);
      vram.add(g.vram_used_bytes);
      util.add(g.gpu_util_pct);
      mutil.add(g.mem_util_pct);
      edge.add(g.temp_edge_c);
      hot.add(g.temp_hotspot_c);
      mem.add(g.temp_memory_c);
    }
  }
  st.mean_power_w = power.mean();
  st.max_power_w = power.max;
  st.max_vram_used_bytes = vram.max;
  st.mean_gpu_util_pct = util.mean();
  st.mean_mem_util_pct = mutil.mean();
  st.max_temp_edge_c = edge.max;
  st.max_temp_hotspot_c = hot.max;
  st.max_temp_memory_c = mem.max;
  const Points energy = series(samples, index, &GpuReading::energy_j);
  const Points watts = series(samples, index, &GpuReading::power_w);
  std::optional<double> counted;
  if (energy.size() >= 2 && (watts.size() < 2 || (energy.front().first <= watts.front().first &&
                                                  energy.back().first >= watts.back().first)))
    counted = counter_delta(energy, a, b);
  // The counter, unless it advanced less than half of what the power integrates to (from 1 J on:
  // a stuck or lagging counter, docs/gpu_metrics.md).
  const std::optional<double> integrated = integrate(watts, a, b);
  if (counted && !(integrated && *integrated >= 1.0 && *counted < 0.5 * *integrated)) {
    st.energy_j = counted;
    st.energy_from_counter = true;
  } else {
    st.energy_j = integrated;
  }
  return st;
}

PhaseSummary summarize_window(const std::vector<Sample>& samples, double start_s, double end_s, std::string label) {
  PhaseSummary p;
  p.label = std::move(label);
  p.start_s = start_s;
  p.end_s = end_s;
  std::set<int> indices;
  for (const Sample& s : samples)
    for (const GpuReading& g : s.gpus) indices.insert(g.index);
  for (int index : indices) {
    GpuStats st = stats_for(samples, index, start_s, end_s);
    if (st.energy_j) p.energy_j = p.energy_j.value_or(0) + *st.energy_j;
    if (st.mean_power_w) p.mean_power_w = p.mean_power_w.value_or(0) + *st.mean_power_w;
    if (st.max_vram_used_bytes) p.peak_vram_bytes = std::max(p.peak_vram_bytes.value_or(0), *st.max_vram_used_bytes);
    p.gpus.push_back(std::move(st));
  }
  return p;
}

}  // namespace reference

void check_same(const PhaseSummary& a, const PhaseSummary& b) {
  CHECK(a.label == b.label);
  CHECK(a.start_s == b.start_s);
  CHECK(a.end_s == b.end_s);
  CHECK(a.energy_j == b.energy_j);
  CHECK(a.mean_power_w == b.mean_power_w);
  CHECK(a.peak_vram_bytes == b.peak_vram_bytes);
  REQUIRE(a.gpus.size() == b.gpus.size());
  for (std::size_t i = 0; i < a.gpus.size(); ++i) {
    const GpuStats &x = a.gpus[i], &y = b.gpus[i];
    CHECK(x.index == y.index);
    CHECK(x.samples == y.samples);
    CHECK(x.mean_power_w == y.mean_power_w);
    CHECK(x.max_power_w == y.max_power_w);
    CHECK(x.energy_j == y.energy_j);
    CHECK(x.energy_from_counter == y.energy_from_counter);
    CHECK(x.max_vram_used_bytes == y.max_vram_used_bytes);
    CHECK(x.mean_gpu_util_pct == y.mean_gpu_util_pct);
    CHECK(x.mean_mem_util_pct == y.mean_mem_util_pct);
    CHECK(x.max_temp_edge_c == y.max_temp_edge_c);
    CHECK(x.max_temp_hotspot_c == y.max_temp_hotspot_c);
    CHECK(x.max_temp_memory_c == y.max_temp_memory_c);
  }
}

}  // namespace

// Issue 25: summaries used to scan every sample once per GPU and mark (minutes in stop() for a
// sampler with thousands of samples and marks); Summarizer gathers each GPU's readings once. Its
// figures equal the old computation's exactly, ordered samples or not.
TEST_CASE("summaries: the linear Summarizer equals the old per-window scan, bit for bit", "[gpu_summary][hostile_buffers]") {
  std::mt19937 rng(25);
  std::uniform_real_distribution<double> u(0, 1);
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<Sample> samples;
    double t = 0;
    const int n = 1 + trial * 7;
    for (int i = 0; i < n; ++i) {
      t += u(rng) < 0.1 ? 0 : u(rng);  // repeated times too
      Sample s;
      s.t_s = trial % 5 == 4 && u(rng) < 0.2 ? t - 3 * u(rng) : t;  // some trials out of order
      const int gpus = 1 + static_cast<int>(u(rng) * 4);
      for (int k = 0; k < gpus; ++k) {
        GpuReading g;
        g.index = static_cast<int>(u(rng) * 5);  // some GPUs missing from some samples, some twice
        if (u(rng) < 0.9) g.power_w = 100 + 600 * u(rng);
        if (trial % 3 != 0 && u(rng) < 0.95) g.energy_j = 1000 * t + (trial % 7 == 1 && u(rng) < 0.05 ? -500 : 0);
        if (u(rng) < 0.8) g.vram_used_bytes = 1e9 * u(rng);
        if (u(rng) < 0.8) g.gpu_util_pct = 100 * u(rng);
        if (u(rng) < 0.5) g.mem_util_pct = 100 * u(rng);
        if (u(rng) < 0.7) g.temp_edge_c = 40 + 40 * u(rng);
        if (u(rng) < 0.3) g.temp_hotspot_c = 50 + 40 * u(rng);
        if (u(rng) < 0.3) g.temp_memory_c = 50 + 40 * u(rng);
        s.gpus.push_back(g);
      }
      samples.push_back(s);
    }
    std::vector<Mark> marks;
    for (double m = -0.5; m < t + 1; m += 3 * u(rng)) marks.push_back({m, "m" + std::to_string(marks.size())});
    const auto got = summarize(samples, marks, t);
    REQUIRE(got.size() == marks.size() + 1);
    INFO("trial " << trial);
    check_same(got[0], reference::summarize_window(samples, 0, t, "run"));
    for (std::size_t i = 0; i < marks.size(); ++i)
      check_same(got[i + 1], reference::summarize_window(samples, marks[i].t_s, i + 1 < marks.size() ? marks[i + 1].t_s : t, marks[i].label));
    CHECK(Summarizer(samples).bytes() <= Summarizer::bytes_for(samples));
  }
}
