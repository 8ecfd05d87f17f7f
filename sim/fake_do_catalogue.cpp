#include "sim/fake_do_catalogue.hpp"

#include <algorithm>
#include <optional>

#include "sim/fake_do_support.hpp"

namespace runara::sim::fakedo {

namespace {

const std::vector<std::string> kAllRegions = {"nyc1", "nyc2", "nyc3", "sfo2", "sfo3", "ams3", "sgp1",
                                              "lon1", "fra1", "tor1", "blr1", "syd1", "atl1"};
const std::vector<std::string> kH100Regions = {"nyc2", "tor1"};
const std::vector<std::string> kMi300xRegions = {"atl1"};

// Hours per month DigitalOcean bills against (price_monthly = price_hourly * 672).
constexpr double kHoursPerMonth = 672.0;

SizeInfo basic(std::string slug, int memory_mb, int vcpus, int disk_gb, double transfer,
               double monthly, std::string description) {
  SizeInfo s;
  s.slug = std::move(slug);
  s.memory_mb = memory_mb;
  s.vcpus = vcpus;
  s.disk_gb = disk_gb;
  s.transfer_tb = transfer;
  s.price_monthly = monthly;
  s.price_hourly = static_cast<double>(static_cast<long long>(monthly / kHoursPerMonth * 1e5 + 0.5)) / 1e5;
  s.regions = kAllRegions;
  s.description = std::move(description);
  s.disks = {{"local", disk_gb}};
  return s;
}

SizeInfo gpu(std::string slug, int count, std::string model, int vram_gib, double hourly,
             std::vector<std::string> regions, std::string description) {
  const bool eight = count == 8;
  SizeInfo s;
  s.slug = std::move(slug);
  s.memory_mb = eight ? 1966080 : 245760;
  s.vcpus = eight ? 160 : 20;
  s.disk_gb = eight ? 2046 : 720;
  s.transfer_tb = eight ? 60.0 : 15.0;
  s.price_hourly = hourly;
  s.price_monthly = static_cast<double>(static_cast<long long>(hourly * kHoursPerMonth * 100 + 0.5)) / 100;
  s.regions = std::move(regions);
  s.description = std::move(description);
  s.disks = {{"local", s.disk_gb}, {"scratch", eight ? 40960 : 5120}};
  s.gpu = GpuInfo{count, std::move(model), vram_gib};
  return s;
}

}  // namespace

bool SizeInfo::in_region(std::string_view region) const {
  return std::find(regions.begin(), regions.end(), region) != regions.end();
}

const std::vector<SizeInfo>& sizes() {
  static const std::vector<SizeInfo> all = [] {
    std::vector<SizeInfo> v;
    v.push_back(basic("s-1vcpu-512mb-10gb", 512, 1, 10, 0.5, 4.0, "Basic"));
    v.push_back(basic("s-1vcpu-1gb", 1024, 1, 25, 1.0, 6.0, "Basic"));
    v.push_back(basic("s-1vcpu-2gb", 2048, 1, 50, 2.0, 12.0, "Basic"));
    v.push_back(basic("s-2vcpu-2gb", 2048, 2, 60, 3.0, 18.0, "Basic"));
    v.push_back(basic("s-2vcpu-4gb", 4096, 2, 80, 4.0, 24.0, "Basic"));
    v.push_back(basic("s-4vcpu-8gb", 8192, 4, 160, 5.0, 48.0, "Basic"));
    v.push_back(basic("s-8vcpu-16gb", 16384, 8, 320, 6.0, 96.0, "Basic"));
    v.push_back(basic("c-2", 4096, 2, 25, 4.0, 42.0, "CPU-Optimized"));
    v.push_back(basic("g-2vcpu-8gb", 8192, 2, 25, 4.0, 63.0, "General Purpose"));
    v.push_back(basic("m-2vcpu-16gb", 16384, 2, 50, 4.0, 84.0, "Memory-Optimized"));
    v.push_back(gpu("gpu-mi300x1-192gb", 1, "amd_mi300x", 192, 1.99, kMi300xRegions,
                    "AMD MI300X - 1X"));
    v.push_back(gpu("gpu-mi300x8-1536gb", 8, "amd_mi300x", 1536, 15.92, kMi300xRegions,
                    "AMD MI300X - 8X"));
    v.push_back(gpu("gpu-h100x1-80gb", 1, "nvidia_h100", 80, 3.39, kH100Regions, "H100 GPU - 1X"));
    v.push_back(gpu("gpu-h100x8-640gb", 8, "nvidia_h100", 640, 23.92, kH100Regions,
                    "H100 GPU - 8X"));
    return v;
  }();
  return all;
}

const std::vector<RegionInfo>& regions() {
  static const std::vector<RegionInfo> all = [] {
    const std::vector<std::string> common = {"backups",       "ipv6",    "metadata",
                                             "install_agent", "storage", "image_transfer"};
    std::vector<RegionInfo> v = {
        {"nyc1", "New York 1", common}, {"nyc2", "New York 2", common},
        {"nyc3", "New York 3", common}, {"sfo2", "San Francisco 2", common},
        {"sfo3", "San Francisco 3", common}, {"ams3", "Amsterdam 3", common},
        {"sgp1", "Singapore 1", common}, {"lon1", "London 1", common},
        {"fra1", "Frankfurt 1", common}, {"tor1", "Toronto 1", common},
        {"blr1", "Bangalore 1", common}, {"syd1", "Sydney 1", common},
        {"atl1", "Atlanta 1", common},
    };
    return v;
  }();
  return all;
}

const std::vector<ImageInfo>& images() {
  static const std::vector<ImageInfo> all = {
      {151000001, "ubuntu-24-04-x64", "24.04 (LTS) x64", "Ubuntu", "Ubuntu 24.04 (LTS) x64", 2.34, 7,
       "2024-04-25T12:00:00Z"},
      {129000001, "ubuntu-22-04-x64", "22.04 (LTS) x64", "Ubuntu", "Ubuntu 22.04 (LTS) x64", 2.36, 7,
       "2023-04-25T12:00:00Z"},
      {140000001, "debian-12-x64", "12 x64", "Debian", "Debian 12 x64", 1.2, 7,
       "2023-10-10T12:00:00Z"},
      {166407044, "gpu-h100x1-base", "AI/ML Ready H100x1", "Ubuntu", "GPU H100 1x Base Image", 18.47,
       25, "2024-09-27T15:35:19Z"},
      {166407045, "gpu-h100x8-base", "AI/ML Ready H100x8", "Ubuntu", "GPU H100 8x Base Image", 18.47,
       25, "2024-09-27T15:35:19Z"},
      {170000001, "gpu-amd-base", "AI/ML Ready AMD", "Ubuntu", "GPU AMD Base Image", 21.0, 25,
       "2025-01-15T12:00:00Z"},
  };
  return all;
}

const SizeInfo* find_size(std::string_view slug) {
  for (const auto& s : sizes())
    if (s.slug == slug) return &s;
  return nullptr;
}

const RegionInfo* find_region(std::string_view slug) {
  for (const auto& r : regions())
    if (r.slug == slug) return &r;
  return nullptr;
}

const ImageInfo* find_image(const nlohmann::json& slug_or_id) {
  std::optional<std::int64_t> id;
  if (slug_or_id.is_number_integer()) id = slug_or_id.get<std::int64_t>();
  if (slug_or_id.is_string()) {
    const auto text = slug_or_id.get<std::string>();
    for (const auto& i : images())
      if (i.slug == text) return &i;
    id = parse_int(text);
  }
  if (id)
    for (const auto& i : images())
      if (i.id == *id) return &i;
  return nullptr;
}

nlohmann::json gpu_info_json(const GpuInfo& gpu) {
  return {{"count", gpu.count},
          {"vram", {{"amount", gpu.vram_gib}, {"unit", "gib"}}},
          {"model", gpu.model}};
}

nlohmann::json disk_info_json(const std::vector<DiskInfo>& disks) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& d : disks)
    out.push_back({{"type", d.type}, {"size", {{"amount", d.amount_gib}, {"unit", "gib"}}}});
  return out;
}

