// The GPU tool parsers (runtime/gpu/) against recorded outputs in tests/fixtures/gpu/. Every
// expected value below was read off the fixture by hand, not produced by the parser.
#include <catch2/catch.hpp>

#include "gpu/amd_smi_fast.hpp"
#include "gpu/amd_smi_parser.hpp"
#include "gpu/nvidia_smi_parser.hpp"
#include "gpu/rocm_smi_parser.hpp"
#include "gpu/tool_values.hpp"
#include "gpu_fixture.hpp"
#include "base/json_limits.hpp"

using namespace runara::gpu;

namespace {
constexpr double MiB = 1048576.0;
}

TEST_CASE("amd-smi metric --json, ROCm 6 list shape (RX 6600, full output)", "[gpu_parse]") {
  auto p = parse_amd_smi_metric(read_gpu_fixture("amd-smi/radeon-rx6600-amdsmi-list-shape-metric.json"));
  REQUIRE(p.error == "");
  REQUIRE(p.gpus.size() == 1);
  const GpuReading& g = p.gpus[0];
  CHECK(g.index == 0);
  CHECK(g.power_w == 6.0);
  CHECK(g.energy_j == 0.0);
  CHECK(g.vram_used_bytes == 202 * MiB);
  CHECK(g.vram_total_bytes == 8176 * MiB);
  CHECK(g.gpu_util_pct == 1.0);
  CHECK(g.mem_util_pct == 0.0);
  CHECK(g.temp_edge_c == 36.0);
  CHECK(g.temp_hotspot_c == 37.0);
  CHECK(g.temp_memory_c == 32.0);
  CHECK(g.clock_gfx_mhz == 800.0);
  CHECK(g.clock_mem_mhz == 541.0);
  CHECK_FALSE(g.vram_used_pct);
}

TEST_CASE("amd-smi metric -p --json (ROCm 6.1.0 changelog): only power, the rest nil", "[gpu_parse]") {
  auto p = parse_amd_smi_metric(read_gpu_fixture("amd-smi/rocm6.1.0-changelog-metric-p-json-list-shape.json"));
  REQUIRE(p.error == "");
  REQUIRE(p.gpus.size() == 1);
  CHECK(p.gpus[0].power_w == 10.0);
  CHECK_FALSE(p.gpus[0].energy_j);
  CHECK_FALSE(p.gpus[0].vram_used_bytes);
  CHECK_FALSE(p.gpus[0].temp_edge_c);
}

TEST_CASE("amd-smi metric --json, ROCm 7 dict shape and plain numbers", "[gpu_parse]") {
  // The R9700 fixture is cut at 40 lines: a clear error, no crash.
  auto cut = parse_amd_smi_metric(read_gpu_fixture("amd-smi/radeon-r9700-rocm7.2.0-amdsmi26.2.1-metric-json-gpu0-head40-PARTIAL.json"));
  CHECK(cut.gpus.empty());
  CHECK_THAT(cut.error, Catch::StartsWith("amd-smi metric --json: not valid JSON"));
  // Its first 40 lines closed by hand: the {"gpu_data": [...]} wrapper is understood.
  auto dict = parse_amd_smi_metric(
      R"j({"gpu_data": [{"gpu": 1, "usage": {"gfx_activity": {"value": 100, "unit": "%"}},)j"
      R"j( "power": {"socket_power": 250}, "energy": {"total_energy_consumption": {"value": 5000000, "unit": "uJ"}},)j"
      R"j( "mem_usage": {"used_vram": {"value": "N/A", "unit": "MB"}}}]})j");
  REQUIRE(dict.error == "");
  REQUIRE(dict.gpus.size() == 1);
  CHECK(dict.gpus[0].index == 1);
  CHECK(dict.gpus[0].gpu_util_pct == 100.0);
  CHECK(dict.gpus[0].power_w == 250.0);
  CHECK(dict.gpus[0].energy_j == Approx(5.0));
  CHECK_FALSE(dict.gpus[0].vram_used_bytes);
}

