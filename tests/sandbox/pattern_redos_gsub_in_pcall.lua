-- Attempt: a ReDoS pattern in string.gsub, inside pcall, retried in a loop, hoping the guarded
-- matcher's interruption is an ordinary error that pcall can swallow.
-- Why it must fail: the matcher reports the stop, and the next instruction raises it again.
-- (Needs runtime/script/patterns.cpp; without it this run outlives its time bound.)
-- expect: watchdog
-- flags: --max-runtime 1
local subject = ("a"):rep(3e4)
local pattern = ("a*"):rep(12) .. "b"
while true do
  pcall(string.gsub, subject, pattern, "x")
end
