#include "gpu/summary.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <utility>

namespace runara::gpu {

namespace {

using Points = Summarizer::Points;

double lerp(const std::pair<double, double>& a, const std::pair<double, double>& b, double t) {
  if (b.first == a.first) return b.second;
  return a.second + (b.second - a.second) * (t - a.first) / (b.first - a.first);
}

// The piecewise-linear curve through `p` integrated over [a, b] ∩ [first, last]. With `ordered`
// points, only the segments that can overlap [a, b] are visited: the others add nothing, so the
// sum is the same as over every segment.
std::optional<double> integrate(const Points& p, double a, double b, bool ordered) {
  if (p.size() < 2) return std::nullopt;
  a = std::max(a, p.front().first);
  b = std::min(b, p.back().first);
  if (b <= a) return std::nullopt;
  std::size_t i = 1;
  if (ordered) {
    // The first segment whose end lies after a (those before end at or before it).
    i = static_cast<std::size_t>(std::upper_bound(p.begin(), p.end(), a, [](double v, const auto& x) { return v < x.first; }) - p.begin());
    i = std::max<std::size_t>(i, 1);
  }
  double sum = 0;
  for (; i < p.size(); ++i) {
    if (ordered && p[i - 1].first >= b) break;  // this segment and all after it start at or after b
    const double lo = std::max(a, p[i - 1].first), hi = std::min(b, p[i].first);
    if (hi <= lo) continue;
    sum += (hi - lo) * (lerp(p[i - 1], p[i], lo) + lerp(p[i - 1], p[i], hi)) / 2;
  }
  return sum;
}

// A counter's increase over [a, b] ∩ [first, last], interpolated at the edges; nullopt if it
// ever goes down (reset or wrap): the trapezoid is the safer answer then.
std::optional<double> counter_delta(const Points& p, bool never_falls, double a, double b) {
  if (p.size() < 2 || !never_falls) return std::nullopt;
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
void choose_energy(GpuStats& st, const Summarizer::Series& g, double a, double b, bool ordered) {
  const Points& energy = g.energy;
  const Points& watts = g.watts;
  st.integrated_energy_j = integrate(watts, a, b, ordered);
  std::string why_not;
  if (energy.empty()) {
    why_not = "the tool reports no energy counter";
  } else if (energy.size() < 2) {
    why_not = "the energy counter was read once in the window";
  } else if (watts.size() >= 2 &&
             (energy.front().first > watts.front().first || energy.back().first < watts.back().first)) {
    why_not = "the energy counter does not cover the window the power samples do";
  } else {
    st.counter_energy_j = counter_delta(energy, g.energy_never_falls, a, b);
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

// The readings of one GPU in [a, b], accumulated in sample order (as a scan of every sample would).
GpuStats stats_for(const Summarizer::Series& g, double a, double b, bool ordered) {
  GpuStats st;
  st.index = g.index;
  Acc power, vram, util, mutil, edge, hot, mem;
  auto it = g.readings.begin();
  if (ordered) it = std::lower_bound(g.readings.begin(), g.readings.end(), a, [](const auto& x, double v) { return x.first < v; });
  for (; it != g.readings.end(); ++it) {
    const double t = it->first;
    if (t > b) {
      if (ordered) break;
      continue;
    }
    if (t < a) continue;
    const GpuReading& r = *it->second;
    ++st.samples;
    power.add(r.power_w);
    vram.add(r.vram_used_bytes);
    util.add(r.gpu_util_pct);
    mutil.add(r.mem_util_pct);
    edge.add(r.temp_edge_c);
    hot.add(r.temp_hotspot_c);
    mem.add(r.temp_memory_c);
  }
  st.mean_power_w = power.mean();
  st.max_power_w = power.max;
  st.max_vram_used_bytes = vram.max;
  st.mean_gpu_util_pct = util.mean();
  st.mean_mem_util_pct = mutil.mean();
  st.max_temp_edge_c = edge.max;
  st.max_temp_hotspot_c = hot.max;
  st.max_temp_memory_c = mem.max;
  choose_energy(st, g, a, b, ordered);
  return st;
}

}  // namespace

namespace {
constexpr std::size_t kMapNode = 80;  // a std::map node of a small key and value, with the allocator's overhead
}  // namespace

std::size_t Summarizer::bytes_for(const std::vector<Sample>& samples) {
  std::size_t readings = 0;
  std::set<int> indices;
  for (const Sample& s : samples) {
    readings += s.gpus.size();
    for (const GpuReading& g : s.gpus) indices.insert(g.index);
  }
  // Each reading at most once in each of the three lists (16 bytes an entry); per GPU index a
  // Series and, while it is made, two map nodes.
  return readings * 3 * 16 + indices.size() * (sizeof(Series) + 2 * kMapNode);
}

Summarizer::Summarizer(const std::vector<Sample>& samples) {
  // The GPU indices, then each one's readings counted so every list is made at its size.
  std::map<int, std::array<std::size_t, 3>> counts;  // readings, energy, watts
  double last_t = -std::numeric_limits<double>::infinity();
  for (const Sample& s : samples) {
    if (s.t_s < last_t) ordered_ = false;
    last_t = s.t_s;
    for (const GpuReading& g : s.gpus) {
      auto& c = counts[g.index];
      ++c[0];
      c[1] += g.energy_j ? 1 : 0;
      c[2] += g.power_w ? 1 : 0;
    }
  }
  gpus_.resize(counts.size());
  std::map<int, Series*> by_index;
  std::size_t i = 0;
  for (const auto& [index, c] : counts) {
    Series& g = gpus_[i++];
    g.index = index;
    g.readings.reserve(c[0]);
    g.energy.reserve(c[1]);
    g.watts.reserve(c[2]);
    by_index[index] = &g;
    bytes_ += sizeof(Series) + 2 * kMapNode + 16 * (c[0] + c[1] + c[2]);
  }
  for (const Sample& s : samples) {
    for (const GpuReading& r : s.gpus) {
      Series& g = *by_index[r.index];
      g.readings.emplace_back(s.t_s, &r);
      if (r.energy_j) {
        if (!g.energy.empty() && *r.energy_j < g.energy.back().second) g.energy_never_falls = false;
        g.energy.emplace_back(s.t_s, *r.energy_j);
      }
      if (r.power_w) g.watts.emplace_back(s.t_s, *r.power_w);
    }
  }
}

PhaseSummary Summarizer::window(double start_s, double end_s, std::string label) const {
  PhaseSummary p;
  p.label = std::move(label);
  p.start_s = start_s;
  p.end_s = end_s;
  p.gpus.reserve(gpus_.size());
  for (const Series& g : gpus_) {
    GpuStats st = stats_for(g, start_s, end_s, ordered_);
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

PhaseSummary summarize_window(const std::vector<Sample>& samples, double start_s, double end_s, std::string label) {
  return Summarizer(samples).window(start_s, end_s, std::move(label));
}

std::vector<PhaseSummary> summarize(const std::vector<Sample>& samples, const std::vector<Mark>& marks, double end_s) {
  const Summarizer summarizer(samples);
  std::vector<PhaseSummary> out;
  out.push_back(summarizer.window(0, end_s, "run"));
  for (std::size_t i = 0; i < marks.size(); ++i) {
    const double until = i + 1 < marks.size() ? marks[i + 1].t_s : end_s;
    out.push_back(summarizer.window(marks[i].t_s, until, marks[i].label));
  }
  return out;
}

}  // namespace runara::gpu
