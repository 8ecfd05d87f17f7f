-- Attempt: get the host to allocate far more than the memory cap. Lua strings are shared, so a
-- table holding 1024 references to one 16 KiB string costs ~30 KiB of Lua heap; runara.result
-- serializes it to 16 MiB of JSON outside the Lua heap (and writes it to results.json). Scale
-- the numbers and a script capped at 2 MiB makes the host allocate gigabytes.
-- Why it must fail: what a script makes the runtime allocate on its behalf must count against
-- the memory cap (e.g. the JSON writer stops at the cap with a "memory limit" error).
-- expect: memory
-- flags: --max-memory 2M
local piece = ("x"):rep(2 ^ 14)
local t = {}
for i = 1, 1024 do t[i] = piece end
runara.result("amplified", t)
print("ESCAPED: runara.result serialized 16 MiB of JSON for a script capped at 2 MiB")
