-- Attempt: turn a secret handle into text: tostring, string.format("%s"/"%q"/"%d"), print,
-- runara.log. Everything derived is printed reversed and hex-encoded as well, so that the
-- runtime's output redaction (which masks the literal value) cannot hide a leak: the harness
-- looks for the value, its reverse and its hex form in the output.
-- Why it must fail: a handle only ever shows as "<secret NAME>"; the value never enters Lua.
-- expect: safe
-- flags: --secret RUNARA_SANDBOX_SECRET
-- env: RUNARA_SANDBOX_SECRET=hunter2-runara-sandbox-6b1f0c
local h = runara.secret("RUNARA_SANDBOX_SECRET")
local function show(label, s)
  s = tostring(s)
  print(label, s, s:reverse(), (s:gsub(".", function(c) return ("%02x"):format(c:byte()) end)))
end
show("tostring", tostring(h))
show("format %s", string.format("%s", h))
for _, spec in ipairs({ "%q", "%d", "%x", "%c" }) do
  local ok, v = pcall(string.format, spec, h)
  show("format " .. spec, ok and v or "error: " .. tostring(v))
end
print(h)
runara.log("log:", h)
if tostring(h) ~= "<secret RUNARA_SANDBOX_SECRET>" then print("ESCAPED: tostring shows more than the name") end
print("SAFE")
