#include "fake_do_command.hpp"

#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "command_line.hpp"
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

// A number of seconds >= 0, the whole text.
bool seconds_value(const std::string& text, double& out) {
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return !text.empty() && end && *end == '\0' && std::isfinite(out) && out >= 0;
}

// An option whose value is a number of seconds >= 0, stored in `into`.
ValueAction seconds(const char* name, double& into) {
  return [name, &into](const std::string& v) {
    return seconds_value(v, into) ? "" : std::string(name) + " expects a number of seconds >= 0, got '" + v + "'";
  };
}

}  // namespace

int serve_fake_do(int argc, char** argv) {
  sim::FakeDoConfig config;
  int port = 0;
  CommandLineParser parser(kUsage);
  parser
      .option("--port", [&](const std::string& v) {
        double n = -1;
        if (!seconds_value(v, n) || n > 65535 || n != static_cast<int>(n)) return "--port expects a port number from 0 to 65535, got '" + v + "'";
        return port = static_cast<int>(n), std::string();
      })
      .option("--token", [&](const std::string& v) {
        return v.empty() ? "--token needs a non-empty value" : (config.token = v, std::string());
      })
      .option("--active-after", seconds("--active-after", config.active_after_s))
      .option("--delete-after", seconds("--delete-after", config.delete_after_s))
      .option("--latency", seconds("--latency", config.latency_s));
  if (int status = parser.parse_or_status(argc, argv, 2, "runara serve-fake-do", kUsage); status >= 0) return status;
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
