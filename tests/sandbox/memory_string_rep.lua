-- Attempt: a memory bomb with string.rep (1 GiB in one call).
-- Why it must fail: the Lua heap is capped (--max-memory); the allocation is refused and the
-- run is stopped.
-- expect: memory
-- flags: --max-memory 16M
local s = string.rep("x", 2 ^ 30)
print("ESCAPED: allocated " .. #s .. " bytes")