TEST_CASE("amd-smi static --json (RX 6600) and the cut MI300X vram object", "[gpu_parse]") {
  auto s = parse_amd_smi_static(read_gpu_fixture("amd-smi/radeon-rx6600-amdsmi-list-shape-static.json"));
  REQUIRE(s.error == "");
  CHECK(s.facts.model == "Navi 23 [Radeon RX 6600/6600 XT");
  CHECK(s.facts.vbios == "020.003.000.030.000000");
  CHECK(s.facts.driver_version == "7.0.0-3-pve");
  CHECK(s.facts.vram_total_bytes == 8176 * MiB);
  CHECK(s.facts.gpu_count == 1);
  CHECK_FALSE(s.facts.rocm_version);
  auto cut = parse_amd_smi_static(read_gpu_fixture("amd-smi/mi300x-rocm6.2-static-json-jq-vram-PARTIAL.json"));
  CHECK_THAT(cut.error, Catch::Contains("expected a list of GPUs"));
}

TEST_CASE("amd-smi: malformed, empty, unknown units and odd entries", "[gpu_parse]") {
  CHECK_THAT(parse_amd_smi_metric("").error, Catch::StartsWith("amd-smi metric --json: not valid JSON"));
  CHECK(parse_amd_smi_metric("[]").error == "amd-smi metric --json: the tool listed no GPU");
  CHECK_THAT(parse_amd_smi_metric("[3]").error, Catch::Contains("GPU entry 0 is number"));
  CHECK_THAT(parse_amd_smi_metric("AMD SMI: amdgpu driver not loaded\n").error, Catch::Contains("not valid JSON"));
  CHECK_THAT(parse_amd_smi_metric(std::string(5000, '[')).error, Catch::Contains("nested deeper than"));
  // A unit we do not know is nil rather than a wrongly scaled number.
  auto odd = parse_amd_smi_metric(R"j([{"gpu": 0, "power": {"socket_power": {"value": 7, "unit": "horsepower"}}}])j");
  REQUIRE(odd.gpus.size() == 1);
  CHECK_FALSE(odd.gpus[0].power_w);
  auto na = parse_amd_smi_metric(R"j([{"gpu": 0, "power": "N/A", "temperature": {"edge": "N/A"}}])j");
  REQUIRE(na.gpus.size() == 1);
  CHECK_FALSE(na.gpus[0].power_w);
  CHECK_FALSE(na.gpus[0].temp_edge_c);
}

TEST_CASE("rocm-smi --json: 4x MI100 (ROCm 6.0.2) and 6x MI100 (ROCm 5.7.1)", "[gpu_parse]") {
  auto p = parse_rocm_smi_json(read_gpu_fixture("rocm-smi/mi100-rocm6.0.2-telegraf-allflags.json"));
  REQUIRE(p.error == "");
  REQUIRE(p.gpus.size() == 4);
  const GpuReading& g = p.gpus[0];
  CHECK(g.index == 0);
  CHECK(g.power_w == 36.0);
  CHECK(g.vram_total_bytes == 34342961152.0);
  CHECK(g.vram_used_bytes == 6750208.0);
  CHECK(g.gpu_util_pct == 0.0);
  CHECK(g.mem_util_pct == 0.0);
  CHECK(g.temp_edge_c == 53.0);
  CHECK(g.temp_hotspot_c == 55.0);
  CHECK(g.temp_memory_c == 53.0);
  CHECK(g.clock_gfx_mhz == 300.0);
  CHECK(g.clock_mem_mhz == 1200.0);
  CHECK_FALSE(g.energy_j);
  CHECK(p.gpus[3].index == 3);
  CHECK(p.gpus[3].power_w == 39.0);
  CHECK(p.gpus[3].temp_hotspot_c == 53.0);

  auto old = parse_rocm_smi_json(read_gpu_fixture("rocm-smi/mi100-rocm5.7.1-telegraf-allflags.json"));
  REQUIRE(old.error == "");
  REQUIRE(old.gpus.size() == 6);
  CHECK(old.gpus[5].power_w == 40.0);
  CHECK(old.gpus[5].vram_used_bytes == 6782976.0);
  CHECK(old.gpus[5].temp_hotspot_c == 35.0);

  auto s = parse_rocm_smi_json_static(read_gpu_fixture("rocm-smi/mi100-rocm6.0.2-telegraf-allflags.json"));
  REQUIRE(s.error == "");
  CHECK(s.facts.model == "Arcturus GL-XL [Instinct MI100]");
  CHECK(s.facts.vbios == "113-D3431401-101");
  CHECK(s.facts.driver_version == "6.3.6");
  CHECK(s.facts.gpu_count == 4);
  CHECK(s.facts.vram_total_bytes == 34342961152.0);
}

