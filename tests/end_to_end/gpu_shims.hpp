// Stand-ins for nvidia-smi and amd-smi: small shell scripts in a fresh folder that is put on
// PATH, replaying recorded output (tests/fixtures/gpu/) at an interval, or misbehaving on
// purpose (hanging, dying mid-run, printing garbage). The real tools are never needed.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include "test_paths.hpp"

namespace gpu_test {

// One H100-under-load reading (h100-80gb-hbm3-driver590-load-query-gpu-allfields.csv: 631.95 W,
// 19818/81559 MiB, 100 %/11 %, 59/54 °C, 1980/2619 MHz) in the columns runara asks for,
// noheader,nounits, for GPU `i`.
inline std::string h100_line(int i, const std::string& watts = "631.95") {
  return std::to_string(i) + ", " + watts + ", 19818, 81559, 100, 11, 59, 54, 1980, 2619";
}

class ShimDir {
 public:
  ShimDir() {
    char tmpl[] = "/tmp/runara-gpu-shims-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  ~ShimDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  const std::string& dir() const { return dir_; }
  // PATH with the shims first, then what sh, sleep and cat need.
  std::string path() const { return dir_ + ":/usr/bin:/bin"; }

  void add(const std::string& tool, const std::string& body) const {
    const std::string file = dir_ + "/" + tool;
    std::ofstream(file) << "#!/bin/sh\n" << body << "\n";
    chmod(file.c_str(), 0755);
  }

  // nvidia-smi: the static query answers once; the sampling query with -lms prints `gpus`
  // lines every `interval` seconds, from `watts_script` (a shell expression of $n, the tick).
  void nvidia(int gpus, const std::string& per_tick_extra = "") const {
    std::string lines;
    for (int i = 0; i < gpus; ++i) lines += "  echo \"" + h100_line(i, "$w") + "\"\n";
    add("nvidia-smi",
        "case \"$*\" in\n"
        "*name,vbios*) for i in $(seq 0 " + std::to_string(gpus - 1) + "); do echo \"$i, NVIDIA H100 80GB HBM3, 96.00.A5.00.01, 590.48.01, 81559, " + std::to_string(gpus) + "\"; done; exit 0;;\n"
        "esac\n"
        "ms=1000; case \"$*\" in *-lms*) ms=${*##* };; esac\n"
        "n=0\n"
        "while :; do\n"
        "  w=631.95\n" + per_tick_extra + lines +
        "  case \"$*\" in *-lms*) ;; *) exit 0;; esac\n"
        "  n=$((n+1))\n"
        "  sleep $(awk \"BEGIN{print $ms/1000}\")\n"
        "done");
  }

  // amd-smi: replays the RX 6600 recordings (metric and static, ROCm 6 list shape).
  void amd() const {
    const std::string fixtures = std::string(RUNARA_SOURCE_DIR) + "/tests/fixtures/gpu/amd-smi/";
    add("amd-smi",
        "case \"$1\" in\n"
        "static) cat '" + fixtures + "radeon-rx6600-amdsmi-list-shape-static.json';;\n"
        "metric) cat '" + fixtures + "radeon-rx6600-amdsmi-list-shape-metric.json';;\n"
        "*) echo \"unknown subcommand $1\" >&2; exit 2;;\n"
        "esac");
  }

 private:
  std::string dir_;
};

}  // namespace gpu_test
