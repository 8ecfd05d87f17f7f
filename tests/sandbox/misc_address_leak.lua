-- Attempt: learn heap addresses from tostring() of tables, functions and coroutines (useful to
-- an exploit that could also forge pointers, e.g. through bytecode).
-- Why it is harmless here: without bytecode, ffi or debug there is nothing to do with an
-- address; this attempt only records that addresses are visible (note, not a failure).
-- expect: safe
local seen = {}
for _, v in ipairs({ {}, print, coroutine.create(function() end), runara.spawn(function() end) }) do
  seen[#seen + 1] = tostring(v)
end
print("visible: " .. table.concat(seen, ", "))
print("SAFE")