TEST_CASE("rocm-smi --showallinfo --json (RX 6600): newer key names, no power", "[gpu_parse]") {
  const std::string text = read_gpu_fixture("rocm-smi/radeon-rx6600-rocm6.x-showallinfo-json-jq.json");
  auto p = parse_rocm_smi_json(text);
  REQUIRE(p.error == "");
  REQUIRE(p.gpus.size() == 1);
  CHECK(p.gpus[0].gpu_util_pct == 0.0);
  CHECK_FALSE(p.gpus[0].power_w);
  auto s = parse_rocm_smi_json_static(text);
  CHECK(s.facts.model == "Navi 23 [Radeon RX 6600/6600 XT/6600M]");
  CHECK(s.facts.driver_version == "7.0.0-3-pve");
}

TEST_CASE("rocm-smi --json: malformed and empty", "[gpu_parse]") {
  CHECK_THAT(parse_rocm_smi_json("").error, Catch::StartsWith("rocm-smi --json: not valid JSON"));
  CHECK(parse_rocm_smi_json(R"j({"system": {}})j").error == "rocm-smi --json: no \"cardN\" entry in the output");
  CHECK_THAT(parse_rocm_smi_json("[1]").error, Catch::Contains("expected an object"));
  auto na = parse_rocm_smi_json(R"j({"card0": {"Average Graphics Package Power (W)": "N/A", "GPU use (%)": "12"}})j");
  REQUIRE(na.gpus.size() == 1);
  CHECK_FALSE(na.gpus[0].power_w);
  CHECK(na.gpus[0].gpu_util_pct == 12.0);
}

TEST_CASE("rocm-smi concise table: new layout under load (1x MI300X)", "[gpu_parse]") {
  auto lora = parse_rocm_smi_concise(read_gpu_fixture("rocm-smi/mi300x-rocm6.2-concise-table-under-load-lora.txt"));
  REQUIRE(lora.error == "");
  REQUIRE(lora.gpus.size() == 1);
  CHECK(lora.gpus[0].temp_hotspot_c == 71.0);
  CHECK(lora.gpus[0].power_w == 682.0);
  CHECK(lora.gpus[0].clock_gfx_mhz == 1653.0);
  CHECK(lora.gpus[0].clock_mem_mhz == 1300.0);
  CHECK(lora.gpus[0].vram_used_pct == 43.0);
  CHECK(lora.gpus[0].gpu_util_pct == 100.0);
  auto full = parse_rocm_smi_concise(read_gpu_fixture("rocm-smi/mi300x-rocm6.2-concise-table-under-load-fullft.txt"));
  REQUIRE(full.gpus.size() == 1);
  CHECK(full.gpus[0].temp_hotspot_c == 79.0);
  CHECK(full.gpus[0].power_w == 728.0);
  CHECK(full.gpus[0].vram_used_pct == 75.0);
}

TEST_CASE("rocm-smi concise table: old two-line layout (4x MI300X VF, 8x MI300X idle)", "[gpu_parse]") {
  auto vf = parse_rocm_smi_concise(read_gpu_fixture("rocm-smi/mi300x-vf-x4-default-concise-table.txt"));
  REQUIRE(vf.error == "");
  REQUIRE(vf.gpus.size() == 4);
  CHECK(vf.gpus[3].index == 3);
  CHECK(vf.gpus[3].temp_hotspot_c == 38.0);
  CHECK(vf.gpus[3].power_w == 137.0);
  CHECK(vf.gpus[3].clock_gfx_mhz == 131.0);
  CHECK(vf.gpus[3].clock_mem_mhz == 900.0);
  auto idle = parse_rocm_smi_concise(read_gpu_fixture("rocm-smi/mi300x-x8-rocm6.1-concise-table-idle-grok1blog.txt"));
  REQUIRE(idle.gpus.size() == 8);
  CHECK(idle.gpus[4].power_w == 143.0);
  CHECK(idle.gpus[6].temp_hotspot_c == 39.0);
  CHECK(idle.gpus[7].gpu_util_pct == 0.0);
}

TEST_CASE("rocm-smi concise table: empty, cut and error text", "[gpu_parse]") {
  CHECK_THAT(parse_rocm_smi_concise("").error, Catch::Contains("no Concise Info table"));
  CHECK_THAT(parse_rocm_smi_concise("ERROR:root:Driver not initialized (amdgpu not found in modules)\n").error,
             Catch::Contains("no Concise Info table"));
  const std::string table = read_gpu_fixture("rocm-smi/mi300x-vf-x4-default-concise-table.txt");
  CHECK_THAT(parse_rocm_smi_concise(table.substr(0, table.find("0       ["))).error, Catch::Contains("no GPU row"));
}

