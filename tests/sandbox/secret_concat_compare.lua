-- Attempt: learn a secret's value without printing it: concatenation, length, indexing,
-- calling, ordering (binary search with < against guesses), equality with guessed strings,
-- string functions taking it as an argument, tonumber.
-- Why it must fail: every operator that could read the value is refused or sees an opaque
-- userdata; nothing depends on the value.
-- expect: safe
-- flags: --secret RUNARA_SANDBOX_SECRET
-- env: RUNARA_SANDBOX_SECRET=hunter2-runara-sandbox-6b1f0c
local h = runara.secret("RUNARA_SANDBOX_SECRET")
local attempts = {
  concat = function() return h .. "" end,
  concat_left = function() return "" .. h end,
  len = function() return #h end,
  index = function() return h.value end,
  index_number = function() return h[1] end,
  call = function() return h() end,
  less = function() return h < "m" end,
  less_equal = function() return "m" <= h end,
  sub = function() return string.sub(h, 1) end,
  byte = function() return string.byte(h, 1, -1) end,
  upper = function() return string.upper(h) end,
  rep = function() return string.rep(h, 2) end,
  find = function() return string.find(h, "h") end,
  table_concat = function() return table.concat({ h }) end,
}
for name, attempt in pairs(attempts) do
  local ok, value = pcall(attempt)
  if ok and value ~= nil then
    local text = tostring(value)
    if text ~= "<secret RUNARA_SANDBOX_SECRET>" then
      print("ESCAPED: " .. name .. " gave " .. text:reverse())
    end
  end
end
if h == "hunter2-runara-sandbox-6b1f0c" then print("ESCAPED: == compares the value") end
if tonumber(h) ~= nil then print("ESCAPED: tonumber read the handle") end
if rawequal(h, "hunter2-runara-sandbox-6b1f0c") then print("ESCAPED: rawequal compares the value") end
print("SAFE")
