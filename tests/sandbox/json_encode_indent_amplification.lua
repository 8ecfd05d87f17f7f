-- Attempt: make runara.json.encode allocate, outside the Lua heap, a text far larger than the
-- memory cap allows: 200,000 numbers nested 90 tables deep cost ~2 MiB of Lua heap and ~3 MiB
-- as a document, but every one of them is written on its own line after 90 indents; at the
-- largest indent that is ~150 MiB of spaces (16 spaces an indent: ~290 MiB), under a 32 MiB cap.
-- Why it must fail: encode charges its text to the run's memory budget (--max-memory) as it
-- writes it, and refuses with a script error naming the limit, first in pcall (and carry on),
-- then outside it.
-- expect: error runara.json.encode: writing the JSON text needs about
-- flags: --max-memory 32M
local leaves = {}
for i = 1, 200000 do leaves[i] = 0 end
local value = leaves
for _ = 1, 90 do value = { value } end
local ok, err = pcall(runara.json.encode, value, { indent = 8 })
if ok then print("ESCAPED: wrote " .. #err .. " bytes of JSON text under a 32 MiB cap") end
if not tostring(err):find("more than the", 1, true) then print("ESCAPED: refused without naming the limit: " .. tostring(err)) end
runara.json.encode(value, { indent = 8 })
print("ESCAPED: encoded on the second try")