TEST_CASE("nvidia-smi csv with header and units: H100 idle/load, H200 load", "[gpu_parse]") {
  const auto& fields = nvidia_sample_fields();
  auto idle = parse_nvidia_smi_csv(read_gpu_fixture("nvidia-smi/h100-80gb-hbm3-driver590-idle-query-gpu-allfields.csv"), fields);
  REQUIRE(idle.error == "");
  REQUIRE(idle.gpus.size() == 1);
  const GpuReading& g = idle.gpus[0];
  CHECK(g.index == 0);
  CHECK(g.power_w == 69.85);
  CHECK(g.vram_used_bytes == 0.0);
  CHECK(g.vram_total_bytes == 81559 * MiB);
  CHECK(g.gpu_util_pct == 0.0);
  CHECK(g.mem_util_pct == 0.0);
  CHECK(g.temp_edge_c == 41.0);
  CHECK(g.temp_memory_c == 48.0);
  CHECK(g.clock_gfx_mhz == 345.0);
  CHECK(g.clock_mem_mhz == 2619.0);
  CHECK_FALSE(g.temp_hotspot_c);
  CHECK_FALSE(g.energy_j);

  auto load = parse_nvidia_smi_csv(read_gpu_fixture("nvidia-smi/h100-80gb-hbm3-driver590-load-query-gpu-allfields.csv"), fields);
  REQUIRE(load.gpus.size() == 1);
  CHECK(load.gpus[0].power_w == 631.95);
  CHECK(load.gpus[0].vram_used_bytes == 19818 * MiB);
  CHECK(load.gpus[0].gpu_util_pct == 100.0);
  CHECK(load.gpus[0].mem_util_pct == 11.0);
  CHECK(load.gpus[0].temp_edge_c == 59.0);
  CHECK(load.gpus[0].clock_gfx_mhz == 1980.0);

  const std::string h200 = read_gpu_fixture("nvidia-smi/h200-driver590-load-query-gpu-allfields.csv");
  auto p = parse_nvidia_smi_csv(h200, fields);
  REQUIRE(p.gpus.size() == 1);
  CHECK(p.gpus[0].power_w == 627.40);
  CHECK(p.gpus[0].vram_used_bytes == 32362 * MiB);
  CHECK(p.gpus[0].vram_total_bytes == 143771 * MiB);
  CHECK(p.gpus[0].temp_memory_c == 40.0);
  CHECK(p.gpus[0].clock_mem_mhz == 3201.0);
  auto s = parse_nvidia_smi_static(h200, nvidia_static_fields());
  REQUIRE(s.error == "");
  CHECK(s.facts.model == "NVIDIA H200");
  CHECK(s.facts.vbios == "96.00.A5.00.03");
  CHECK(s.facts.driver_version == "590.48.01");
  CHECK(s.facts.gpu_count == 1);
  CHECK(s.facts.vram_total_bytes == 143771 * MiB);
}

TEST_CASE("nvidia-smi noheader,nounits: bare numbers and both N/A spellings", "[gpu_parse]") {
  // Lines of the GeForce transcript, each the output of a one-field query.
  CHECK(parse_nvidia_smi_csv("36.18\n", {"power.draw"}).gpus.at(0).power_w == 36.18);
  CHECK(parse_nvidia_smi_csv("47\n", {"temperature.gpu"}).gpus.at(0).temp_edge_c == 47.0);
  auto na = parse_nvidia_smi_csv("N/A\n", {"temperature.memory"});
  REQUIRE(na.error == "");
  CHECK_FALSE(na.gpus.at(0).temp_memory_c);
  CHECK_FALSE(parse_nvidia_smi_csv("[N/A]\n", {"power.draw"}).gpus.at(0).power_w);
  // The sampling line runara asks for, nounits: memory in MiB.
  auto p = parse_nvidia_smi_csv("0, 631.95, 19818, 81559, 100, 11, 59, 54, 1980, 2619\n"
                                "1, [N/A], 0, 81559, 0, 0, 30, N/A, 345, 2619\n",
                                nvidia_sample_fields());
  REQUIRE(p.error == "");
  REQUIRE(p.gpus.size() == 2);
  CHECK(p.gpus[0].vram_used_bytes == 19818 * MiB);
  CHECK(p.gpus[1].index == 1);
  CHECK_FALSE(p.gpus[1].power_w);
  CHECK_FALSE(p.gpus[1].temp_memory_c);
}

