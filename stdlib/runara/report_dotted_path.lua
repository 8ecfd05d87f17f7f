-- runara.report_dotted_path: free-form data at a dotted path of results.json
-- ("benchmarks.mlperf"), for rep:set and a machine view's set.
local M = {}

-- Sets root's value at `path`, making the tables on the way; false when `path` names nothing.
function M.set(root, path, value)
  local node, last = root, nil
  for part in tostring(path):gmatch("[^%.]+") do
    if last then
      node[last] = type(node[last]) == "table" and node[last] or {}
      node = node[last]
    end
    last = part
  end
  if not last then return false end
  node[last] = value
  return true
end

return M
