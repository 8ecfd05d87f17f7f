-- Attempt: crash the host with out-of-range times and odd formats in os.date/os.time (C
-- library calls with unchecked results: gmtime/localtime returning NULL, invalid strftime
-- conversions, huge format strings).
-- Why it must fail: the sandbox's os.date/os.time must return nil or raise a normal error.
-- expect: safe
local attempts = {
  function() return os.date("%c", 2 ^ 60) end,
  function() return os.date("*t", -2 ^ 60) end,
  function() return os.date("!*t", 2 ^ 62) end,
  function() return os.date("%Ez%") end,
  function() return os.date("%") end,
  function() return os.date(("%c"):rep(1e4)) end,
  function() return os.time({ year = 2 ^ 40, month = 1, day = 1 }) end,
  function() return os.time({ year = -2 ^ 40, month = 1e9, day = -1e9 }) end,
  function() return os.time({}) end,
}
for _, attempt in ipairs(attempts) do pcall(attempt) end
print("SAFE")
