#include "fake_llm_command.hpp"

#include <arpa/inet.h>
#include <pthread.h>
#include <signal.h>
#include <uv.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "port_probe.hpp"
#include "sim/fake_llm_server.hpp"

namespace runara::cli {

namespace {

const char* const kUsage =
    "usage: runara serve-fake-llm [--port N] [--host ADDR] [--model NAME] [--ttft-ms MS] [--itl-ms MS]\n"
    "         [--output-tokens N | --output-tokens-range MIN:MAX] [--tokens-per-chunk N]\n"
    "         [--usage request|always|never] [--error-500 FRACTION] [--stall FRACTION:MS]\n"
    "         [--disconnect FRACTION] [--malformed FRACTION] [--seed N] [--static BODY] [--threads N]\n"
    "         [--report-sent yes|no] [--tokenize yes|no] [--tokenize-skew PCT] [--max-num-seqs N]\n"
    "         [--itl-per-stream-ms MS] [--prefill-ms-per-token MS] [--max-model-len N]\n"
    "         [--prefix-cache-blocks N] [--block-size N]\n";

const char* const kHelp =
    "\n"
    "Serves POST /v1/completions and /v1/chat/completions (streamed or not), POST /tokenize,\n"
    "GET /v1/models, /health and /metrics like vLLM, until Ctrl-C or SIGTERM; then prints\n"
    "what it served.\n"
    "  --port N                 port to listen on (default 8000; 0 picks a free one)\n"
    "  --host ADDR              IPv4 or IPv6 address to bind (default 127.0.0.1)\n"
    "  --model NAME             the one model served: in responses and /v1/models; a request for\n"
    "                           another is answered 404 as vLLM answers it (default fake-model)\n"
    "  --ttft-ms MS             time to the first token (default 0)\n"
    "  --itl-ms MS              time between tokens (default 0)\n"
    "  --itl-per-stream-ms MS   ITL grows this much per stream running when a request arrives (default 0)\n"
    "  --prefill-ms-per-token MS  TTFT grows this much per prompt token not in the prefix cache (default 0)\n"
    "  --prefix-cache-blocks N  vLLM's automatic prefix caching: at most N blocks held, least recently\n"
    "                           used evicted first; /metrics counts vllm:prefix_cache_queries_total\n"
    "                           and _hits_total (default 65536; 0: no cache)\n"
    "  --block-size N           tokens per cache block (default 16, as vLLM's)\n"
    "  --max-num-seqs N         vLLM's: at most N requests run at once, the rest wait in arrival\n"
    "                           order (their TTFT grows; /metrics counts running and waiting);\n"
    "                           default 0, no limit; not with --threads\n"
    "  --max-model-len N        the context length /v1/models and /tokenize report (default 4096)\n"
    "  --output-tokens N        tokens per response (default 16); a request's max_tokens caps it,\n"
    "                           and /v1/completions without max_tokens stops at 16, as in vLLM\n"
    "  --output-tokens-range MIN:MAX\n"
    "                           a length drawn uniformly per request instead\n"
    "  --tokens-per-chunk N     tokens per streamed event (default 1)\n"
    "  --usage request|always|never\n"
    "                           when a usage chunk is sent (default: when the request asks)\n"
    "  --error-500 FRACTION     share of requests answered 500 at once\n"
    "  --stall FRACTION:MS      share of responses that pause MS before a random token\n"
    "  --disconnect FRACTION    share of responses cut off part-way, without their last chunk\n"
    "  --malformed FRACTION     share of responses with one truncated JSON event\n"
    "  --seed N                 seed of the lengths and failures drawn (default 42)\n"
    "  --static BODY            answer GET/HEAD of any other path with BODY (plain HTTP benchmarks)\n"
    "  --threads N              N servers, one event-loop thread each, sharing the port\n"
    "                           (SO_REUSEPORT: the kernel spreads connections; default 1)\n"
    "  --report-sent yes|no     keep the time of every chunk written and print, when stopped, the\n"
    "                           TTFT and token gaps as sent (p50, p99): what a client's figures are\n"
    "                           checked against (default no; the lists grow with every token)\n"
    "  --tokenize yes|no        serve vLLM's POST /tokenize, counting a prompt as usage does (default\n"
    "                           yes); no answers 404 like a server without it\n"
    "  --tokenize-skew PCT      /tokenize counts PCT percent more (or, negative, fewer) tokens than\n"
    "                           usage does: a client's token-count check then differs (default 0)\n";

constexpr long long kMaxTokens = 1 << 24;  // the server's own cap on a response's length

struct Settings {
  FakeLlmConfig config;
  int port = 8000;
  int threads = 1;
};

// strtod and strtoll skip leading spaces and stop at junk; a flag's value must be all number.
bool to_double(const std::string& text, double& out) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtod(text.c_str(), &end);
  return errno == 0 && *end == '\0' && std::isfinite(out);
}

bool to_integer(const std::string& text, long long min, long long max, long long& out) {
  if (text.empty() || !(std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '-')) return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtoll(text.c_str(), &end, 10);
  return errno == 0 && *end == '\0' && out >= min && out <= max;
}

bool to_milliseconds(const std::string& text, double& out) { return to_double(text, out) && out >= 0; }

bool to_fraction(const std::string& text, double& out) { return to_double(text, out) && out >= 0 && out <= 1; }

bool to_tokens(const std::string& text, int& out) {
  long long n = 0;
  if (!to_integer(text, 1, kMaxTokens, n)) return false;
  out = static_cast<int>(n);
  return true;
}

bool split_pair(const std::string& text, std::string& first, std::string& second) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) return false;
  first = text.substr(0, colon);
  second = text.substr(colon + 1);
  return true;
}