TEST_CASE("nvidia-smi: driver error, cut line, empty output, bad index", "[gpu_parse]") {
  const auto& fields = nvidia_sample_fields();
  auto driver = parse_nvidia_smi_csv(
      "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
      "NVIDIA driver is installed and running.\n",
      fields);
  CHECK(driver.gpus.empty());
  CHECK_THAT(driver.error, Catch::StartsWith("nvidia-smi: expected 10 comma-separated values, got 1: \"NVIDIA-SMI has failed"));
  CHECK_THAT(parse_nvidia_smi_csv("0, 631.95, 19818\n", fields).error, Catch::Contains("got 3"));
  CHECK(parse_nvidia_smi_csv("", fields).error == "nvidia-smi: no GPU line in the output");
  CHECK(parse_nvidia_smi_csv("\n\n", fields).error == "nvidia-smi: no GPU line in the output");
  CHECK_THAT(parse_nvidia_smi_csv("-3, 1, 1, 1, 1, 1, 1, 1, 1, 1\n", fields).error, Catch::Contains("bad GPU index"));
  CHECK_THAT(parse_nvidia_smi_csv("x" + std::string(1000, 'y') + "\n", fields).error, Catch::EndsWith("...\""));
}

TEST_CASE("tool value spellings", "[gpu_parse]") {
  CHECK(leading_number("(1402Mhz)j") == 1402.0);
  CHECK(leading_number("35.0\xC2\xB0" "C") == 35.0);
  CHECK_FALSE(leading_number("[Requested functionality has been deprecated]"));
  CHECK_FALSE(leading_number("nan"));
  CHECK_FALSE(leading_number("1e999"));
  CHECK_FALSE(leading_number("12,5"));
  CHECK_FALSE(leading_number("0xab"));  // an id, not 0 "xab"
  CHECK(trailing_unit("19818 MiB") == "MiB");
  CHECK(unit_factor("MB") == 1048576.0);
  CHECK_FALSE(unit_factor("furlongs"));
}

TEST_CASE("amd-smi fast path agrees with the nlohmann reference, or declines", "[gpu_parse]") {
  const std::string rx6600 = read_gpu_fixture("amd-smi/radeon-rx6600-amdsmi-list-shape-metric.json");
  const std::string changelog = read_gpu_fixture("amd-smi/rocm6.1.0-changelog-metric-p-json-list-shape.json");
  // Real outputs: the fast path answers, with exactly the reference's readings.
  for (const std::string& text : {rx6600, changelog}) {
    auto fast = parse_amd_smi_metric_fast(text);
    REQUIRE(fast);
    CHECK(fast->gpus == parse_amd_smi_metric_reference(text).gpus);
  }
  // Odd but valid documents: where it answers, it agrees.
  const char* odd[] = {
      R"j({"gpu_data": [{"gpu": 2, "power": {"socket_power": {"value": "250 W"}}}], "x": [1, {"y": null}]})j",
      R"j([{"gpu": 0, "power": {"socket_power": 1}, "power": {"current_socket_power": 2}}])j",
      R"j([{"gpu": 0, "clock": {"gfx_0": {"min_clk": 5}, "gfx": {"clk": 9}, "mem": {"clk": {"value": 3, "unit": "MHz"}}}}])j",
      R"j([{"gpu": 1.0, "mem_usage": {"used_vram": {"value": 1, "unit": 5}, "total_vram": {"unit": "GB", "value": 2}}}])j",
      R"j([{"gpu": -3, "temperature": {"edge": {"value": [1], "unit": "C"}, "hotspot": true, "mem": "41 C"}}])j",
      R"j([{"gpu": 0, "energy": {"total_energy_consumption": {"value": 1e3, "unit": "kJ", "value": 2}}}])j",
      R"j([{}, {"gpu": 7}])j",
  };
  for (const char* text : odd) {
    INFO(text);
    auto fast = parse_amd_smi_metric_fast(text);
    REQUIRE(fast);
    CHECK(fast->gpus == parse_amd_smi_metric_reference(text).gpus);
  }
  // Declined: the reference decides (errors, escapes, non-ASCII, duplicates it cannot mirror).
  const char* declined[] = {
      "", "[]", "[1]", "{}", R"j({"gpu_data": 5})j", "[{} ", "[{}] x", R"j([{"pow\u0065r": {}}])j",
      R"j([{"gpu": 0, "power": {"socket_power": "5\u0020W"}}])j", "[{\"n\": \"\xC3\xA9\"}]",
      R"j({"gpu_data": [{}], "gpu_data": [{}]})j", R"j([{"gpu": 1e999}])j", R"j([{"gpu": 01}])j",
      R"j([{"gpu": 99999999999}])j",
  };
  for (const char* text : declined) {
    INFO(text);
    CHECK_FALSE(parse_amd_smi_metric_fast(text));
  }
  CHECK_FALSE(parse_amd_smi_metric_fast(std::string(100, '[') + std::string(100, ']')));
}

