-- Attempt: loop inside table.sort's comparator (called from C).
-- Why it must fail: the comparator is Lua code and is counted.
-- expect: watchdog
-- flags: --max-runtime 1
table.sort({ 3, 2, 1 }, function() while true do end end)
print("ESCAPED: table.sort returned")
