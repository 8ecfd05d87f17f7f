#include "fake_do_command.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "sim/fake_digitalocean.hpp"

namespace runara::cli {

namespace {
volatile sig_atomic_t g_stop = 0;
}

int serve_fake_do(int argc, char** argv) {
  sim::FakeDoConfig config;
  int port = 0;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--port" && v) port = std::atoi(argv[++i]);
    else if (a == "--token" && v) config.token = argv[++i];
    else if (a == "--active-after" && v) config.active_after_s = std::atof(argv[++i]);
    else if (a == "--delete-after" && v) config.delete_after_s = std::atof(argv[++i]);
    else if (a == "--latency" && v) config.latency_s = std::atof(argv[++i]);
    else {
      std::fprintf(stderr,
                   "usage: runara serve-fake-do [--port N] [--token T] [--active-after S] [--delete-after S] "
                   "[--latency S]\n");
      return 2;
    }
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
