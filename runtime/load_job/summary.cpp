#include "load_job/summary.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace runara {

namespace {

using nlohmann::json;

double number(const json& r, const char* key) {
  const auto it = r.find(key);
  return it != r.end() && it->is_number() ? it->get<double>() : 0.0;
}

// "Label:                                   value", vLLM's 40-column layout.
void line(std::string& out, const std::string& label, const std::string& value) {
  char text[256];
  std::snprintf(text, sizeof text, "%-40s %s\n", (label + ":").c_str(), value.c_str());
  out += text;
}

std::string fixed(double v, int decimals = 2) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, v);
  return text;
}

std::string whole(double v) { return fixed(v, 0); }

// "-----Title-----" centred in 50 columns, as vLLM prints its section rules.
std::string rule(const std::string& title, char fill) {
  const std::size_t width = 50;
  if (title.size() >= width) return title + "\n";
  const std::size_t left = (width - title.size()) / 2;
  return std::string(left, fill) + title + std::string(width - title.size() - left, fill) + "\n";
}

// The percentiles each section shows: the load's `percentiles` option when given (vLLM's
// --metric-percentiles), else P99 as vLLM's default.
std::vector<std::string> shown_percentiles(const json& r) {
  std::vector<std::string> out;
  const auto options = r.find("options");
  if (options != r.end() && options->is_object() && options->contains("percentiles") && (*options)["percentiles"].is_array()) {
    for (const auto& q : (*options)["percentiles"]) {
      if (!q.is_number()) continue;
      char word[32];
      std::snprintf(word, sizeof word, "p%g", q.get<double>());
      out.push_back(word);
    }
  }
  if (out.empty()) out.push_back("p99");
  return out;
}

// Whether a section is shown: all of them unless the load's `summary_metrics` names some.
bool metric_shown(const json& r, const char* key) {
  const auto options = r.find("options");
  if (options == r.end() || !options->is_object() || !options->contains("summary_metrics")) return true;
  const json& shown = (*options)["summary_metrics"];
  return !shown.is_array() || std::find(shown.begin(), shown.end(), key) != shown.end();
}

// Mean, median and the shown percentiles of one metric, as "Mean TTFT (ms)" ...
void stat_lines(std::string& out, const json& r, const std::string& key, const std::string& label) {
  line(out, "Mean " + label + " (ms)", fixed(number(r, ("mean_" + key + "_ms").c_str())));
  line(out, "Median " + label + " (ms)", fixed(number(r, ("median_" + key + "_ms").c_str())));
  for (const std::string& p : shown_percentiles(r)) {
    line(out, "P" + p.substr(1) + " " + label + " (ms)", fixed(number(r, (p + "_" + key + "_ms").c_str())));
  }
}

// Whether runara's from-schedule figure of `key` (ttft, e2el) differs from vLLM's, from the send,
// by more than 5 % of the mean: then the requests waited before they went out (a slot under
// max_concurrency, or a client behind its schedule) and both are shown.
bool schedule_differs(const json& r, const std::string& key) {
  const std::string scheduled = "mean_" + key + "_from_schedule_ms";
  if (!r.contains(scheduled) || !r[scheduled].is_number()) return false;
  const double sent = number(r, ("mean_" + key + "_ms").c_str());
  return number(r, scheduled.c_str()) - sent > 0.05 * sent;
}

void latency_section(std::string& out, const json& r, const char* key, const char* label, const char* title) {
  if (number(r, (std::string("count_") + key).c_str()) == 0 || !metric_shown(r, key)) return;
  out += rule(title, '-');
  stat_lines(out, r, key, label);
  if (schedule_differs(r, key)) stat_lines(out, r, std::string(key) + "_from_schedule", std::string(label) + " from schedule");
}

