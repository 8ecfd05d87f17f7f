#include "fake_do_command.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "base/did_you_mean.hpp"
#include "port_probe.hpp"
#include "sim/fake_digitalocean.hpp"

namespace runara::cli {

namespace {
volatile sig_atomic_t g_stop = 0;
}

namespace {

const char* const kUsage =
    "usage: runara serve-fake-do [--port N] [--token T] [--active-after S] [--delete-after S] [--latency S]\n"
    "  --port N           port on 127.0.0.1 (default 0: a free one); refused when in use\n"
    "  --token T          the token it accepts (default test-token)\n"
    "  --active-after S   seconds until a new droplet is active (default 0.5)\n"
    "  --delete-after S   seconds until a deleted droplet is gone (default 0.5)\n"
    "  --latency S        added to every answer (default 0)\n"
    "  Options take their value as --flag VALUE or --flag=VALUE.\n";

int usage_error(const std::string& message) {
  std::fprintf(stderr, "runara serve-fake-do: %s\n%s", message.c_str(), kUsage);
  return 2;
}

// A number of seconds >= 0, the whole text.
bool seconds_value(const std::string& text, double& out) {
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return !text.empty() && end && *end == '\0' && std::isfinite(out) && out >= 0;
}

}  // namespace

int serve_fake_do(int argc, char** argv) {
  sim::FakeDoConfig config;
  int port = 0;
  const std::vector<std::string> flags{"--port", "--token", "--active-after", "--delete-after", "--latency", "--help"};
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    std::optional<std::string> v;
    if (a.rfind("--", 0) == 0 && a.find('=') != std::string::npos) {
      v = a.substr(a.find('=') + 1);
      a = a.substr(0, a.find('='));
    }
    if (std::find(flags.begin(), flags.end(), a) == flags.end()) {
      return usage_error("unknown option '" + a + "'" + did_you_mean(a, flags));
    }
    if (!v) {
      if (i + 1 >= argc) return usage_error(a + " needs a value");
      v = argv[++i];
    }
    double number = 0;
    if (a == "--token") {
      if (v->empty()) return usage_error("--token needs a non-empty value");
      config.token = *v;
    } else if (!seconds_value(*v, number)) {
      return usage_error(a + " expects " + (a == "--port" ? "a port number from 0 to 65535" : "a number of seconds >= 0") +
                         ", got '" + *v + "'");
    } else if (a == "--port") {
      if (number > 65535 || number != static_cast<int>(number)) return usage_error("--port expects a port number from 0 to 65535, got '" + *v + "'");
      port = static_cast<int>(number);
    } else if (a == "--active-after") {
      config.active_after_s = number;
    } else if (a == "--delete-after") {
      config.delete_after_s = number;
    } else {
      config.latency_s = number;
    }
  }
  if (std::string problem = loopback_port_problem(port); !problem.empty()) {
    std::fprintf(stderr, "runara serve-fake-do: %s\n", problem.c_str());
    return 1;
  }
  sim::FakeDigitalOcean fake(config);
  try {
    port = fake.start(port);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "runara serve-fake-do: %s\n", e.what());
    return 1;
  }
  std::printf("fake DigitalOcean API at %s (token: %s)\n", fake.base_url().c_str(), config.token.c_str());
  std::printf("try: RUNARA_DO_API_URL=%s DIGITALOCEAN_TOKEN=%s runara SCRIPT\n", fake.base_url().c_str(),
              config.token.c_str());
  std::fflush(stdout);
  signal(SIGINT, [](int) { g_stop = 1; });
  signal(SIGTERM, [](int) { g_stop = 1; });
  while (!g_stop) pause();
  std::printf("live droplets at exit: %d\n", fake.live_droplets());
  return 0;
}

}  // namespace runara::cli