bool is_ip_literal(const std::string& text) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, text.c_str(), buf) == 1 || inet_pton(AF_INET6, text.c_str(), buf) == 1;
}

// One flag: what its value must be (completes "--flag expects ..., got 'value'"), and how it
// lands in the settings; `apply` returns false when the value is not that.
struct Flag {
  const char* name;
  const char* expects;
  bool (*apply)(const std::string& value, Settings& s);
};

const Flag kFlags[] = {
    {"--port", "a port number from 0 to 65535 (0 picks a free port)",
     [](const std::string& v, Settings& s) {
       long long n = 0;
       if (!to_integer(v, 0, 65535, n)) return false;
       s.port = static_cast<int>(n);
       return true;
     }},
    {"--host", "an IPv4 or IPv6 address to bind, such as 127.0.0.1, 0.0.0.0 or ::1",
     [](const std::string& v, Settings& s) {
       s.config.host = v;
       return is_ip_literal(v);
     }},
    {"--model", "a non-empty model name",
     [](const std::string& v, Settings& s) {
       s.config.model = v;
       return !v.empty();
     }},
    {"--ttft-ms", "a number of milliseconds >= 0",
     [](const std::string& v, Settings& s) { return to_milliseconds(v, s.config.ttft_ms); }},
    {"--itl-ms", "a number of milliseconds >= 0",
     [](const std::string& v, Settings& s) { return to_milliseconds(v, s.config.itl_ms); }},
    {"--itl-per-stream-ms", "a number of milliseconds >= 0",
     [](const std::string& v, Settings& s) { return to_milliseconds(v, s.config.itl_per_stream_ms); }},
    {"--prefill-ms-per-token", "a number of milliseconds >= 0",
     [](const std::string& v, Settings& s) { return to_milliseconds(v, s.config.prefill_ms_per_token); }},
    {"--output-tokens", "a whole number of tokens from 1 to 16777216",
     [](const std::string& v, Settings& s) {
       s.config.output_tokens_max = 0;  // the last of the two length flags wins
       return to_tokens(v, s.config.output_tokens);
     }},
    {"--output-tokens-range", "MIN:MAX, whole numbers of tokens with 1 <= MIN <= MAX <= 16777216",
     [](const std::string& v, Settings& s) {
       std::string min, max;
       return split_pair(v, min, max) && to_tokens(min, s.config.output_tokens_min) &&
              to_tokens(max, s.config.output_tokens_max) &&
              s.config.output_tokens_min <= s.config.output_tokens_max;
     }},
    {"--tokens-per-chunk", "a whole number of tokens from 1 to 16777216",
     [](const std::string& v, Settings& s) { return to_tokens(v, s.config.tokens_per_chunk); }},
    {"--usage", "one of request, always or never",
     [](const std::string& v, Settings& s) {
       using Usage = FakeLlmConfig::Usage;
       if (v == "request") s.config.usage = Usage::kRequest;
       else if (v == "always") s.config.usage = Usage::kAlways;
       else if (v == "never") s.config.usage = Usage::kNever;
       else return false;
       return true;
     }},
    {"--error-500", "a fraction from 0 to 1",
     [](const std::string& v, Settings& s) { return to_fraction(v, s.config.error_500_fraction); }},
    {"--stall", "FRACTION:MS, a fraction from 0 to 1 and a number of milliseconds >= 0",
     [](const std::string& v, Settings& s) {
       std::string fraction, ms;
       return split_pair(v, fraction, ms) && to_fraction(fraction, s.config.stall_fraction) &&
              to_milliseconds(ms, s.config.stall_ms);
     }},
    {"--disconnect", "a fraction from 0 to 1",
     [](const std::string& v, Settings& s) { return to_fraction(v, s.config.disconnect_fraction); }},
    {"--malformed", "a fraction from 0 to 1",
     [](const std::string& v, Settings& s) { return to_fraction(v, s.config.malformed_fraction); }},
    {"--prefix-cache-blocks", "a whole number of blocks from 0 (no cache) to 16777216",
     [](const std::string& v, Settings& s) {
       long long n = 0;
       if (!to_integer(v, 0, 1 << 24, n)) return false;
       s.config.prefix_cache_blocks = static_cast<std::size_t>(n);
       return true;
     }},
    {"--block-size", "a whole number of tokens from 1 to 4096",
     [](const std::string& v, Settings& s) {
       long long n = 0;
       if (!to_integer(v, 1, 4096, n)) return false;
       s.config.block_size = static_cast<int>(n);
       return true;
     }},
    {"--max-num-seqs", "a whole number of sequences from 0 (no limit) to 1048576",
     [](const std::string& v, Settings& s) {
       long long n = 0;
       if (!to_integer(v, 0, 1 << 20, n)) return false;
       s.config.max_num_seqs = static_cast<int>(n);
       return true;
     }},
    {"--max-model-len", "a whole number of tokens from 1 to 16777216",
     [](const std::string& v, Settings& s) { return to_tokens(v, s.config.max_model_len); }},
    {"--threads", "a whole number of threads from 1 to 64",
     [](const std::string& v, Settings& s) {
       long long n = 0;
       if (!to_integer(v, 1, 64, n)) return false;
       s.threads = static_cast<int>(n);
       return true;
     }},
    {"--seed", "a whole number >= 0",
     [](const std::string& v, Settings& s) {
       if (v.empty() || !std::isdigit(static_cast<unsigned char>(v[0]))) return false;
       char* end = nullptr;
       errno = 0;
       s.config.seed = std::strtoull(v.c_str(), &end, 10);
       return errno == 0 && *end == '\0';
     }},
    {"--report-sent", "yes or no",
     [](const std::string& v, Settings& s) {
       if (v != "yes" && v != "no") return false;
       s.config.record_timings = v == "yes";
       return true;
     }},
    {"--tokenize", "yes or no",
     [](const std::string& v, Settings& s) {
       if (v != "yes" && v != "no") return false;
       s.config.tokenize = v == "yes";
       return true;
     }},
    {"--tokenize-skew", "a percentage from -100 to 1000",
     [](const std::string& v, Settings& s) {
       return to_double(v, s.config.tokenize_skew_pct) && s.config.tokenize_skew_pct >= -100 &&
              s.config.tokenize_skew_pct <= 1000;
     }},
    {"--static", "a response body",
     [](const std::string& v, Settings& s) {
       s.config.serve_static = true;
       s.config.static_body = v;
       return true;
     }},
};

