-- Attempt: table.insert(t, pos, v) with a huge negative position. LuaJIT's table.insert is a C
-- function that shifts elements one by one from #t+1 down to pos: with pos = -2^31 + 2 that is
-- ~2^31 iterations (~45 s) of C code where the count hook never fires, so --max-runtime 1 is
-- overrun by almost a minute; in a loop, without end.
-- Why it must fail: every call into C must be bounded or interruptible (Lua 5.2+ raises
-- "position out of bounds" for pos outside 1..#t+1).
-- expect: watchdog
-- flags: --max-runtime 1
local t = {}
while true do
  pcall(table.insert, t, -2 ^ 31 + 2, "x")
end
