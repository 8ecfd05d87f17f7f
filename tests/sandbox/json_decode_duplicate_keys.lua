-- Attempt: confuse a script's checks with an object that names one key many times (a check
-- reads one value, the code another), a 200,000-fold duplicate, and keys that mean something
-- to Lua (__index, __gc, __metatable) hoping they become metamethods.
-- Why it must fail: the last value of a duplicated key wins (as Python's json and most parsers
-- do), once, and keys are plain string keys of a plain table: nothing becomes a metamethod.
-- expect: safe
local J = runara.json
local o = J.decode('{"role": "user", "role": "admin", "role": "guest"}')
if o.role ~= "guest" then print("ESCAPED: the duplicated key reads " .. tostring(o.role)) end
local n = 0
for _ in pairs(o) do n = n + 1 end
if n ~= 1 then print("ESCAPED: a duplicated key appears " .. n .. " times") end
local parts = {}
for i = 1, 200000 do parts[i] = '"k": ' .. i end
local big = J.decode("{" .. table.concat(parts, ", ") .. "}")
if big.k ~= 200000 then print("ESCAPED: 200,000 duplicates left k = " .. tostring(big.k)) end
local m = J.decode('{"__index": {"x": 1}, "__gc": 1, "__metatable": "locked"}')
if getmetatable(m) ~= nil or m.x ~= nil then print("ESCAPED: a key became a metamethod") end
local a = J.decode("[]")
if getmetatable(a).__jsontype ~= "array" then print("ESCAPED: an array lost its mark") end
print("SAFE")
