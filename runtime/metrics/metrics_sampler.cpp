#include "metrics/metrics_sampler.hpp"

#include <algorithm>

#include <uv.h>

namespace runara::metrics {

namespace {
constexpr int kMaxFailuresInRow = 5;
}

HttpClient::Id scrape_once(HttpClient& http, const std::string& url, const AllowConnect& allow, double timeout_s,
                 std::function<void(PromParse parse)> done) {
  HttpRequest req;
  req.url = url;
  req.timeout_s = timeout_s;
  req.max_body_bytes = kMaxBodyBytes;  // a larger body fails the scrape as it arrives
  req.headers = {"Accept: text/plain;version=0.0.4"};
  req.allow_connect = allow;
  return http.send(std::move(req), [url, done = std::move(done)](HttpResponse r) {
    PromParse p;
    if (!r.error.empty()) p.error = url + ": " + r.error;
    else if (r.status != 200) p.error = url + ": HTTP " + std::to_string(r.status) + " (expected 200 with Prometheus text)";
    else p = parse_prometheus_text(r.body);
    if (!p.error.empty() && p.error.rfind(url, 0) != 0) p.error = url + ": " + p.error;
    done(std::move(p));
  });
}

MetricsSampler::MetricsSampler(uv_loop_t* loop, Options options, OnProblem on_problem)
    : loop_(loop), opt_(std::move(options)), on_problem_(std::move(on_problem)),
      http_(std::make_unique<HttpClient>(loop)), timer_(new uv_timer_t) {
  uv_timer_init(loop_, timer_);
  timer_->data = this;
}

MetricsSampler::~MetricsSampler() {
  on_problem_ = nullptr;
  stop();
  *alive_ = false;
  http_.reset();  // aborts what is in flight, no callback
  uv_close(reinterpret_cast<uv_handle_t*>(timer_), [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
}

double MetricsSampler::now_s() const {
  return running_ ? static_cast<double>(uv_hrtime() - start_ns_) / 1e9 : end_s_;
}

void MetricsSampler::start() {
  start_ns_ = uv_hrtime();
  running_ = true;
  const auto ms = static_cast<uint64_t>(std::max(1.0, opt_.interval_s * 1000));
  uv_timer_start(timer_, [](uv_timer_t* t) { static_cast<MetricsSampler*>(t->data)->tick(); }, 0, ms);
}

void MetricsSampler::tick() {
  if (!running_) return;
  if (in_flight_) {
    ++skipped_;
    return;
  }
  in_flight_ = true;
  std::weak_ptr<bool> alive = alive_;
  scrape_once(*http_, opt_.url, opt_.allow_connect, std::max(2.0, opt_.interval_s * 5), [this, alive](PromParse p) {
    if (alive.expired()) return;
    in_flight_ = false;
    on_scrape(std::move(p), uv_hrtime());
  });
}

void MetricsSampler::on_scrape(PromParse p, uint64_t arrived_ns) {
  if (!running_) return;
  if (!p.error.empty()) {
    if (++failures_in_row_ >= kMaxFailuresInRow)
      return report(p.error + "; " + std::to_string(kMaxFailuresInRow) + " failed scrapes in a row, stopped sampling", true);
    return report(p.error, false);
  }
  failures_in_row_ = 0;
  ScrapeSample s;
  s.t_s = static_cast<double>(arrived_ns - start_ns_) / 1e9;
  std::size_t bytes = sizeof(ScrapeSample);
  for (auto& [name, value] : prometheus_totals(p)) {
    if (!name.starts_with(opt_.prefix)) continue;
    bytes += name.size() + 64;
    s.values.emplace(name, value);
  }
  if (opt_.reserve) {
    if (std::string e = opt_.reserve(bytes); !e.empty()) return report("metrics: " + e + "; stopped sampling", true);
    reserved_ += bytes;
  }
  samples_.push_back(std::move(s));
}

void MetricsSampler::mark(std::string label) { marks_.push_back({now_s(), std::move(label)}); }

void MetricsSampler::report(std::string problem, bool fatal) {
  problems_.push_back(problem);
  if (on_problem_) on_problem_(problem);
  if (fatal) stop();
}

void MetricsSampler::stop() {
  if (!running_) return;
  end_s_ = now_s();
  running_ = false;
  uv_timer_stop(timer_);
}

std::map<std::string, MetricStats> summarize_window(const std::vector<ScrapeSample>& samples, double start_s, double end_s) {
  std::map<std::string, MetricStats> out;
  std::map<std::string, double> sums, before;
  for (const ScrapeSample& s : samples) {
    // A counter's count in the phase starts from the last reading before it: what it counted
    // between that reading and the first one inside the phase happened in the phase too.
    if (s.t_s < start_s) {
      for (const auto& [name, v] : s.values) before[name] = v;
      continue;
    }
    if (s.t_s > end_s) continue;
    for (const auto& [name, v] : s.values) {
      MetricStats& m = out[name];
      if (m.samples++ == 0) m.first = m.max = v;
      m.last = v;
      m.max = std::max(m.max, v);
      sums[name] += v;
    }
  }
  for (auto& [name, m] : out) {
    const auto b = before.find(name);
    m.delta = m.last - (b != before.end() ? b->second : m.first);
    m.mean = sums[name] / m.samples;
  }
  return out;
}

}  // namespace runara::metrics
