-- Attempt: the redaction oracle through a return value. Make runara.write_file fail with an
-- error that quotes a script-chosen path (a folder named after each candidate, then a file of
-- the same name), catch it with pcall, and look for the candidate that came back masked.
-- Why it must fail: text that goes back to the script (return values, caught errors) is never
-- redacted, so it cannot depend on a secret's value.
-- expect: safe
-- flags: --secret RUNARA_SANDBOX_SECRET_PIN
-- env: RUNARA_SANDBOX_SECRET_PIN=482913
local masked = 0
for pin = 482910, 482916 do
  local name = "c" .. pin
  runara.write_file(name .. "/inner.txt", "x")
  local ok, err = pcall(runara.write_file, name, "y")
  if ok then print("ESCAPED? writing over a folder succeeded") end
  if not tostring(err):find(name, 1, true) then masked = masked + 1 end
end
if masked > 0 then print("ESCAPED: " .. masked .. " error message(s) came back masked") end
print("SAFE")
