-- Attempt: make runara.json.decode build, outside the Lua heap, a document far larger than the
-- memory cap allows: 4 MiB of tiny containers ("{},"), which parse into 10 to 30 times their
-- text's size, first in pcall (and carry on), then outside it.
-- Why it must fail: decode reserves what the parsed document will take from the run's memory
-- budget (--max-memory) before building it, and refuses with a script error naming the size.
-- expect: error runara.json.decode: decoding 4194307 bytes of JSON needs about
-- flags: --max-memory 64M
local text = "[" .. string.rep("{},", 1398101) .. "{}]"
local ok, err = pcall(runara.json.decode, text)
if ok then print("ESCAPED: 4 MiB of tiny containers were decoded under a 64 MiB cap") end
if not tostring(err):find("more than the", 1, true) then print("ESCAPED: refused without naming the limit: " .. tostring(err)) end
runara.json.decode(text)
print("ESCAPED: decoded on the second try")
