// Summaries and CSV of sampled GPU readings (runtime/gpu/gpu_summary.*, gpu_csv.*): energy by
// the counter or by trapezoids, phases from marks, per-GPU peaks and means.
#include <catch2/catch.hpp>

#include "gpu/gpu_csv.hpp"
#include "gpu/gpu_summary.hpp"

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
