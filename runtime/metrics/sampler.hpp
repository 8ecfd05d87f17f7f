// Scraping a Prometheus /metrics endpoint once or at an interval through a load (the `metrics`
// primitive's engine): each scrape is parsed (prometheus_text.hpp) and kept as the totals of each
// sample name, stamped when the response arrived, with phase marks like the GPU sampler's.
//
// Contract. Threading: the loop thread only; no Lua. Every connection is judged by the caller's
// `allow_connect` (the script's target policy) on the address it is about to connect to. One
// scrape at a time: a tick that finds the last one in flight is skipped and counted. A failed
// scrape (refused, unreachable, HTTP error, unparsable text) is reported and sampling goes on;
// five failures in a row stop it. stop() aborts a scrape in flight; the destructor stops too;
// no callback comes after either.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/problem_list.hpp"
#include "base/result.hpp"
#include "metrics/prometheus_text.hpp"
#include "curl/http_client.hpp"

typedef struct uv_timer_s uv_timer_t;

namespace runara::metrics {

struct ScrapeSample {
  double t_s = 0;
  std::map<std::string, double> values;  // prometheus_totals of the scrape (filtered by prefix)
};

struct ScrapeMark {
  double t_s = 0;
  std::string label;
};

using AllowConnect = std::function<bool(const sockaddr* addr, std::string& why)>;

// One GET of `url`; `done` gets the parse or an error ("HTTP 503 from ...", a refusal, ...).
HttpClient::Id scrape_once(HttpClient& http, const std::string& url, const AllowConnect& allow, double timeout_s,
                 std::function<void(Result<PromParse> parse)> done);

class MetricsSampler {
 public:
  struct Options {
    std::string url;
    double interval_s = 1.0;
    std::string prefix;  // keep only sample names starting with it ("" keeps all)
    AllowConnect allow_connect;
    std::function<Status(std::size_t bytes)> reserve;  // or why not (the run's memory cap)
  };
  using OnProblem = std::function<void(const std::string&)>;

  MetricsSampler(uv_loop_t* loop, Options options, OnProblem on_problem);
  ~MetricsSampler();
  MetricsSampler(const MetricsSampler&) = delete;
  MetricsSampler& operator=(const MetricsSampler&) = delete;

  void start();
  // A mark at now_s(), its memory asked of Options::reserve (refused: not kept).
  Status mark(std::string label);
  void stop();
  bool running() const { return running_; }
  double now_s() const;

  const std::vector<ScrapeSample>& samples() const { return samples_; }
  const std::vector<ScrapeMark>& marks() const { return marks_; }
  const std::vector<std::string>& problems() const { return problems_.kept(); }  // ProblemList: at most 100
  int skipped_ticks() const { return skipped_; }
  std::size_t reserved_bytes() const { return reserved_; }
  // What a sample or a mark costs in memory, counted with its overhead: its slot in the vector
  // (twice over: the vector's spare room), each value's map node and the heap block of a long
  // name, a long label's heap block, with the allocator's own overhead. A /metrics of many
  // short distinct names costs far more than its bytes.
  static std::size_t sample_cost(const ScrapeSample& sample);
  static std::size_t mark_cost(const std::string& label);

 private:
  void tick();
  void on_scrape(Result<PromParse> scraped, uint64_t arrived_ns);
  void report(std::string problem, bool fatal);

  uv_loop_t* loop_;
  Options opt_;
  OnProblem on_problem_;
  std::unique_ptr<HttpClient> http_;
  uv_timer_t* timer_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  bool running_ = false, in_flight_ = false;
  uint64_t start_ns_ = 0;
  double end_s_ = 0;
  int failures_in_row_ = 0, skipped_ = 0;
  std::size_t reserved_ = 0;
  std::vector<ScrapeSample> samples_;
  std::vector<ScrapeMark> marks_;
  ProblemList problems_;
};

// Per metric name over [start_s, end_s]: first, last, delta (last - first: what a counter
// counted), mean and max of the samples there. Names with no sample in the window are left out.
struct MetricStats {
  double first = 0, last = 0, delta = 0, mean = 0, max = 0;
  int samples = 0;
};
std::map<std::string, MetricStats> summarize_window(const std::vector<ScrapeSample>& samples, double start_s, double end_s);

// summarize_window of each mark's phase, [marks[i].t_s, the next mark's or end_s], handed to
// `each(i, stats)` in order. The same figures, in time linear in the samples when samples and
// marks are in time order (as a sampler makes them: one scan for all phases, instead of one per
// mark over every sample); window by window otherwise.
void summarize_phases(const std::vector<ScrapeSample>& samples, const std::vector<ScrapeMark>& marks, double end_s,
                      const std::function<void(std::size_t, const std::map<std::string, MetricStats>&)>& each);

}  // namespace runara::metrics
