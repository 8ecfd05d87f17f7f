-- runara.errors: helpers for the stdlib's argument and option errors.
--
--   local errors = require("runara.errors")
--   local msg = errors.unknown_option(opts, KNOWN)  -- nil, or "unknown option 'modle' (did you mean 'model'?)"
--   if msg then error("vllm.start: " .. msg, 2) end
--
-- The helpers only build messages; the public function raises them itself with level 2, so
-- the error carries the user's file:line (the sandbox has no `debug` library to count frames
-- with, and a level passed through helpers breaks as soon as one more helper is added).
-- A public function that another one calls on the user's behalf offers its checks without
-- raising, and the caller raises them at its own caller's line: vllm.check_options and
-- vllm.try_start (for runara.scenario's sc:serve), report_checks.lua (for a report's machine
-- view, and for scenario.run's report.new). tests/lua/test_error_levels.lua checks every one.
local M = {}

-- Edit distance between two strings: insertions, deletions, substitutions and swaps of two
-- neighbouring characters count 1 each (optimal string alignment), so "mdoe" is 1 from "mode".
function M.distance(a, b)
  local d = {}
  for i = 0, #a do d[i] = { [0] = i } end
  for j = 0, #b do d[0][j] = j end
  for i = 1, #a do
    for j = 1, #b do
      local cost = a:byte(i) == b:byte(j) and 0 or 1
      local v = math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
      if i > 1 and j > 1 and a:byte(i) == b:byte(j - 1) and a:byte(i - 1) == b:byte(j) then
        v = math.min(v, d[i - 2][j - 2] + 1)
      end
      d[i][j] = v
    end
  end
  return d[#a][#b]
end

-- The name in `names` (a list, or a set: name = true) closest to `name`, when it is close enough
-- to be a typo (at most a third of its length wrong, at least 1; case ignored; among equals the
-- one of the closest length, then the first in sorted order); nil otherwise.
function M.suggest(name, names)
  if type(name) ~= "string" then return nil end
  local list = {}
  for k, v in pairs(names) do list[#list + 1] = type(k) == "number" and v or k end
  table.sort(list)
  local limit = math.max(1, math.floor(#name / 3))
  local best, best_d, best_len = nil, math.huge, math.huge
  for _, candidate in ipairs(list) do
    local d = M.distance(name:lower(), candidate:lower())
    local len = math.abs(#candidate - #name)  -- a tie goes to the length closest to the name's
    if d <= limit and (d < best_d or (d == best_d and len < best_len)) then best, best_d, best_len = candidate, d, len end
  end
  return best
end

local function sorted_names(set)
  local list = {}
  for k in pairs(set) do list[#list + 1] = k end
  table.sort(list)
  return list
end

-- nil when every key of `opts` is in the set `known` (name = true); otherwise a message naming
-- the first unknown key (in sorted order) with the closest known name, or the list of known ones.
function M.unknown_option(opts, known)
  local unknown = {}
  for k in pairs(opts) do
    if not known[k] then unknown[#unknown + 1] = tostring(k) end
  end
  if #unknown == 0 then return nil end
  table.sort(unknown)
  local name = unknown[1]
  local guess = M.suggest(name, known)
  if guess then return string.format("unknown option '%s' (did you mean '%s'?)", name, guess) end
  return string.format("unknown option '%s' (options: %s)", name, table.concat(sorted_names(known), ", "))
end

-- A value as an error message shows it: strings quoted, tables as "a table", others by tostring.
function M.show(v)
  if type(v) == "string" then return string.format("%q", v) end
  if type(v) == "table" then return next(v) == nil and "an empty table" or "a table" end
  return tostring(v)
end

-- True for a whole number >= (min or 1).
function M.whole(v, min)
  return type(v) == "number" and v % 1 == 0 and v >= (min or 1) and v < math.huge
end

return M
