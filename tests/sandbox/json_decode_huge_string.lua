-- Attempt: decode a 12 MB JSON string ten times under a 64 MiB cap, hoping either that the
-- document decode builds outside the Lua heap is never counted (so larger ones would pass), or
-- that its reservation is never given back (so the run is starved after a few decodes).
-- Why it must fail: decode reserves the parsed document from the run's memory budget while it
-- exists and gives it back once the Lua string is made: every round fits, none leaks.
-- The refusal of a document too large for the cap: json_decode_tiny_containers.lua.
-- expect: safe
-- flags: --max-memory 64M
local text = '"' .. string.rep("x", 12000000) .. '"'
collectgarbage()
for round = 1, 10 do
  local copy = runara.json.decode(text)
  if #copy ~= 12000000 then print("ESCAPED: round " .. round .. " decoded " .. #copy .. " bytes") end
  copy = nil
  collectgarbage()
end
print("SAFE")
