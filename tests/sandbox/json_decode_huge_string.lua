-- Attempt: decode a 3 MB JSON string twelve times under a 24 MiB cap (36 MB in all; small enough
-- that the sanitizer build parses it in seconds), hoping either that the
-- document decode builds outside the Lua heap is never counted (so larger ones would pass), or
-- that its reservation is never given back (so the run is starved after a few decodes).
-- Why it must fail: decode reserves the parsed document from the run's memory budget while it
-- exists and gives it back once the Lua string is made: every round fits, none leaks.
-- The refusal of a document too large for the cap: json_decode_tiny_containers.lua.
-- expect: safe
-- flags: --max-memory 24M
local text = '"' .. string.rep("x", 3000000) .. '"'
collectgarbage()
for round = 1, 12 do
  local copy = runara.json.decode(text)
  if #copy ~= 3000000 then print("ESCAPED: round " .. round .. " decoded " .. #copy .. " bytes") end
  copy = nil
  collectgarbage()
end
print("SAFE")
