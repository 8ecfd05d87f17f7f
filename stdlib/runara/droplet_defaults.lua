-- runara.droplet_defaults: the image and region a droplet of a given size gets when the user of a
-- scenario names only the size (`size=gpu-h100x1-80gb`), so that the other vendor's GPU is one
-- param, not three that must agree.
--
--   local defaults = require("runara.droplet_defaults")
--   defaults.for_size("gpu-h100x8-640gb")  --> { image = "gpu-h100x8-base", region = "nyc2" }
--
-- DigitalOcean's GPU Droplets: the H100 sizes run the "AI/ML Ready" images gpu-h100x1-base and
-- gpu-h100x8-base in nyc2 and tor1; the MI300X sizes (AMD Developer Cloud) run gpu-amd-base in
-- atl1 (the simulated cloud's catalogue, sim/fake_do_catalogue.cpp, holds the same). A size not
-- listed here (a regular droplet, another GPU) keeps the scenarios' historical default, the
-- MI300X one: the API's refusal then names what the size needs.
local M = {}

local BY_PREFIX = {
  { prefix = "gpu-mi300x", image = "gpu-amd-base", region = "atl1" },
  { prefix = "gpu-h100x1-", image = "gpu-h100x1-base", region = "nyc2" },
  { prefix = "gpu-h100x8-", image = "gpu-h100x8-base", region = "nyc2" },
}

M.fallback = { image = "gpu-amd-base", region = "atl1" }

-- For a scenario's param list: the words `--help` shows for these defaults.
M.image_help = "the size's GPU image: gpu-amd-base (MI300X), gpu-h100x1-base or gpu-h100x8-base (H100)"
M.region_help = "where the size is offered: atl1 (MI300X), nyc2 (H100)"

function M.for_size(size)
  if type(size) == "string" then
    for _, d in ipairs(BY_PREFIX) do
      if size:sub(1, #d.prefix) == d.prefix then return { image = d.image, region = d.region } end
    end
  end
  return { image = M.fallback.image, region = M.fallback.region }
end

-- Param declarations (runara.scenario) whose defaults follow the `size` param.
function M.image_param(help)
  return { name = "image", default = function(v) return M.for_size(v.size).image end, default_help = M.image_help,
    help = help or "droplet image" }
end

function M.region_param(help)
  return { name = "region", default = function(v) return M.for_size(v.size).region end, default_help = M.region_help,
    help = help or "droplet region" }
end

return M