// Fills `s` from argv[2...]; returns -1 to go on serving, else the exit status.
int parse(int argc, char** argv, Settings& s) {
  CommandLineParser parser(std::string(kUsage) + kHelp);
  for (const Flag& f : kFlags) {
    const std::string name = f.name, expects = f.expects;
    parser.option(name, [&s, &f, name, expects](const std::string& v) {
      return f.apply(v, s) ? "" : name + " expects " + expects + ", got '" + v + "'";
    }, name + " expects " + expects + ", got nothing");
  }
  return parser.parse_or_status(argc, argv, 2, "runara serve-fake-llm", kUsage);
}

std::string base_url(const std::string& host, int port) {
  const bool v6 = host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

// The one line a wrapper script (or test) waits for: where to aim, and what it will see.
void print_banner(const FakeLlmConfig& c, int port) {
  std::string tokens = std::to_string(c.output_tokens);
  if (c.output_tokens_max > 0)
    tokens = std::to_string(c.output_tokens_min) + "-" + std::to_string(c.output_tokens_max);
  std::printf("fake LLM server (OpenAI-compatible) at %s  model=%s ttft=%gms itl=%gms tokens=%s",
              base_url(c.host, port).c_str(), c.model.c_str(), c.ttft_ms, c.itl_ms, tokens.c_str());
  if (c.error_500_fraction > 0) std::printf(" error-500=%g", c.error_500_fraction);
  if (c.stall_fraction > 0) std::printf(" stall=%g:%gms", c.stall_fraction, c.stall_ms);
  if (c.disconnect_fraction > 0) std::printf(" disconnect=%g", c.disconnect_fraction);
  if (c.malformed_fraction > 0) std::printf(" malformed=%g", c.malformed_fraction);
  if (c.serve_static) std::printf(" static=%zu bytes", c.static_body.size());
  if (c.max_num_seqs > 0) std::printf(" max-num-seqs=%d", c.max_num_seqs);
  if (!c.tokenize) std::printf(" tokenize=no");
  else if (c.tokenize_skew_pct != 0) std::printf(" tokenize-skew=%g%%", c.tokenize_skew_pct);
  std::printf("\n");
  std::fflush(stdout);
}

FakeLlmStats sum(const std::vector<FakeLlmStats>& all) {
  FakeLlmStats t;
  for (const auto& st : all) {
    t.requests_served += st.requests_served;
    t.connections_accepted += st.connections_accepted;
    t.tokens_sent += st.tokens_sent;
    t.injected_errors += st.injected_errors;
    t.injected_stalls += st.injected_stalls;
    t.injected_disconnects += st.injected_disconnects;
    t.injected_malformed += st.injected_malformed;
    t.client_aborts += st.client_aborts;
    t.tokenize_requests += st.tokenize_requests;
  }
  return t;
}

// Nearest rank: the value at or below which `q` of them lie.
double percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const auto k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size()))) - 1;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(std::min(k, v.size() - 1)), v.end());
  return v[std::min(k, v.size() - 1)];
}

