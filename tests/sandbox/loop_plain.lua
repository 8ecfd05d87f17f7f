-- Attempt: the simplest CPU bomb, an empty infinite loop.
-- Why it must fail: scripts run interpreted (JIT off) with a count hook; the watchdog stops
-- the run at --max-runtime.
-- expect: watchdog
-- flags: --max-runtime 1
while true do end
