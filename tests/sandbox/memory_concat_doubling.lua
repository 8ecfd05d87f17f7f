-- Attempt: double a string with .. until it no longer fits, in pcall, keeping the last string
-- that fitted.
-- Why it must fail: the first refused allocation stops the run.
-- expect: memory
-- flags: --max-memory 16M
local s = "x"
while true do
  local ok, bigger = pcall(function() return s .. s end)
  if not ok then break end
  s = bigger
end
print("ESCAPED: kept running after the memory cap, with " .. #s .. " bytes")
