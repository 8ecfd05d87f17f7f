-- Attempt: survive the watchdog by catching its error: loop inside pcall, and when pcall
-- returns (the watchdog's error), loop again.
-- Why it must fail: once the run is stopping, the hook raises at every instruction, so the
-- code after pcall cannot run either.
-- expect: watchdog
-- flags: --max-runtime 1
while true do
  pcall(function() while true do end end)
end