// Issue 25: 8 MiB of amd-smi JSON took 220 MB (the parsed document was not bounded), and
// nvidia-smi could list any number of GPUs. Every parser now refuses more than kMaxGpus GPUs,
// and a JSON document that would be large once parsed is refused before it is built.
TEST_CASE("GPU tools: more than 64 GPUs, or a JSON document too large once parsed, are refused", "[gpu_parse]") {
  CHECK(kMaxGpus == 64);
  const auto amd_list = [](int n) {
    std::string t = "[";
    for (int i = 0; i < n; ++i) t += (i ? ",{\"gpu\": " : "{\"gpu\": ") + std::to_string(i) + "}";
    return t + "]";
  };
  CHECK(parse_amd_smi_metric(amd_list(64)).gpus.size() == 64);
  CHECK(parse_amd_smi_metric(amd_list(65)).error == "amd-smi metric --json: more than 64 GPUs in one reading");
  CHECK_FALSE(parse_amd_smi_metric_fast(amd_list(65)));  // declines; the reference says why
  CHECK(parse_amd_smi_metric("{\"gpu_data\": " + amd_list(1000) + "}").error ==
        "amd-smi metric --json: more than 64 GPUs in one reading");

  std::string rocm = "{";
  for (int i = 0; i < 65; ++i) rocm += (i ? ",\"card" : "\"card") + std::to_string(i) + "\": {\"GPU use (%)\": \"5\"}";
  CHECK(parse_rocm_smi_json(rocm + "}").error == "rocm-smi --json: more than 64 GPUs in one reading");
  std::string concise = "Device  Node  IDs              Temp        Power     Partitions          SCLK     MCLK     Fan  Perf  PwrCap  VRAM%  GPU%\n";
  for (int i = 0; i < 65; ++i) {
    concise += std::to_string(i) + "       2     0x74a1,   47056  79.0\xC2\xB0" "C      728.0W    NPS1, SPX, 0        1618Mhz  1300Mhz  0%   auto  750.0W  75%    100%\n";
  }
  CHECK(parse_rocm_smi_concise(concise).error == "rocm-smi: more than 64 GPUs in one reading");
  std::string csv;
  for (int i = 0; i < 65; ++i) csv += std::to_string(i) + ", 631.95, 19818, 81559, 100, 11, 59, 54, 1980, 2619\n";
  CHECK(parse_nvidia_smi_csv(csv, nvidia_sample_fields()).error == "nvidia-smi: more than 64 GPUs in one reading");

  // One GPU whose entry holds 2 MiB of empty objects, behind a key with an escape (which sends the
  // text to the reference parser): about 90 bytes each once parsed.
  std::string junk = "[{\"gpu\": 0, \"j\\u0075nk\": [";
  while (junk.size() < (std::size_t{2} << 20)) junk += "{},\n";
  junk += "{}]}]";
  CHECK_THAT(parse_amd_smi_metric(junk).error,
             Catch::Matches("amd-smi metric --json: would take about [0-9]+ MiB once parsed, more than the 16 MiB allowed"));
  CHECK_THAT(parse_rocm_smi_json("{\"card0\": {\"x\": [" + junk + "]}}").error,
             Catch::StartsWith("rocm-smi --json: would take about "));
  // The recorded outputs are far below the bound.
  CHECK(runara::json_tree_bytes(read_gpu_fixture("amd-smi/radeon-rx6600-amdsmi-list-shape-metric.json")) < (64u << 10));
}
