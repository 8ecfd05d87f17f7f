#include "metrics/sampler.hpp"

#include <algorithm>
#include <string_view>
#include <utility>

#include <uv.h>

namespace runara::metrics {

namespace {
constexpr int kMaxFailuresInRow = 5;
constexpr std::size_t kMallocOverhead = 16;  // glibc: an 8-byte header, blocks rounded to 16
// A std::map node: its links and colour (32 bytes), the value, the allocator's overhead.
constexpr std::size_t kValueNode = 32 + sizeof(std::pair<const std::string, double>) + kMallocOverhead;

std::size_t string_heap(const std::string& s) {
  static const std::size_t kInline = std::string().capacity();
  return s.capacity() > kInline ? s.capacity() + 1 + kMallocOverhead : 0;
}
}  // namespace

std::size_t MetricsSampler::sample_cost(const ScrapeSample& sample) {
  std::size_t bytes = 2 * sizeof(ScrapeSample);
  for (const auto& [name, value] : sample.values) bytes += kValueNode + string_heap(name);
  return bytes;
}

std::size_t MetricsSampler::mark_cost(const std::string& label) { return 2 * sizeof(ScrapeMark) + string_heap(label); }

HttpClient::Id scrape_once(HttpClient& http, const std::string& url, const AllowConnect& allow, double timeout_s,
                 std::function<void(Result<PromParse> parse)> done) {
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
    if (!p.error.empty()) return done(Error{std::move(p.error)});
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
  scrape_once(*http_, opt_.url, opt_.allow_connect, std::max(2.0, opt_.interval_s * 5), [this, alive](Result<PromParse> p) {
    if (alive.expired()) return;
    in_flight_ = false;
    on_scrape(std::move(p), uv_hrtime());
  });
}

void MetricsSampler::on_scrape(Result<PromParse> scraped, uint64_t arrived_ns) {
  if (!running_) return;
  if (!scraped) {
    if (++failures_in_row_ >= kMaxFailuresInRow)
      return report(scraped.error() + "; " + std::to_string(kMaxFailuresInRow) + " failed scrapes in a row, stopped sampling", true);
    return report(scraped.error(), false);
  }
  const PromParse& p = scraped.value();
  failures_in_row_ = 0;
  ScrapeSample s;
  s.t_s = static_cast<double>(arrived_ns - start_ns_) / 1e9;
  for (auto& [name, value] : prometheus_totals(p)) {
    if (!name.starts_with(opt_.prefix)) continue;
    s.values.emplace(name, value);
  }
  const std::size_t bytes = sample_cost(s);
  if (opt_.reserve) {
    if (Status held = opt_.reserve(bytes); !held) return report("metrics: " + held.error() + "; stopped sampling", true);
    reserved_ += bytes;
  }
  samples_.push_back(std::move(s));
}

Status MetricsSampler::mark(std::string label) {
  if (opt_.reserve) {
    const std::size_t bytes = mark_cost(label);
    if (Status held = opt_.reserve(bytes); !held) return held;
    reserved_ += bytes;
  }
  marks_.push_back({now_s(), std::move(label)});
  return {};
}

void MetricsSampler::report(std::string problem, bool fatal) {
  problems_.add(problem);
  if (on_problem_) on_problem_(problem);
  if (fatal) stop();
}

void MetricsSampler::stop() {
  if (!running_) return;
  end_s_ = now_s();
  running_ = false;
  uv_timer_stop(timer_);
}

namespace {

// One reading of a metric inside a window (`sum` is the window's running sum for its mean).
void add_reading(MetricStats& m, double v, double& sum) {
  if (m.samples++ == 0) m.first = m.max = v;
  m.last = v;
  m.max = std::max(m.max, v);
  sum += v;
}

// A window's mean, and its delta from the last reading before it (`before`), else from its first.
void close_window(MetricStats& m, double sum, const double* before) {
  m.delta = m.last - (before ? *before : m.first);
  m.mean = sum / m.samples;
}

}  // namespace

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
    for (const auto& [name, v] : s.values) add_reading(out[name], v, sums[name]);
  }
  for (auto& [name, m] : out) {
    const auto b = before.find(name);
    close_window(m, sums[name], b != before.end() ? &b->second : nullptr);
  }
  return out;
}

namespace {

bool in_time_order(const std::vector<ScrapeSample>& samples, const std::vector<ScrapeMark>& marks) {
  for (std::size_t i = 1; i < samples.size(); ++i)
    if (samples[i].t_s < samples[i - 1].t_s) return false;
  for (std::size_t i = 1; i < marks.size(); ++i)
    if (marks[i].t_s < marks[i - 1].t_s) return false;
  return true;
}

}  // namespace

void summarize_phases(const std::vector<ScrapeSample>& samples, const std::vector<ScrapeMark>& marks, double end_s,
                      const std::function<void(std::size_t, const std::map<std::string, MetricStats>&)>& each) {
  if (!in_time_order(samples, marks)) {
    for (std::size_t i = 0; i < marks.size(); ++i)
      each(i, summarize_window(samples, marks[i].t_s, i + 1 < marks.size() ? marks[i + 1].t_s : end_s));
    return;
  }
  // The last reading of each name before the current phase, carried from phase to phase; the
  // samples of a phase (those at its end belong to the next one too) read once more each.
  std::map<std::string_view, double> before;
  std::size_t next = 0;  // samples before `next` are folded into `before`
  for (std::size_t i = 0; i < marks.size(); ++i) {
    const double start_s = marks[i].t_s, end = i + 1 < marks.size() ? marks[i + 1].t_s : end_s;
    for (; next < samples.size() && samples[next].t_s < start_s; ++next)
      for (const auto& [name, v] : samples[next].values) before[name] = v;
    std::map<std::string, MetricStats> out;
    std::map<std::string_view, double> sums;
    for (std::size_t k = next; k < samples.size() && samples[k].t_s <= end; ++k) {
      for (const auto& [name, v] : samples[k].values) add_reading(out[name], v, sums[name]);
    }
    for (auto& [name, m] : out) {
      const auto b = before.find(name);
      close_window(m, sums[name], b != before.end() ? &b->second : nullptr);
    }
    each(i, out);
  }
}

}  // namespace runara::metrics
