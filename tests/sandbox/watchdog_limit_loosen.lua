-- Attempt: raise the run's hard deadline from inside the script with watchdog.limit(1e9),
-- then loop.
-- Why it must fail: scripts may only tighten limits; --max-runtime 1 still applies.
-- expect: watchdog
-- flags: --max-runtime 1
watchdog.limit(1e9)
while true do end
