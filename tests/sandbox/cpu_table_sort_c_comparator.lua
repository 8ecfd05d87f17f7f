-- Attempt: sort with a C function as the comparator. table.sort calls it from C, so no Lua
-- instruction runs between comparisons and the instruction hook never fires: string.rep makes
-- a 7 MB string per comparison (any string is true), about 1.7 million of them, for hours. The
-- watchdog's stop could not reach it; only the stuck backstop ended the process, 5 s late.
-- Why it must fail: the sandbox's table.sort calls a comparator that is not a Lua function
-- through a Lua one, so each comparison passes the hook and the watchdog stops it on time.
-- expect: watchdog
-- flags: --max-runtime 1
local t = {}
for i = 1, 1e5 do t[i] = "1000000" end
table.sort(t, string.rep)
print("ESCAPED: the sort finished")
