#include "gpu/gpu_summary.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <utility>

namespace runara::gpu {

namespace {

using Points = std::vector<std::pair<double, double>>;  // (t, value), t ascending
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

// The piecewise-linear curve through `p` integrated over [a, b] ∩ [first, last].
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

// A counter's increase over [a, b] ∩ [first, last], interpolated at the edges; nullopt if it
// ever goes down (reset or wrap): the trapezoid is the safer answer then.
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

std::string joules(double j) {
  if (!std::isfinite(j) || std::fabs(j) >= 1e15) return "an unreadable amount";  // a tool's garbage, not a figure
  char text[64];
  std::snprintf(text, sizeof text, "%.0f J", j);
  return text;
}

// The window's energy from the tool's counter or from the integrated power, with the reason.
// The counter only when it covers as much of the window as the power curve does, never went
// backwards, and advanced at least kCounterLowRatio of what the power samples integrate to.
void choose_energy(GpuStats& st, const Points& energy, const Points& watts, double a, double b) {
  st.integrated_energy_j = integrate(watts, a, b);
  std::string why_not;
  if (energy.empty()) {
    why_not = "the tool reports no energy counter";
  } else if (energy.size() < 2) {
    why_not = "the energy counter was read once in the window";
  } else if (watts.size() >= 2 &&
             (energy.front().first > watts.front().first || energy.back().first < watts.back().first)) {
    why_not = "the energy counter does not cover the window the power samples do";
  } else {
    st.counter_energy_j = counter_delta(energy, a, b);
    if (!st.counter_energy_j) why_not = "the energy counter went backwards (reset or wrap)";
  }
  const auto& counted = st.counter_energy_j;
  const auto& integrated = st.integrated_energy_j;  // (NaN from a tool's garbage fails every comparison: such a counter is then kept, as before.)
  if (counted && integrated && *integrated >= kMinCheckedJoules && *counted < kCounterLowRatio * *integrated) {
    why_not = (*counted == 0 ? "the energy counter did not advance" : "the energy counter advanced only " + joules(*counted)) +
              " while the power samples integrate to " + joules(*integrated) + " (a stuck or lagging counter)";
  } else if (counted) {
    st.energy_j = counted;
    st.energy_from_counter = true;
    if (!integrated) {
      st.energy_note = "the tool's energy counter (no power samples to check it against)";
    } else if (*integrated >= kMinCheckedJoules && *counted > kPowerLowRatio * *integrated) {
      st.energy_note = "the tool's energy counter; the power samples integrate to only " + joules(*integrated) +
                       ", so the power readings look too low";
    } else {
      st.energy_note = "the tool's energy counter (the power samples integrate to " + joules(*integrated) + ")";
    }
    return;
  }
  st.energy_j = integrated;
  if (integrated) st.energy_note = "power samples integrated (trapezoids): " + why_not;
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
  choose_energy(st, series(samples, index, &GpuReading::energy_j), series(samples, index, &GpuReading::power_w), a, b);
  return st;
}

std::set<int> indices(const std::vector<Sample>& samples) {
  std::set<int> out;
  for (const Sample& s : samples)
    for (const GpuReading& g : s.gpus) out.insert(g.index);
  return out;
}

}  // namespace

PhaseSummary summarize_window(const std::vector<Sample>& samples, double start_s, double end_s, std::string label) {
  PhaseSummary p;
  p.label = std::move(label);
  p.start_s = start_s;
  p.end_s = end_s;
  for (int index : indices(samples)) {
    GpuStats st = stats_for(samples, index, start_s, end_s);
    if (st.energy_j) p.energy_j = p.energy_j.value_or(0) + *st.energy_j;
    if (st.mean_power_w) p.mean_power_w = p.mean_power_w.value_or(0) + *st.mean_power_w;
    if (st.max_vram_used_bytes) p.peak_vram_bytes = std::max(p.peak_vram_bytes.value_or(0), *st.max_vram_used_bytes);
    p.gpus.push_back(std::move(st));
  }
  // Which source the GPUs' energies came from, and why: one note when every GPU says the same.
  std::set<std::string> sources, notes;
  for (const GpuStats& g : p.gpus) {
    if (!g.energy_j) continue;
    sources.insert(g.energy_from_counter ? "counter" : "trapezoid");
    notes.insert(g.energy_note);
  }
  if (!sources.empty()) p.energy_source = sources.size() == 1 ? *sources.begin() : "mixed";
  if (notes.size() == 1) {
    p.energy_note = *notes.begin();
  } else {
    for (const GpuStats& g : p.gpus) {
      if (!g.energy_j) continue;
      p.energy_note += (p.energy_note.empty() ? "" : "; ") + ("GPU " + std::to_string(g.index) + ": ") + g.energy_note;
    }
  }
  return p;
}

std::vector<PhaseSummary> summarize(const std::vector<Sample>& samples, const std::vector<Mark>& marks, double end_s) {
  std::vector<PhaseSummary> out;
  out.push_back(summarize_window(samples, 0, end_s, "run"));
  for (std::size_t i = 0; i < marks.size(); ++i) {
    const double until = i + 1 < marks.size() ? marks[i + 1].t_s : end_s;
    out.push_back(summarize_window(samples, marks[i].t_s, until, marks[i].label));
  }
  return out;
}

}  // namespace runara::gpu
