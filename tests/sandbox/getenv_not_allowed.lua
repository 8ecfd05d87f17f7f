-- Attempt: read environment variables without --allow-env (HOME, PATH, and the variable the
-- harness sets for the secret tests).
-- Why it must fail: os.getenv is permission-checked; nothing is granted here.
-- expect: error is not allowed
for _, name in ipairs({ "RUNARA_SANDBOX_SECRET", "HOME", "PATH" }) do
  local ok, value = pcall(os.getenv, name)
  if ok then print("ESCAPED: os.getenv(" .. name .. ") = " .. tostring(value):reverse()) end
end
os.getenv("HOME")