nlohmann::json size_json(const SizeInfo& size) {
  nlohmann::json j = {{"slug", size.slug},
                      {"memory", size.memory_mb},
                      {"vcpus", size.vcpus},
                      {"disk", size.disk_gb},
                      {"transfer", size.transfer_tb},
                      {"price_monthly", size.price_monthly},
                      {"price_hourly", size.price_hourly},
                      {"regions", size.regions},
                      {"available", size.available},
                      {"description", size.description},
                      {"disk_info", disk_info_json(size.disks)}};
  if (size.gpu.count > 0) j["gpu_info"] = gpu_info_json(size.gpu);
  return j;
}

nlohmann::json region_json(const RegionInfo& region) {
  nlohmann::json offered = nlohmann::json::array();
  for (const auto& s : sizes())
    if (s.in_region(region.slug)) offered.push_back(s.slug);
  return {{"name", region.name},
          {"slug", region.slug},
          {"features", region.features},
          {"available", region.available},
          {"sizes", offered}};
}

nlohmann::json image_json(const ImageInfo& image) {
  return {{"id", image.id},
          {"name", image.name},
          {"distribution", image.distribution},
          {"slug", image.slug},
          {"public", true},
          {"regions", kAllRegions},
          {"created_at", image.created_at},
          {"type", "base"},
          {"min_disk_size", image.min_disk_size},
          {"size_gigabytes", image.size_gigabytes},
          {"description", image.description},
          {"tags", nlohmann::json::array()},
          {"status", "available"}};
}

}  // namespace runara::sim::fakedo
