-- Attempt: store many results, each of them small enough, under different names: the runtime
-- keeps every result (as JSON, outside the Lua heap) until the end of the run, so the total is
-- unbounded by the memory cap (64 x 512 KiB = 32 MiB here, for a 2 MiB cap).
-- Why it must fail: the results kept for the script must count against the memory cap.
-- expect: memory
-- flags: --max-memory 2M
local piece = ("x"):rep(2 ^ 19)
for i = 1, 64 do runara.result("r" .. i, piece) end
print("ESCAPED: the runtime kept 32 MiB of results for a script capped at 2 MiB")