void print_sent(const std::vector<std::unique_ptr<FakeLlmServer>>& servers) {
  std::vector<double> ttft, itl;
  for (const auto& server : servers) {
    FakeLlmTimings t = server->sent_timings();
    ttft.insert(ttft.end(), t.ttft_ms.begin(), t.ttft_ms.end());
    itl.insert(itl.end(), t.itl_ms.begin(), t.itl_ms.end());
  }
  std::printf("sent: %zu first tokens, TTFT p50 %.4f p99 %.4f ms; %zu token gaps, ITL p50 %.4f p99 %.4f ms\n",
              ttft.size(), percentile(ttft, 0.5), percentile(ttft, 0.99), itl.size(), percentile(itl, 0.5),
              percentile(itl, 0.99));
  std::fflush(stdout);
}

void print_summary(const FakeLlmStats& st) {
  std::printf(
      "fake LLM server stopped: %llu requests served, %llu tokens sent (%llu connections, %llu injected errors, "
      "%llu stalls, %llu disconnects, %llu malformed, %llu client aborts; %llu /tokenize requests besides)\n",
      static_cast<unsigned long long>(st.requests_served), static_cast<unsigned long long>(st.tokens_sent),
      static_cast<unsigned long long>(st.connections_accepted), static_cast<unsigned long long>(st.injected_errors),
      static_cast<unsigned long long>(st.injected_stalls), static_cast<unsigned long long>(st.injected_disconnects),
      static_cast<unsigned long long>(st.injected_malformed), static_cast<unsigned long long>(st.client_aborts),
      static_cast<unsigned long long>(st.tokenize_requests));
  std::fflush(stdout);
}

int serve(const Settings& s) {
  // Blocked before the server's loop thread exists, so it inherits the mask: a signal then waits
  // for sigwait below instead of landing on whichever thread the kernel picks.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  // One server per thread on one port (SO_REUSEPORT): each keeps its own exact timing on its own
  // loop. A port some other program holds is refused first: SO_REUSEPORT would share it quietly.
  if (s.threads > 1 && s.port != 0) {
    if (std::string problem = loopback_port_problem(s.port); !problem.empty() && s.config.host == "127.0.0.1") {
      std::fprintf(stderr, "runara serve-fake-llm: %s\n", problem.c_str());
      return 1;
    }
  }
  std::vector<std::unique_ptr<FakeLlmServer>> servers;
  int port = s.port;
  for (int i = 0; i < s.threads; ++i) {
    FakeLlmConfig config = s.config;
    config.reuse_port = s.threads > 1;
    config.seed = s.config.seed + static_cast<std::uint64_t>(i);  // threads draw different failures
    servers.push_back(std::make_unique<FakeLlmServer>(config));
    const int bound = servers.back()->start(port);
    if (bound < 0) {
      std::fprintf(stderr, "runara serve-fake-llm: cannot listen on %s: %s\n",
                   base_url(s.config.host, port).c_str(), uv_strerror(bound));
      return 1;
    }
    port = bound;
  }
  print_banner(s.config, port);
  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  std::vector<FakeLlmStats> stats;
  for (auto& server : servers) {
    server->stop();
    stats.push_back(server->stats());
  }
  print_summary(sum(stats));
  if (s.config.record_timings) print_sent(servers);
  if (servers.size() > 1) {
    std::printf("requests served per thread:");
    for (const auto& st : stats) std::printf(" %llu", static_cast<unsigned long long>(st.requests_served));
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int serve_fake_llm(int argc, char** argv) {
  Settings settings;
  if (int status = parse(argc, argv, settings); status >= 0) return status;
  // Each thread is a server of its own: N queues of max_num_seqs would not be vLLM's one.
  if (settings.threads > 1 && settings.config.max_num_seqs > 0) {
    std::fprintf(stderr, "runara serve-fake-llm: --max-num-seqs needs one server: leave out --threads (one thread holds thousands of streams)\n%s", kUsage);
    return 2;
  }
  return serve(settings);
}

}  // namespace runara::cli
