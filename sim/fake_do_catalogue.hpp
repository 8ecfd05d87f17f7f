// The fake DigitalOcean's fixed catalogue: regions, Droplet sizes (regular and GPU) and images,
// rendered as the published API's `region`, `size` and `image` objects.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace runara::sim::fakedo {

struct DiskInfo {
  std::string type;  // "local" | "scratch"
  int amount_gib;
};

struct GpuInfo {
  int count = 0;  // 0: not a GPU size
  std::string model;
  int vram_gib = 0;
};

struct SizeInfo {
  std::string slug;
  int memory_mb;
  int vcpus;
  int disk_gb;
  double transfer_tb;
  double price_monthly;
  double price_hourly;
  std::vector<std::string> regions;
  std::string description;
  std::vector<DiskInfo> disks;
  GpuInfo gpu;
  bool available = true;

  bool is_gpu() const { return slug.rfind("gpu-", 0) == 0; }
  bool in_region(std::string_view region) const;
};

struct RegionInfo {
  std::string slug;
  std::string name;
  std::vector<std::string> features;
  bool available = true;
};

struct ImageInfo {
  std::int64_t id;
  std::string slug;
  std::string name;
  std::string distribution;
  std::string description;
  double size_gigabytes;
  int min_disk_size;
  std::string created_at;
};

const std::vector<SizeInfo>& sizes();
const std::vector<RegionInfo>& regions();
const std::vector<ImageInfo>& images();

const SizeInfo* find_size(std::string_view slug);
const RegionInfo* find_region(std::string_view slug);
// By slug, or by numeric id given as a JSON integer or digit string.
const ImageInfo* find_image(const nlohmann::json& slug_or_id);

nlohmann::json size_json(const SizeInfo& size);
nlohmann::json region_json(const RegionInfo& region);  // `sizes`: the slugs offered there
nlohmann::json image_json(const ImageInfo& image);
nlohmann::json gpu_info_json(const GpuInfo& gpu);
nlohmann::json disk_info_json(const std::vector<DiskInfo>& disks);

}  // namespace runara::sim::fakedo
