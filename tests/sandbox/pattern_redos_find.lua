-- Attempt: a catastrophic-backtracking pattern (ReDoS). LuaJIT's matcher runs entirely in C
-- where no hook fires, so ("a"):rep(1e5):find(("a-"):rep(30) .. "b") keeps the process busy
-- for a very long time, out of the watchdog's reach.
-- Why it must fail: the sandbox's guarded string.find checks the stop flag while matching.
-- (Needs runtime/script/patterns.cpp; without it this run outlives its time bound.)
-- expect: watchdog
-- flags: --max-runtime 1
local subject = ("a"):rep(1e5)
local pattern = ("a-"):rep(30) .. "b"
print("ESCAPED: the ReDoS find returned " .. tostring(subject:find(pattern)))