// An open loop whose requests waited before the send: how long, the rate it sent at against its
// schedule, and whether it kept the schedule. Shown with the from-schedule figures, not without.
void schedule_section(std::string& out, const json& r, bool llm) {
  if (r.value("load_model", "") != "open" || !((llm && schedule_differs(r, "ttft")) || schedule_differs(r, "e2el"))) return;
  out += rule("Schedule (open loop)", '-');
  line(out, "Mean queue before send (ms)", fixed(number(r, "mean_queue_ms")));
  line(out, "Send rate achieved / scheduled (req/s)", fixed(number(r, "achieved_send_rate")) + " / " + fixed(number(r, "scheduled_send_rate")));
  std::string kept = "yes";
  if (!r.value("schedule_kept", true)) {
    kept = r.contains("max_concurrency") && r["max_concurrency"].is_number()
               ? "no: requests waited for one of " + whole(number(r, "max_concurrency")) + " slots (max concurrency)"
               : "no: the client fell behind its schedule";
  }
  line(out, "Schedule kept", kept);
  line(out, "Note", "TTFT and E2EL start at the send, as vLLM's; the from-schedule ones include the wait");
}

std::string errors_text(const json& r) {
  const auto it = r.find("errors_by_kind");
  if (it == r.end() || !it->is_object() || it->empty()) return "";
  std::string out;
  for (const auto& [kind, n] : it->items()) out += (out.empty() ? "" : ", ") + kind + " " + n.dump();
  return out;
}

// The server's /tokenize counted the prompts asked about otherwise (load_job/tokenize_check.hpp):
// what the summary says, "" when it agreed or did not run (results.json says why).
std::string tokenize_differs(const json& r) {
  const auto check = r.find("token_count_check");
  if (check == r.end() || !check->is_object() || !check->contains("tokenize")) return "";
  const json& t = (*check)["tokenize"];
  if (!t.is_object() || t.value("status", "") != "differ") return "";
  char text[200];
  std::snprintf(text, sizeof text, "client and server differ by %+.1f %% on %d prompts (over 1 %%): give the model's tokenizer",
                t.value("difference_pct", 0.0), t.value("prompts", 0));
  return text;
}

}  // namespace

std::string unreached_concurrency_note(const json& r) {
  if (r.value("load_model", "") != "closed" || !r.contains("max_concurrency") || !r["max_concurrency"].is_number()) return "";
  const double wanted = number(r, "max_concurrency");
  const double reached = number(r, "max_concurrent_requests");
  if (reached >= wanted) return "";
  return "concurrency " + whole(wanted) + " was never reached: at most " + whole(reached) + " request(s) in flight (" +
         whole(number(r, "num_prompts") + number(r, "warmup_requests")) + " requests in all, warm-up included)";
}

