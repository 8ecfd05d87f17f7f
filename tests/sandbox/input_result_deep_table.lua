-- Attempt: overflow the C stack of the Lua-to-JSON writer with a table nested 100,000 levels
-- deep given to runara.result.
-- Why it must fail: the writer refuses nesting past 100 levels with an error naming the path.
-- expect: error nested deeper than 100 levels
local t = {}
for _ = 1, 100000 do t = { t } end
runara.result("deep", t)
print("ESCAPED: runara.result wrote a 100,000-level table")
