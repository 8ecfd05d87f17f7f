-- Attempt: make runara.result expand a DAG of shared tables (8 levels, each slot of a level
-- the same table: 200^8 paths from 9 small tables) past the deadline: the conversion to JSON
-- ran in C++, out of the hook's reach, for 6 s after a 1 s limit (then the stuck backstop).
-- Why it must fail: the writer charges every node it builds to the memory budget and asks
-- the stop flag every few thousand values, so the watchdog ends it within its grace.
-- expect: watchdog
-- flags: --max-runtime 1
local t = { leaf = true }
for _ = 1, 8 do
  local n = {}
  for i = 1, 200 do n[i] = t end
  t = n
end
runara.sleep(0.8)  -- start the conversion just before the deadline
runara.result("dag", t)
print("ESCAPED: 200^8 values written as JSON")