std::string load_summary_text(const json& r) {
  std::string out = rule(" http_load " + r.value("label", std::string()) + " ", '=');
  const bool llm = r.value("mode", "") == "openai";
  line(out, "Successful requests", whole(number(r, "completed")));
  line(out, "Failed requests", whole(number(r, "failed")));
  if (const std::string errors = errors_text(r); !errors.empty()) line(out, "Failures by kind", errors);
  if (r.value("load_model", "") == "closed") line(out, "Maximum request concurrency", whole(number(r, "max_concurrency")));
  else line(out, "Request rate (req/s)", fixed(number(r, "request_rate")));
  if (const std::string note = unreached_concurrency_note(r); !note.empty()) line(out, "Note", note);
  if (r.value("client_limited", false) && r.contains("client_limit") && r["client_limit"].is_string()) {
    line(out, "Client-limited (not the server)", r["client_limit"].get<std::string>());
  }
  line(out, "Benchmark duration (s)", fixed(number(r, "duration")));
  if (llm) {
    line(out, "Total input tokens", whole(number(r, "total_input_tokens")));
    // The server's tokenizer and the client's count differ: both are shown, and which one counts.
    if (r.contains("input_tokens_server") && r["input_tokens_server"].is_number() &&
        number(r, "input_tokens_client") != number(r, "input_tokens_server")) {
      line(out, "Input tokens, client / server count", whole(number(r, "input_tokens_client")) + " / " +
                                                        whole(number(r, "input_tokens_server")) + " (" +
                                                        r.value("input_tokens_source", std::string()) + " used)");
    }
    if (const auto check = r.find("token_count_check"); check != r.end() && check->is_object() && check->value("status", "") == "differ") {
      char text[200];
      std::snprintf(text, sizeof text, "client and server differ by %+.1f %% (over 1 %%): the prompts are not the length asked; give the model's tokenizer",
                    check->value("difference_pct", 0.0));
      line(out, "Token count check", text);
    }
    if (const std::string text = tokenize_differs(r); !text.empty()) line(out, "Token count check (/tokenize)", text);
    line(out, "Total generated tokens", whole(number(r, "total_output_tokens")));
  }
  line(out, "Request throughput (req/s)", fixed(number(r, "request_throughput")));
  if (r.contains("request_goodput") && r["request_goodput"].is_number()) {
    line(out, "Request goodput (req/s)", fixed(number(r, "request_goodput")));
  }
  if (llm) {
    line(out, "Output token throughput (tok/s)", fixed(number(r, "output_throughput")));
    line(out, "Total token throughput (tok/s)", fixed(number(r, "total_token_throughput")));
    latency_section(out, r, "ttft", "TTFT", "Time to First Token");
    // The server's own count of what its prefix cache saved this load: what explains the TTFT.
    if (r.contains("prefix_cache_hit_rate") && r["prefix_cache_hit_rate"].is_number()) {
      line(out, "Prefix cache hit rate (server, %)", fixed(100 * number(r, "prefix_cache_hit_rate")));
    }
    latency_section(out, r, "tpot", "TPOT", "Time per Output Token (excl. 1st token)");
    latency_section(out, r, "itl", "ITL", "Inter-token Latency");
  }
  latency_section(out, r, "e2el", "E2EL", "End-to-end Latency");
  schedule_section(out, r, llm);
  if (const auto t = r.find("thresholds_crossed"); t != r.end() && t->is_array() && !t->empty()) {
    out += rule("Thresholds crossed", '-');
    for (const auto& crossed : *t) out += "  " + crossed.get<std::string>() + "\n";
  }
  return out + std::string(50, '=') + "\n";
}

std::string sweep_header_text() {
  char text[256];
  std::snprintf(text, sizeof text, "%-24s %6s %8s %6s %8s %9s %10s %9s %9s %9s %9s %9s\n", "point", "load", "done", "failed",
                "req/s", "out tok/s", "goodput/s", "ttft p50", "ttft p99", "tpot p50", "itl p50", "e2el p99");
  return text;
}

std::string sweep_row_text(const json& r) {
  const bool closed = r.value("load_model", "") == "closed";
  const std::string load = closed ? "c" + whole(number(r, "max_concurrency")) : "r" + fixed(number(r, "request_rate"), 1);
  const std::string goodput = r.contains("request_goodput") && r["request_goodput"].is_number()
                                  ? fixed(number(r, "request_goodput")) : "-";
  char text[320];
  std::snprintf(text, sizeof text, "%-24s %6s %8.0f %6.0f %8.2f %9.1f %10s %9.2f %9.2f %9.2f %9.2f %9.2f\n",
                r.value("label", std::string()).c_str(), load.c_str(), number(r, "completed"), number(r, "failed"),
                number(r, "request_throughput"), number(r, "output_throughput"), goodput.c_str(),
                number(r, "median_ttft_ms"), number(r, "p99_ttft_ms"), number(r, "median_tpot_ms"),
                number(r, "median_itl_ms"), number(r, "p99_e2el_ms"));
  std::string out = text;
  if (const std::string note = unreached_concurrency_note(r); !note.empty()) out += "  note: " + note + "\n";
  if (r.value("load_model", "") == "open" && schedule_differs(r, "ttft")) {
    out += "  note: requests waited " + fixed(number(r, "mean_queue_ms")) + " ms on average before the send (sent " +
           fixed(number(r, "achieved_send_rate")) + " of " + fixed(number(r, "scheduled_send_rate")) +
           " req/s); TTFT from schedule p50 " + fixed(number(r, "median_ttft_from_schedule_ms")) + ", p99 " +
           fixed(number(r, "p99_ttft_from_schedule_ms")) + " ms\n";
  }
  return out;
}

}  // namespace runara
