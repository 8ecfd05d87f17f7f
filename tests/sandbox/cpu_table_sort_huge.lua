-- Attempt: table.sort without a comparator on a big array of numbers. The sort runs entirely
-- in C (no hook fires without a Lua comparator); 2^24 numbers fit in 128 MiB and take several
-- seconds to sort, so --max-runtime 1 is overrun by the sort's whole duration (with the default
-- 1 GiB cap, ~8x more).
-- Why it must fail: long C work must be interruptible or bounded (e.g. the sandbox's
-- table.sort could sort with a Lua comparator when none is given, or check the stop flag).
-- expect: watchdog
-- flags: --max-runtime 1 --max-memory 512M
local t = {}
local n = 2 ^ 24
for i = 1, n do t[i] = (i * 7919) % n end
table.sort(t)
print("ESCAPED: sorted " .. n .. " numbers in one uninterruptible C call")
