// Summaries of a sampling run: per GPU over the whole run and per phase (the span from one
// sampler:mark to the next, or to the end). Energy comes from the tool's counter when every
// sample in reach has one (interpolated at the phase edges), else from trapezoidal integration of
// power over time, the power curve taken as linear between samples and clipped to the phase; so
// phase energies add up to the whole run's. The counter is checked against the integrated power:
// one that advances less than half of it (a counter stuck at 0 while the board draws hundreds of
// watts, as recorded on real AMD boards) is not believed, and the integrated figure is used;
// `energy_note` says which source each figure used and why.
//
// Contract: pure functions over plain data (no I/O, no Lua, any thread). Time is seconds since the
// sampler started. A statistic with no sample to stand on is nullopt, never 0.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpu/sample.hpp"

namespace runara::gpu {

struct Sample {
  double t_s = 0;                 // when the reading arrived
  std::vector<GpuReading> gpus;
};

struct Mark {
  double t_s = 0;
  std::string label;
};

struct GpuStats {
  int index = 0;
  int samples = 0;
  std::optional<double> mean_power_w, max_power_w, energy_j;
  bool energy_from_counter = false;
  std::optional<double> counter_energy_j;     // what the counter advanced over the window, used or not
  std::optional<double> integrated_energy_j;  // the power samples integrated over the window, used or not
  std::string energy_note;                    // why energy_j is the counter's or the integrated figure
  std::optional<double> max_vram_used_bytes, mean_gpu_util_pct, mean_mem_util_pct;
  std::optional<double> max_temp_edge_c, max_temp_hotspot_c, max_temp_memory_c;
};

struct PhaseSummary {
  std::string label;  // the mark that opened it; "run" for the whole run
  double start_s = 0, end_s = 0;
  std::vector<GpuStats> gpus;          // one per GPU index seen anywhere in the run
  std::optional<double> energy_j;      // all GPUs together (nullopt when no GPU has energy)
  std::string energy_source;           // "counter", "trapezoid" or "mixed" (GPUs differ); empty without energy
  std::string energy_note;             // the GPUs' notes: one when they agree, else each GPU's
  std::optional<double> mean_power_w;  // the GPUs' mean powers added up
  std::optional<double> peak_vram_bytes;  // the largest VRAM use of any one GPU
};

// Summaries of many windows of the same samples: each GPU's readings and series gathered once,
// so a window costs its own readings (plus a binary search per GPU), not the whole run's. A
// sampler with thousands of samples and marks is summarized in time linear in their number
// (summarize_window over all samples once per mark and GPU was quadratic: minutes in stop()).
// Holds pointers into `samples`, which must outlive it unchanged; bytes() is what it holds.
class Summarizer {
 public:
  explicit Summarizer(const std::vector<Sample>& samples);
  PhaseSummary window(double start_s, double end_s, std::string label) const;
  std::size_t bytes() const { return bytes_; }
  // What a Summarizer of `samples` will hold, before it is made (to charge it first).
  static std::size_t bytes_for(const std::vector<Sample>& samples);

  using Points = std::vector<std::pair<double, double>>;  // (t, value), in sample order
  struct Series {  // one GPU index
    int index = 0;
    std::vector<std::pair<double, const GpuReading*>> readings;  // (t, reading), in sample order
    Points energy, watts;          // the readings that have a value, in sample order
    bool energy_never_falls = true;  // the counter never went down (no reset or wrap)
  };

 private:
  bool ordered_ = true;  // samples in time order (they are: a sampler stamps them as they arrive)
  std::vector<Series> gpus_;  // by index, ascending
  std::size_t bytes_ = 0;
};

// The counter is disbelieved when it advanced less than this share of the integrated power (and
// the integrated figure is at least kMinCheckedJoules: a window too short to tell is not judged);
// power readings that integrate to less than the counter over kPowerLowRatio are named in the note.
constexpr double kCounterLowRatio = 0.5;
constexpr double kPowerLowRatio = 2.0;
constexpr double kMinCheckedJoules = 1.0;

// The whole run [0, end_s] first, then one entry per mark.
std::vector<PhaseSummary> summarize(const std::vector<Sample>& samples, const std::vector<Mark>& marks, double end_s);

PhaseSummary summarize_window(const std::vector<Sample>& samples, double start_s, double end_s, std::string label);

}  // namespace runara::gpu
