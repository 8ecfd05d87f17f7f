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

local FALLBACK = { image = "gpu-amd-base", region = "atl1" }

-- For a scenario's param list: the words `--help` shows for these defaults.
M.image_help = "the size's GPU image: gpu-amd-base (MI300X), gpu-h100x1-base or gpu-h100x8-base (H100)"
M.region_help = "where the size is offered: atl1 (MI300X), nyc2 (H100)"

function M.for_size(size)
  local d = FALLBACK
  if type(size) == "string" then
    for _, row in ipairs(BY_PREFIX) do
      if size:sub(1, #row.prefix) == row.prefix then d = row break end
    end
  end
  return { image = d.image, region = d.region }
end

-- A param declaration (runara.scenario) named `name` ("image" or "region") whose default follows
-- the `size` param.
local function follows_size(name, default_help)
  return function(help)
    return { name = name, default = function(v) return M.for_size(v.size)[name] end, default_help = default_help,
      help = help or ("droplet " .. name), applies = { "droplet" } }
  end
end
M.image_param = follows_size("image", M.image_help)
M.region_param = follows_size("region", M.region_help)

return M
